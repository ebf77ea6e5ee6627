"""Servers become guests: DHCP, metadata, SSH with the key pair, user data, console log,
L2 between servers of one network and none between networks."""

from __future__ import annotations

import json
import time

from tests.dataplane.conftest import DataplaneCloud

USER_DATA = "#!/bin/sh\necho configured-by-user-data > /tmp/user-data-ran\n"


def test_two_servers_on_one_network_reach_each_other(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-net", "10.51.0.0/24")
    one = dp.server("vm-one", net.id, user_data=USER_DATA)
    two = dp.server("vm-two", net.id)
    one_ip, two_ip = dp.address(one), dp.address(two)

    # from inside vm-one's network namespace, SSH into vm-two with the key pair
    assert dp.wait_ssh(dp.names.guest(one.id), two_ip).strip() == "vm-two"
    # DHCP gave exactly the port's address, metadata the hostname and the key
    addrs = dp.ssh(dp.names.guest(two.id), one_ip, "ip -4 -o addr show eth0")
    assert f"inet {one_ip}/24" in addrs.stdout, addrs
    ran = dp.ssh(dp.names.guest(two.id), one_ip, "cat /tmp/user-data-ran; hostname")
    assert ran.stdout.split() == ["configured-by-user-data", "vm-one"], ran
    # the guest sees its own processes only and holds no capability as the user
    ps = dp.ssh(dp.names.guest(two.id), one_ip, "ps -o pid,comm; grep CapEff /proc/self/status")
    assert "dropbear" in ps.stdout and "stackling" not in ps.stdout, ps
    assert "CapEff:\t0000000000000000" in ps.stdout
    # Nova's metadata API answers the guest that asks, about itself
    fetch = ("printf 'GET /openstack/latest/meta_data.json HTTP/1.0\\r\\n\\r\\n' "
             "| nc -w 3 169.254.169.254 80 | tail -1")
    meta = json.loads(dp.ssh(dp.names.guest(two.id), one_ip, fetch).stdout)
    assert meta["uuid"] == one.id and meta["name"] == "vm-one"
    assert {k: v.strip() for k, v in meta["public_keys"].items()} == {
        "dp-key": dp.key.with_suffix(".pub").read_text().strip()}
    fetch = fetch.replace("meta_data.json", "network_data.json")
    network_data = json.loads(dp.ssh(dp.names.guest(two.id), one_ip, fetch).stdout)
    assert network_data["networks"][0]["ip_address"] == one_ip
    # its boot is the console log
    log = dp.cloud.cli("console", "log", "show", one.id, parse=False)
    assert "lease of " + one_ip in log and "vm-one login:" in log, log


def test_networks_are_apart_and_stop_start_act_on_the_guest(dataplane_cloud: DataplaneCloud
                                                            ) -> None:
    dp = dataplane_cloud
    net1, _ = dp.network("dp-a", "10.52.0.0/24")
    net2, _ = dp.network("dp-b", "10.52.0.0/24")  # the same addresses, another segment
    a = dp.server("vm-a", net1.id)
    b = dp.server("vm-b", net1.id)
    c = dp.server("vm-c", net2.id)
    b_ip = dp.address(b)
    assert dp.wait_ssh(dp.names.guest(a.id), b_ip).strip() == "vm-b"
    # vm-c's network has the same range on another segment: vm-b is not there
    assert dp.wait_ssh(dp.names.guest(c.id), dp.address(c)).strip() == "vm-c"
    assert dp.unreachable(dp.names.guest(c.id), b_ip)

    dp.sdk.compute.stop_server(b)
    dp.sdk.compute.wait_for_server(b, status="SHUTOFF", wait=60, interval=0.2)
    deadline = time.monotonic() + 30
    while not dp.unreachable(dp.names.guest(a.id), b_ip) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert dp.unreachable(dp.names.guest(a.id), b_ip)
    dp.sdk.compute.start_server(b)
    dp.sdk.compute.wait_for_server(b, status="ACTIVE", wait=60, interval=0.2)
    assert dp.wait_ssh(dp.names.guest(a.id), b_ip).strip() == "vm-b"

    dp.sdk.compute.delete_server(c)
    dp.sdk.compute.wait_for_delete(c, wait=60, interval=0.2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and dp.names.guest(c.id) in _namespaces():
        time.sleep(0.2)
    assert dp.names.guest(c.id) not in _namespaces()


def _namespaces() -> list[str]:
    import subprocess

    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
