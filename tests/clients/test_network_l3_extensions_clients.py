"""Issue 23's L3 and port extensions through the real clients: floating IP pools
(`floatingip-pools`), NDP proxies (`l3-ndp-proxy`), port bindings (`binding-extended`),
router flavors (`l3-flavors`) and multiple router gateways (`external-gateway-multihoming`)
— openstacksdk on every backend, the `openstack` CLI on SQLite where it has commands."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------ floatingip-pools
def test_sdk_floatingip_pools(cloud):
    # openstacksdk has no floating IP pool resource (nor the CLI a command for Neutron's):
    # its network adapter's raw GET, as a client of the extension would call it
    admin = cloud.sdk()
    ext = admin.network.create_network(name=_name("fpool"), is_router_external=True)
    sub = admin.network.create_subnet(network_id=ext.id, ip_version=4, cidr="203.0.113.0/24",
                                      name=_name("fpool"))
    member = cloud.new_project_member()
    conn = member["sdk"]
    assert conn.network.find_extension("floatingip-pools") is not None
    r = conn.network.get(f"/floatingip_pools?network_id={ext.id}")
    assert r.status_code == 200, r.text
    assert r.json()["floatingip_pools"] == [{
        "subnet_id": sub.id, "subnet_name": sub.name, "network_id": ext.id,
        "cidr": "203.0.113.0/24", "project_id": member["project"].id,
        "tenant_id": member["project"].id}]
    # the pool is where a floating IP of that subnet comes from
    fip = conn.network.create_ip(floating_network_id=ext.id, subnet_id=sub.id)
    assert fip.floating_ip_address.startswith("203.0.113.")
    conn.network.delete_ip(fip)
    admin.network.delete_network(ext)


# ------------------------------------------------------------------ l3-ndp-proxy
def _ndp_world(admin, prefix: str) -> tuple:
    """The admin's IPv6 address scope and pool (shared) and an external network with an
    IPv6 subnet from it."""
    scope = admin.network.create_address_scope(name=_name("ndp"), ip_version=6,
                                               is_shared=True)
    pool = admin.network.create_subnet_pool(name=_name("ndp"), prefixes=[prefix],
                                            default_prefix_length=64,
                                            address_scope_id=scope.id, is_shared=True)
    ext = admin.network.create_network(name=_name("ndp-ext"), is_router_external=True)
    admin.network.create_subnet(network_id=ext.id, ip_version=6, subnet_pool_id=pool.id)
    return scope, pool, ext


def test_sdk_ndp_proxies(cloud):
    admin = cloud.sdk()
    _, pool, ext = _ndp_world(admin, f"2001:db8:{uuid.uuid4().int % 60000:x}::/48")
    conn = cloud.new_project_member()["sdk"]
    net = conn.network.create_network(name=_name("ndp"))
    sub = conn.network.create_subnet(network_id=net.id, ip_version=6, subnet_pool_id=pool.id)
    router = conn.network.create_router(name=_name("ndp"), enable_ndp_proxy=True,
                                        external_gateway_info={"network_id": ext.id})
    assert router.enable_ndp_proxy is True
    conn.network.add_interface_to_router(router, subnet=sub.id)
    port = conn.network.create_port(network_id=net.id)
    proxy = conn.network.create_ndp_proxy(name=_name("p"), router_id=router.id,
                                          port_id=port.id)
    assert proxy.ip_address == port.fixed_ips[0]["ip_address"]
    assert [p.id for p in conn.network.ndp_proxies(router_id=router.id)] == [proxy.id]
    proxy = conn.network.update_ndp_proxy(proxy, description="d")
    assert conn.network.get_ndp_proxy(proxy.id).description == "d"
    with pytest.raises(exceptions.ConflictException):  # the proxy holds the gateway
        conn.network.update_router(router, external_gateway_info={})
    with pytest.raises(exceptions.ConflictException):  # and the interface
        conn.network.remove_interface_from_router(router, subnet=sub.id)
    conn.network.delete_ndp_proxy(proxy)
    assert conn.network.find_ndp_proxy(proxy.id) is None
    router = conn.network.update_router(router, enable_ndp_proxy=False)
    assert router.enable_ndp_proxy is False
    with pytest.raises(exceptions.ConflictException):  # RouterNDPProxyNotEnable
        conn.network.create_ndp_proxy(router_id=router.id, port_id=port.id)


@sqlite_only
def test_cli_router_ndp_proxy(cloud):
    admin = cloud.sdk()
    _, pool, ext = _ndp_world(admin, "2001:db8:cafe::/48")
    net = cloud.cli("network", "create", _name("cli-ndp"), "-f", "json")
    sub = cloud.cli("subnet", "create", "--network", net["id"], "--ip-version", "6",
                    "--subnet-pool", pool.id, _name("cli-ndp"), "-f", "json")
    name = _name("cli-ndp")
    # with external-gateway-multihoming the CLI sets the gateway in a second call after the
    # create, so NDP proxying is switched on once the gateway is there
    cloud.cli("router", "create", "--external-gateway", ext.id, name, "-f", "json")
    cloud.cli("router", "set", "--enable-ndp-proxy", name, parse=False)
    assert cloud.cli("router", "show", name, "-f", "json")["enable_ndp_proxy"] is True
    cloud.cli("router", "add", "subnet", name, sub["id"], parse=False)
    port = cloud.cli("port", "create", "--network", net["id"], _name("vm"), "-f", "json")
    pname = _name("cli-p")
    proxy = cloud.cli("router", "ndp", "proxy", "create", name, "--port", port["id"], "--name",
                      pname, "-f", "json")
    assert proxy["ip_address"] == port["fixed_ips"][0]["ip_address"]
    listed = cloud.cli("router", "ndp", "proxy", "list", "--router", name, "-f", "json")
    assert [p["Name"] for p in listed] == [pname]
    cloud.cli("router", "ndp", "proxy", "set", "--description", "d", pname, parse=False)
    assert cloud.cli("router", "ndp", "proxy", "show", pname, "-f", "json")["description"] == "d"
    cloud.cli("router", "ndp", "proxy", "delete", pname, parse=False)
    cloud.cli("router", "set", "--disable-ndp-proxy", name, parse=False)
    assert cloud.cli("router", "show", name, "-f", "json")["enable_ndp_proxy"] is False


# ------------------------------------------------------------------ binding-extended
def test_sdk_port_bindings(cloud):
    """Nova's live-migration calls: the destination's binding INACTIVE, activated, the
    source's (INACTIVE by then) deleted; the port follows."""
    admin = cloud.sdk()
    net = admin.network.create_network(name=_name("pb"))
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.93.0.0/24")
    port = admin.network.create_port(network_id=net.id, device_owner="compute:nova",
                                     binding_host_id="pb-src")
    dst = admin.network.create_port_binding(port, host="pb-dst", profile={"k": "v"})
    assert (dst.host, dst.status, dst.vif_type) == ("pb-dst", "INACTIVE", "ovs")
    with pytest.raises(exceptions.ConflictException):  # PortBindingAlreadyExists
        admin.network.create_port_binding(port, host="pb-dst")
    assert {(b.host, b.status) for b in admin.network.port_bindings(port)} == {
        ("pb-src", "ACTIVE"), ("pb-dst", "INACTIVE")}
    admin.network.activate_port_binding(port, host="pb-dst")
    shown = admin.network.get_port(port.id)
    assert (shown.binding_host_id, shown.binding_profile) == ("pb-dst", {"k": "v"})
    assert {(b.host, b.status) for b in admin.network.port_bindings(port)} == {
        ("pb-src", "INACTIVE"), ("pb-dst", "ACTIVE")}
    admin.network.delete_port_binding(port, "pb-src")
    assert [(b.host, b.status) for b in admin.network.port_bindings(port)] == [
        ("pb-dst", "ACTIVE")]
    # a project member (of the port's project or not) is refused
    member = cloud.new_project_member()["sdk"]
    with pytest.raises(exceptions.HttpException):
        member.network.create_port_binding(port.id, host="x")
    admin.network.delete_port(port)
    admin.network.delete_network(net)


# ------------------------------------------------------------------ l3-flavors
def _l3_flavor(admin, driver: str):
    flavor = admin.network.create_flavor(name=_name("rf"), service_type="L3_ROUTER_NAT")
    profile = admin.network.create_service_profile(
        driver=f"neutron.services.l3_router.service_providers.{driver}")
    admin.network.associate_flavor_with_service_profile(flavor, profile)
    return flavor


def test_sdk_router_flavors(cloud):
    admin = cloud.sdk()
    flavor = _l3_flavor(admin, "dvrha.DvrHaDriver")
    conn = cloud.new_project_member()["sdk"]
    router = conn.network.create_router(name=_name("rf"), flavor_id=flavor.id)
    assert router.flavor_id == flavor.id
    shown = admin.network.get_router(router.id)
    assert (shown.is_ha, shown.is_distributed) == (True, True)
    assert [r.id for r in conn.network.routers(flavor_id=flavor.id)] == [router.id]
    with pytest.raises(exceptions.ConflictException):  # FlavorInUse
        admin.network.delete_flavor(flavor)
    conn.network.delete_router(router)
    admin.network.delete_flavor(flavor)


@sqlite_only
def test_cli_router_flavor(cloud):
    flavor = _l3_flavor(cloud.sdk(), "single_node.SingleNodeDriver")
    name = _name("cli-rf")
    router = cloud.cli("router", "create", "--flavor", flavor.name, name, "-f", "json")
    assert router["flavor_id"] == flavor.id
    assert cloud.cli("router", "show", name, "-f", "json")["flavor_id"] == flavor.id
    cloud.cli("router", "delete", name, parse=False)


# ------------------------------------------------------------------ external-gateway-multihoming
def _external(admin, cidr: str):
    net = admin.network.create_network(name=_name("mh"), is_router_external=True)
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
    return net


def test_sdk_external_gateway_multihoming(cloud):
    admin = cloud.sdk()
    n = uuid.uuid4().int % 200
    e1, e2 = _external(admin, f"100.64.{n}.0/24"), _external(admin, f"100.65.{n}.0/24")
    conn = cloud.new_project_member()["sdk"]
    router = conn.network.create_router(name=_name("mh"))
    router = conn.network.add_external_gateways(router, body={"router": {
        "external_gateways": [{"network_id": e1.id}, {"network_id": e2.id}]}})
    assert [g["network_id"] for g in router.external_gateways] == [e1.id, e2.id]
    assert router.external_gateway_info["network_id"] == e1.id
    router = conn.network.remove_external_gateways(router, body={"router": {
        "external_gateways": [{"network_id": e1.id}]}})
    assert router.external_gateway_info["network_id"] == e2.id  # promoted
    router = conn.network.update_external_gateways(router, body={"router": {
        "external_gateways": [{"network_id": e1.id}]}})
    assert [g["network_id"] for g in conn.network.get_router(router.id).external_gateways] == [
        e1.id]
    conn.network.delete_router(router)
    assert list(admin.network.ports(device_id=router.id)) == []


@sqlite_only
def test_cli_router_gateways(cloud):
    admin = cloud.sdk()
    e1, e2 = _external(admin, "100.66.1.0/24"), _external(admin, "100.66.2.0/24")
    name = _name("cli-mh")
    cloud.cli("router", "create", "--external-gateway", e1.id, name, "-f", "json")
    cloud.cli("router", "add", "gateway", name, e2.id, "-f", "json")
    shown = cloud.cli("router", "show", name, "-f", "json")
    assert [g["network_id"] for g in shown["external_gateways"]] == [e1.id, e2.id]
    cloud.cli("router", "remove", "gateway", name, e1.id, "-f", "json")
    shown = cloud.cli("router", "show", name, "-f", "json")
    assert shown["external_gateway_info"]["network_id"] == e2.id
    cloud.cli("router", "unset", "--external-gateway", name, parse=False)
    shown = cloud.cli("router", "show", name, "-f", "json")
    assert shown["external_gateway_info"] is None and shown["external_gateways"] == []
    cloud.cli("router", "delete", name, parse=False)
