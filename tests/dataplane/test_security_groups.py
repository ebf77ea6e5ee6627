"""Security groups as Neutron's firewall drivers enforce them: remote groups, port
security off, and anti-spoofing with allowed address pairs."""

from __future__ import annotations

import socket
from typing import Any

from tests.dataplane.conftest import DataplaneCloud, eventually


def test_remote_groups_and_port_security_off(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-sg", "10.71.0.0/24")
    clients = dp.sdk.network.create_security_group(name="clients")
    servers = dp.sdk.network.create_security_group(name="servers")
    dp.sdk.network.create_security_group_rule(
        security_group_id=servers.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_group_id=clients.id)
    target = dp.server("vm-target", net.id, security_groups=["servers"])
    client = dp.server("vm-client", net.id, security_groups=["clients"])
    stranger = dp.server("vm-stranger", net.id)  # the default group only
    target_ip = dp.address(target)

    assert dp.wait_ssh(dp.names.guest(client.id), target_ip).strip() == "vm-target"
    assert dp.wait_ssh(dp.names.guest(stranger.id), dp.address(stranger)).strip() == "vm-stranger"
    assert dp.unreachable(dp.names.guest(stranger.id), target_ip)

    # port security off: no group, no filter
    port = next(iter(dp.sdk.network.ports(device_id=target.id)))
    dp.sdk.network.update_port(port, security_groups=[], port_security_enabled=False)
    assert dp.wait_ssh(dp.names.guest(stranger.id), target_ip).strip() == "vm-target"


def test_a_guest_that_changes_its_ip_or_mac_is_cut_off(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-spoof", "10.72.0.0/24")
    target = dp.server("vm-peer", net.id)
    rogue = dp.server("vm-rogue", net.id)
    target_ip = dp.address(target)
    ns = dp.names.guest(rogue.id)
    assert dp.wait_ssh(ns, target_ip).strip() == "vm-peer"

    # the guest's root takes another address of the subnet: its packets are dropped
    spoofed = "10.72.0.200"
    original = dp.address(rogue)
    assert dp.in_ns(ns, "ip", "addr", "del", f"{original}/24", "dev", "eth0").returncode == 0
    assert dp.in_ns(ns, "ip", "addr", "add", f"{spoofed}/24", "dev", "eth0").returncode == 0
    assert dp.unreachable(ns, target_ip)
    # until an allowed address pair lets the port use it
    port = next(iter(dp.sdk.network.ports(device_id=rogue.id)))
    dp.sdk.network.update_port(port, allowed_address_pairs=[{"ip_address": spoofed}])
    assert eventually(lambda: not dp.unreachable(ns, target_ip))

    # a MAC of its own choosing is cut off too
    assert dp.in_ns(ns, "ip", "link", "set", "eth0", "address", "fa:16:3e:de:ad:01").returncode == 0
    assert dp.unreachable(ns, target_ip)


def _tcp_retransmits(sock: socket.socket) -> int:
    """tcp_info's retransmits: RTO timeouts since the last ACK (data sent, not acked)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)[2]


def test_a_removed_rule_cuts_the_connections_it_allowed(dataplane_cloud: DataplaneCloud) -> None:
    """As Neutron deletes the conntrack entries of a removed rule: an open TCP connection
    stops passing data once the rule that let it in is deleted."""
    from stackling.dataplane import kernel

    dp = dataplane_cloud
    net, _ = dp.network("dp-ct", "10.73.0.0/24")
    served = dp.sdk.network.create_security_group(name="dp-ct-served")
    rules = {port: dp.sdk.network.create_security_group_rule(
        security_group_id=served.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=port, port_range_max=port, remote_ip_prefix="0.0.0.0/0")
        for port in (22, 5000)}
    dp.sdk.network.create_security_group(name="dp-ct-client")  # egress only
    target = dp.server("vm-ct", net.id, security_groups=["dp-ct-served"])
    client = dp.server("vm-ct-client", net.id, security_groups=["dp-ct-client"])
    ns, ip = dp.names.guest(client.id), dp.address(target)
    tap = dp.names.tap(next(iter(dp.sdk.network.ports(device_id=target.id))).id)
    assert dp.wait_ssh(ns, ip).strip() == "vm-ct"
    listen = "setsid sh -c 'sleep 600 | nc -l -p 5000 > /tmp/got' > /dev/null 2>&1 < /dev/null &"
    assert dp.ssh(ns, ip, listen).returncode == 0

    connected: list[socket.socket] = []

    def connect() -> bool:  # from the client guest's namespace
        try:
            connected.append(kernel.in_namespace(
                ns, lambda: socket.create_connection((ip, 5000), timeout=3)))
        except OSError:
            return False
        return True

    def tracked() -> list[Any]:  # the conntrack entries of port 5000 where the target's
        def run() -> list[Any]:  # filter is: its host's namespace (firewall.py)
            from pyroute2 import Conntrack, IPRoute

            with IPRoute() as ip:
                if not ip.link_lookup(ifname=tap):
                    return []
            with Conntrack() as ct:
                return [e for e in ct.dump_entries() if e.tuple_orig.dport == 5000]

        hosts = [n for n in kernel.list_namespaces(dp.prefix) if n.startswith(dp.names.host(""))]
        return [e for host in hosts for e in kernel.in_namespace(host, run)]

    assert eventually(connect)
    sock = connected[0]
    sock.sendall(b"before\n")
    assert eventually(lambda: "before" in dp.ssh(ns, ip, "cat /tmp/got").stdout)
    assert tracked()

    dp.sdk.network.delete_security_group_rule(rules[5000])
    assert eventually(lambda: not tracked())  # flushed with the rule's removal
    sock.sendall(b"after\n")
    assert eventually(lambda: _tcp_retransmits(sock) >= 1)  # sent, never acknowledged
    assert "after" not in dp.ssh(ns, ip, "cat /tmp/got").stdout
    assert not tracked()
    sock.close()
