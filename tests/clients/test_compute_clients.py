"""Compute through the real clients: openstacksdk on every backend; the `openstack` CLI
story of issue 6 (Get Me a Network) on SQLite; a kill -9 in the middle of builds."""

from __future__ import annotations

import ipaddress
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import sqlite_only

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}


def _addresses(server: dict) -> dict:
    value = server["addresses"]
    return json.loads(value) if isinstance(value, str) else value


def test_sdk_boot_auto_and_delete(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    server = conn.compute.create_server(name="sdk-vm", image_id=image.id, flavor_id=flavor.id,
                                        networks="auto")
    server = conn.compute.wait_for_server(server, status="ACTIVE", wait=60, interval=0.2)
    (label, ips), = server.addresses.items()
    assert ips[0]["addr"] and ips[0]["OS-EXT-IPS:type"] == "fixed"
    ports = list(conn.network.ports(device_id=server.id))
    assert len(ports) == 1 and ports[0].device_owner == "compute:nova"
    assert ports[0].status == "ACTIVE"
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=60, interval=0.2)
    assert list(conn.network.ports(device_id=server.id)) == []


@sqlite_only
def test_cli_get_me_a_network(cloud):
    """The user story, as the demo member: boot with --nic auto and ssh (an address)."""
    c = cloud
    member = c.new_project_member()
    env = {"OS_AUTH_URL": f"{c.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null"}

    def cli(*args: str, **kw):
        return c.cli(*args, cloud="", env=env, **kw)

    check = cli("network", "auto", "allocated", "topology", "create", "--check-resources",
                "-f", "json")
    assert check  # dry run passes on the demo cloud
    vm1 = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "auto",
              "--wait", "vm1", "-f", "json")
    assert vm1["status"] == "ACTIVE"
    (net_name, ips1), = _addresses(vm1).items()
    assert ips1 and ips1[0].startswith("10.")  # from the default subnet pool
    vm2 = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "auto",
              "--wait", "vm2", "-f", "json")
    assert list(_addresses(vm2)) == [net_name]  # the same auto-allocated network
    vm3 = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none",
              "--wait", "vm3", "-f", "json")
    assert vm3["status"] == "ACTIVE" and not _addresses(vm3)
    topology = cli("network", "auto", "allocated", "topology", "create", "-f", "json")
    conn = member["sdk"]
    network = conn.network.get_network(topology["id"])
    assert network.name == net_name
    subnet = next(conn.network.subnets(network_id=network.id, ip_version=4))
    port = conn.network.create_port(network_id=network.id)
    # A free address (the others were allocated at random), asked for first so the
    # request's own random allocation cannot take it.
    taken = {ip["ip_address"] for p in conn.network.ports(network_id=network.id)
             for ip in p.fixed_ips}
    fixed = next(str(a) for a in ipaddress.ip_network(subnet.cidr).hosts()
                 if a.packed[-1] >= 20 and str(a) not in taken)
    vm4 = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
              f"net-id={network.id},v4-fixed-ip={fixed}", "--network", network.id,
              "--port", port.id, "--wait", "vm4", "-f", "json")
    addrs = [a for a in _addresses(vm4)[net_name] if ":" not in a]  # IPv4 (v6 from SLAAC)
    assert len(addrs) == 3 and fixed in addrs and port.fixed_ips[0]["ip_address"] in addrs
    bound = conn.network.get_port(port.id)
    assert bound.device_id == vm4["id"] and bound.status == "ACTIVE"
    assert {s.name for s in conn.compute.servers()} == {"vm1", "vm2", "vm3", "vm4"}
    # Deleting vm4 deletes the ports compute made and only unbinds the user's port.
    for s in (vm1, vm2, vm3, vm4):
        conn.compute.delete_server(s["id"])
    assert conn.network.get_port(port.id).device_id == ""
    assert [p.id for p in conn.network.ports(network_id=network.id,
                                            device_owner="compute:nova")] == []
    conn.network.delete_port(port.id)
    cli("network", "auto", "allocated", "topology", "delete", parse=False)
    assert conn.network.find_network(network.id) is None


def test_crash_mid_build_leaks_nothing(cloud_factory):
    """kill -9 while builds are in flight; after a restart every server is ACTIVE or
    ERROR, each ACTIVE one holds exactly its ports and allocation, nothing else is held."""
    server = cloud_factory("sqlite")
    headers = {"X-Auth-Token": server.token("demo", "demo"), **MV}

    def create(networks: str, count: int) -> None:
        with httpx.Client(base_url=server.url, timeout=30, headers=headers) as http:
            r = http.post("/compute/v2.1/servers", json={"server": {
                "name": f"crash-{networks}", "flavorRef": "1", "imageRef": CIRROS,
                "networks": networks, "min_count": count, "max_count": count}})
            assert r.status_code == 202, r.text

    with server.http(server.token()) as admin:  # 27 servers: above Nova's default 10
        demo = admin.get("/identity/v3/projects?name=demo").json()["projects"][0]["id"]
        admin.put(f"/compute/v2.1/os-quota-sets/{demo}", json={"quota_set": {
            "instances": -1, "cores": -1, "ram": -1}}).raise_for_status()
    create("auto", 1)  # the first auto boot builds the topology
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(create, ["auto", "none", "auto"], [10, 6, 10]))
    server.stop(kill=True)  # right after the API accepted 26 builds
    assert _pending_builds(server.database_url) > 0, "every build finished before the kill"
    server.start()
    admin = server.http(server.token())
    admin.headers.update(MV)
    deadline = time.monotonic() + 60
    while True:
        servers = admin.get("/compute/v2.1/servers/detail?all_tenants=1").json()["servers"]
        if all(s["status"] in ("ACTIVE", "ERROR") for s in servers):
            break
        assert time.monotonic() < deadline, [s["status"] for s in servers]
        time.sleep(0.1)
    assert servers, "no build was accepted before the kill"
    by_id = {s["id"]: s for s in servers}
    ports = admin.get("/networking/v2.0/ports?device_owner=compute:nova").json()["ports"]
    assert sorted(p["device_id"] for p in ports) == sorted(
        s["id"] for s in servers if s["status"] == "ACTIVE" and s["addresses"])
    for s in servers:
        allocations = admin.get(f"/placement/allocations/{s['id']}").json()["allocations"]
        assert bool(allocations) == (s["status"] == "ACTIVE"), s
    usages = 0
    for rp in admin.get("/placement/resource_providers").json()["resource_providers"]:
        used = admin.get(f"/placement/resource_providers/{rp['uuid']}/usages").json()
        usages += used["usages"].get("VCPU", 0)
    assert usages == sum(1 for s in by_id.values() if s["status"] == "ACTIVE")
    admin.close()


def test_sdk_none_and_project_isolation(cloud):
    from openstack import exceptions

    other = cloud.new_project_member()["sdk"]
    demo = cloud.sdk("stackling")
    server = demo.compute.create_server(name=f"mine-{uuid.uuid4().hex[:6]}", image_id=CIRROS,
                                        flavor_id="1", networks="none")
    server = demo.compute.wait_for_server(server, status="ACTIVE", wait=60, interval=0.2)
    assert server.addresses == {}
    with pytest.raises(exceptions.NotFoundException):
        other.compute.get_server(server.id)
    assert server.id not in {s.id for s in other.compute.servers()}
    demo.compute.delete_server(server)
    demo.compute.wait_for_delete(server, wait=60, interval=0.2)


def _pending_builds(database_url: str) -> int:
    import sqlalchemy as sa

    engine = sa.create_engine(database_url)
    with engine.connect() as conn:
        count = conn.execute(sa.text(
            "SELECT count(*) FROM compute_instance WHERE build_state = 'pending'")).scalar()
    engine.dispose()
    return int(count or 0)
