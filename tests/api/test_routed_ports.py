"""Ports on routed networks over the in-process app (demo hosts: compute-r1-* reach
physnet1, compute-r2-* physnet2): `ip_allocation` immediate/deferred/none, the deferred
address at first binding, the binding conflicts, placement usage per port, host
remapping, and the audit finding nothing after each test."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from stackling.audit import run_audit
from tests.api.test_segments import (
    PLACEMENT,
    add_segment,
    add_subnet,
    err,
    first_segment,
    inventory,
    no_audit_findings,
    vlan_network,
)

N = "/networking/v2.0"


@pytest.fixture(autouse=True)
def audited(api):
    yield
    no_audit_findings(api)


@pytest.fixture(scope="module")
def routed(api):
    """Segment 1 on physnet1 (10.60.1.0/24, 4 addresses), segment 2 on physnet2."""
    net = vlan_network(api, name="routed-ports")
    seg1 = first_segment(api, net["id"])
    seg2 = add_segment(api, net["id"])
    s1 = add_subnet(api, net["id"], "10.60.1.0/24", seg1["id"],
                    allocation_pools=[{"start": "10.60.1.10", "end": "10.60.1.13"}])
    s2 = add_subnet(api, net["id"], "10.60.2.0/24", seg2["id"])
    return net, {"seg1": seg1["id"], "seg2": seg2["id"], "s1": s1, "s2": s2}


def create_port(api, net_id: str, **extra) -> dict:
    r = api.post(f"{N}/ports", json={"port": {"network_id": net_id, **extra}})
    assert r.status_code == 201, r.text
    return r.json()["port"]


def usage(api, seg: str) -> int:
    r = api.get(f"/placement/resource_providers/{seg}/usages", headers=PLACEMENT)
    return r.json()["usages"].get("IPV4_ADDRESS", 0)


def test_ip_allocation_values(api, routed):
    net, t = routed
    deferred = create_port(api, net["id"])
    assert deferred["ip_allocation"] == "deferred" and deferred["fixed_ips"] == []
    none = create_port(api, net["id"], fixed_ips=[])
    assert none["ip_allocation"] == "none" and none["fixed_ips"] == []
    bound = create_port(api, net["id"], **{"binding:host_id": "compute-r2-1"})
    assert bound["ip_allocation"] == "immediate"
    assert bound["fixed_ips"][0]["subnet_id"] == t["s2"]["id"]
    fixed = create_port(api, net["id"], fixed_ips=[{"subnet_id": t["s1"]["id"]}])
    assert fixed["ip_allocation"] == "immediate"
    plain = vlan_network(api, name="not-routed")
    add_subnet(api, plain["id"], "10.61.0.0/24")
    assert create_port(api, plain["id"])["ip_allocation"] == "immediate"
    listed = api.get(f"{N}/ports?network_id={net['id']}&ip_allocation=deferred").json()["ports"]
    assert [p["id"] for p in listed] == [deferred["id"]]
    for p in (deferred, none, bound, fixed):
        api.delete(f"{N}/ports/{p['id']}")


def test_deferred_port_gets_its_address_when_bound(api, routed):
    net, t = routed
    port = create_port(api, net["id"], device_owner="compute:nova")
    before = usage(api, t["seg2"])
    r = api.put(f"{N}/ports/{port['id']}", json={"port": {"binding:host_id": "compute-r2-2"}})
    assert r.status_code == 200, r.text
    bound = r.json()["port"]
    assert [ip["subnet_id"] for ip in bound["fixed_ips"]] == [t["s2"]["id"]]
    assert bound["binding:vif_type"] == "ovs"
    assert usage(api, t["seg2"]) == before + 1
    alloc = api.get(f"/placement/allocations/{port['id']}", headers=PLACEMENT).json()
    assert alloc["allocations"] == {t["seg2"]: {"generation": alloc["allocations"][t["seg2"]][
        "generation"], "resources": {"IPV4_ADDRESS": 1}}}
    # moving it to a host of the other rack cannot keep its address
    err(api.put(f"{N}/ports/{port['id']}", json={"port": {"binding:host_id": "compute-r1-1"}}),
        409, "HostNotCompatibleWithFixedIps", f"port {port['id']}")
    assert api.get(f"{N}/ports/{port['id']}").json()["port"]["binding:host_id"] == "compute-r2-2"
    api.delete(f"{N}/ports/{port['id']}")
    assert usage(api, t["seg2"]) == before


def test_host_not_connected_changes_nothing(api, routed):
    net, _ = routed
    only1 = vlan_network(api, name="rack1-only")
    seg = first_segment(api, only1["id"])
    add_subnet(api, only1["id"], "10.62.1.0/24", seg["id"])
    before = api.get(f"{N}/ports?network_id={only1['id']}").json()["ports"]
    err(api.post(f"{N}/ports", json={"port": {"network_id": only1["id"],
                                              "binding:host_id": "compute-r2-1"}}),
        409, "HostNotConnectedToAnySegment", "Host compute-r2-1 is not connected")
    port = create_port(api, only1["id"])
    err(api.put(f"{N}/ports/{port['id']}", json={"port": {"binding:host_id": "compute-r2-1",
                                                         "name": "renamed"}}),
        409, "HostNotConnectedToAnySegment")
    shown = api.get(f"{N}/ports/{port['id']}").json()["port"]
    assert shown["binding:host_id"] == "" and shown["name"] == "" and shown["fixed_ips"] == []
    after = api.get(f"{N}/ports?network_id={only1['id']}").json()["ports"]
    assert len(after) == len(before) + 1
    api.delete(f"{N}/ports/{port['id']}")


def test_exhausted_segment_is_a_409_and_placement_agrees(api, routed):
    net, t = routed
    inv = inventory(api, t["seg1"])
    # 4 pool addresses; capacity = 4 + 1 (gateway) - 2 (gateway, DHCP) = 3
    assert (inv["total"], inv["reserved"]) == (5, 2)
    ports = [create_port(api, net["id"], device_owner="compute:nova") for _ in range(4)]
    for p in ports[:3]:
        r = api.put(f"{N}/ports/{p['id']}", json={"port": {"binding:host_id": "compute-r1-1"}})
        assert r.status_code == 200, r.text
    assert usage(api, t["seg1"]) == 3
    err(api.put(f"{N}/ports/{ports[3]['id']}", json={"port": {"binding:host_id":
                                                             "compute-r1-2"}}),
        409, "IpAddressGenerationFailure")
    assert api.get(f"{N}/ports/{ports[3]['id']}").json()["port"]["fixed_ips"] == []
    assert usage(api, t["seg1"]) == 3
    for p in ports:
        api.delete(f"{N}/ports/{p['id']}")
    assert usage(api, t["seg1"]) == 0


def test_fixed_ips_on_two_segments_refused(api, routed):
    net, t = routed
    err(api.post(f"{N}/ports", json={"port": {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": t["s1"]["id"]}, {"subnet_id": t["s2"]["id"]}]}}),
        400, "FixedIpsSubnetsNotOnSameSegment")


def test_service_port_reserves_and_owner_change_moves_it_to_usage(api, routed):
    net, t = routed
    reserved = inventory(api, t["seg2"])["reserved"]
    port = create_port(api, net["id"], fixed_ips=[{"subnet_id": t["s2"]["id"]}])
    assert inventory(api, t["seg2"])["reserved"] == reserved + 1
    used = usage(api, t["seg2"])
    api.put(f"{N}/ports/{port['id']}", json={"port": {"device_owner": "compute:nova"}})
    assert inventory(api, t["seg2"])["reserved"] == reserved
    assert usage(api, t["seg2"]) == used + 1
    api.put(f"{N}/ports/{port['id']}", json={"port": {"fixed_ips": []}})
    assert usage(api, t["seg2"]) == used
    api.delete(f"{N}/ports/{port['id']}")


def test_host_remap_moves_aggregate_membership(api, routed):
    """A host re-registered with other physical networks changes segments and aggregates
    in the same transaction."""
    from stackling.network.segments import host_mapping
    from stackling.network.segments import routed as routed_logic

    _net, t = routed
    with api.runtime.db.transaction() as db:
        host_mapping.record_hosts(db, [("compute-r1-2", ["public", "physnet2"])])
    with api.runtime.db.transaction(write=False) as db:
        assert "compute-r1-2" in host_mapping.hosts_for_segment(db, t["seg2"])
        assert "compute-r1-2" not in host_mapping.hosts_for_segment(db, t["seg1"])
        from stackling.compute.hosts import host_aggregate_uuids

        aggs = host_aggregate_uuids(db, "compute-r1-2")["compute-r1-2"]
        assert routed_logic.aggregate_uuid(db, t["seg2"]) in aggs
        assert routed_logic.aggregate_uuid(db, t["seg1"]) not in aggs
        assert run_audit(db) == []
    with api.runtime.db.transaction() as db:
        host_mapping.record_hosts(db, [("compute-r1-2", ["public", "physnet1"])])
    with api.runtime.db.transaction(write=False) as db:
        from stackling.network.segments.models import NetworkHost

        assert db.scalar(select(NetworkHost.physical_networks).where(
            NetworkHost.host == "compute-r1-2")) == ["physnet1", "public"]


def test_interface_for_compute(api, routed):
    from stackling.network import interface

    net, t = routed
    with api.runtime.db.transaction(write=False) as db:
        assert interface.is_routed_network(db, net["id"])
        assert interface.segments_for_host(db, "compute-r1-1", net["id"]) == [t["seg1"]]
        assert interface.hosts_for_segment(db, t["seg2"]) == ["compute-r2-1", "compute-r2-2"]
        aggs = interface.network_segment_aggregates(db, net["id"])
        assert sorted(aggs) == sorted([interface.segment_aggregate_uuid(db, t["seg1"]),
                                       interface.segment_aggregate_uuid(db, t["seg2"])])
        assert interface.segment_free_ipv4(db, t["seg1"]) == 3
    port = create_port(api, net["id"], fixed_ips=[{"subnet_id": t["s1"]["id"]}])
    with api.runtime.db.transaction(write=False) as db:
        assert interface.segment_of_port(db, port["id"]) == t["seg1"]
    api.delete(f"{N}/ports/{port['id']}")


def test_audit_reports_drift(api, routed):
    """The audit sees a hand-made difference (and the API over it needs an admin)."""
    _net, t = routed
    from stackling.placement import interface as placement

    with api.runtime.db.transaction() as db:
        placement.update_inventory_for_class(db, t["seg1"], "IPV4_ADDRESS", {
            "total": 99, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1,
            "allocation_ratio": 1.0})
    r = api.get("/audit")
    assert r.status_code == 200
    found = r.json()["findings"]
    assert [f["check"] for f in found] == ["routed.inventory"]
    assert found[0]["resource"] == t["seg1"]
    assert api.get("/audit", user="demo").status_code == 403
    assert api.get("/audit", user=None).status_code == 401
    with api.runtime.db.transaction() as db:  # repair, as any later change would
        from stackling.network.segments import routed as routed_logic

        routed_logic.sync_segment(db, t["seg1"])


def test_audit_reads_compute_aggregates_through_the_hooks(api, routed):
    """Network reads compute's aggregates only through what compute registers: a host
    taken out of a segment's aggregate behind network's back is reported, with the
    aggregate and the hosts expected and found."""
    from stackling.network import interface

    _net, t = routed
    with api.runtime.db.transaction() as db:
        agg_uuid = interface.segment_aggregate_uuid(db, t["seg2"])
    aggs = api.get("/compute/v2.1/os-aggregates",  # uuids from 2.41
                   headers={"OpenStack-API-Version": "compute 2.41"}).json()["aggregates"]
    agg = next(a for a in aggs if a["uuid"] == agg_uuid)
    r = api.post(f"/compute/v2.1/os-aggregates/{agg['id']}/action",
                 json={"remove_host": {"host": "compute-r2-1"}})
    assert r.status_code == 200, r.text
    found = [f for f in api.get("/audit").json()["findings"]
             if f["check"] == "routed.aggregate_hosts"]
    assert found == [{"check": "routed.aggregate_hosts", "resource": agg_uuid,
                      "expected": ["compute-r2-1", "compute-r2-2"],
                      "actual": ["compute-r2-2"], "message": ""}]
    r = api.post(f"/compute/v2.1/os-aggregates/{agg['id']}/action",
                 json={"add_host": {"host": "compute-r2-1"}})
    assert r.status_code == 200, r.text
    assert api.get("/audit").json()["findings"] == []


def test_host_on_two_segments_uses_one_then_the_next(api):
    """A host reaching two segments of a network takes addresses from one segment only,
    the first with room, then the other."""
    net = vlan_network(api, name="two-on-rack1")
    seg_a = first_segment(api, net["id"])
    seg_b = add_segment(api, net["id"], physnet="physnet1")
    a = add_subnet(api, net["id"], "10.63.1.0/24", seg_a["id"],
                   allocation_pools=[{"start": "10.63.1.10", "end": "10.63.1.12"}])
    b = add_subnet(api, net["id"], "10.63.2.0/24", seg_b["id"])
    add_subnet(api, net["id"], "fd63::/64", seg_b["id"], ip_version=6)
    got = []
    for _ in range(3):
        port = create_port(api, net["id"], device_owner="compute:nova",
                           **{"binding:host_id": "compute-r1-1"})
        got.append({ip["subnet_id"] for ip in port["fixed_ips"]})
    # segment a: 3 pool addresses, capacity 3 + 1 - 2 = 2; then segment b (v4 and v6)
    assert got[:2] == [{a["id"]}, {a["id"]}]
    assert b["id"] in got[2] and a["id"] not in got[2]
    for p in api.get(f"{N}/ports?network_id={net['id']}").json()["ports"]:
        api.delete(f"{N}/ports/{p['id']}")
