"""A tiny gabbi-style runner: YAML files of ordered HTTP steps against the `api` fixture.

File keys: `vars` (names bound to fresh UUIDs, or literal values), `defaults` (e.g.
`request_headers`, `user`) and `tests`, a list of steps:

    - name: what the step shows
      GET|POST|PUT|DELETE|PATCH: /placement/path        # $VAR, $LOCATION, $RESPONSE['$.x']
      user: admin | demo | null                        # who sends it (null: no token)
      request_headers: {openstack-api-version: placement 1.20}
      data: {...}                                      # JSON body
      status: 200
      response_headers: {location: /placement/...}     # exact, or /regex/
      response_json_paths: {$.errors[0].code: placement.concurrent_update,
                            $.resource_providers.`len`: 2}
      response_strings: [substring of the body, ...]
      response_forbidden_headers: [last-modified]

`$RESPONSE['$.path']` reads the previous step's JSON body; `$LOCATION` its Location.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import yaml

VERBS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD")
_RESPONSE_RE = re.compile(r"\$RESPONSE\['([^']+)'\]")
_VAR_RE = re.compile(r"\$([A-Z][A-Z0-9_]*)")


def json_path(doc: Any, path: str) -> Any:
    """`$.a.b[0].c` (and a trailing .`len`) over a JSON document."""
    assert path.startswith("$"), path
    tokens = re.findall(r"\.`len`|\.([^.\[]+)|\[(\d+)\]|\['([^']+)'\]", path[1:])
    value = doc
    for key, index, quoted in tokens:
        if not key and not index and not quoted:
            return len(value)
        if index:
            value = value[int(index)]
        else:
            value = value[key or quoted]
    return value


class Run:
    def __init__(self, api: Any, spec: dict[str, Any]) -> None:
        self.api = api
        self.vars: dict[str, Any] = {}
        for name, value in (spec.get("vars") or {}).items():
            self.vars[name] = str(uuid.uuid4()) if value == "uuid" else value
        self.defaults = spec.get("defaults") or {}
        self.last: Any = None

    def subst(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {self.subst(k): self.subst(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.subst(v) for v in value]
        if not isinstance(value, str):
            return value
        whole = _RESPONSE_RE.fullmatch(value)
        if whole:
            return json_path(self.last.json(), whole.group(1))
        value = _RESPONSE_RE.sub(lambda m: str(json_path(self.last.json(), m.group(1))), value)
        if "$LOCATION" in value:
            value = value.replace("$LOCATION", self.last.headers["location"])
        whole_var = _VAR_RE.fullmatch(value)
        if whole_var and whole_var.group(1) in self.vars:
            return self.vars[whole_var.group(1)]
        return _VAR_RE.sub(lambda m: str(self.vars.get(m.group(1), m.group(0))), value)

    def step(self, test: dict[str, Any]) -> None:
        verb = next(v for v in VERBS if v in test)
        url = self.subst(test[verb])
        headers = {**(self.defaults.get("request_headers") or {}),
                   **(test.get("request_headers") or {})}
        headers = {k: str(v) for k, v in self.subst(headers).items() if v is not None}
        user = test.get("user", self.defaults.get("user", "admin"))
        kwargs: dict[str, Any] = {"headers": headers}
        if "data" in test:
            data = self.subst(test["data"])
            if isinstance(data, str) and test.get("raw"):
                kwargs["content"] = data.encode()
            else:
                kwargs["content"] = json.dumps(data).encode()
            headers.setdefault("content-type", "application/json")
        r = self.api.request(verb, url, user=user, **kwargs)
        where = f"step {test['name']!r}: {verb} {url} -> {r.status_code} {r.text[:600]}"
        assert r.status_code == test.get("status", 200), where
        for name, expected in (test.get("response_headers") or {}).items():
            actual = r.headers.get(name)
            expected = self.subst(expected)
            if isinstance(expected, str) and len(expected) > 1 and expected.startswith("/") \
                    and expected.endswith("/"):
                assert actual is not None and re.search(expected[1:-1], actual), (name, actual, where)
            else:
                assert actual == str(expected), (name, actual, where)
        for name in test.get("response_forbidden_headers") or ():
            assert name not in r.headers, (name, where)
        for path, expected in (test.get("response_json_paths") or {}).items():
            actual = json_path(r.json(), self.subst(path))
            assert actual == self.subst(expected), (path, actual, where)
        for text in test.get("response_strings") or ():
            assert self.subst(text) in r.text, (text, where)
        self.last = r


def run_file(api: Any, path: Path) -> None:
    spec = yaml.safe_load(path.read_text())
    run = Run(api, spec)
    for test in spec["tests"]:
        run.step(test)
