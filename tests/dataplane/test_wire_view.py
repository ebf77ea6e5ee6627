"""The wire's admin API read from the live kernel: where each server's guest hangs and the
physical networks each host reaches (`/dataplane/v1/wire`), and the path between two
servers with where and why it is cut (`/dataplane/v1/path`)."""

from __future__ import annotations

import subprocess
from typing import Any

import httpx

from tests.dataplane.conftest import DataplaneCloud, eventually


def admin_get(dp: DataplaneCloud, url: str, token: str | None = None) -> httpx.Response:
    token = token or dp.sdk.session.get_token()
    return httpx.get(dp.cloud.url + url, headers={"X-Auth-Token": token}, timeout=60)


def path(dp: DataplaneCloud, a: Any, b: Any, protocol: str = "icmp",
         port: int | None = None) -> dict[str, Any]:
    query = f"source={a.id}&destination={b.id}&protocol={protocol}"
    if port:
        query += f"&port={port}"
    r = admin_get(dp, f"/dataplane/v1/path?{query}")
    assert r.status_code == 200, r.text
    return r.json()["path"]


def test_wire_and_paths_follow_the_kernel(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net1, sub1 = dp.network("dp-wire-a", "10.73.1.0/24")
    net2, sub2 = dp.network("dp-wire-b", "10.73.2.0/24")
    a = dp.server("vm-wire-a", net1.id)
    b = dp.server("vm-wire-b", net1.id)
    c = dp.server("vm-wire-c", net2.id)
    assert dp.wait_ssh(dp.names.guest(a.id), dp.address(b)).strip() == "vm-wire-b"
    assert dp.wait_ssh(dp.names.guest(c.id), dp.address(c)).strip() == "vm-wire-c"

    # the wire: every server's guest hangs off a host (the host compute put it on)
    wire = admin_get(dp, "/dataplane/v1/wire").json()["wire"]
    on = {s: h["name"] for h in wire["hosts"] for s in h["servers"]}
    for server in (a, b, c):
        host = dp.sdk.compute.get_server(server.id).compute_host
        assert on.get(server.id) in (host, "network node"), (server.id, host, wire)
    assert wire["namespaces"]["guest"] >= 3

    # one network: guest -> its host -> the segment -> the other guest
    found = path(dp, a, b)
    assert found["reached"], found
    assert found["destination"] == dp.address(b)
    kinds = [h["kind"] for h in found["hops"]]
    assert kinds[0] == "guest" and kinds[-1] == "guest"
    assert any(h.get("segments") for h in found["hops"]), found

    # two networks and no router: the guest's gateway is nobody's
    found = path(dp, a, c)
    assert not found["reached"] and found["cut"]["reason"] == "unreachable", found
    assert sub1.gateway_ip in found["cut"]["detail"]

    # a router joins them: the router is a hop
    router = dp.sdk.network.create_router(name="dp-wire-r")
    dp.sdk.network.add_interface_to_router(router, subnet=sub1.id)
    dp.sdk.network.add_interface_to_router(router, subnet=sub2.id)
    assert dp.wait_ssh(dp.names.guest(a.id), dp.address(c)).strip() == "vm-wire-c"
    found = path(dp, a, c, "tcp", 22)
    assert found["reached"], found
    assert "router" in [h["kind"] for h in found["hops"]]
    # the router stops forwarding
    dp.sdk.network.update_router(router, is_admin_state_up=False)
    assert eventually(lambda: path(dp, a, c)["cut"] is not None)
    cut = path(dp, a, c)["cut"]
    assert cut["reason"] in ("forwarding off", "filtered"), cut
    assert cut["at"] == dp.names.router(router.id)
    dp.sdk.network.update_router(router, is_admin_state_up=True)
    assert eventually(lambda: path(dp, a, c)["reached"])

    # a security group without a rule for SSH: cut at the destination, and why
    closed = dp.sdk.network.create_security_group(name="dp-wire-closed")
    d = dp.server("vm-wire-d", net1.id, security_groups=[closed.name])
    assert eventually(lambda: path(dp, a, d)["cut"] is not None
                      and path(dp, a, d)["cut"]["reason"] == "security group", timeout=60)
    cut = path(dp, a, d, "tcp", 22)["cut"]
    assert cut["at"] == dp.names.guest(d.id) and "tcp port 22" in cut["detail"], cut
    assert dp.unreachable(dp.names.guest(a.id), dp.address(d))

    # a port down by hand (the guest's tap on its host): where and which link
    port = next(iter(dp.sdk.network.ports(device_id=b.id)))
    tap = dp.names.tap(port.id)
    holder = next(ns for ns in _namespaces(dp) if tap in _links(ns))
    subprocess.run(["ip", "-n", holder, "link", "set", tap, "down"], check=True)
    cut = path(dp, a, b)["cut"]
    assert cut is not None and cut["reason"] == "port down", cut
    assert tap in cut["detail"]
    subprocess.run(["ip", "-n", holder, "link", "set", tap, "up"], check=True)
    assert path(dp, a, b)["reached"]


def test_members_are_refused_and_unknown_servers_are_404(dataplane_cloud: DataplaneCloud
                                                         ) -> None:
    dp = dataplane_cloud
    r = admin_get(dp, "/dataplane/v1/wire", token=dp.cloud.token("demo"))
    assert r.status_code == 403
    assert httpx.get(dp.cloud.url + "/dataplane/v1/wire").status_code == 401
    r = admin_get(dp, "/dataplane/v1/path?source=nope&destination=nope")
    assert r.status_code == 404
    r = admin_get(dp, "/dataplane/v1")
    assert r.json()["dataplane"] == {"driver": "netns", "readable": True, "reason": None,
                                     "prefix": dp.prefix}


def _namespaces(dp: DataplaneCloud) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(dp.prefix + "-")]


def _links(ns: str) -> str:
    return subprocess.run(["ip", "-n", ns, "-o", "link"], capture_output=True, text=True).stdout


def test_a_routed_path_crosses_both_racks_tors(dataplane_cloud: DataplaneCloud) -> None:
    """Rack 2's server to rack 1's: its host, its segment on physnet2's switch, that rack's
    ToR, the spine, rack 1's ToR, physnet1's switch, the host, the server."""
    dp = dataplane_cloud
    net = dp.sdk.network.create_network(name="dp-wire-routed", provider_network_type="vlan",
                                        provider_physical_network="physnet1",
                                        provider_segmentation_id=2026)
    seg1 = next(iter(dp.sdk.network.segments(network_id=net.id)))
    seg2 = dp.sdk.network.create_segment(network_id=net.id, network_type="vlan",
                                         physical_network="physnet2", segmentation_id=2027)
    subnets = {rack: dp.sdk.network.create_subnet(network_id=net.id, segment_id=seg.id,
                                                  ip_version=4, cidr=f"10.76.{rack}.0/24")
               for rack, seg in (("1", seg1), ("2", seg2))}
    servers = {}
    for rack, sub in subnets.items():
        port = dp.sdk.network.create_port(network_id=net.id, fixed_ips=[
            {"subnet_id": sub.id, "ip_address": f"10.76.{rack}.10"}])
        image = dp.sdk.image.find_image("cirros")
        flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
        server = dp.sdk.compute.create_server(
            name=f"vm-rack{rack}", image_id=image.id, flavor_id=flavor.id,
            key_name=dp.keypair().name, networks=[{"port": port.id}])
        servers[rack] = dp.sdk.compute.wait_for_server(server, wait=120, interval=0.2)
    assert dp.wait_ssh(dp.names.guest(servers["2"].id), "10.76.2.10").strip() == "vm-rack2"
    assert eventually(lambda: path(dp, servers["2"], servers["1"])["reached"], timeout=60), \
        path(dp, servers["2"], servers["1"])
    hops = path(dp, servers["2"], servers["1"])["hops"]
    tors = [h["name"] for h in hops if h["kind"] == "tor"]
    assert tors == ["physnet2", "physnet1"], hops
    switches = [h["name"] for h in hops if h["kind"] == "switch"]
    assert switches == ["physnet2", "physnet1"], hops
    hosts = [h["name"] for h in hops if h["kind"] == "host"]
    assert hosts[0].startswith("compute-r2-") and hosts[-1].startswith("compute-r1-"), hops


def test_no_route_and_a_stopped_server_are_named(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net1, _ = dp.network("dp-wire-gw", "10.77.1.0/24")
    lonely = dp.sdk.network.create_network(name="dp-wire-nogw")
    dp.sdk.network.create_subnet(network_id=lonely.id, cidr="10.77.2.0/24", ip_version=4,
                                 gateway_ip=None)  # DHCP gives no default route
    a = dp.server("vm-wire-gw", net1.id)
    e = dp.server("vm-wire-nogw", lonely.id)
    assert dp.wait_ssh(dp.names.guest(e.id), dp.address(e)).strip() == "vm-wire-nogw"
    # the destination has its address too (else the cut is 'no address' there)
    assert dp.wait_ssh(dp.names.guest(a.id), dp.address(a)).strip() == "vm-wire-gw"
    cut = path(dp, e, a)["cut"]
    assert (cut["reason"], cut["at"]) == ("no route", dp.names.guest(e.id)), cut
    assert dp.address(a) in cut["detail"]

    dp.sdk.compute.stop_server(a)
    dp.sdk.compute.wait_for_server(a, status="SHUTOFF", wait=60, interval=0.2)
    assert eventually(lambda: path(dp, e, a)["cut"]["reason"] == "not running")
    assert path(dp, e, a)["cut"]["at"] == dp.names.guest(a.id)
