"""List filters and paging an attacker controls (issue 19, items 1, 5 and 10), on SQLite,
PostgreSQL and MariaDB: tag filters of any length are one bounded query (1,000 tags was a
500 on SQLite, minutes on PostgreSQL), values are de-duplicated and their number bounded,
every list's `limit` is clamped, and a member's filters on attributes it cannot read are
ignored rather than answered."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BACKENDS, create_database, drop_database, make_api

N = "/networking/v2.0"
TAGS_1000 = [f"t{i}" for i in range(1000)]


@pytest.fixture(scope="module", params=BACKENDS)
def bapi(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[Any]:
    base: Path = tmp_path_factory.mktemp(f"filters-{request.param}")
    url = create_database(request.param, base / "db")
    try:
        yield from make_api(base / "data", **({} if request.param == "sqlite"
                                              else {"database_url": url}))
    finally:
        drop_database(url)


def _tagged(api: Any, collection: str, body: dict[str, Any], tags: list[str]) -> str:
    key = collection[:-1].replace("-", "_")
    r = api.post(f"{N}/{collection}", json={key: body})
    assert r.status_code == 201, r.text
    rid = r.json()[key]["id"]
    r = api.put(f"{N}/{collection}/{rid}/tags", json={"tags": tags})
    assert r.status_code == 200, r.text
    return rid


def _ids(api: Any, collection: str, query: str, user: str = "admin") -> set[str]:
    r = api.get(f"{N}/{collection}?{query}", user=user)
    assert r.status_code == 200, r.text
    return {item["id"] for item in r.json()[collection.replace("-", "_")]}


# ------------------------------------------------------------------ item 1: tag filters
def test_tag_filters_of_any_length_answer_as_upstream(bapi):
    mark = uuid.uuid4().hex[:6]
    x, y = f"x{mark}", f"y{mark}"
    both = _tagged(bapi, "networks", {"name": "both"}, [x, y])
    only_x = _tagged(bapi, "networks", {"name": "x"}, [x])
    none = _tagged(bapi, "networks", {"name": "none"}, [])
    mine = {both, only_x, none}

    def sel(query: str) -> set[str]:
        return _ids(bapi, "networks", query) & mine

    assert sel(f"tags={x},{y}") == {both}
    assert sel(f"tags={x},{x},{x},{y}") == {both}  # duplicates change nothing
    assert sel(f"tags={x}&tags={y}") == {both}
    assert sel(f"tags-any={y},nope") == {both}
    assert sel(f"not-tags={x},{y}") == {only_x, none}
    assert sel(f"not-tags-any={y}") == {only_x, none}
    assert sel(f"not-tags-any={x},{y}") == {none}
    # 1,000 distinct tags: one query, not a 500 (SQLite) nor minutes (PostgreSQL).
    many = ",".join(TAGS_1000)
    assert sel(f"tags={x},{many[:-5]}") == set()
    assert sel(f"tags-any={x},{','.join(TAGS_1000[:999])}") == {both, only_x}
    assert sel(f"not-tags={y},{','.join(TAGS_1000[:999])}") == mine
    assert sel(f"not-tags-any={y},{','.join(TAGS_1000[:999])}") == {only_x, none}
    # ... and 1,000 copies of one tag are one tag.
    assert sel("tags=" + ",".join([x] * 1000)) == {both, only_x}


@pytest.mark.parametrize("collection,body", [
    ("ports", None), ("subnets", None), ("routers", {"name": "r"}),
    ("security-groups", {"name": "sg"}), ("subnetpools", None),
])
def test_every_taggable_list_takes_1000_tags(bapi, collection, body):
    if body is None:
        net = bapi.post(f"{N}/networks", json={"network": {"name": "n"}}).json()["network"]
        body = {"ports": {"network_id": net["id"]},
                "subnets": {"network_id": net["id"], "ip_version": 4,
                            "cidr": f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.0/24"},
                "subnetpools": {"name": "sp", "prefixes": ["10.200.0.0/16"],
                                "default_prefixlen": 24}}[collection]
    tag = f"k{uuid.uuid4().hex[:6]}"
    rid = _tagged(bapi, collection, body, [tag])
    for key in ("tags", "tags-any", "not-tags", "not-tags-any"):
        found = _ids(bapi, collection, f"{key}={tag},{','.join(TAGS_1000[:999])}")
        assert (rid in found) == (key in ("tags-any", "not-tags")), key


def test_a_filter_carrying_more_values_than_the_bound_is_a_400(bapi):
    r = bapi.get(f"{N}/networks?tags={','.join(TAGS_1000)},one-more")
    assert r.status_code == 400, r.text
    assert r.json()["NeutronError"]["type"] == "HTTPBadRequest"
    assert "at most 1000" in r.json()["NeutronError"]["message"]
    r = bapi.get(f"{N}/ports?" + "&".join(f"name=n{i}" for i in range(1001)))
    assert r.status_code == 400, r.text
    r = bapi.get("/compute/v2.1/servers?tags=" + ",".join([*TAGS_1000, "one-more"]),
                 headers={"OpenStack-API-Version": "compute 2.26"})
    assert r.status_code == 400, r.text
    assert "badRequest" in r.json()
    # Repeated values count once.
    assert bapi.get(f"{N}/ports?" + "&".join(["name=same"] * 1500)).status_code == 200


# ------------------------------------------------------------------ item 5: limits
@pytest.mark.parametrize("url,version", [
    ("/compute/v2.1/os-migrations", "2.59"),
    ("/compute/v2.1/os-migrations", "2.1"),
    ("/compute/v2.1/servers", "2.1"),
    ("/compute/v2.1/servers/detail", "2.62"),
    ("/compute/v2.1/flavors", "2.1"),
    ("/compute/v2.1/os-hypervisors", "2.53"),
    ("/compute/v2.1/os-simple-tenant-usage", "2.40"),
    ("/compute/v2.1/os-keypairs", "2.35"),
    (f"{N}/networks", None),
    ("/image/v2/images", None),
    ("/orchestration/v1/stacks", None),
])
def test_a_huge_limit_is_clamped_on_every_list(bapi, url, version):
    headers = {"OpenStack-API-Version": f"compute {version}"} if version else {}
    if url.startswith("/orchestration"):
        url = url.replace("/v1/", f"/v1/{_project(bapi)}/")
    for limit in ("9" * 23, str(2**63), str(2**31)):
        r = bapi.get(f"{url}?limit={limit}", headers=headers)
        assert r.status_code == 200, (limit, r.text)
    r = bapi.get(f"{url}?limit=-1", headers=headers)
    assert r.status_code == 400 or (version == "2.1" and "migrations" in url), r.text


def _project(api: Any) -> str:
    r = api.get("/identity/v3/auth/projects")
    return next(p["id"] for p in r.json()["projects"] if p["name"] == "admin")


def test_os_migrations_pages_past_a_huge_limit(bapi):
    headers = {"OpenStack-API-Version": "compute 2.59"}
    r = bapi.get("/compute/v2.1/os-migrations?limit=99999999999999999999999", headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["migrations"] == [] and "migrations_links" not in r.json()
    r = bapi.get("/compute/v2.1/os-migrations?limit=abc", headers=headers)
    assert r.status_code == 400 and "badRequest" in r.json()


# ------------------------------------------------------------------ item 10: admin-only filters
def test_a_member_filtering_on_admin_only_attributes_learns_nothing(bapi):
    demo = _project_named(bapi, "demo")
    net = bapi.post(f"{N}/networks", json={"network": {
        "name": "provider", "project_id": demo, "provider:network_type": "vlan",
        "provider:physical_network": "physnet1", "provider:segmentation_id": 150}})
    assert net.status_code == 201, net.text
    net_id = net.json()["network"]["id"]
    port = bapi.post(f"{N}/ports", json={"port": {
        "network_id": net_id, "project_id": demo, "binding:host_id": "compute-r1-1"}})
    assert port.status_code == 201, port.text
    port_id = port.json()["port"]["id"]

    # The admin's filters apply ...
    assert net_id not in _ids(bapi, "networks", "provider:segmentation_id=151")
    assert net_id in _ids(bapi, "networks", "provider:segmentation_id=150")
    assert port_id not in _ids(bapi, "ports", "binding:host_id=compute-r2-2")
    # ... a member's on the same attributes are ignored: every guess answers alike.
    for guess in ("150", "151", "4094"):
        assert net_id in _ids(bapi, "networks", f"provider:segmentation_id={guess}", "demo")
    for key, value in (("provider:network_type", "flat"),
                       ("provider:physical_network", "physnet2")):
        assert net_id in _ids(bapi, "networks", f"{key}={value}", "demo")
    for host in ("compute-r1-1", "compute-r2-2", ""):
        assert port_id in _ids(bapi, "ports", f"binding:host_id={host}", "demo")
    assert port_id in _ids(bapi, "ports", "binding:vif_type=unbound", "demo")
    r = bapi.get(f"{N}/ports?binding:host_id=x", user="demo")
    assert all("binding:host_id" not in p for p in r.json()["ports"])


def test_a_member_filtering_subnets_on_segment_id_learns_nothing(bapi):
    demo = _project_named(bapi, "demo")
    net = bapi.post(f"{N}/networks", json={"network": {"name": "s", "project_id": demo}})
    net_id = net.json()["network"]["id"]
    sub = bapi.post(f"{N}/subnets", json={"subnet": {
        "network_id": net_id, "project_id": demo, "ip_version": 4, "cidr": "10.77.0.0/24"}})
    assert sub.status_code == 201, sub.text
    sub_id = sub.json()["subnet"]["id"]
    other = str(uuid.uuid4())
    assert sub_id not in _ids(bapi, "subnets", f"segment_id={other}")
    assert sub_id in _ids(bapi, "subnets", f"segment_id={other}", "demo")
    assert sub_id in _ids(bapi, "subnets", "sort_key=segment_id&sort_dir=asc", "demo")


def test_a_member_filtering_servers_on_host_is_ignored_as_nova_does(bapi):
    headers = {"OpenStack-API-Version": "compute 2.1"}
    everything = bapi.get("/compute/v2.1/servers", user="demo", headers=headers)
    filtered = bapi.get("/compute/v2.1/servers?host=no-such-host&node=x", user="demo",
                        headers=headers)
    assert filtered.status_code == 200, filtered.text
    assert filtered.json() == everything.json()


def _project_named(api: Any, name: str) -> str:
    r = api.get(f"/identity/v3/projects?name={name}")
    return r.json()["projects"][0]["id"]
