"""Floating IP port forwardings (`floating-ip-port-forwarding`) over the in-process app:
CRUD, Neutron's conflicts (a floating IP with a port, duplicates, an address not on the
internal port, no router), the floating IP's router and its `port_forwardings`."""

from __future__ import annotations

import uuid

from tests.api.test_network import N, create, neutron_error


def _topology(api, cidr: str) -> dict:
    """Project demo's network behind a router to `public`, a port on it and a floating IP."""
    net = create(api, "networks", "network", {"name": f"pf-{uuid.uuid4().hex[:4]}"}, user="demo")
    subnet = create(api, "subnets", "subnet", {"network_id": net["id"], "cidr": cidr,
                                               "ip_version": 4}, user="demo")
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]["id"]
    router = create(api, "routers", "router", {
        "name": "pf-r", "external_gateway_info": {"network_id": public}}, user="demo")
    r = api.put(f"{N}/routers/{router['id']}/add_router_interface", user="demo",
                json={"subnet_id": subnet["id"]})
    assert r.status_code == 200, r.text
    port = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    fip = create(api, "floatingips", "floatingip", {"floating_network_id": public},
                 user="demo")
    return {"net": net, "subnet": subnet, "router": router, "port": port, "fip": fip,
            "public": public}


def _pf(port: dict, **over) -> dict:
    body = {"protocol": "tcp", "internal_port": 22, "external_port": 2222,
            "internal_port_id": port["id"],
            "internal_ip_address": port["fixed_ips"][0]["ip_address"]}
    return {**body, **over}


def test_crud_and_conflicts(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"floating-ip-port-forwarding", "floating-ip-port-forwarding-description",
            "floating-ip-port-forwarding-detail", "expose-port-forwarding-in-fip"} <= aliases
    t = _topology(api, "10.161.0.0/24")
    fip, port = t["fip"], t["port"]
    url = f"{N}/floatingips/{fip['id']}/port_forwardings"
    r = api.post(url, user="demo", json={"port_forwarding": _pf(port, description="ssh")})
    assert r.status_code == 201, r.text
    pf = r.json()["port_forwarding"]
    assert pf["external_port"] == 2222 and pf["description"] == "ssh"
    assert pf["internal_ip_address"] == port["fixed_ips"][0]["ip_address"]
    shown = api.get(f"{N}/floatingips/{fip['id']}", user="demo").json()["floatingip"]
    assert shown["router_id"] == t["router"]["id"] and shown["port_id"] is None
    assert [p["external_port"] for p in shown["port_forwardings"]] == [2222]
    # the same external port and protocol twice: Neutron's 400
    err = neutron_error(api.post(url, user="demo", json={"port_forwarding": _pf(
        port, internal_port=80)}), 400, "BadRequest")
    assert "duplicate" in err["message"]
    # the same external port over udp is another forwarding
    r = api.post(url, user="demo", json={"port_forwarding": _pf(port, protocol="udp")})
    assert r.status_code == 201, r.text
    udp = r.json()["port_forwarding"]
    # the internal address must be the port's
    neutron_error(api.post(url, user="demo", json={"port_forwarding": _pf(
        port, external_port=80, internal_ip_address="10.161.0.250")}), 400, "BadRequest")
    for bad in ({"protocol": "icmp"}, {"external_port": 0}, {"internal_port": 70000},
                {"internal_port_id": "x"}, {"bogus": 1}):
        neutron_error(api.post(url, user="demo", json={"port_forwarding": _pf(
            port, **{"external_port": 81, **bad})}), 400)
    listed = api.get(f"{url}?protocol=udp", user="demo").json()["port_forwardings"]
    assert [p["id"] for p in listed] == [udp["id"]]
    r = api.put(f"{url}/{pf['id']}", user="demo", json={"port_forwarding": {
        "external_port": 2200, "description": "moved"}})
    assert r.status_code == 200, r.text
    assert r.json()["port_forwarding"]["external_port"] == 2200
    neutron_error(api.put(f"{url}/{udp['id']}", user="demo", json={"port_forwarding": {
        "protocol": "tcp", "external_port": 2200}}), 400, "BadRequest")
    # a floating IP that forwards ports takes no port
    neutron_error(api.put(f"{N}/floatingips/{fip['id']}", user="demo", json={
        "floatingip": {"port_id": port["id"]}}), 409, "FipInUseByPortForwarding")
    neutron_error(api.get(f"{url}/{uuid.uuid4()}", user="demo"), 404, "PortForwardingNotFound")
    assert api.delete(f"{url}/{pf['id']}", user="demo").status_code == 204
    assert api.delete(f"{url}/{udp['id']}", user="demo").status_code == 204
    # the last forwarding took the router with it: the port can be associated now
    shown = api.get(f"{N}/floatingips/{fip['id']}", user="demo").json()["floatingip"]
    assert shown["router_id"] is None and shown["port_forwardings"] == []
    r = api.put(f"{N}/floatingips/{fip['id']}", user="demo",
                json={"floatingip": {"port_id": port["id"]}})
    assert r.status_code == 200, r.text
    # and a floating IP with a port takes no forwarding
    neutron_error(api.post(url, user="demo", json={"port_forwarding": _pf(port)}), 409,
                  "FloatingIPPortAlreadyAssociated")


def test_unreachable_port_and_cascades(api):
    t = _topology(api, "10.162.0.0/24")
    lone = create(api, "networks", "network", {"name": "pf-lone"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": lone["id"], "cidr": "10.163.0.0/24",
                                      "ip_version": 4}, user="demo")
    stray = create(api, "ports", "port", {"network_id": lone["id"]}, user="demo")
    url = f"{N}/floatingips/{t['fip']['id']}/port_forwardings"
    err = neutron_error(api.post(url, user="demo", json={"port_forwarding": _pf(stray)}), 400,
                        "BadRequest")
    assert "not reachable" in err["message"]
    neutron_error(api.post(f"{N}/floatingips/{uuid.uuid4()}/port_forwardings", user="demo",
                           json={"port_forwarding": _pf(t["port"])}), 404, "FloatingIPNotFound")
    r = api.post(url, user="demo", json={"port_forwarding": _pf(t["port"])})
    assert r.status_code == 201, r.text
    # deleting the internal port deletes its forwardings
    assert api.delete(f"{N}/ports/{t['port']['id']}", user="demo").status_code == 204
    assert api.get(url, user="demo").json()["port_forwardings"] == []
