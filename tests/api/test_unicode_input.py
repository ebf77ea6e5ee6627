"""Text that is not valid Unicode is a 400 in each family, never a 500 (issue 19, item 3).

A lone surrogate (JSON's `"\\ud800"`) decodes to a Python string no database driver can
encode; bytes that are not UTF-8 are not JSON at all. Both are refused once, where every
body, path and query string is parsed (stackling/common/limits.py), on SQLite, PostgreSQL
and MariaDB (whose JSON columns failed too), including the unauthenticated token route.
Heat templates and environments parsed from YAML or JSON text get the same check, since
their escapes make a surrogate the body never had.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import create_database, drop_database, make_api

N = "/networking/v2.0"
JSON = {"content-type": "application/json"}
LONE = "\ud800"
# Raw bodies: json.dumps writes the surrogate as the escape `\ud800` (valid JSON syntax).
NOT_UTF8 = b'{"network": {"name": "caf\xe9"}}'


def token_body(name: str = "admin", password: str = "x", project: str = "admin") -> Any:
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": name, "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"id": "default"}}}}}


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mariadb"])
def uapi(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[Any]:
    base = tmp_path_factory.mktemp(f"unicode-{request.param}")
    url = None if request.param == "sqlite" else create_database(request.param, base / "db")
    try:
        yield from make_api(base / "data", **({"database_url": url} if url else {}))
    finally:
        if url:
            drop_database(url)
        shutil.rmtree(base / "data", ignore_errors=True)


def _image(uapi: Any) -> str:
    r = uapi.post("/image/v2/images", json={"name": "u", "disk_format": "raw",
                                            "container_format": "bare"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def cases(uapi: Any) -> list[tuple[str, str, Any, dict[str, str], str | None, str]]:
    """(method, url, body, headers, user, family key): a string field of each kind."""
    image = _image(uapi)
    patch = {"content-type": "application/openstack-images-v2.1-json-patch"}
    mv = {"openstack-api-version": "placement 1.20"}
    return [
        ("POST", "/identity/v3/auth/tokens", token_body(name=LONE), JSON, None, "error"),
        ("POST", "/identity/v3/auth/tokens", token_body(password=LONE), JSON, None, "error"),
        ("POST", "/identity/v3/auth/tokens", token_body(project=LONE), JSON, None, "error"),
        ("POST", "/identity/v3/projects", {"project": {"name": "p", "description": LONE}},
         JSON, "admin", "error"),
        ("POST", "/identity/v3/projects", {"project": {"name": "p", "tags": [LONE]}},
         JSON, "admin", "error"),
        ("POST", "/identity/v3/users", {"user": {"name": "u", "extra": LONE}}, JSON, "admin",
         "error"),
        ("POST", f"{N}/networks", {"network": {"name": LONE}}, JSON, "admin", "NeutronError"),
        ("POST", f"{N}/networks", {"network": {"name": "n", LONE: "x"}}, JSON, "admin",
         "NeutronError"),
        ("POST", f"{N}/security-groups", {"security_group": {"name": "s", "description": LONE}},
         JSON, "admin", "NeutronError"),
        ("POST", "/compute/v2.1/os-keypairs", {"keypair": {"name": LONE}}, JSON, "admin",
         "badRequest"),
        ("POST", "/compute/v2.1/flavors", {"flavor": {"name": LONE, "ram": 1, "vcpus": 1,
                                                      "disk": 1}}, JSON, "admin", "badRequest"),
        ("POST", "/placement/resource_providers", {"name": LONE}, {**JSON, **mv}, "admin",
         "errors"),
        # Glance's free-form properties live in a JSON column (MariaDB refused them).
        ("POST", "/image/v2/images", {"name": "i", "os_distro": LONE}, JSON, "admin", "message"),
        ("PATCH", f"/image/v2/images/{image}", [{"op": "add", "path": "/os_distro",
                                                  "value": LONE}], patch, "admin", "message"),
        ("POST", f"/orchestration/v1/{_project(uapi)}/stacks",
         {"stack_name": LONE, "template": {"heat_template_version": "2018-08-31"}}, JSON,
         "admin", "explanation"),
    ]


def _project(uapi: Any) -> str:
    r = uapi.get("/identity/v3/auth/projects")
    return next(p["id"] for p in r.json()["projects"] if p["name"] == "admin")


def test_a_lone_surrogate_in_any_string_is_a_400_in_the_familys_body(uapi):
    failures = []
    for method, url, body, headers, user, key in cases(uapi):
        r = uapi.request(method, url, user=user, content=json.dumps(body), headers=headers)
        if r.status_code != 400 or key not in r.text:
            failures.append(f"{method} {url} {json.dumps(body)[:80]}: {r.status_code} {r.text[:200]}")
    assert not failures, "\n".join(failures)


def test_a_body_that_is_not_utf8_is_a_400(uapi):
    r = uapi.post(f"{N}/networks", content=NOT_UTF8, headers=JSON)
    assert r.status_code == 400, r.text
    assert "UTF-8" in r.json()["NeutronError"]["message"]
    r = uapi.post("/identity/v3/auth/tokens", user=None, headers=JSON,
                  content=json.dumps(token_body()).replace('"x"', '"\\u00e9"').encode()[:-2]
                  + b"\xff}}")
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == 400
    # Nothing was created by the refused requests.
    names = [n["name"] for n in uapi.get(f"{N}/networks").json()["networks"]]
    assert not [n for n in names if n.startswith("caf")]


@pytest.mark.parametrize("url,key", [
    (f"{N}/networks?name=%ED%A0%80", "NeutronError"),  # a surrogate, UTF-8-encoded
    (f"{N}/networks?name=caf%E9", "NeutronError"),  # Latin-1, not UTF-8
    (f"{N}/networks/%FF%FE", "NeutronError"),
    ("/compute/v2.1/servers?name=%ED%B0%80", "badRequest"),
    ("/compute/v2.1/flavors/%C3", "badRequest"),
    ("/image/v2/images?name=%FF", "message"),
    ("/identity/v3/projects?name=%ED%A0%80", "error"),
])
def test_invalid_utf8_in_the_url_is_a_400(uapi, url, key):
    r = uapi.get(url)
    assert r.status_code == 400, r.text
    assert key in r.json()


def test_unicode_outside_the_bmp_is_still_accepted(uapi):
    # A surrogate *pair* in JSON is one valid character (MariaDB's utf8mb4 stores it).
    r = uapi.post(f"{N}/networks", content='{"network": {"name": "net-\\ud83d\\ude00"}}',
                  headers=JSON)
    assert r.status_code == 201, r.text
    assert r.json()["network"]["name"] == "net-\U0001f600"
    r = uapi.get(f"{N}/networks?name=net-%F0%9F%98%80")
    assert [n["name"] for n in r.json()["networks"]] == ["net-\U0001f600"]


@pytest.mark.parametrize("template", [
    # YAML and JSON text escapes make a surrogate the request body never held.
    'heat_template_version: 2018-08-31\ndescription: "\\ud800"\n',
    '{"heat_template_version": "2018-08-31", "description": "\\ud800"}',
])
def test_a_surrogate_made_by_a_template_escape_is_a_400(uapi, template):
    body = json.dumps({"stack_name": "s", "template": template})
    assert "\\ud800" in json.loads(body)["template"]  # six characters, no surrogate yet
    r = uapi.post(f"/orchestration/v1/{_project(uapi)}/stacks", content=body, headers=JSON)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == 400


def test_text_checks_at_the_unit_level():
    from stackling.common import limits

    with pytest.raises(limits.InvalidInput):
        limits.loads(b'{"a": "\\udfff"}', 64)
    with pytest.raises(limits.InvalidInput):
        limits.loads(b'{"a": "\xc3\x28"}', 64)
    assert limits.loads(b'\xef\xbb\xbf{"a": "\\u00e9"}', 64) == {"a": "\u00e9"}
