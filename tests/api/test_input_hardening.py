"""Malformed and hostile input is an upstream-style 4xx, never a 500 (issue 9, items 7, 9,
10 and 11): JSON nesting and NaN, NUL bytes, out-of-range values, huge ids and limits,
bodies over the size limit (refused before authentication), deleted image ids, and
X-Forwarded-* headers from clients that are not a trusted proxy."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ADMIN_PASSWORD, create_database, drop_database, make_api

DEEP = b"[" * 10000 + b"]" * 10000
JSON = {"content-type": "application/json"}
PATCH = {"content-type": "application/openstack-images-v2.1-json-patch"}
N = "/networking/v2.0"


def auth_body(scope: Any) -> dict[str, Any]:
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": ADMIN_PASSWORD}}},
        "scope": scope}}


# ------------------------------------------------------------------ JSON and NUL bytes
@pytest.mark.parametrize("method,url,body_key", [
    ("POST", "/identity/v3/auth/tokens", "error"),  # unauthenticated
    ("POST", "/identity/v3/projects", "error"),
    ("POST", "/compute/v2.1/servers", "badRequest"),
    ("POST", f"{N}/networks", "NeutronError"),
    ("POST", "/placement/resource_providers", "errors"),
    ("POST", "/image/v2/images", "message"),
])
def test_deeply_nested_json_is_a_400_in_each_family(api, method, url, body_key):
    user = None if url.endswith("auth/tokens") else "admin"
    r = api.request(method, url, user=user, content=DEEP, headers=JSON)
    assert r.status_code == 400, r.text
    assert body_key in r.json()


def test_nan_and_infinity_are_not_json(api):
    r = api.post("/identity/v3/projects", content=b'{"project": {"name": "p", "tags": [NaN]}}',
                 headers=JSON)
    assert r.status_code == 400, r.text
    rp = api.post("/placement/resource_providers", json={"name": f"rp-{uuid.uuid4().hex}"},
                  headers={"openstack-api-version": "placement 1.20"}).json()
    assert "uuid" in rp, rp
    r = api.put(f"/placement/resource_providers/{rp['uuid']}/inventories/VCPU",
                content=b'{"resource_provider_generation": 0, "total": 8, '
                        b'"allocation_ratio": NaN}',
                headers={**JSON, "openstack-api-version": "placement 1.20"})
    assert r.status_code == 400, r.text
    assert r.json()["errors"][0]["status"] == 400


def test_nul_bytes_anywhere_are_a_400(api):
    r = api.post("/identity/v3/projects", json={"project": {"name": "a\x00b"}})
    assert r.status_code == 400, r.text
    assert api.post(f"{N}/networks", json={"network": {"name": "\x00"}}).status_code == 400
    assert api.post(f"{N}/networks", json={"network": {"name": "x", "\x00": 1}}
                    ).status_code == 400
    assert api.get(f"{N}/networks?name=%00").status_code == 400
    assert api.get(f"{N}/networks/%00").status_code == 400
    assert api.get("/compute/v2.1/servers?name=a%00").status_code == 400
    assert api.post("/identity/v3/auth/tokens", user=None,
                    json=auth_body({"project": {"name": "\x00", "domain": {"id": "default"}}})
                    ).status_code == 400


def test_a_null_project_scope_is_a_400(api):
    r = api.post("/identity/v3/auth/tokens", user=None, json=auth_body({"project": None}))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == 400


# ------------------------------------------------------------------ values out of range
@pytest.mark.parametrize("body", [
    {"name": 7},
    {"name": "x" * 300},
    {"name": "x", "protected": "true"},
    {"name": "x", "tags": True},
    {"name": "x", "tags": ["t" * 256]},
    {"name": "x", "min_disk": 2**63},
    {"name": "x", "min_ram": -1},
    {"name": "x", "disk_format": "floppy"},
    {"name": "x", "visibility": "everyone"},
    {"name": "x", "id": "not-a-uuid"},
    {"name": "x", "os_distro": 7},  # extra properties are strings, as Glance's schema
])
def test_image_create_checks_glances_schema(api, body):
    r = api.post("/image/v2/images", user="demo", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["message"].startswith("Provided object does not match schema 'image': ")


def test_image_patch_checks_glances_schema(api):
    image = api.post("/image/v2/images", user="demo", json={"name": "p"}).json()
    url = f"/image/v2/images/{image['id']}"
    for path, value in (("/min_disk", 2**63), ("/protected", "yes"), ("/name", ["x"]),
                        ("/tags", "t"), ("/os_distro", {"a": 1})):
        r = api.patch(url, user="demo", headers=PATCH,
                      json=[{"op": "add", "path": path, "value": value}])
        assert r.status_code == 400, (path, r.text)
    assert api.get(url, user="demo").json()["min_disk"] == 0  # nothing was written


def test_server_create_ignores_a_security_group_without_a_name(api):
    # Nova keeps only the entries with a name (`if sg.get('name')`): [{}] means the default.
    r = api.post("/compute/v2.1/servers", headers={"openstack-api-version": "compute 2.37"},
                 json={"server": {"name": "s", "flavorRef": "1", "imageRef": "x",
                                  "networks": "none", "security_groups": [{}]}})
    assert r.status_code < 500, r.text
    r = api.post("/compute/v2.1/servers", headers={"openstack-api-version": "compute 2.37"},
                 json={"server": {"name": "s", "flavorRef": "1", "imageRef": "x",
                                  "networks": "none", "security_groups": [{"name": 7}]}})
    assert r.status_code == 400 and "badRequest" in r.json()


@pytest.mark.parametrize("url", [
    f"{N}/networks?limit={10**20}", f"{N}/ports?limit={10**20}",
    f"/image/v2/images?limit={10**20}", "/identity/v3/projects?enabled=maybe",
    "/identity/v3/users?enabled=maybe", "/identity/v3/role_assignments?effective=maybe",
])
def test_huge_limits_and_odd_booleans_are_not_errors(api, url):
    assert api.get(url).status_code == 200


@pytest.mark.parametrize("url", [
    "/compute/v2.1/os-aggregates/" + "9" * 25, "/compute/v2.1/os-hypervisors/" + "9" * 25,
    "/compute/v2.1/flavors/" + "9" * 25, f"{N}/networks/" + "9" * 25,
])
def test_huge_integer_path_ids_are_not_found(api, url):
    assert api.get(url).status_code == 404


def test_an_overlong_project_id_in_auto_allocated_topology_is_a_4xx(api):
    r = api.get(f"{N}/auto-allocated-topology/{'p' * 300}")
    assert 400 <= r.status_code < 500, r.text


# ------------------------------------------------------------------ body size (item 9)
def test_an_oversized_body_is_413_before_authentication(api):
    big = b'{"project": {"name": "' + b"x" * 200_000 + b'"}}'
    for user in (None, "admin"):
        r = api.post("/identity/v3/projects", user=user, content=big, headers=JSON)
        assert r.status_code == 413, r.text
    r = api.post(f"{N}/networks", user=None, content=big, headers=JSON)
    assert r.status_code == 413
    assert r.headers["connection"] == "close"  # the rest is not drained
    assert r.json()["NeutronError"]["type"] == "RequestEntityTooLarge"


def test_orchestration_takes_heats_larger_limit(api):
    project = api.get("/identity/v3/auth/projects").json()["projects"][0]["id"]
    url = f"/orchestration/v1/{project}/stacks"
    template = {"heat_template_version": "2018-08-31", "description": "d" * 200_000,
                "resources": {}}
    r = api.post(url, json={"stack_name": "big", "template": template})
    assert r.status_code != 413, r.text
    template["description"] = "d" * 1_100_000
    assert api.post(url, json={"stack_name": "huge", "template": template}).status_code == 413


def test_a_declared_length_over_the_limit_is_refused_unread(api):
    def never_sent() -> Iterator[bytes]:
        raise AssertionError("the body was read")
        yield b""  # pragma: no cover

    r = api.post(f"{N}/networks", user=None, content=never_sent(),
                 headers={**JSON, "content-length": str(10**9)})
    assert r.status_code == 413


def test_a_chunked_body_is_cut_at_the_limit(api):
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            sent.append(1)
            yield b"x" * 16384

    r = api.post(f"{N}/networks", content=chunks(), headers=JSON)
    assert r.status_code == 413


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A cloud with a small image size cap and trusted proxy headers."""
    yield from make_api(tmp_path_factory.mktemp("capped"), http={
        "image_size_cap": 300_000, "enable_proxy_headers_parsing": True})


def test_image_data_is_streamed_past_the_json_limit_up_to_the_cap(capped):
    image = capped.post("/image/v2/images", user="demo", json={
        "name": "big", "disk_format": "raw", "container_format": "bare"}).json()
    url = f"/image/v2/images/{image['id']}/file"
    octets = {"content-type": "application/octet-stream"}
    r = capped.put(url, user="demo", content=b"d" * 250_000, headers=octets)
    assert r.status_code == 204, r.text
    assert capped.get(f"/image/v2/images/{image['id']}", user="demo").json()["size"] == 250_000
    other = capped.post("/image/v2/images", user="demo", json={
        "name": "too-big", "disk_format": "raw", "container_format": "bare"}).json()
    r = capped.put(f"/image/v2/images/{other['id']}/file", user="demo",
                   content=b"d" * 400_000, headers=octets)
    assert r.status_code == 413
    shown = capped.get(f"/image/v2/images/{other['id']}", user="demo").json()
    assert shown["status"] == "queued" and shown["size"] is None


# ------------------------------------------------------------------ deleted images (10)
def test_a_deleted_image_id_is_never_reused(api):
    image_id = str(uuid.uuid4())
    r = api.post("/image/v2/images", user="demo", json={"id": image_id, "name": "gone"})
    assert r.status_code == 201
    assert api.delete(f"/image/v2/images/{image_id}", user="demo").status_code == 204
    assert api.get(f"/image/v2/images/{image_id}", user="demo").status_code == 404
    assert image_id not in [i["id"] for i in api.get("/image/v2/images").json()["images"]]
    for user in ("admin", "demo"):
        r = api.post("/image/v2/images", user=user, json={"id": image_id, "name": "again"})
        assert r.status_code == 409, r.text


# ------------------------------------------------------------------ proxy headers (11)
def _catalog_urls(client: Any, headers: dict[str, str]) -> set[str]:
    r = client.client.post("/identity/v3/auth/tokens", headers=headers, json=auth_body(
        {"project": {"name": "admin", "domain": {"id": "default"}}}))
    assert r.status_code == 201, r.text
    return {e["url"] for s in r.json()["token"]["catalog"] for e in s["endpoints"]}


FORWARDED = {"x-forwarded-host": "evil.example", "x-forwarded-proto": "https"}


def test_forwarded_headers_are_ignored_from_clients(api):
    urls = _catalog_urls(api, FORWARDED)
    assert urls and all(u.startswith("http://stackling.test/") for u in urls), urls
    r = api.get("/compute/v2.1/flavors", headers=FORWARDED)
    assert "evil.example" not in r.text


def test_forwarded_headers_are_honoured_behind_a_trusted_proxy(capped):
    urls = _catalog_urls(capped, FORWARDED)
    assert urls and all(u.startswith("https://evil.example/") for u in urls), urls


# ------------------------------------------------------------------ PostgreSQL too
@pytest.fixture(scope="module")
def pg_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    base: Path = tmp_path_factory.mktemp("pg")
    url = create_database("postgresql", base / "db")
    try:
        yield from make_api(base / "data", database_url=url)
    finally:
        drop_database(url)


def test_nul_bytes_and_huge_values_on_postgresql(pg_api):
    assert pg_api.post("/identity/v3/projects", json={"project": {"name": "a\x00"}}
                       ).status_code == 400
    assert pg_api.get(f"{N}/networks?name=a%00").status_code == 400
    assert pg_api.get(f"{N}/networks?limit={10**20}").status_code == 200
    assert pg_api.get("/compute/v2.1/os-aggregates/" + "9" * 25).status_code == 404
    assert pg_api.post("/image/v2/images", json={"name": "x", "min_disk": 2**63}
                       ).status_code == 400
    r = pg_api.get(f"{N}/auto-allocated-topology/{'p' * 300}")
    assert 400 <= r.status_code < 500, r.text
    assert json.loads(pg_api.get("/identity/v3/projects?enabled=maybe").text)["projects"]
