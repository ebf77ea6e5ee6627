"""Floating IPs over the in-process app: allocation on the external network, association
through a router, the one-floating-IP-per-fixed-IP rule, and what port and router
changes do to them."""

from __future__ import annotations

import uuid

import pytest

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3 import add_if, make_net, make_router, other, public, remove_if

__all__ = ["other"]  # the fixture, shared with test_network_l3


@pytest.fixture(scope="module")
def behind_router(api):
    """demo's network with a subnet, linked to `public` by a router."""
    net, sub = make_net(api, "10.60.1.0/24")
    router = make_router(api, external_gateway_info={"network_id": public(api)["id"]})
    assert add_if(api, router["id"], subnet_id=sub["id"]).status_code == 200
    return net, sub, router


def fip(api, user: str = "demo", **body: object) -> dict:
    return create(api, "floatingips", "floatingip",
                  {"floating_network_id": public(api)["id"], **body}, user=user)


def port_on(api, net: dict, **body: object) -> dict:
    return create(api, "ports", "port", {"network_id": net["id"], **body}, user="demo")


def test_create_associate_disassociate(api, behind_router):
    net, sub, router = behind_router
    f = fip(api)
    assert f["status"] == "DOWN" and f["port_id"] is None and f["router_id"] is None
    assert f["fixed_ip_address"] is None and f["port_details"] is None
    assert f["floating_ip_address"].startswith("172.24.4.")
    assert f["project_id"] == f["tenant_id"] and f["description"] == "" and f["tags"] == []
    backing = api.get(f"{N}/ports?device_id={f['id']}").json()["ports"]
    assert [(p["device_owner"], p["project_id"]) for p in backing] == [("network:floatingip",
                                                                       "")]
    assert backing[0]["fixed_ips"][0]["ip_address"] == f["floating_ip_address"]
    port = port_on(api, net)
    r = api.put(f"{N}/floatingips/{f['id']}", user="demo",
                json={"floatingip": {"port_id": port["id"]}})
    assert r.status_code == 200, r.text
    f2 = r.json()["floatingip"]
    assert f2["status"] == "ACTIVE" and f2["router_id"] == router["id"]
    assert f2["port_id"] == port["id"]
    assert f2["fixed_ip_address"] == port["fixed_ips"][0]["ip_address"]
    assert f2["port_details"]["network_id"] == net["id"]
    assert f2["port_details"]["mac_address"] == port["mac_address"]
    assert f2["revision_number"] > f["revision_number"]
    listed = api.get(f"{N}/floatingips?port_id={port['id']}", user="demo").json()
    assert [x["id"] for x in listed["floatingips"]] == [f["id"]]
    r = api.put(f"{N}/floatingips/{f['id']}", user="demo",
                json={"floatingip": {"port_id": None}})
    f3 = r.json()["floatingip"]
    assert (f3["status"], f3["port_id"], f3["fixed_ip_address"], f3["router_id"]) == (
        "DOWN", None, None, None)
    assert api.delete(f"{N}/floatingips/{f['id']}", user="demo").status_code == 204
    assert not api.get(f"{N}/ports?device_id={f['id']}").json()["ports"]
    neutron_error(api.get(f"{N}/floatingips/{f['id']}", user="demo"), 404,
                  "FloatingIPNotFound")


def test_a_description_update_keeps_the_port_and_a_blank_update_clears_it(api, behind_router):
    # Neutron: a body naming no port keeps the association (its bug 1610045), but an empty
    # one disassociates
    net, _, router = behind_router
    f = fip(api)
    port = port_on(api, net)
    url = f"{N}/floatingips/{f['id']}"
    assert api.put(url, user="demo", json={"floatingip": {"port_id": port["id"]}}
                   ).status_code == 200
    r = api.put(url, user="demo", json={"floatingip": {"description": "kept"}})
    assert r.status_code == 200, r.text
    assert (r.json()["floatingip"]["port_id"], r.json()["floatingip"]["router_id"]) == (
        port["id"], router["id"])
    r = api.put(url, user="demo", json={"floatingip": {}})
    assert r.status_code == 200, r.text
    shown = r.json()["floatingip"]
    assert (shown["port_id"], shown["fixed_ip_address"], shown["router_id"],
            shown["status"], shown["description"]) == (None, None, None, "DOWN", "kept")
    assert api.delete(url, user="demo").status_code == 204


def test_association_needs_a_router_to_the_external_network(api):
    net, sub = make_net(api, "10.61.1.0/24")  # no router at all
    port = port_on(api, net)
    before = len(api.get(f"{N}/floatingips").json()["floatingips"])
    err = neutron_error(api.post(f"{N}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": public(api)["id"], "port_id": port["id"]}}), 404,
        "ExternalGatewayForFloatingIPNotFound")
    assert err["message"] == (
        f"External network {public(api)['id']} is not reachable from subnet {sub['id']}.  "
        f"Therefore, cannot associate Port {port['id']} with a Floating IP.")
    # a router with an interface but no gateway is no better
    router = make_router(api)
    add_if(api, router["id"], subnet_id=sub["id"])
    f = fip(api)
    neutron_error(api.put(f"{N}/floatingips/{f['id']}", user="demo", json={"floatingip": {
        "port_id": port["id"]}}), 404, "ExternalGatewayForFloatingIPNotFound")
    assert len(api.get(f"{N}/floatingips").json()["floatingips"]) == before + 1
    assert api.get(f"{N}/floatingips/{f['id']}").json()["floatingip"]["port_id"] is None


def test_one_floating_ip_per_fixed_ip_and_multi_ip_ports(api, behind_router):
    net, sub, _ = behind_router
    port = port_on(api, net)
    f1 = fip(api, port_id=port["id"])
    assert f1["status"] == "ACTIVE"
    f2 = fip(api)
    err = neutron_error(api.put(f"{N}/floatingips/{f2['id']}", user="demo", json={
        "floatingip": {"port_id": port["id"]}}), 409, "FloatingIPPortAlreadyAssociated")
    assert f1["fixed_ip_address"] in err["message"]
    two = port_on(api, net, fixed_ips=[{"subnet_id": sub["id"]}, {"subnet_id": sub["id"]}])
    err = neutron_error(api.put(f"{N}/floatingips/{f2['id']}", user="demo", json={
        "floatingip": {"port_id": two["id"]}}), 400, "BadRequest")
    assert "multiple fixed IPv4 addresses" in err["message"]
    second = two["fixed_ips"][1]["ip_address"]
    r = api.put(f"{N}/floatingips/{f2['id']}", user="demo", json={"floatingip": {
        "port_id": two["id"], "fixed_ip_address": second}})
    assert r.status_code == 200 and r.json()["floatingip"]["fixed_ip_address"] == second
    neutron_error(api.put(f"{N}/floatingips/{f2['id']}", user="demo", json={"floatingip": {
        "port_id": two["id"], "fixed_ip_address": "10.60.1.250"}}), 400)
    neutron_error(api.post(f"{N}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": public(api)["id"], "fixed_ip_address": "10.60.1.3"}}), 400)


def test_port_delete_disassociates_and_router_protections(api, behind_router):
    net, sub, router = behind_router
    port = port_on(api, net)
    f = fip(api, port_id=port["id"])
    neutron_error(remove_if(api, router["id"], subnet_id=sub["id"]), 409,
                  "RouterInterfaceInUseByFloatingIP")
    err = neutron_error(api.put(f"{N}/routers/{router['id']}", user="demo", json={
        "router": {"external_gateway_info": None}}), 409,
        "RouterExternalGatewayInUseByFloatingIp")
    assert router["id"] in err["message"]
    backing = api.get(f"{N}/ports?device_id={f['id']}").json()["ports"][0]
    neutron_error(api.delete(f"{N}/ports/{backing['id']}"), 409, "ServicePortInUse")
    assert api.delete(f"{N}/ports/{port['id']}", user="demo").status_code == 204
    after = api.get(f"{N}/floatingips/{f['id']}", user="demo").json()["floatingip"]
    assert (after["port_id"], after["fixed_ip_address"], after["router_id"],
            after["status"]) == (None, None, None, "DOWN")


def test_create_errors_and_policy(api, behind_router, other):
    pub = public(api)
    net, _, _ = behind_router
    err = neutron_error(api.post(f"{N}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": net["id"]}}), 400, "BadRequest")
    assert err["message"] == (f"Bad floatingip request: Network {net['id']} is not a valid "
                              "external network.")
    neutron_error(api.post(f"{N}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": str(uuid.uuid4())}}), 404, "NetworkNotFound")
    neutron_error(api.post(f"{N}/floatingips", user="demo", json={"floatingip": {}}), 400)
    neutron_error(api.post(f"{N}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": pub["id"], "floating_ip_address": "172.24.4.77"}}), 403)
    f = fip(api, user="admin", floating_ip_address="172.24.4.77", project_id=(
        api.get(f"{N}/networks/{net['id']}").json()["network"]["project_id"]))
    assert f["floating_ip_address"] == "172.24.4.77"
    neutron_error(api.post(f"{N}/floatingips", json={"floatingip": {
        "floating_network_id": pub["id"], "floating_ip_address": "172.24.4.77"}}), 409)
    # another project can neither see demo's floating IP nor use demo's port
    h = {"token": other["token"], "user": None}
    neutron_error(api.get(f"{N}/floatingips/{f['id']}", **h), 404, "FloatingIPNotFound")
    neutron_error(api.delete(f"{N}/floatingips/{f['id']}", **h), 404)
    r = api.post(f"{N}/floatingips", json={"floatingip": {"floating_network_id": pub["id"]}},
                 **h)
    assert r.status_code == 201, r.text
    mine = r.json()["floatingip"]
    port = port_on(api, net)
    neutron_error(api.put(f"{N}/floatingips/{mine['id']}", json={"floatingip": {
        "port_id": port["id"]}}, **h), 404, "PortNotFound")


def test_list_filters_sort_paging(api, behind_router):
    for _ in range(3):
        fip(api, description="lst")
    rows = api.get(f"{N}/floatingips?description=lst&fields=floating_ip_address"
                   "&sort_key=floating_ip_address&sort_dir=asc", user="demo").json()
    addrs = [r["floating_ip_address"] for r in rows["floatingips"]]
    assert len(addrs) == 3 and all(set(r) == {"floating_ip_address"}
                                   for r in rows["floatingips"])
    page = api.get(f"{N}/floatingips?description=lst&limit=2", user="demo").json()
    assert len(page["floatingips"]) == 2
    nxt = page["floatingips_links"][0]["href"]
    assert "marker=" in nxt
    rest = api.get(nxt.split("/networking", 1)[1].join(["/networking", ""]),
                   user="demo").json()
    assert len(rest["floatingips"]) == 1
    assert api.get(f"{N}/floatingips?status=ACTIVE&status=DOWN", user="demo").status_code == 200
    neutron_error(api.get(f"{N}/floatingips?subnet_id=x", user="demo"), 400)
