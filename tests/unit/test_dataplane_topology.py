"""The wire's plan (stackling/dataplane/topology.py) from a desired state alone: which host
carries which segment, where a port plugs or why it cannot, and which ToR holds which
gateway."""

from __future__ import annotations

from typing import Any

from stackling.dataplane.desired import Desired
from stackling.dataplane.names import Names
from stackling.dataplane.topology import plan

NAMES = Names("sl0000")


def _seg(seg_id: str, net: str, kind: str, physnet: str | None, sid: int | None,
         index: int = 0) -> dict[str, Any]:
    return {"id": seg_id, "network_id": net, "network_type": kind, "physical_network": physnet,
            "segmentation_id": sid, "segment_index": index}


def _port(port_id: str, net: str, device: str, fixed: list[tuple[str, str]],
          owner: str = "compute:nova") -> dict[str, Any]:
    return {"id": port_id, "network_id": net, "device_id": device, "device_owner": owner,
            "mac_address": "fa:16:3e:00:00:01",
            "fixed_ips": [{"subnet_id": s, "ip_address": ip} for s, ip in fixed]}


def _desired() -> Desired:
    networks = {"routed": {"id": "routed", "subnets": ["s1", "s2"], "mtu": 1500},
                "tenant": {"id": "tenant", "subnets": ["t1"], "mtu": 1450}}
    subnets = {
        "s1": {"id": "s1", "cidr": "10.91.1.0/24", "gateway_ip": "10.91.1.1", "ip_version": 4,
               "segment_id": "seg1", "enable_dhcp": True},
        "s2": {"id": "s2", "cidr": "10.91.2.0/24", "gateway_ip": "10.91.2.1", "ip_version": 4,
               "segment_id": "seg2", "enable_dhcp": True},
        "t1": {"id": "t1", "cidr": "10.0.0.0/24", "gateway_ip": "10.0.0.1", "ip_version": 4,
               "segment_id": None, "enable_dhcp": True}}
    ports = {p["id"]: p for p in (
        _port("p1", "routed", "vm1", [("s1", "10.91.1.10")]),
        _port("p2", "routed", "vm2", [("s2", "10.91.2.10")]),
        _port("p3", "routed", "vm3", [("s2", "10.91.2.11")]),  # on rack 1's host: cut
        _port("p4", "tenant", "vm1", [("t1", "10.0.0.4")]))}
    servers = {
        "vm1": {"id": "vm1", "host": "compute-r1-1", "state": "running"},
        "vm2": {"id": "vm2", "host": "compute-r2-1", "state": "running"},
        "vm3": {"id": "vm3", "host": "compute-r1-2", "state": "running"}}
    d = Desired(networks, subnets, ports, servers, {}, [], {})
    d.segments = {s["id"]: s for s in (
        _seg("seg1", "routed", "vlan", "physnet1", 2016),
        _seg("seg2", "routed", "vlan", "physnet2", 2017, 1),
        _seg("segt", "tenant", "vxlan", None, 200))}
    d.hosts = {"compute-r1-1": ["physnet1", "public"], "compute-r1-2": ["physnet1", "public"],
               "compute-r2-1": ["physnet2", "public"], "compute-r2-2": ["physnet2", "public"]}
    return d


def test_ports_plug_on_their_segment_on_their_host_or_are_cut() -> None:
    p = plan(_desired(), NAMES)
    assert p.placement["p1"] == (NAMES.host("compute-r1-1"), "seg1")
    assert p.placement["p2"] == (NAMES.host("compute-r2-1"), "seg2")
    assert p.placement["p4"] == (NAMES.host("compute-r1-1"), "segt")
    assert "p3" not in p.placement and "compute-r1-2" in p.cuts["p3"]
    assert p.nodes[NAMES.host("compute-r1-1")] == {"seg1", "segt"}
    assert p.nodes[NAMES.fabric] == {"seg1", "seg2", "segt"}  # the network node: all


def test_hosts_are_cabled_only_into_their_physnets_and_tunnels_have_endpoints() -> None:
    p = plan(_desired(), NAMES)
    links = p.links(NAMES)
    switch2 = links[NAMES.switch("physnet2")]
    for host in ("compute-r1-1", "compute-r1-2"):
        assert not any(name.startswith(NAMES.prefix + "-k") and name in switch2 for name in
                       {NAMES.switch_port(NAMES.host(host), p.segments["seg2"]),
                        NAMES.switch_port(NAMES.host(host), {
                            "network_type": "flat", "physical_network": "physnet2"})})
    seg1 = p.segments["seg1"]
    assert NAMES.switch_port(NAMES.host("compute-r1-1"), seg1) in links[NAMES.switch("physnet1")]
    # VXLAN: the network node and the one host with a port on it have VTEPs
    assert set(p.vteps) == {NAMES.fabric, NAMES.host("compute-r1-1")}
    assert NAMES.vxlan(p.segments["segt"]) in links[NAMES.host("compute-r1-1")]
    # VLAN 2016 of physnet1 and VXLAN of the same id are different bridges by name
    assert NAMES.segment_bridge(seg1) != NAMES.segment_bridge({**seg1, "network_type": "vxlan"})


def test_each_rack_tor_holds_its_segments_gateway() -> None:
    p = plan(_desired(), NAMES)
    assert p.tors["physnet1"][0][1] == [("10.91.1.0/24", "10.91.1.1")]
    assert p.tors["physnet2"][0][1] == [("10.91.2.0/24", "10.91.2.1")]
    assert p.tor_addresses == {"physnet1": "198.19.0.10", "physnet2": "198.19.0.11"}
    # a gateway a Neutron router's interface holds is left to the router
    d = _desired()
    d.ports["r"] = _port("r", "routed", "router", [("s1", "10.91.1.1")],
                         owner="network:router_interface")
    assert "physnet1" not in plan(d, NAMES).tors
