"""Application credential access rules, enforced as Keystone's auth_token middleware does.

A token from an application credential with access rules may call only the requests one
of its rules names: the service type, the HTTP method (exactly), and a path template
matched against the whole request path, where `*` and a named `{tag}` stand for one path
segment and `**` for any run of characters, slashes included. Anything else is a 401.

The path is the request's path below the service's prefix (`/v2.1/servers` for
`/compute/v2.1/servers`, `/v3/auth/catalog` for `/identity/v3/auth/catalog`), which is
what a service running at its own host root, as in the api-ref's examples, sees. A rule
written with the prefix (the path a service mounted under `/compute` sees in DevStack)
matches too. As upstream, identity's GET /v3/auth/tokens (validating a token) is always
allowed. Rules that are not well-formed match nothing: they fail closed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from stackling.common.errors import Unauthorized

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
MAX_PATH = 4096  # a longer request path matches no rule
# A rule path template's pieces: {tag} and * (one segment), ** (any characters), literals.
_TOKEN = re.compile(r"(?P<tag>\{[^}]*\})|(?P<rec>\*\*)|(?P<wild>\*)|(?P<lit>[^{}*]+|[{}])")
_SEGMENT, _ANY = object(), object()


@functools.lru_cache(maxsize=1024)
def _compile(template: str) -> tuple[Any, ...]:
    pieces: list[Any] = []
    for m in _TOKEN.finditer(template):
        if m["tag"] or m["wild"]:
            pieces.append(_SEGMENT)
        elif m["rec"]:
            if not pieces or pieces[-1] is not _ANY:
                pieces.append(_ANY)
        elif pieces and isinstance(pieces[-1], str):
            pieces[-1] += m["lit"]
        else:
            pieces.append(m["lit"])
    return tuple(pieces)


def path_matches(path: str, template: str) -> bool:
    """Whether the whole path matches the template. The set of positions the template's
    pieces can reach is carried piece by piece (no backtracking regex: a template full
    of `**` costs pieces x path length, never exponential time)."""
    if len(path) > MAX_PATH:
        return False
    n = len(path)
    reach = {0}
    for piece in _compile(template):
        if not reach:
            return False
        if piece is _ANY:
            reach = set(range(min(reach), n + 1))
        elif piece is _SEGMENT:  # one or more characters, no slash
            nxt: set[int] = set()
            covered = -1
            for p in sorted(reach):
                q = max(p + 1, covered + 1)
                while q <= n and path[q - 1] != "/":
                    nxt.add(q)
                    q += 1
                covered = max(covered, q - 1)
            reach = nxt
        else:
            reach = {p + len(piece) for p in reach if path.startswith(piece, p)}
    return n in reach


def allows(rules: Iterable[Any], service_type: str, method: str, paths: Iterable[str]) -> bool:
    """Whether a rule names this request (its path in any of the given spellings)."""
    paths = list(paths)
    for rule in rules:
        if not isinstance(rule, Mapping):
            continue
        template = rule.get("path")
        if (rule.get("service") != service_type or rule.get("method") != method
                or not isinstance(template, str)):
            continue
        if any(path_matches(p, template) for p in paths):
            return True
    return False


def enforce(rules: Iterable[Any] | None, service_type: str, method: str, prefix: str,
            full_path: str) -> None:
    """401 unless the request is allowed; `rules` None (or empty) means unrestricted."""
    if not rules:
        return
    relative = full_path[len(prefix):] if full_path.startswith(prefix) else full_path
    relative = relative or "/"
    if service_type == "identity" and method == "GET" and relative.endswith("/v3/auth/tokens"):
        return  # a token may always be validated
    if not allows(rules, service_type, method, (relative, full_path)):
        raise Unauthorized("The request you have made requires authentication.")


# Keystone's schema for one rule (application_credential/schema.py): every property a
# string when present, `service` and `id` an id string, `method` an HTTP verb, `path` from
# the root; nothing else.
_PATH_PATTERN = r"^\/.*"
_METHOD_PATTERN = r"^(POST|GET|HEAD|PATCH|PUT|DELETE)$"
_ID_PATTERN = r"^[a-zA-Z0-9-]+$"


def _string_error(value: Any, pattern: str, max_length: int, min_length: int = 0) -> str | None:
    """jsonschema's message for a string property `value` that breaks its schema."""
    if not isinstance(value, str):
        return f"{value!r} is not of type 'string'"
    if len(value) < min_length:
        return f"{value!r} is too short"
    if len(value) > max_length:
        return f"{value!r} is too long"
    if not re.search(pattern, value):
        return f"{value!r} does not match {pattern!r}"
    return None


def validation_error(rule: Any) -> tuple[str | None, str] | None:
    """Why `rule` is not an access rule Keystone would store, as its schema says it (the
    property at fault, or None for the rule itself, and jsonschema's message); None when
    it is one. A property given as null is of the wrong type, as in Keystone."""
    if not isinstance(rule, dict):
        return None, f"{rule!r} is not of type 'object'"
    checks = {"path": (_PATH_PATTERN, 225, 0), "method": (_METHOD_PATTERN, 2**31, 0),
              "service": (_ID_PATTERN, 64, 1), "id": (_ID_PATTERN, 64, 1)}
    for key, (pattern, longest, shortest) in checks.items():  # in the schema's order
        if key in rule:
            why = _string_error(rule[key], pattern, longest, shortest)
            if why:
                return key, why
    unknown = sorted(set(rule) - set(checks), key=str)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        return None, (f"Additional properties are not allowed ({names} "
                      f"{'was' if len(unknown) == 1 else 'were'} unexpected)")
    return None
