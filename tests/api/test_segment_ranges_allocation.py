"""Where project networks take their segmentation ids once ranges exist (spec UseCase I
and II), in-use protection of updates and deletes, the extension switched off, and the
default ranges following the configuration across restarts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackling.network.segments.ranges import Rec, contains, gaps, may_hold, merge, subtract
from tests.conftest import make_api

N = "/networking/v2.0"
R = f"{N}/network_segment_ranges"
# Ten shared VNIs, so a few project ranges can cover all of them.
TINY = {"ml2": {"tenant_network_types": ["vxlan"], "vni_ranges": ["1000:1009"],
                "network_vlan_ranges": ["physnet1:100:109"]}}


# ------------------------------------------------------------------ interval arithmetic
def test_interval_arithmetic():
    assert merge([(5, 9), (1, 3), (4, 4), (20, 30), (25, 26)]) == [(1, 9), (20, 30)]
    assert subtract([(1, 100)], [(10, 19), (50, 200)]) == [(1, 9), (20, 49)]
    assert subtract([(1, 10), (20, 30)], [(5, 25)]) == [(1, 4), (26, 30)]
    assert subtract([(1, 2**32 - 1)], [(1, 2**32 - 1)]) == []
    assert subtract([(1, 2**32 - 1)], [(2, 2)]) == [(1, 1), (3, 2**32 - 1)]
    assert gaps([1, 2, 5, 9], 1, 10) == [(3, 4), (6, 8), (10, 10)]
    assert gaps([], 7, 7) == [(7, 7)]
    ivs = merge([(10, 20), (30, 40)])
    assert [v for v in (9, 10, 20, 21, 35, 41) if contains(ivs, v)] == [10, 20, 35]
    recs = [Rec(1, 100, True, None), Rec(10, 19, False, "a", "ra"),
            Rec(50, 59, False, "b", "rb")]
    assert may_hold(recs, "a") == [(1, 49), (60, 100)]
    assert may_hold(recs, "c") == [(1, 9), (20, 49), (60, 100)]
    assert may_hold(recs, None) == [(1, 9), (20, 49), (60, 100)]


# ------------------------------------------------------------------ helpers
@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    yield from make_api(tmp_path_factory.mktemp("tiny"), network=TINY)


def new_member(api) -> tuple[str, str]:
    """A fresh project with a member user of the same name: (name, project id)."""
    name = f"p{uuid.uuid4().hex[:10]}"
    project = api.post("/identity/v3/projects", json={"project": {
        "name": name, "domain_id": "default"}}).json()["project"]
    user = api.post("/identity/v3/users", json={"user": {
        "name": name, "domain_id": "default", "password": "pw"}}).json()["user"]
    role = api.get("/identity/v3/roles?name=member").json()["roles"][0]
    api.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{role['id']}")
    api.token(name, name, password="pw")
    return name, project["id"]


def project_range(api, project: str, lo: int, hi: int, **extra) -> dict:
    r = api.post(R, json={"network_segment_range": {
        "name": f"r-{lo}", "shared": False, "project_id": project, "network_type": "vxlan",
        "minimum": lo, "maximum": hi, **extra}})
    assert r.status_code == 201, r.text
    return r.json()["network_segment_range"]


def net_vni(api, user: str) -> tuple[int, str] | int:
    """Create a network as `user`: (its VNI as the admin sees it, id), or the error status."""
    r = api.post(f"{N}/networks", user=user, json={"network": {"name": "n"}})
    if r.status_code != 201:
        assert r.json()["NeutronError"]["type"] == "NoNetworkAvailable", r.text
        return r.status_code
    net_id = r.json()["network"]["id"]
    assert "provider:segmentation_id" not in r.json()["network"]  # hidden from members
    shown = api.get(f"{N}/networks/{net_id}").json()["network"]
    assert shown["provider:network_type"] == "vxlan"
    return shown["provider:segmentation_id"], net_id


def show(api, rid: str) -> dict:
    return api.get(f"{R}/{rid}").json()["network_segment_range"]


# ------------------------------------------------------------------ UseCase I
def test_use_case_1_per_project_ranges_and_shared_fallback(tiny):
    api = tiny
    (u1, p1), (u2, p2), (u3, _) = new_member(api), new_member(api), new_member(api)
    r1 = project_range(api, p1, 1000, 1002)
    r2 = project_range(api, p2, 1003, 1006)
    # shared ids for p1 and p3: 1007-1009 (the default minus p2's and p1's ranges)
    mine = [net_vni(api, u1) for _ in range(3)]
    assert sorted(v for v, _ in mine) == [1000, 1001, 1002]
    fallback, _ = net_vni(api, u1)  # its range is full: a shared id, never p2's
    assert 1007 <= fallback <= 1009
    assert show(api, r1["id"])["used"] == {"1000": p1, "1001": p1, "1002": p1}
    assert show(api, r1["id"])["available"] == []
    others = [net_vni(api, u3) for _ in range(2)]
    assert {v for v, _ in others} | {fallback} == {1007, 1008, 1009}
    # shared ids are gone: p3 is refused although p2's range still has free ids
    assert net_vni(api, u3) == 503
    assert show(api, r2["id"])["available"] == [1003, 1004, 1005, 1006]
    # an admin's partial provider request draws from shared ids only
    r = api.post(f"{N}/networks", json={"network": {"provider:network_type": "vxlan"}})
    assert r.status_code == 503 and r.json()["NeutronError"]["type"] == "NoNetworkAvailable"
    # an admin-specified id is unaffected by ranges (even inside p2's, or outside all)
    for vni in (1005, 7777):
        r = api.post(f"{N}/networks", json={"network": {
            "provider:network_type": "vxlan", "provider:segmentation_id": vni}})
        assert r.status_code == 201, r.text
    p2_ids = [net_vni(api, u2) for _ in range(3)]
    assert sorted(v for v, _ in p2_ids) == [1003, 1004, 1006]
    assert net_vni(api, u2) == 503
    admin = api.get("/identity/v3/projects?name=admin").json()["projects"][0]["id"]
    assert show(api, r2["id"])["used"] == {"1003": p2, "1004": p2, "1005": admin,
                                           "1006": p2}


# ------------------------------------------------------------------ UseCase II
def test_use_case_2_updated_range_and_in_use_protection(tiny):
    api = tiny
    user, project = new_member(api)
    rng = project_range(api, project, 5000, 5000)  # outside every shared range
    (first, net_a) = net_vni(api, user)
    assert first == 5000
    # growing keeps the id inside: allowed, and new networks use the new ids
    r = api.put(f"{R}/{rng['id']}", json={"network_segment_range": {"maximum": 5002}})
    assert r.status_code == 200, r.text
    second, net_b = net_vni(api, user)
    assert second in (5001, 5002)
    # moving the range away from an id in use would strand it: 409, nothing changes
    for attrs in ({"minimum": 5001}, {"minimum": 6000, "maximum": 6010}):
        r = api.put(f"{R}/{rng['id']}", json={"network_segment_range": attrs})
        assert r.status_code == 409, r.text
        assert r.json()["NeutronError"] == {
            "type": "NetworkSegmentRangeReferencedByProject", "detail": "",
            "message": f"Network Segment Range {rng['id']} is referenced by one or more "
                       "tenant networks."}
    assert (show(api, rng["id"])["minimum"], show(api, rng["id"])["maximum"]) == (5000, 5002)
    r = api.delete(f"{R}/{rng['id']}")
    assert r.status_code == 409
    # renaming is always allowed, even with the range's own bounds in use
    r = api.put(f"{R}/{rng['id']}", json={"network_segment_range": {"name": "renamed"}})
    assert r.status_code == 200 and r.json()["network_segment_range"]["name"] == "renamed"
    # once the network on 5000 is gone the range may move past it
    assert api.delete(f"{N}/networks/{net_a}").status_code == 204
    r = api.put(f"{R}/{rng['id']}", json={"network_segment_range": {
        "minimum": second, "maximum": 5010}})
    assert r.status_code == 200, r.text
    third, net_c = net_vni(api, user)
    assert second < third <= 5010
    for net in (net_b, net_c):
        assert api.delete(f"{N}/networks/{net}").status_code == 204
    assert api.delete(f"{R}/{rng['id']}").status_code == 204


def test_ids_in_use_block_even_when_a_shared_range_covers_them(tmp_path):
    gen = make_api(tmp_path, network={"ml2": {"tenant_network_types": ["vxlan"],
                                              "vni_ranges": ["1000:1099"]}})
    api = next(gen)
    try:
        (user, project), (_, other) = new_member(api), new_member(api)
        rng = project_range(api, project, 1000, 1000)
        vni, net_id = net_vni(api, user)
        assert vni == 1000
        # 1000 is also in the shared default, yet leaving it behind is refused (upstream)
        r = api.put(f"{R}/{rng['id']}", json={"network_segment_range": {
            "minimum": 1050, "maximum": 1060}})
        assert r.status_code == 409, r.text
        assert api.delete(f"{R}/{rng['id']}").status_code == 409
        # another project's range moved over 1000 now holds it, and may not leave it
        foreign = project_range(api, other, 1001, 1010)
        r = api.put(f"{R}/{foreign['id']}", json={"network_segment_range": {
            "minimum": 999, "maximum": 1010}})
        assert r.status_code == 409  # overlaps the first range
        assert api.get(f"{R}/{foreign['id']}").json()["network_segment_range"]["used"] == {}
        assert api.delete(f"{R}/{foreign['id']}").status_code == 204
        assert api.delete(f"{N}/networks/{net_id}").status_code == 204
        assert api.delete(f"{R}/{rng['id']}").status_code == 204
    finally:
        gen.close()


def test_vlan_project_networks_walk_physnets_in_order(tmp_path):
    gen = make_api(tmp_path, network={"ml2": {
        "tenant_network_types": ["vlan"],
        "network_vlan_ranges": ["physnet1:100:101", "physnet2:200:201"]}})
    api = next(gen)
    try:
        (user, project), (other, _) = new_member(api), new_member(api)
        r = api.post(R, json={"network_segment_range": {
            "shared": False, "project_id": project, "network_type": "vlan",
            "physical_network": "physnet1", "minimum": 3000, "maximum": 3001}})
        assert r.status_code == 201, r.text

        def vlan(user: str) -> tuple[str, int] | int:
            resp = api.post(f"{N}/networks", user=user, json={"network": {}})
            if resp.status_code != 201:
                return resp.status_code
            net = api.get(f"{N}/networks/{resp.json()['network']['id']}").json()["network"]
            return net["provider:physical_network"], net["provider:segmentation_id"]

        assert sorted(vlan(user) for _ in range(2)) == [("physnet1", 3000), ("physnet1", 3001)]
        fallback = vlan(user)  # then physnet1's shared ids
        got = [vlan(other) for _ in range(3)]  # physnet1 until full, then physnet2
        assert sorted([fallback, *got]) == [("physnet1", 100), ("physnet1", 101),
                                            ("physnet2", 200), ("physnet2", 201)]
        assert [g[0] for g in got] == ["physnet1", "physnet2", "physnet2"]
        assert vlan(other) == 503 and vlan(user) == 503
        # an admin's partial request names no project: shared ids only (none left)
        resp = api.post(f"{N}/networks", json={"network": {
            "provider:network_type": "vlan", "provider:physical_network": "physnet1"}})
        assert resp.status_code == 503
    finally:
        gen.close()


# ------------------------------------------------------------------ extension switched off
def test_disabled_extension_keeps_configured_ranges(tmp_path):
    gen = make_api(tmp_path, network={**TINY, "network_segment_range": False})
    api = next(gen)
    try:
        assert api.get(f"{N}/extensions/network-segment-range").status_code == 404
        aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
        assert "network-segment-range" not in aliases and "provider" in aliases
        for r in (api.get(R), api.get(f"{R}/x"), api.delete(f"{R}/x"),
                  api.post(R, json={"network_segment_range": {
                      "network_type": "vxlan", "minimum": 1, "maximum": 2}})):
            assert r.status_code == 404, r.text
        user, _ = new_member(api)
        vnis = [net_vni(api, user)[0] for _ in range(10)]
        assert sorted(vnis) == list(range(1000, 1010))
        assert net_vni(api, user) == 503
    finally:
        gen.close()


# ------------------------------------------------------------------ defaults follow the configuration
def test_changed_configuration_replaces_defaults_and_keeps_allocations(tmp_path: Path):
    first = make_api(tmp_path, network=TINY)
    api = next(first)
    user, project = new_member(api)
    vni, net_id = net_vni(api, user)
    old = {r["id"] for r in api.get(R).json()["network_segment_ranges"]}
    first.close()

    changed = {"ml2": {"tenant_network_types": ["vxlan"], "vni_ranges": ["2000:2004"],
                       "network_vlan_ranges": ["physnet1:100:109"],
                       "type_drivers": ["flat", "vlan", "vxlan"]}}
    second = make_api(tmp_path, network=changed)
    api = next(second)
    try:
        ranges = api.get(R).json()["network_segment_ranges"]
        assert {(r["network_type"], r["minimum"], r["maximum"]) for r in ranges} == {
            ("vlan", 100, 109), ("vxlan", 2000, 2004)}
        vlan = next(r for r in ranges if r["network_type"] == "vlan")
        assert vlan["id"] in old  # unchanged defaults keep their rows
        # the network keeps its id, which stays taken although no range covers it now
        shown = api.get(f"{N}/networks/{net_id}").json()["network"]
        assert shown["provider:segmentation_id"] == vni
        r = api.post(f"{N}/networks", json={"network": {
            "provider:network_type": "vxlan", "provider:segmentation_id": vni}})
        assert r.status_code == 409
        user2, _ = new_member(api)
        assert sorted(net_vni(api, user2)[0] for _ in range(5)) == list(range(2000, 2005))
        assert net_vni(api, user2) == 503
    finally:
        second.close()
