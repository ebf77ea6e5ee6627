"""Compute microversions 2.98–2.104 through the real clients: the `openstack` CLI pins and
unpins a server's zone at 2.104, shows its scheduler hints and lists flavors at 2.102;
openstacksdk negotiates 2.100 (its server maximum) and sees the hints and image properties
a server was booted with."""

from __future__ import annotations

from tests.clients.test_compute_microversion_clients import _member_env
from tests.conftest import sqlite_only


@sqlite_only
def test_cli_pins_and_unpins_the_zone_at_2_104(cloud):
    member, env = _member_env(cloud)

    def cli(*args: str, **kw):
        return cloud.cli("--os-compute-api-version", "2.104", *args, cloud="", env=env, **kw)

    vm = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none",
             "--availability-zone", "nova", "--hint", "cidr=/24", "--wait", "pin-vm",
             "-f", "json")
    assert vm["status"] == "ACTIVE" and vm["pinned_availability_zone"] == "nova"
    assert vm["scheduler_hints"] == {"cidr": ["/24"]}  # 2.100, as the request spec keeps it
    cli("server", "unset", "--pinned-availability-zone", vm["id"], parse=False)
    assert cli("server", "show", vm["id"], "-f", "json")["pinned_availability_zone"] is None
    cli("server", "set", "--pinned-availability-zone", "nova", vm["id"], parse=False)
    assert cli("server", "show", vm["id"], "-f", "json")["pinned_availability_zone"] == "nova"
    refused = cloud.cli("--os-compute-api-version", "2.104", "server", "set",
                        "--pinned-availability-zone", "elsewhere", vm["id"], cloud="", env=env,
                        parse=False, check=False)
    assert refused.returncode != 0 and "Unpin first" in refused.stderr
    flavors = cli("flavor", "list", "--long", "-f", "json")
    assert any(f["Name"] == "m1.tiny" for f in flavors)
    cli("server", "delete", "--wait", vm["id"], parse=False)


def test_sdk_sees_hints_and_image_properties(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    server = conn.compute.create_server(
        name="sdk-hints", image_id=image.id, flavor_id=flavor.id, networks="none",
        scheduler_hints={"build_near_host_ip": "10.0.0.1", "cidr": "/24"})
    server = conn.compute.wait_for_server(server, status="ACTIVE", wait=60, interval=0.2)
    # openstacksdk maps only the legacy hint key; 2.100's is read from the body
    body = conn.compute.get(f"/servers/{server.id}", microversion="2.100").json()["server"]
    assert body["scheduler_hints"] == {"build_near_host_ip": ["10.0.0.1"], "cidr": ["/24"]}
    assert isinstance(body["image"]["properties"], dict)
    older = conn.compute.get(f"/servers/{server.id}", microversion="2.97").json()["server"]
    assert "scheduler_hints" not in older and "properties" not in older["image"]
    got = conn.compute.get_server(server.id)  # negotiated: min(2.100, 2.104)
    assert got.image.id == image.id and got.pinned_availability_zone is None
    # 2.104 through the raw API (openstacksdk's servers stop at 2.100): pin, then unpin
    url = f"/servers/{server.id}"
    zone = body["OS-EXT-AZ:availability_zone"]
    pinned = conn.compute.put(url, json={"server": {"pinned_availability_zone": zone}},
                              microversion="2.104")
    assert pinned.status_code == 200, pinned.text
    assert conn.compute.get_server(server.id).pinned_availability_zone == zone
    assert conn.compute.put(url, json={"server": {"pinned_availability_zone": None}},
                            microversion="2.104").status_code == 200
    assert conn.compute.get_server(server.id).pinned_availability_zone is None
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=60, interval=0.2)
