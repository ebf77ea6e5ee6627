"""Segments and subnets on segments over the in-process app (demo configuration: hosts
compute-r1-* reach physnet1, compute-r2-* physnet2): the `/v2.0/segments` resource,
multi-segment networks, the subnet `segment_id` rules, peer-subnet host routes and the
segment's placement provider, inventory and host aggregate."""

from __future__ import annotations

import pytest

from stackling.audit import run_audit

N = "/networking/v2.0"
S = f"{N}/segments"
PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}
RACK1 = ["compute-r1-1", "compute-r1-2"]
RACK2 = ["compute-r2-1", "compute-r2-2"]
FIELDS = {"id", "network_id", "name", "network_type", "physical_network", "segmentation_id",
          "description", "created_at", "updated_at", "revision_number", "tags"}


def err(r, status: int, type_: str, message: str | None = None) -> None:
    assert r.status_code == status, r.text
    body = r.json()["NeutronError"]
    assert body["type"] == type_, body
    if message:
        assert message in body["message"], body


def vlan_network(api, physnet: str = "physnet1", name: str = "routed") -> dict:
    r = api.post(f"{N}/networks", json={"network": {
        "name": name, "provider:network_type": "vlan", "provider:physical_network": physnet}})
    assert r.status_code == 201, r.text
    return r.json()["network"]


def first_segment(api, net_id: str) -> dict:
    return api.get(f"{S}?network_id={net_id}").json()["segments"][0]


def add_segment(api, net_id: str, physnet: str = "physnet2", **extra) -> dict:
    r = api.post(S, json={"segment": {"network_id": net_id, "network_type": "vlan",
                                      "physical_network": physnet, **extra}})
    assert r.status_code == 201, r.text
    return r.json()["segment"]


def add_subnet(api, net_id: str, cidr: str, segment_id: str | None = None, **extra) -> dict:
    body = {"network_id": net_id, "cidr": cidr, "ip_version": 4, **extra}
    if segment_id is not None:
        body["segment_id"] = segment_id
    r = api.post(f"{N}/subnets", json={"subnet": body})
    assert r.status_code == 201, r.text
    return r.json()["subnet"]


def inventory(api, seg_id: str) -> dict | None:
    r = api.get(f"/placement/resource_providers/{seg_id}/inventories", headers=PLACEMENT)
    if r.status_code == 404:
        return None
    return r.json()["inventories"].get("IPV4_ADDRESS")


def no_audit_findings(api) -> None:
    with api.runtime.db.transaction(write=False) as db:
        assert run_audit(db) == []


@pytest.fixture(autouse=True)
def audited(api):
    yield
    no_audit_findings(api)


# ------------------------------------------------------------------ the resource
def test_extensions_are_advertised(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"segment", "standard-attr-segment", "ip_allocation", "l2_adjacency",
            "subnet-segmentid-writable", "segments-peer-subnet-host-routes"} <= aliases
    collections = {x["collection"] for x in api.get(f"{N}/", user=None).json()["resources"]}
    assert "segments" in collections


def test_crud_and_multi_segment_network(api):
    net = vlan_network(api, name="crud")
    seg1 = first_segment(api, net["id"])
    assert set(seg1) == FIELDS and seg1["name"] is None and seg1["physical_network"] == "physnet1"
    assert 100 <= seg1["segmentation_id"] <= 199  # the physnet1 range of the demo config
    seg2 = add_segment(api, net["id"], name="rack2", description="second rack",
                       tags=["r2"])
    assert set(seg2) == FIELDS and 200 <= seg2["segmentation_id"] <= 299
    assert seg2["tags"] == ["r2"] and seg2["description"] == "second rack"
    shown = api.get(f"{N}/networks/{net['id']}").json()["network"]
    assert "provider:network_type" not in shown
    assert shown["segments"] == [
        {"provider:network_type": "vlan", "provider:physical_network": "physnet1",
         "provider:segmentation_id": seg1["segmentation_id"]},
        {"provider:network_type": "vlan", "provider:physical_network": "physnet2",
         "provider:segmentation_id": seg2["segmentation_id"]}]
    assert shown["revision_number"] == net["revision_number"] + 1
    assert api.put(f"{S}/{seg2['id']}/tags/extra").status_code == 201
    assert sorted(api.get(f"{S}/{seg2['id']}/tags").json()["tags"]) == ["extra", "r2"]
    assert [s["id"] for s in api.get(f"{S}?tags=extra").json()["segments"]] == [seg2["id"]]
    assert api.delete(f"{S}/{seg2['id']}/tags/extra").status_code == 204
    r = api.put(f"{S}/{seg2['id']}", json={"segment": {"name": "renamed"}})
    assert r.status_code == 200 and r.json()["segment"]["name"] == "renamed"
    assert r.json()["segment"]["revision_number"] == 3  # two tag changes, the rename
    err(api.put(f"{S}/{seg2['id']}", json={"segment": {"physical_network": "x"}}), 400,
        "HTTPBadRequest", "Cannot update read-only attribute")
    assert api.delete(f"{S}/{seg2['id']}").status_code == 204
    err(api.get(f"{S}/{seg2['id']}"), 404, "SegmentNotFound")
    shown = api.get(f"{N}/networks/{net['id']}").json()["network"]
    assert shown["provider:segmentation_id"] == seg1["segmentation_id"]
    assert "segments" not in shown


def test_segment_ids_come_from_the_ranges_and_return_on_network_delete(api):
    net = vlan_network(api, name="ids")
    seg = add_segment(api, net["id"], segmentation_id=250)
    err(api.post(S, json={"segment": {"network_id": net["id"], "network_type": "vlan",
                                      "physical_network": "physnet2",
                                      "segmentation_id": 250}}), 409, "VlanIdInUse")
    ranges = api.get(f"{N}/network_segment_ranges?network_type=vlan").json()
    physnet2 = next(r for r in ranges["network_segment_ranges"]
                    if r["physical_network"] == "physnet2")
    assert 250 not in physnet2["available"]
    assert api.delete(f"{N}/networks/{net['id']}").status_code == 204
    err(api.get(f"{S}/{seg['id']}"), 404, "SegmentNotFound")
    r = api.post(S, json={"segment": {"network_id": vlan_network(api, name="ids2")["id"],
                                      "network_type": "vlan", "physical_network": "physnet2",
                                      "segmentation_id": 250}})
    assert r.status_code == 201, r.text


def test_tunnel_segment_lowers_the_mtu(api):
    net = vlan_network(api, name="mtu")
    assert net["mtu"] == 1500
    r = api.post(S, json={"segment": {"network_id": net["id"], "network_type": "vxlan"}})
    assert r.status_code == 201, r.text
    assert r.json()["segment"]["physical_network"] is None
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["mtu"] == 1450


def test_validation_and_errors(api):
    net = vlan_network(api, name="bad")
    err(api.post(S, json={"segment": {"network_id": net["id"]}}), 400, "HTTPBadRequest",
        "Required attribute 'network_type'")
    err(api.post(S, json={"segment": {"network_id": "0" * 8 + "-0000-0000-0000-" + "0" * 12,
                                      "network_type": "vxlan"}}), 404, "NetworkNotFound")
    err(api.post(S, json={"segment": {"network_id": net["id"], "network_type": "vlan",
                                      "physical_network": "nowhere"}}), 400, "InvalidInput")
    err(api.post(S, json={"segment": {"network_id": net["id"], "network_type": "bogus"}}),
        400, "InvalidInput")
    err(api.get(f"{S}?segmentation_id=5"), 400, "HTTPBadRequest")
    err(api.get(f"{S}?sort_key=description"), 400, "HTTPBadRequest")


def test_filters_sorting_and_paging(api):
    net = vlan_network(api, name="listing")
    add_segment(api, net["id"], name="b")
    add_segment(api, net["id"], physnet="physnet1", name="a")
    rows = api.get(f"{S}?network_id={net['id']}&sort_key=name&sort_dir=asc").json()["segments"]
    assert [s["name"] for s in rows] == [None, "a", "b"]
    rows = api.get(f"{S}?network_id={net['id']}&physical_network=physnet1").json()["segments"]
    assert len(rows) == 2
    page = api.get(f"{S}?network_id={net['id']}&limit=2&sort_key=segmentation_id").json()
    assert len(page["segments"]) == 2 and page["segments_links"][0]["rel"] == "next"
    only = api.get(f"{S}?network_id={net['id']}&fields=id&fields=name").json()["segments"]
    assert all(set(s) == {"id", "name"} for s in only)


def test_admin_only(api):
    net = vlan_network(api, name="policy")
    seg = first_segment(api, net["id"])
    assert api.get(S, user="demo").json() == {"segments": []}
    err(api.get(f"{S}/{seg['id']}", user="demo"), 404, "SegmentNotFound")
    r = api.post(S, user="demo", json={"segment": {"network_id": net["id"],
                                                   "network_type": "vxlan"}})
    assert r.status_code in (403, 404)
    err(api.delete(f"{S}/{seg['id']}", user="demo"), 404, "SegmentNotFound")
    demo_net = api.post(f"{N}/networks", user="demo", json={"network": {}}).json()["network"]
    assert "provider:network_type" not in demo_net and "segments" not in demo_net


# ------------------------------------------------------------------ subnets on segments
def test_subnet_segment_rules(api):
    net = vlan_network(api, name="rules")
    seg1 = first_segment(api, net["id"])
    seg2 = add_segment(api, net["id"])
    other = vlan_network(api, name="other")
    err(api.post(f"{N}/subnets", json={"subnet": {
        "network_id": net["id"], "cidr": "10.50.9.0/24", "ip_version": 4,
        "segment_id": first_segment(api, other["id"])["id"]}}), 400, "NetworkIdsDontMatch")
    s1 = add_subnet(api, net["id"], "10.50.1.0/24", seg1["id"])
    assert s1["segment_id"] == seg1["id"]
    err(api.post(f"{N}/subnets", json={"subnet": {
        "network_id": net["id"], "cidr": "10.50.3.0/24", "ip_version": 4}}), 400,
        "SubnetsNotAllAssociatedWithSegments")
    add_subnet(api, net["id"], "10.50.2.0/24", seg2["id"])
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["l2_adjacency"] is False
    err(api.put(f"{N}/subnets/{s1['id']}", json={"subnet": {"segment_id": seg2["id"]}}), 400,
        "SubnetSegmentAssociationChangeNotAllowed")
    err(api.delete(f"{S}/{seg1['id']}"), 409, "SegmentInUse", s1["id"])
    # segment_id is admin-only: hidden from the owner, refused on write
    demo = api.get(f"{N}/subnets/{s1['id']}", user="demo")
    assert demo.status_code == 404


def test_segment_id_writable_only_on_a_one_segment_network(api):
    net = vlan_network(api, name="writable")
    seg = first_segment(api, net["id"])
    subnet = add_subnet(api, net["id"], "10.51.1.0/24")
    port = api.post(f"{N}/ports", json={"port": {"network_id": net["id"],
                                                 "device_owner": "compute:nova"}}).json()["port"]
    assert inventory(api, seg["id"]) is None
    r = api.put(f"{N}/subnets/{subnet['id']}", json={"subnet": {"segment_id": seg["id"]}})
    assert r.status_code == 200, r.text
    assert r.json()["subnet"]["segment_id"] == seg["id"]
    # treated as a new subnet: provider, inventory, and the existing compute port's usage
    inv = inventory(api, seg["id"])
    assert inv["total"] == 253 + 1 and inv["reserved"] == 2
    usage = api.get(f"/placement/resource_providers/{seg['id']}/usages",
                    headers=PLACEMENT).json()["usages"]
    assert usage == {"IPV4_ADDRESS": 1}
    api.delete(f"{N}/ports/{port['id']}")
    net2 = vlan_network(api, name="writable2")
    seg_a = first_segment(api, net2["id"])
    add_segment(api, net2["id"])
    s2 = add_subnet(api, net2["id"], "10.51.2.0/24")
    err(api.put(f"{N}/subnets/{s2['id']}", json={"subnet": {"segment_id": seg_a["id"]}}), 400,
        "NoUpdateSubnetWhenMultipleSegmentsOnNetwork")


def test_peer_subnet_host_routes(api):
    net = vlan_network(api, name="peers")
    seg1 = first_segment(api, net["id"])
    seg2 = add_segment(api, net["id"])
    a = add_subnet(api, net["id"], "10.52.1.0/24", seg1["id"])
    assert a["host_routes"] == []
    b = add_subnet(api, net["id"], "10.52.2.0/24", seg2["id"])
    assert b["host_routes"] == [{"destination": "10.52.1.0/24", "nexthop": "10.52.2.1"}]
    a = api.get(f"{N}/subnets/{a['id']}").json()["subnet"]
    assert a["host_routes"] == [{"destination": "10.52.2.0/24", "nexthop": "10.52.1.1"}]
    # a same-segment sibling gets no route to its own segment's subnets
    c = add_subnet(api, net["id"], "10.52.3.0/24", seg2["id"])
    assert c["host_routes"] == [{"destination": "10.52.1.0/24", "nexthop": "10.52.3.1"}]
    # the gateway moves: its routes follow
    r = api.put(f"{N}/subnets/{b['id']}", json={"subnet": {"gateway_ip": "10.52.2.254",
                                                          "allocation_pools": [
                                                              {"start": "10.52.2.2",
                                                               "end": "10.52.2.200"}]}})
    assert r.status_code == 200, r.text
    assert r.json()["subnet"]["host_routes"] == [
        {"destination": "10.52.1.0/24", "nexthop": "10.52.2.254"}]
    assert api.delete(f"{N}/subnets/{b['id']}").status_code == 204
    a = api.get(f"{N}/subnets/{a['id']}").json()["subnet"]
    assert a["host_routes"] == [{"destination": "10.52.3.0/24", "nexthop": "10.52.1.1"}]


# ------------------------------------------------------------------ placement
def test_segment_provider_inventory_and_aggregate(api):
    net = vlan_network(api, name="placed")
    seg1 = first_segment(api, net["id"])
    seg2 = add_segment(api, net["id"])
    assert inventory(api, seg1["id"]) is None
    add_subnet(api, net["id"], "10.53.1.0/24", seg1["id"],
               allocation_pools=[{"start": "10.53.1.10", "end": "10.53.1.19"}])
    rp = api.get(f"/placement/resource_providers/{seg1['id']}", headers=PLACEMENT).json()
    assert rp["name"] == f"Neutron segment id {seg1['id']}"
    assert inventory(api, seg1["id"]) == {
        "total": 11, "reserved": 2, "min_unit": 1, "max_unit": 1, "step_size": 1,
        "allocation_ratio": 1.0}
    aggs = api.get(f"/placement/resource_providers/{seg1['id']}/aggregates",
                   headers=PLACEMENT).json()["aggregates"]
    assert len(aggs) == 1
    nova = api.get("/compute/v2.1/os-aggregates",
                   headers={"OpenStack-API-Version": "compute 2.41"}).json()["aggregates"]
    agg = next(a for a in nova if a["uuid"] == aggs[0])
    assert agg["name"] == f"Neutron segment id {seg1['id']}"
    assert sorted(agg["hosts"]) == RACK1 and agg["availability_zone"] is None
    hosts = api.get("/placement/resource_providers", headers=PLACEMENT,
                    params={"member_of": aggs[0]}).json()["resource_providers"]
    assert sorted(h["name"] for h in hosts) == [rp["name"], *RACK1]
    # a second subnet on the segment adds to the inventory; DHCP off reserves less
    s2 = add_subnet(api, net["id"], "10.53.2.0/24", seg1["id"], enable_dhcp=False,
                    allocation_pools=[{"start": "10.53.2.10", "end": "10.53.2.14"}])
    assert inventory(api, seg1["id"])["total"] == 11 + 6
    assert inventory(api, seg1["id"])["reserved"] == 2 + 1
    # IPv6 is not reported; a router-less service port reserves its address
    port = api.post(f"{N}/ports", json={"port": {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": s2["id"]}]}}).json()["port"]
    assert inventory(api, seg1["id"])["reserved"] == 4
    api.put(f"{N}/ports/{port['id']}", json={"port": {"device_owner": "compute:nova"}})
    assert inventory(api, seg1["id"])["reserved"] == 3
    usage = api.get(f"/placement/resource_providers/{seg1['id']}/usages",
                    headers=PLACEMENT).json()["usages"]
    assert usage == {"IPV4_ADDRESS": 1}
    alloc = api.get(f"/placement/allocations/{port['id']}", headers=PLACEMENT).json()
    assert alloc["allocations"][seg1["id"]]["resources"] == {"IPV4_ADDRESS": 1}
    api.delete(f"{N}/ports/{port['id']}")
    assert api.get(f"/placement/allocations/{port['id']}",
                   headers=PLACEMENT).json()["allocations"] == {}
    # the last IPv4 subnet goes: provider and aggregate go with it
    for s in api.get(f"{N}/subnets?network_id={net['id']}").json()["subnets"]:
        assert api.delete(f"{N}/subnets/{s['id']}").status_code == 204
    assert inventory(api, seg1["id"]) is None
    nova = api.get("/compute/v2.1/os-aggregates",
                   headers={"OpenStack-API-Version": "compute 2.41"}).json()["aggregates"]
    assert all(a["uuid"] != aggs[0] for a in nova)
    assert inventory(api, seg2["id"]) is None


def test_network_delete_removes_providers(api):
    net = vlan_network(api, name="gone")
    seg = first_segment(api, net["id"])
    add_subnet(api, net["id"], "10.54.1.0/24", seg["id"])
    assert inventory(api, seg["id"]) is not None
    assert api.delete(f"{N}/networks/{net['id']}").status_code == 204
    assert inventory(api, seg["id"]) is None
