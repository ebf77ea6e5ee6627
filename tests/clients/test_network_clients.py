"""Networking through the real clients: openstacksdk on every backend, the CLI on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_sdk_networks(cloud):
    admin = cloud.sdk()
    tag = _name("t")
    made = [admin.network.create_network(name=f"{tag}-{i}", description=tag)
            for i in range(3)]
    vlan = admin.network.create_network(name=f"{tag}-vlan", description=tag,
                                        provider_network_type="vlan",
                                        provider_physical_network="physnet1")
    assert vlan.provider_network_type == "vlan" and 100 <= vlan.provider_segmentation_id <= 199
    assert vlan.mtu == 1500 and made[0].mtu == 1450 and made[0].status == "ACTIVE"
    # list: filters, sorting, paging (the sdk follows the next links), fields
    listed = list(admin.network.networks(description=tag, sort_key="name", sort_dir="desc",
                                         limit=2))
    assert [n.name for n in listed] == [f"{tag}-vlan", f"{tag}-2", f"{tag}-1", f"{tag}-0"]
    assert [n.id for n in admin.network.networks(name=f"{tag}-1")] == [made[1].id]
    assert [n.id for n in admin.network.networks(provider_network_type="vlan",
                                                 description=tag)] == [vlan.id]
    slim = list(admin.network.networks(description=tag, fields="name"))
    assert len(slim) == 4 and slim[0].id is None
    # show, update, tags, delete
    assert admin.network.get_network(made[0].id).name == f"{tag}-0"
    updated = admin.network.update_network(made[0], name=f"{tag}-renamed", mtu=1400,
                                           is_admin_state_up=False)
    assert updated.name == f"{tag}-renamed" and updated.mtu == 1400
    assert not updated.is_admin_state_up
    admin.network.set_tags(made[1], ["blue", "green"])
    assert sorted(admin.network.get_network(made[1]).tags) == ["blue", "green"]
    assert [n.id for n in admin.network.networks(tags="blue")] == [made[1].id]
    for net in (*made, vlan):
        admin.network.delete_network(net)
    assert admin.network.find_network(f"{tag}-renamed") is None
    # the bootstrap's external network
    public = admin.network.find_network("public")
    assert public.is_router_external and public.is_default


def test_sdk_member_policy(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()["sdk"]
    private = admin.network.create_network(name=_name("admin-only"))
    with pytest.raises(exceptions.ForbiddenException):
        member.network.create_network(name="x", provider_network_type="vxlan")
    with pytest.raises(exceptions.NotFoundException):
        member.network.get_network(private.id)
    own = member.network.create_network(name=_name("mine"))
    assert own.provider_network_type is None  # admin-only attributes are hidden
    visible = {n.id for n in member.network.networks()}
    assert own.id in visible and private.id not in visible
    assert admin.network.get_network(own.id).provider_network_type == "vxlan"
    member.network.delete_network(own)
    admin.network.delete_network(private)


def test_sdk_subnets_pools_ports(cloud):
    admin = cloud.sdk()
    net = admin.network.create_network(name=_name("sp"))
    pool = admin.network.create_subnet_pool(name=_name("pool"), prefixes=["10.210.0.0/16"],
                                            default_prefix_length=24)
    assert pool.ip_version == 4 and int(pool.default_prefix_length) == 24
    assert [p.id for p in admin.network.subnet_pools(name=pool.name)] == [pool.id]
    pool = admin.network.update_subnet_pool(pool, description="for tests", max_prefixlen=28)
    assert pool.description == "for tests" and int(pool.maximum_prefix_length) == 28
    assert admin.network.get_subnet_pool(pool.id).description == "for tests"
    from_pool = admin.network.create_subnet(network_id=net.id, ip_version=4,
                                            subnet_pool_id=pool.id, prefix_length=26)
    assert from_pool.cidr == "10.210.0.0/26" and from_pool.gateway_ip == "10.210.0.1"
    default = admin.network.create_subnet(network_id=net.id, ip_version=4,
                                          use_default_subnet_pool=True)
    assert default.cidr.startswith("10.") and default.cidr.endswith("/26")
    plain = admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="192.168.77.0/24",
                                        name="plain", dns_nameservers=["8.8.8.8"])
    assert plain.allocation_pools == [{"start": "192.168.77.2", "end": "192.168.77.254"}]
    assert {s.id for s in admin.network.subnets(network_id=net.id)} == {
        from_pool.id, default.id, plain.id}
    admin.network.update_subnet(plain, name="plain2", dns_nameservers=[])
    assert admin.network.get_subnet(plain.id).name == "plain2"
    port = admin.network.create_port(network_id=net.id, name="p1",
                                     fixed_ips=[{"subnet_id": plain.id,
                                                 "ip_address": "192.168.77.20"}])
    assert port.fixed_ips == [{"subnet_id": plain.id, "ip_address": "192.168.77.20"}]
    assert port.status == "DOWN" and len(port.security_group_ids) == 1
    auto = admin.network.create_port(network_id=net.id, name="p2")
    assert len(auto.fixed_ips) == 1
    assert admin.network.get_port(auto.id).mac_address == auto.mac_address
    bound = admin.network.update_port(auto, binding_host_id="compute-r1-1",
                                      device_owner="compute:nova", device_id="vm-1")
    assert bound.status == "ACTIVE" and bound.binding_vif_type == "ovs"
    assert [p.id for p in admin.network.ports(device_id="vm-1")] == [auto.id]
    assert {p.name for p in admin.network.ports(network_id=net.id, sort_key="name",
                                                limit=1)} == {"p1", "p2"}
    with pytest.raises(exceptions.ConflictException):
        admin.network.create_port(network_id=net.id, fixed_ips=[{"ip_address": "192.168.77.20"}])
    with pytest.raises(exceptions.ConflictException):
        admin.network.delete_network(net)
    for p in (port, auto):
        admin.network.delete_port(p)
    for s in (from_pool, default, plain):
        admin.network.delete_subnet(s)
    admin.network.delete_subnet_pool(pool)
    admin.network.delete_network(net)


def test_sdk_security_groups(cloud):
    member = cloud.new_project_member()["sdk"]
    groups = list(member.network.security_groups())
    assert [g.name for g in groups] == ["default"]
    sg = member.network.create_security_group(name="web", description="web servers")
    assert len(sg.security_group_rules) == 2
    rule = member.network.create_security_group_rule(
        security_group_id=sg.id, direction="ingress", protocol="tcp", port_range_min=443,
        port_range_max=443, remote_ip_prefix="0.0.0.0/0", ethertype="IPv4")
    assert rule.port_range_min == 443
    with pytest.raises(exceptions.ConflictException):
        member.network.create_security_group_rule(
            security_group_id=sg.id, direction="ingress", protocol="tcp", port_range_min=443,
            port_range_max=443, remote_ip_prefix="0.0.0.0/0", ethertype="IPv4")
    with pytest.raises(exceptions.BadRequestException):
        member.network.create_security_group_rule(
            security_group_id=sg.id, direction="ingress", protocol="tcp", port_range_min=500,
            port_range_max=400)
    assert len(list(member.network.security_group_rules(security_group_id=sg.id))) == 3
    member.network.update_security_group(sg, description="changed")
    member.network.delete_security_group_rule(rule)
    member.network.delete_security_group(sg)
    with pytest.raises(exceptions.ConflictException):
        member.network.delete_security_group(groups[0])


# ------------------------------------------------------------------ CLI (SQLite only)
@sqlite_only
def test_cli_network_story(cloud):
    c = cloud
    name = _name("cli")
    net = c.cli("network", "create", name, "--provider-network-type", "vlan",
                "--provider-physical-network", "physnet2", "-f", "json")
    assert net["provider:network_type"] == "vlan" and net["mtu"] == 1500
    listed = c.cli("network", "list", "--name", name, "-f", "json")
    assert [n["ID"] for n in listed] == [net["id"]]
    c.cli("network", "set", name, "--description", "from the cli", "--tag", "cli", parse=False)
    shown = c.cli("network", "show", name, "-f", "json")
    assert shown["description"] == "from the cli" and shown["tags"] == ["cli"]
    sub = c.cli("subnet", "create", f"{name}-pool", "--network", name, "--subnet-pool",
                "shared-default-subnetpool-v4", "-f", "json")
    assert sub["cidr"].endswith("/26")
    sub2 = c.cli("subnet", "create", f"{name}-dflt", "--network", name,
                 "--use-default-subnet-pool", "--ip-version", "4", "--prefix-length", "28",
                 "-f", "json")
    assert sub2["cidr"].endswith("/28")
    cidr_subnet = c.cli("subnet", "create", f"{name}-v4", "--network", name, "--subnet-range",
                        "10.250.0.0/24", "-f", "json")
    port = c.cli("port", "create", f"{name}-port", "--network", name, "--fixed-ip",
                 f"subnet={cidr_subnet['id']},ip-address=10.250.0.10", "-f", "json")
    assert "10.250.0.10" in str(port["fixed_ips"])
    sg = c.cli("security", "group", "create", f"{name}-sg", "-f", "json")
    rule = c.cli("security", "group", "rule", "create", sg["id"], "--protocol", "tcp",
                 "--dst-port", "22", "--remote-ip", "0.0.0.0/0", "-f", "json")
    assert rule["port_range_min"] == 22 and rule["protocol"] == "tcp"
    c.cli("port", "delete", port["id"], parse=False)
    c.cli("network", "delete", name, parse=False)
    proc = c.cli("network", "show", name, check=False)
    assert proc.returncode != 0
