"""Routers, floating IPs, IP availability, quotas and Get Me a Network through the real
clients: openstacksdk on every backend, the `openstack` CLI on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _net(conn, cidr: str) -> tuple:
    net = conn.network.create_network(name=_name("l3net"))
    sub = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr)
    return net, sub


def test_sdk_router_floating_ip_story(cloud):
    member = cloud.new_project_member()["sdk"]
    public = member.network.find_network("public")
    net1, sub1 = _net(member, "10.80.1.0/24")
    _, sub2 = _net(member, "10.80.2.0/24")
    router = member.network.create_router(name=_name("r"),
                                          external_gateway_info={"network_id": public.id})
    gw = router.external_gateway_info
    assert gw["network_id"] == public.id and gw["enable_snat"] is True
    assert gw["external_fixed_ips"][0]["ip_address"].startswith("172.24.4.")
    for sub in (sub1, sub2):
        info = member.network.add_interface_to_router(router, subnet=sub.id)
        assert info["subnet_id"] == sub.id and info["port_id"]
    ifaces = list(member.network.ports(device_id=router.id,
                                       device_owner="network:router_interface"))
    assert sorted(p.fixed_ips[0]["ip_address"] for p in ifaces) == ["10.80.1.1", "10.80.2.1"]
    # a floating IP associated to a port behind the router
    port = member.network.create_port(network_id=net1.id)
    fip = member.network.create_ip(floating_network_id=public.id)
    assert fip.status == "DOWN" and fip.port_id is None
    fip = member.network.update_ip(fip, port_id=port.id)
    assert fip.port_id == port.id and fip.router_id == router.id and fip.status == "ACTIVE"
    assert fip.fixed_ip_address == port.fixed_ips[0]["ip_address"]
    assert member.network.get_ip(fip.id).port_details["network_id"] == net1.id
    assert [f.id for f in member.network.ips(port_id=port.id)] == [fip.id]
    # refused for a port on a network without a router to public
    lonely, _ = _net(member, "10.80.9.0/24")
    stray = member.network.create_port(network_id=lonely.id)
    with pytest.raises(exceptions.NotFoundException, match="is not reachable"):
        member.network.create_ip(floating_network_id=public.id, port_id=stray.id)
    with pytest.raises(exceptions.ConflictException):
        member.network.delete_router(router)
    # tear down in order
    member.network.update_ip(fip, port_id=None)
    member.network.delete_ip(fip)
    member.network.delete_port(port)
    for sub in (sub1, sub2):
        member.network.remove_interface_from_router(router, subnet=sub.id)
    member.network.delete_router(router)
    assert member.network.find_router(router.id) is None


def test_sdk_router_and_fip_listing(cloud):
    admin = cloud.sdk()
    tag = _name("lst")
    public = admin.network.find_network("public")
    routers = [admin.network.create_router(name=f"{tag}-{i}", description=tag)
               for i in range(3)]
    listed = list(admin.network.routers(description=tag, sort_key="name", sort_dir="desc",
                                        limit=2))  # the sdk follows the next link
    assert [r.name for r in listed] == [f"{tag}-2", f"{tag}-1", f"{tag}-0"]
    assert [r.id for r in admin.network.routers(name=f"{tag}-1")] == [routers[1].id]
    slim = list(admin.network.routers(description=tag, fields="name"))
    assert len(slim) == 3 and slim[0].id is None
    ips = [admin.network.create_ip(floating_network_id=public.id, description=tag)
           for _ in range(3)]
    got = list(admin.network.ips(description=tag, sort_key="floating_ip_address",
                                 sort_dir="asc", limit=2))
    addrs = [f.floating_ip_address for f in got]
    assert len(addrs) == 3 and addrs == sorted(addrs)  # text order, as upstream's column
    assert [f.id for f in admin.network.ips(floating_ip_address=addrs[0])] == [
        next(f.id for f in ips if f.floating_ip_address == addrs[0])]
    for f in ips:
        admin.network.delete_ip(f)
    for r in routers:
        admin.network.delete_router(r)


def test_sdk_ip_availability_and_quota(cloud):
    admin = cloud.sdk()
    net = admin.network.create_network(name=_name("avail"))
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.81.0.0/28")
    admin.network.create_port(network_id=net.id)
    avail = admin.network.get_network_ip_availability(net.id)
    assert avail.total_ips == 13 and avail.used_ips == 1
    assert avail.subnet_ip_availability[0]["cidr"] == "10.81.0.0/28"
    assert net.id in {a.network_id for a in admin.network.network_ip_availabilities()}
    project = cloud.new_project_member()["project"]
    quota = admin.network.get_quota(project.id)
    assert (quota.networks, quota.routers, quota.floating_ips, quota.ports) == (100, 10, 50,
                                                                              500)
    admin.network.update_quota(quota, routers=3)
    assert admin.network.get_quota(project.id).routers == 3
    details = admin.network.get_quota(project.id, details=True)
    assert details.routers == {"limit": 3, "used": 0, "reserved": 0}
    assert admin.network.get_quota_default(project.id).routers == 10


@sqlite_only
def test_cli_router_floating_ip_and_auto_topology(cloud):
    c = cloud
    name = _name("cli-l3")
    admin = c.sdk()
    net = admin.network.create_network(name=name)
    sub = admin.network.create_subnet(name=f"{name}-sub", network_id=net.id, ip_version=4,
                                      cidr="10.82.0.0/24")
    port = admin.network.create_port(network_id=net.id)
    router = c.cli("router", "create", f"{name}-r", "-f", "json")
    assert router["status"] == "ACTIVE"
    c.cli("router", "set", "--external-gateway", "public", router["id"], parse=False)
    c.cli("router", "add", "subnet", router["id"], sub.id, parse=False)
    shown = c.cli("router", "show", router["id"], "-f", "json")
    assert shown["external_gateway_info"]["network_id"] == admin.network.find_network(
        "public").id
    assert sub.id in str(shown["interfaces_info"])
    fip = c.cli("floating", "ip", "create", "public", "-f", "json")
    assert fip["floating_ip_address"].startswith("172.24.4.")
    c.cli("floating", "ip", "set", "--port", port.id, fip["id"], parse=False)
    fip = c.cli("floating", "ip", "show", fip["id"], "-f", "json")
    assert fip["port_id"] == port.id and fip["router_id"] == router["id"]
    # Get Me a Network for the demo project
    check = c.cli("network", "auto", "allocated", "topology", "create", "--check-resources",
                  "-f", "json", cloud="stackling")
    # passes (exit 0); OSC shows a `dry_run` column that upstream's body never fills
    assert check == {"dry_run": None}
    topo = c.cli("network", "auto", "allocated", "topology", "create", "-f", "json",
                 cloud="stackling")
    again = c.cli("network", "auto", "allocated", "topology", "create", "-f", "json",
                  cloud="stackling")
    assert topo["id"] == again["id"] and topo["project_id"]
    demo = c.sdk("stackling")
    assert demo.network.get_network(topo["id"]).name == "auto_allocated_network"
    c.cli("network", "auto", "allocated", "topology", "delete", cloud="stackling", parse=False)
    assert demo.network.find_network(topo["id"]) is None
