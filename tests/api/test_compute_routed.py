"""Compute on routed networks (in-process API): scheduling to hosts that reach a usable
segment, deferred ports, IPv4 exhaustion as NoValidHost before any port is touched, moves
kept on the segment (a host that cannot reach it refused before anything moves), and
interfaces."""

from __future__ import annotations

import pytest

from tests.api.test_compute import MAX, boot, mv, wait_status
from tests.api.test_compute_actions import (
    act,
    show,
    unlimited,  # noqa: F401 (autouse fixture)
)

PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}
RACK = {"physnet1": ("compute-r1-1", "compute-r1-2"),
        "physnet2": ("compute-r2-1", "compute-r2-2")}


def routed_network(api, name, pools):
    """A network with a segment on physnet1 and one on physnet2 and a subnet on each;
    `pools` gives each subnet's (cidr, first, last). Returns (net, {physnet: (seg, subnet)})."""
    net = api.post("/networking/v2.0/networks", json={"network": {
        "name": name, "provider:network_type": "vlan",
        "provider:physical_network": "physnet1"}}).json()["network"]
    seg1 = api.get(f"/networking/v2.0/segments?network_id={net['id']}").json()["segments"][0]
    r = api.post("/networking/v2.0/segments", json={"segment": {
        "network_id": net["id"], "network_type": "vlan", "physical_network": "physnet2"}})
    assert r.status_code == 201, r.text
    seg2 = r.json()["segment"]
    out = {}
    for (physnet, seg), (cidr, first, last) in zip((("physnet1", seg1), ("physnet2", seg2)),
                                                   pools, strict=True):
        r = api.post("/networking/v2.0/subnets", json={"subnet": {
            "network_id": net["id"], "segment_id": seg["id"], "cidr": cidr, "ip_version": 4,
            "allocation_pools": [{"start": first, "end": last}]}})
        assert r.status_code == 201, r.text
        out[physnet] = (seg["id"], r.json()["subnet"])
    return net, out


@pytest.fixture(scope="module")
def routed(api):
    return routed_network(api, "routed", [("10.91.1.0/24", "10.91.1.10", "10.91.1.200"),
                                          ("10.91.2.0/24", "10.91.2.10", "10.91.2.200")])


def _boot(api, net_id=None, port_id=None, user="admin"):
    nic = {"port": port_id} if port_id else {"uuid": net_id}
    r = boot(api, user=user, networks=[nic])
    assert r.status_code == 202, r.text
    return wait_status(api, r.json()["server"]["id"], user=user)


def _rack(segs, ip):
    for physnet, (_seg, subnet) in segs.items():
        if ip.startswith(subnet["cidr"].rsplit(".", 1)[0] + "."):
            return physnet
    raise AssertionError(ip)


def _ip(srv, net_name):
    return srv["addresses"][net_name][0]["addr"]


def usage(api, seg):
    r = api.get(f"/placement/resource_providers/{seg}/usages", headers=PLACEMENT)
    return r.json()["usages"].get("IPV4_ADDRESS", 0)


def test_boot_lands_on_a_host_of_its_segment(api, routed):
    net, segs = routed
    for _ in range(4):
        srv = _boot(api, net["id"])
        assert srv["status"] == "ACTIVE", srv.get("fault")
        assert srv["OS-EXT-SRV-ATTR:host"] in RACK[_rack(segs, _ip(srv, "routed"))]
    # the scheduler's IPv4 claim became the ports' own usage: counted once
    ports = api.get(f"/networking/v2.0/ports?network_id={net['id']}"
                    "&device_owner=compute:nova").json()["ports"]
    for seg, subnet in segs.values():
        held = sum(1 for p in ports for ip in p["fixed_ips"] if ip["subnet_id"] == subnet["id"])
        assert usage(api, seg) == held


def test_deferred_port_and_port_with_an_address(api, routed):
    net, segs = routed
    port = api.post("/networking/v2.0/ports", json={"port": {"network_id": net["id"]}}
                    ).json()["port"]
    assert port["ip_allocation"] == "deferred" and port["fixed_ips"] == []
    srv = _boot(api, port_id=port["id"])
    assert srv["status"] == "ACTIVE", srv.get("fault")
    port = api.get(f"/networking/v2.0/ports/{port['id']}").json()["port"]
    assert port["fixed_ips"] and port["binding:host_id"] == srv["OS-EXT-SRV-ATTR:host"]
    assert srv["OS-EXT-SRV-ATTR:host"] in RACK[_rack(segs, port["fixed_ips"][0]["ip_address"])]
    # a port that already has an address on physnet2's segment pins the server there
    sub2 = segs["physnet2"][1]
    fixed = api.post("/networking/v2.0/ports", json={"port": {
        "network_id": net["id"], "fixed_ips": [{"subnet_id": sub2["id"]}]}}).json()["port"]
    srv = _boot(api, port_id=fixed["id"])
    assert srv["status"] == "ACTIVE" and srv["OS-EXT-SRV-ATTR:host"] in RACK["physnet2"]


def test_moves_stay_on_the_segment(api, routed):
    net, segs = routed
    srv = _boot(api, net["id"])
    sid, host = srv["id"], srv["OS-EXT-SRV-ATTR:host"]
    rack = _rack(segs, _ip(srv, "routed"))
    mate = next(h for h in RACK[rack] if h != host)
    other = RACK["physnet2" if rack == "physnet1" else "physnet1"][0]
    seg = segs[rack][0]
    body = {"os-migrateLive": {"host": None, "block_migration": "auto"}}
    assert act(api, sid, body, user="admin").status_code == 202
    assert show(api, sid)["OS-EXT-SRV-ATTR:host"] == mate
    assert act(api, sid, {"migrate": None}, user="admin").status_code == 202
    assert show(api, sid)["OS-EXT-SRV-ATTR:host"] == host
    assert act(api, sid, {"confirmResize": None}, user="admin").status_code == 204
    # a host on the other rack: refused before anything moves, naming host and segment
    for body in ({"migrate": {"host": other}},
                 {"os-migrateLive": {"host": other, "block_migration": "auto"}},
                 {"os-migrateLive": {"host": other, "block_migration": "auto",
                                     "force": True}}):
        r = act(api, sid, body, user="admin", version="2.30" if "force" in str(body) else MAX)
        assert r.status_code == 400, r.text
        message = r.json()["badRequest"]["message"]
        assert other in message and seg in message and "cannot reach" in message
    srv = show(api, sid)
    assert srv["status"] == "ACTIVE" and srv["OS-EXT-SRV-ATTR:host"] == host
    assert _ip(srv, "routed") == _ip(show(api, sid), "routed")


def test_exhausted_network_is_no_valid_host_before_any_port(api):
    # Two addresses a pool, one of them the DHCP port's (reserved): one free per segment.
    net, segs = routed_network(api, "tiny", [("10.92.1.0/24", "10.92.1.10", "10.92.1.11"),
                                             ("10.92.2.0/24", "10.92.2.10", "10.92.2.11")])
    first = _boot(api, net["id"])
    second = _boot(api, net["id"])
    assert {first["status"], second["status"]} == {"ACTIVE"}, (first.get("fault"), second.get("fault"))
    assert {_rack(segs, _ip(s, "tiny")) for s in (first, second)} == {"physnet1", "physnet2"}
    third = _boot(api, net["id"])
    assert third["status"] == "ERROR"
    assert third["fault"]["message"].startswith("No valid host was found.")
    assert "exhausted" in third["fault"]["message"]
    ports = api.get(f"/networking/v2.0/ports?network_id={net['id']}").json()["ports"]
    assert len([p for p in ports if p["device_owner"].startswith("compute:")]) == 2
    from stackling.compute import scheduler

    with api.runtime.db.transaction() as db:
        decision = scheduler.scheduler_decision(db, third["id"])
    assert decision["operation"] == "build" and decision["chosen"] is None
    assert "exhausted" in decision["reason"]
    for seg, _subnet in segs.values():
        assert usage(api, seg) == 1
    # the deleted server's address goes back
    assert api.delete(f"/compute/v2.1/servers/{first['id']}").status_code == 204
    assert _boot(api, net["id"])["status"] == "ACTIVE"


def test_interfaces_on_a_routed_network(api, routed):
    net, segs = routed
    srv = _boot(api, net["id"])
    sid = srv["id"]
    rack = _rack(segs, _ip(srv, "routed"))
    far = segs["physnet2" if rack == "physnet1" else "physnet1"][1]
    unreachable = api.post("/networking/v2.0/ports", json={"port": {
        "network_id": net["id"], "fixed_ips": [{"subnet_id": far["id"]}]}}).json()["port"]
    url = f"/compute/v2.1/servers/{sid}/os-interface"
    r = api.post(url, headers=mv(MAX), json={"interfaceAttachment": {
        "port_id": unreachable["id"]}})
    assert r.status_code == 400 and "cannot reach" in r.json()["badRequest"]["message"]
    assert api.get(f"/networking/v2.0/ports/{unreachable['id']}").json()["port"][
        "device_id"] == ""
    deferred = api.post("/networking/v2.0/ports", json={"port": {"network_id": net["id"]}}
                        ).json()["port"]
    r = api.post(url, headers=mv(MAX), json={"interfaceAttachment": {
        "port_id": deferred["id"]}})
    assert r.status_code == 200, r.text
    ip = r.json()["interfaceAttachment"]["fixed_ips"][0]["ip_address"]
    assert _rack(segs, ip) == rack
    # a new interface on the network takes its address from the host's segment
    r = api.post(url, headers=mv(MAX), json={"interfaceAttachment": {"net_id": net["id"]}})
    assert r.status_code == 200, r.text
    assert _rack(segs, r.json()["interfaceAttachment"]["fixed_ips"][0]["ip_address"]) == rack
