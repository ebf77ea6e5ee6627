"""Routers join networks; the external network `public` is the outside namespace; a
floating IP is reachable from outside and a guest reaches outside through SNAT."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.dataplane.conftest import DataplaneCloud, eventually


def test_a_router_joins_two_networks(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net1, sub1 = dp.network("dp-left", "10.61.1.0/24")
    net2, sub2 = dp.network("dp-right", "10.61.2.0/24")
    left = dp.server("vm-left", net1.id)
    right = dp.server("vm-right", net2.id)
    right_ip = dp.address(right)
    assert dp.wait_ssh(dp.names.guest(right.id), right_ip).strip() == "vm-right"
    assert dp.unreachable(dp.names.guest(left.id), right_ip)

    router = dp.sdk.network.create_router(name="dp-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub1.id)
    dp.sdk.network.add_interface_to_router(router, subnet=sub2.id)
    assert dp.wait_ssh(dp.names.guest(left.id), right_ip).strip() == "vm-right"

    # admin_state_up false: the router forwards nothing
    dp.sdk.network.update_router(router, is_admin_state_up=False)
    assert eventually(lambda: dp.unreachable(dp.names.guest(left.id), right_ip))
    dp.sdk.network.update_router(router, is_admin_state_up=True)
    assert dp.wait_ssh(dp.names.guest(left.id), right_ip).strip() == "vm-right"

    dp.sdk.network.remove_interface_from_router(router, subnet=sub2.id)
    assert eventually(lambda: dp.unreachable(dp.names.guest(left.id), right_ip))


def test_floating_ip_from_outside_and_snat_to_outside(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    public = dp.sdk.network.find_network("public")
    net, sub = dp.network("dp-private", "10.62.0.0/24")
    router = dp.sdk.network.create_router(name="dp-gw", external_gateway_info={
        "network_id": public.id})
    dp.sdk.network.add_interface_to_router(router, subnet=sub.id)
    server = dp.server("vm-fip", net.id)
    port = next(iter(dp.sdk.network.ports(device_id=server.id)))
    fip = dp.sdk.network.create_ip(floating_network_id=public.id, port_id=port.id)
    address = fip.floating_ip_address

    # the default group refuses ingress from outside; a rule for SSH opens it
    # (once the router holds the floating IP)
    assert eventually(lambda: address in dp.in_ns(dp.names.router(router.id), "ip", "-4",
                                                    "-o", "addr").stdout)
    assert dp.unreachable(dp.names.outside, address)
    group = next(iter(dp.sdk.network.security_groups(name="default",
                                                     project_id=server.project_id)))
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="0.0.0.0/0")

    # from the outside namespace, as `stackling outside -- ssh cirros@<fip> hostname`
    deadline = time.monotonic() + 60
    out = None
    while time.monotonic() < deadline:
        out = subprocess.run(
            [str(Path(sys.executable).parent / "stackling"), "outside", "--database-url",
             dp.cloud.database_url, "--data-dir", str(dp.cloud.data_dir), "--", "ssh", "-i",
             str(dp.key), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
             "-o", "BatchMode=yes", "-o", "ConnectTimeout=3", "-o", "LogLevel=ERROR",
             f"cirros@{address}", "hostname"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0:
            break
        time.sleep(0.2)
    assert out is not None and out.stdout.strip() == "vm-fip", out

    # the guest reaches the outside, which sees the floating IP (1:1 NAT) and has no route
    # back to 10.62.0.0/24
    gateway = dp.sdk.network.get_subnet(public.subnet_ids[0]).gateway_ip
    peers = _listen_outside(dp, gateway)
    sent = dp.ssh(dp.names.outside, address, f"echo hello | nc -w 3 {gateway} 8080")
    assert sent.returncode == 0, sent
    assert peers.get(timeout=10) == (address, b"hello\n")

    # a server without a floating IP reaches the outside as the router's gateway address
    other = dp.server("vm-snat", net.id)
    gateway_port = next(iter(dp.sdk.network.ports(device_id=router.id,
                                                  device_owner="network:router_gateway")))
    peers = _listen_outside(dp, gateway)
    dp.wait_ssh(dp.names.guest(server.id), dp.address(other))
    sent = dp.ssh(dp.names.guest(server.id), dp.address(other),
                  f"echo snat | nc -w 3 {gateway} 8080")
    assert sent.returncode == 0, sent
    assert peers.get(timeout=10) == (gateway_port.fixed_ips[0]["ip_address"], b"snat\n")

    # dissociated: the floating IP answers no more
    dp.sdk.network.update_ip(fip, port_id=None)
    assert eventually(lambda: dp.unreachable(dp.names.outside, address))


def _listen_outside(dp: DataplaneCloud, address: str) -> queue.Queue:
    """A TCP listener in the outside namespace: the first peer's address and data."""
    from stackling.dataplane import kernel

    sock = kernel.listen_tcp(dp.names.outside, address, 8080)
    peers: queue.Queue = queue.Queue()

    def accept() -> None:
        sock.settimeout(30)
        try:
            conn, peer = sock.accept()
            conn.settimeout(5)
            peers.put((peer[0], conn.recv(100)))
            conn.close()
        finally:
            sock.close()

    threading.Thread(target=accept, daemon=True).start()
    return peers
