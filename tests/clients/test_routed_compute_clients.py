"""Compute on routed networks through the real clients: openstacksdk on every backend
(scheduling to the segment, deferred ports, exhaustion, moves kept on the segment,
interfaces), and the README's "Routed networks" walkthrough with the `openstack` CLI on
SQLite."""

from __future__ import annotations

import ipaddress
import uuid

import openstack.exceptions
import pytest

from tests.conftest import sqlite_only

WAIT = {"wait": 60, "interval": 0.2}
RACKS = {"physnet1": {"compute-r1-1", "compute-r1-2"},
         "physnet2": {"compute-r2-1", "compute-r2-2"}}


def _routed(admin, project_id, name, pools):
    """A routed network of `project_id`: a segment on physnet1 and physnet2 and one subnet
    on each (`pools`: (cidr, first, last) per physnet). Returns (network, {physnet: subnet})."""
    net = admin.network.create_network(name=name, project_id=project_id,
                                       provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    seg1 = next(admin.network.segments(network_id=net.id))
    seg2 = admin.network.create_segment(network_id=net.id, network_type="vlan",
                                        physical_network="physnet2")
    subnets = {}
    for (physnet, seg), (cidr, first, last) in zip((("physnet1", seg1), ("physnet2", seg2)),
                                                   pools, strict=True):
        subnets[physnet] = admin.network.create_subnet(
            network_id=net.id, project_id=project_id, segment_id=seg.id, ip_version=4,
            cidr=cidr, allocation_pools=[{"start": first, "end": last}])
    return net, subnets


def _rack_of(subnets, address):
    for physnet, subnet in subnets.items():
        if ipaddress.ip_address(address) in ipaddress.ip_network(subnet.cidr):
            return physnet
    raise AssertionError(address)


def _boot(conn, name, nic):
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    server = conn.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                        networks=[nic])
    return conn.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"], **WAIT)


def _address(server):
    (ips,) = server.addresses.values()
    return ips[0]["addr"]


@pytest.fixture
def routed(cloud):
    member = cloud.new_project_member()
    admin = cloud.sdk()
    net, subnets = _routed(admin, member["project"].id, f"routed-{uuid.uuid4().hex[:6]}",
                           [("10.93.1.0/24", "10.93.1.10", "10.93.1.100"),
                            ("10.93.2.0/24", "10.93.2.10", "10.93.2.100")])
    return member["sdk"], admin, net, subnets


def test_sdk_boot_deferred_port_and_placement(routed):
    conn, admin, net, subnets = routed
    server = _boot(conn, "r1", {"uuid": net.id})
    host = admin.compute.get_server(server.id).compute_host
    assert host in RACKS[_rack_of(subnets, _address(server))]
    port = conn.network.create_port(network_id=net.id)
    assert port.ip_allocation == "deferred" and port.fixed_ips == []
    deferred = _boot(conn, "r2", {"port": port.id})
    port = conn.network.get_port(port.id)
    address = port.fixed_ips[0]["ip_address"]
    assert admin.compute.get_server(deferred.id).compute_host in RACKS[
        _rack_of(subnets, address)]
    # placement: one IPV4_ADDRESS of usage per compute port address on the segment
    ports = list(admin.network.ports(network_id=net.id, device_owner="compute:nova"))
    for subnet in subnets.values():
        held = sum(1 for p in ports for ip in p.fixed_ips if ip["subnet_id"] == subnet.id)
        usages = admin.placement.get(f"/resource_providers/{subnet.segment_id}/usages",
                                     microversion="1.9").json()["usages"]
        assert usages.get("IPV4_ADDRESS", 0) == held


def test_sdk_exhausted_network_is_no_valid_host(cloud):
    member = cloud.new_project_member()
    admin = cloud.sdk()
    net, subnets = _routed(admin, member["project"].id, "tiny",
                           [("10.94.1.0/24", "10.94.1.10", "10.94.1.11"),
                            ("10.94.2.0/24", "10.94.2.10", "10.94.2.11")])
    conn = member["sdk"]
    a = _boot(conn, "t1", {"uuid": net.id})
    b = _boot(conn, "t2", {"uuid": net.id})
    assert {_rack_of(subnets, _address(s)) for s in (a, b)} == {"physnet1", "physnet2"}
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    c = conn.compute.create_server(name="t3", image_id=image.id, flavor_id=flavor.id,
                                   networks=[{"uuid": net.id}])
    with pytest.raises(openstack.exceptions.ResourceFailure):
        conn.compute.wait_for_server(c, status="ACTIVE", failures=["ERROR"], **WAIT)
    c = conn.compute.get_server(c.id)
    assert c.status == "ERROR" and "No valid host was found" in c.fault["message"]
    assert len(list(conn.network.ports(network_id=net.id, device_owner="compute:nova"))) == 2


def test_sdk_moves_stay_on_the_segment(routed):
    conn, admin, net, subnets = routed
    server = _boot(conn, "mover", {"uuid": net.id})
    rack = _rack_of(subnets, _address(server))
    host = admin.compute.get_server(server.id).compute_host
    admin.compute.live_migrate_server(server, host=None, block_migration="auto")
    moved = admin.compute.get_server(server.id)
    assert moved.compute_host in RACKS[rack] - {host}
    admin.compute.migrate_server(server)
    assert admin.compute.get_server(server.id).compute_host == host
    conn.compute.confirm_server_resize(server)
    other = sorted(RACKS["physnet2" if rack == "physnet1" else "physnet1"])[0]
    with pytest.raises(openstack.exceptions.BadRequestException) as err:
        admin.compute.live_migrate_server(server, host=other, block_migration="auto")
    assert other in str(err.value) and "cannot reach" in str(err.value)
    with pytest.raises(openstack.exceptions.BadRequestException):
        admin.compute.live_migrate_server(server, host=other, force=True,
                                          block_migration="auto")
    after = admin.compute.get_server(server.id)
    assert after.status == "ACTIVE" and after.compute_host == host
    assert _address(after) == _address(server)


def test_sdk_interfaces(routed):
    conn, admin, net, subnets = routed
    server = _boot(conn, "nics", {"uuid": net.id})
    rack = _rack_of(subnets, _address(server))
    far = subnets["physnet2" if rack == "physnet1" else "physnet1"]
    port = conn.network.create_port(network_id=net.id, fixed_ips=[{"subnet_id": far.id}])
    with pytest.raises(openstack.exceptions.BadRequestException):
        conn.compute.create_server_interface(server, port_id=port.id)
    deferred = conn.network.create_port(network_id=net.id)
    attached = conn.compute.create_server_interface(server, port_id=deferred.id)
    assert _rack_of(subnets, attached.fixed_ips[0]["ip_address"]) == rack


@sqlite_only
def test_cli_routed_walkthrough(cloud):
    """The README's "Routed networks" section, step by step."""
    c = cloud

    def admin(*args, **kw):
        return c.cli(*args, **kw)

    def demo(*args, **kw):
        return c.cli(*args, cloud="stackling", **kw)

    admin("network", "create", "--project", "demo", "--provider-network-type", "vlan",
          "--provider-physical-network", "physnet1", "--provider-segment", "2016", "routed",
          "-f", "json")
    (seg1,) = admin("network", "segment", "list", "--network", "routed", "-f", "json")
    admin("network", "segment", "set", "--name", "rack1", seg1["ID"], parse=False)
    seg2 = admin("network", "segment", "create", "--network", "routed", "--network-type",
                 "vlan", "--physical-network", "physnet2", "--segment", "2017", "rack2",
                 "-f", "json")
    admin("subnet", "create", "--project", "demo", "--network", "routed",
          "--network-segment", "rack1", "--subnet-range", "10.91.1.0/24", "routed-rack1",
          "-f", "json")
    admin("subnet", "create", "--project", "demo", "--network", "routed",
          "--network-segment", "rack2", "--subnet-range", "10.91.2.0/24", "routed-rack2",
          "-f", "json")
    inventory = admin("resource", "provider", "inventory", "list", seg2["id"], "-f", "json")
    (ipv4,) = [i for i in inventory if i["resource_class"] == "IPV4_ADDRESS"]
    assert ipv4["total"] == 254 and ipv4["reserved"] == 2
    port = demo("port", "create", "--network", "routed", "deferred1", "-f", "json")
    assert port["ip_allocation"] == "deferred" and not port["fixed_ips"]
    vm = demo("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
              "net-id=routed", "--wait", "vm-routed", "-f", "json")
    assert vm["status"] == "ACTIVE"
    sid = vm["id"]  # the admin addresses the demo's server by id (its own project differs)
    shown = admin("server", "show", sid, "-f", "json")
    host = shown["OS-EXT-SRV-ATTR:host"]
    (address,) = shown["addresses"]["routed"]
    rack = "physnet1" if address.startswith("10.91.1.") else "physnet2"
    assert host in RACKS[rack]
    vm2 = demo("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--port",
               "deferred1", "--wait", "vm-deferred", "-f", "json")
    assert vm2["status"] == "ACTIVE"
    admin("server", "migrate", "--wait", sid, parse=False)
    admin("server", "migration", "confirm", sid, parse=False)
    admin("server", "migrate", "--live-migration", "--wait", sid, parse=False)
    assert admin("server", "show", sid, "-f", "json")["OS-EXT-SRV-ATTR:host"] in RACKS[rack]
    other = sorted(RACKS["physnet2" if rack == "physnet1" else "physnet1"])[0]
    refused = admin("server", "migrate", "--live-migration", "--host", other, sid,
                    check=False)
    assert refused.returncode != 0
    assert "cannot reach" in refused.stderr and other in refused.stderr
    # --nic auto in a fresh project works as before
    member = c.new_project_member()
    env = {"OS_AUTH_URL": f"{c.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null"}
    auto = c.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                 "auto", "--wait", "vm-auto", "-f", "json", cloud="", env=env)
    assert auto["status"] == "ACTIVE" and "routed" not in str(auto["addresses"])
