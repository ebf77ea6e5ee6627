"""Issue 23's last network extensions through the real clients: router `ha`/`distributed`
(`l3-ha`, `dvr`), `service-type`, `flavors`, `logging` and `local_ip` — openstacksdk on
every backend, the `openstack` CLI on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------ l3-ha, dvr
def test_sdk_router_ha_and_distributed(cloud):
    admin = cloud.sdk()
    router = admin.network.create_router(name=_name("hd"), is_ha=True, is_distributed=True)
    assert router.is_ha is True and router.is_distributed is True
    with pytest.raises(exceptions.BadRequestException):  # still up
        admin.network.update_router(router, is_ha=False)
    router = admin.network.update_router(router, is_admin_state_up=False)
    router = admin.network.update_router(router, is_ha=False, is_distributed=False)
    assert router.is_ha is False and router.is_distributed is False
    assert admin.network.get_router(router.id).is_ha is False
    member = cloud.new_project_member()["sdk"]
    own = member.network.create_router(name=_name("own"))
    assert own.is_ha is None and own.is_distributed is None  # not shown to members
    with pytest.raises(exceptions.ForbiddenException):
        member.network.create_router(name=_name("own"), is_ha=True)
    admin.network.delete_router(router)


@sqlite_only
def test_cli_router_ha_and_distributed(cloud):
    name = _name("cli-hd")
    made = cloud.cli("router", "create", "--ha", "--distributed", name, "-f", "json")
    assert made["ha"] is True and made["distributed"] is True
    cloud.cli("router", "set", "--disable", name, parse=False)
    cloud.cli("router", "set", "--no-ha", "--centralized", name, parse=False)
    shown = cloud.cli("router", "show", name, "-f", "json")
    assert shown["ha"] is False and shown["distributed"] is False
    cloud.cli("router", "delete", name, parse=False)


# ------------------------------------------------------------------ service-type, flavors
L3_HA_DRIVER = "neutron.services.l3_router.service_providers.ha.HaDriver"


def test_sdk_service_providers_and_flavors(cloud):
    member = cloud.new_project_member()["sdk"]
    assert {(p.service_type, p.name) for p in member.network.service_providers()} >= {
        ("L3_ROUTER_NAT", "ha"), ("L3_ROUTER_NAT", "single_node")}
    admin = cloud.sdk()
    flavor = admin.network.create_flavor(name=_name("nf"), service_type="L3_ROUTER_NAT")
    profile = admin.network.create_service_profile(driver=L3_HA_DRIVER, description="ha")
    admin.network.associate_flavor_with_service_profile(flavor, profile)
    assert admin.network.get_flavor(flavor.id).service_profile_ids == [profile.id]
    with pytest.raises(exceptions.ConflictException):  # in use
        admin.network.delete_service_profile(profile)
    seen = member.network.get_flavor(flavor.id)  # members read flavors...
    assert seen.service_type == "L3_ROUTER_NAT"
    assert list(member.network.service_profiles()) == []  # ...never profiles
    with pytest.raises(exceptions.ForbiddenException):
        member.network.update_flavor(flavor, name="x")
    flavor = admin.network.update_flavor(flavor, is_enabled=False, description="off")
    assert flavor.is_enabled is False and flavor.description == "off"
    admin.network.disassociate_flavor_from_service_profile(flavor, profile)
    admin.network.delete_service_profile(profile)
    admin.network.delete_flavor(flavor)
    assert admin.network.find_flavor(flavor.id) is None


@sqlite_only
def test_cli_network_flavors_and_profiles(cloud):
    name = _name("cli-nf")
    flavor = cloud.cli("network", "flavor", "create", "--service-type", "L3_ROUTER_NAT",
                       "--description", "gold", name, "-f", "json")
    assert flavor["service_type"] == "L3_ROUTER_NAT" and flavor["enabled"] is True
    profile = cloud.cli("network", "flavor", "profile", "create", "--driver", L3_HA_DRIVER,
                        "--description", "p", "-f", "json")
    assert profile["driver"] == L3_HA_DRIVER
    cloud.cli("network", "flavor", "add", "profile", name, profile["id"], parse=False)
    shown = cloud.cli("network", "flavor", "show", name, "-f", "json")
    assert profile["id"] in str(shown["service_profile_ids"])
    cloud.cli("network", "flavor", "set", "--disable", "--name", name + "x", name, parse=False)
    listed = cloud.cli("network", "flavor", "list", "-f", "json")
    assert any(f["Name"] == name + "x" and f["Enabled"] is False for f in listed)
    cloud.cli("network", "flavor", "remove", "profile", name + "x", profile["id"], parse=False)
    profiles = cloud.cli("network", "flavor", "profile", "list", "-f", "json")
    assert profile["id"] in {p["ID"] for p in profiles}
    cloud.cli("network", "flavor", "profile", "set", "--disable", profile["id"], parse=False)
    assert cloud.cli("network", "flavor", "profile", "show", profile["id"],
                     "-f", "json")["enabled"] is False
    cloud.cli("network", "flavor", "profile", "delete", profile["id"], parse=False)
    cloud.cli("network", "flavor", "delete", name + "x", parse=False)
    providers = cloud.cli("network", "service", "provider", "list", "-f", "json")
    assert {p["Name"] for p in providers} >= {"ha", "dvr", "single_node", "dvrha"}


# ------------------------------------------------------------------ logging
def test_sdk_session_network_logs(cloud):
    """openstacksdk has no log resource: its network proxy session, as a script would."""
    manager = cloud.new_project_member(role="manager")["sdk"]
    sg = manager.network.create_security_group(name=_name("logged"))
    r = manager.network.get("/log/loggable-resources")
    assert r.json() == {"loggable_resources": [{"type": "security_group"}]}
    r = manager.network.post("/log/logs", json={"log": {
        "name": "drops", "resource_type": "security_group", "resource_id": sg.id,
        "event": "DROP"}})
    assert r.status_code == 201, r.text
    log = r.json()["log"]
    assert (log["event"], log["resource_id"], log["enabled"]) == ("DROP", sg.id, True)
    r = manager.network.post("/log/logs", json={"log": {"resource_type": "port"}},
                             raise_exc=False)
    assert r.status_code == 400 and r.json()["NeutronError"]["type"] == \
        "InvalidLogResourceType"
    member = cloud.new_project_member()["sdk"]
    r = member.network.post("/log/logs", json={"log": {"resource_type": "security_group"}},
                            raise_exc=False)
    assert r.status_code == 403
    r = manager.network.put(f"/log/logs/{log['id']}", json={"log": {"enabled": False}})
    assert r.json()["log"]["enabled"] is False
    manager.network.delete_security_group(sg)  # its logs go with it
    r = manager.network.get(f"/log/logs/{log['id']}", raise_exc=False)
    assert r.status_code == 404


@sqlite_only
def test_cli_network_log(cloud):
    sg = cloud.cli("security", "group", "create", _name("cli-log"), "-f", "json")
    types = cloud.cli("network", "loggable", "resources", "list", "-f", "json")
    assert [t["Supported types"] for t in types] == ["security_group"]
    name = _name("cli-log")
    made = cloud.cli("network", "log", "create", "--resource-type", "security_group",
                     "--resource", sg["id"], "--event", "ACCEPT", "--description", "d",
                     name, "-f", "json")
    assert made["Event"] == "ACCEPT" and made["Resource"] == sg["id"]
    listed = cloud.cli("network", "log", "list", "-f", "json")
    assert name in {x["Name"] for x in listed}
    cloud.cli("network", "log", "set", "--disable", "--name", name + "x", name, parse=False)
    shown = cloud.cli("network", "log", "show", name + "x", "-f", "json")
    assert shown["Enabled"] is False
    cloud.cli("network", "log", "delete", name + "x", parse=False)
    cloud.cli("security", "group", "delete", sg["id"], parse=False)


# ------------------------------------------------------------------ local_ip
def test_sdk_local_ips(cloud):
    conn = cloud.new_project_member()["sdk"]
    net = conn.network.create_network(name=_name("lip"))
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.78.0.0/24")
    lip = conn.network.create_local_ip(name=_name("lip"), network_id=net.id,
                                       local_ip_address="10.78.0.40")
    assert lip.local_ip_address == "10.78.0.40" and lip.ip_mode == "translate"
    vm = conn.network.create_port(network_id=net.id)
    assoc = conn.network.create_local_ip_association(lip, fixed_port_id=vm.id)
    assert assoc.fixed_ip == vm.fixed_ips[0]["ip_address"]
    assert assoc.local_ip_address == "10.78.0.40"
    assert [a.fixed_port_id for a in conn.network.local_ip_associations(lip)] == [vm.id]
    with pytest.raises(exceptions.ConflictException):  # associated
        conn.network.delete_local_ip(lip)
    with pytest.raises(exceptions.ConflictException):  # the local IP's own port
        conn.network.delete_port(lip.local_port_id)
    lip = conn.network.update_local_ip(lip, name="renamed")
    assert lip.name == "renamed"
    conn.network.delete_local_ip_association(lip, vm.id)
    conn.network.delete_local_ip(lip)
    assert conn.network.find_local_ip(lip.id) is None
    assert conn.network.find_port(lip.local_port_id) is None


@sqlite_only
def test_cli_local_ip(cloud):
    net = cloud.cli("network", "create", _name("cli-lip"), "-f", "json")
    cloud.cli("subnet", "create", "--network", net["id"], "--subnet-range", "10.79.0.0/24",
              _name("cli-lip"), "-f", "json")
    name = _name("cli-lip")
    lip = cloud.cli("local", "ip", "create", "--network", net["id"], "--local-ip-address",
                    "10.79.0.9", "--name", name, "-f", "json")
    assert lip["local_ip_address"] == "10.79.0.9"
    port = cloud.cli("port", "create", "--network", net["id"], _name("vm"), "-f", "json")
    cloud.cli("local", "ip", "association", "create", name, port["id"], "-f", "json")
    assocs = cloud.cli("local", "ip", "association", "list", name, "-f", "json")
    assert [a["Fixed port ID"] for a in assocs] == [port["id"]]
    cloud.cli("local", "ip", "set", "--description", "d", name, parse=False)
    assert cloud.cli("local", "ip", "show", name, "-f", "json")["description"] == "d"
    assert name in {x["Name"] for x in cloud.cli("local", "ip", "list", "-f", "json")}
    cloud.cli("local", "ip", "association", "delete", name, port["id"], parse=False)
    cloud.cli("local", "ip", "delete", name, parse=False)
