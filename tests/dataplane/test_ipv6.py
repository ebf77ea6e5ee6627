"""IPv6 on the wire (issue 22): SLAAC, DHCPv6 stateful and stateless give a guest exactly
its port's address; dual-stack guests reach each other over both families; IPv6 security
group rules are enforced; a router routes IPv6 between its subnets (no NAT)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import netaddr
import pytest

from tests.dataplane.conftest import DataplaneCloud, eventually


def _dual_stack(dp: DataplaneCloud, name: str, cidr4: str, cidr6: str, *,
                ra_mode: str | None, address_mode: str | None,
                dns: list[str] | None = None) -> tuple[Any, Any, Any]:
    net, sub4 = dp.network(name, cidr4)
    kwargs: dict[str, Any] = {}
    if ra_mode:
        kwargs["ipv6_ra_mode"] = ra_mode
    if address_mode:
        kwargs["ipv6_address_mode"] = address_mode
    if dns:
        kwargs["dns_nameservers"] = dns
    sub6 = dp.sdk.network.create_subnet(network_id=net.id, cidr=cidr6, ip_version=6,
                                        name=f"{name}-v6", **kwargs)
    return net, sub4, sub6


def _addresses(dp: DataplaneCloud, server: Any) -> tuple[str, str]:
    """(IPv4, IPv6) fixed IPs of the server's port, as Neutron gave them."""
    port = next(iter(dp.sdk.network.ports(device_id=server.id)))
    v4 = next(ip["ip_address"] for ip in port.fixed_ips if ":" not in ip["ip_address"])
    v6 = next(ip["ip_address"] for ip in port.fixed_ips if ":" in ip["ip_address"])
    return v4, v6


def _guest_v6(dp: DataplaneCloud, server: Any, v4: str) -> set[str]:
    """The global IPv6 addresses the guest configured, as it sees them (over SSH)."""
    out = dp.ssh(dp.names.guest(server.id), v4, "ip -6 addr show dev eth0").stdout
    return {m for m in re.findall(r"inet6 ([0-9a-f:]+)/\d+ scope global", out)}


def _wait_v6(dp: DataplaneCloud, server: Any) -> tuple[str, str, set[str]]:
    v4, v6 = _addresses(dp, server)
    dp.wait_ssh(dp.names.guest(server.id), v4)
    seen: set[str] = set()

    def configured() -> bool:
        seen.clear()
        seen.update(_guest_v6(dp, server, v4))
        return v6 in seen

    eventually(configured, timeout=60)
    return v4, v6, seen


def _console(dp: DataplaneCloud, server: Any) -> str:
    return dp.sdk.compute.get_server_console_output(server)["output"]


def test_slaac_from_the_router_gives_the_ports_eui64_address(
        dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _, sub6 = _dual_stack(dp, "v6-slaac", "10.81.0.0/24", "2001:db8:81::/64",
                               ra_mode="slaac", address_mode="slaac")
    router = dp.sdk.network.create_router(name="v6-slaac-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub6.id)
    server = dp.server("vm-slaac", net.id)
    _, v6, seen = _wait_v6(dp, server)
    assert seen == {v6}, (seen, _console(dp, server))
    port = next(iter(dp.sdk.network.ports(device_id=server.id)))
    assert v6 == str(netaddr.EUI(port.mac_address).ipv6(netaddr.IPNetwork(sub6.cidr).first))
    # the router is the guest's IPv6 default gateway (learnt from its advertisement)
    routes = dp.ssh(dp.names.guest(server.id), _addresses(dp, server)[0],
                    "ip -6 route show default").stdout
    assert "via fe80::" in routes, routes


def test_dhcpv6_stateful_gives_exactly_the_ports_address(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _, sub6 = _dual_stack(dp, "v6-stateful", "10.82.0.0/24", "2001:db8:82::/64",
                               ra_mode="dhcpv6-stateful", address_mode="dhcpv6-stateful")
    router = dp.sdk.network.create_router(name="v6-stateful-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub6.id)
    server = dp.server("vm-stateful", net.id)
    _, v6, seen = _wait_v6(dp, server)
    # the address dnsmasq leased (not an EUI-64 one: the RA has no A flag)
    assert seen == {v6}, (seen, _console(dp, server))
    assert f"lease of {v6} obtained on eth0" in _console(dp, server)


def test_dhcpv6_stateless_slaac_address_and_dns(dataplane_cloud: DataplaneCloud) -> None:
    """No router: the network's dnsmasq advertises the prefix (A and O flags) and answers
    the information request with the subnet's DNS servers."""
    dp = dataplane_cloud
    net, _, _ = _dual_stack(dp, "v6-stateless", "10.83.0.0/24", "2001:db8:83::/64",
                            ra_mode="dhcpv6-stateless", address_mode="dhcpv6-stateless",
                            dns=["2001:db8:53::53"])
    server = dp.server("vm-stateless", net.id)
    v4, v6, seen = _wait_v6(dp, server)
    assert seen == {v6}, (seen, _console(dp, server))
    ns = dp.names.guest(server.id)
    assert eventually(lambda: "nameserver 2001:db8:53::53" in
                      dp.ssh(ns, v4, "cat /etc/resolv.conf").stdout, timeout=60), \
        _console(dp, server)
    # the metadata service's network_data.json names the mode as Nova does (for cloud-init)
    fetch = ("printf 'GET /openstack/latest/network_data.json HTTP/1.0\\r\\n\\r\\n' "
             "| nc -w 3 169.254.169.254 80 | tail -1")
    networks = json.loads(dp.ssh(ns, v4, fetch).stdout)["networks"]
    assert {(n["type"], n["ip_address"]) for n in networks} == {
        ("ipv4_dhcp", v4), ("ipv6_dhcpv6-stateless", v6)}


def _ping6(dp: DataplaneCloud, namespace: str, address: str) -> bool:
    """One echo from inside `namespace` (busybox's ping6: the tests' machine may have no
    other ping)."""
    return dp.in_ns(namespace, "busybox", "ping6", "-c", "1", "-W", "2", address
                    ).returncode == 0


def test_dual_stack_guests_and_ipv6_security_group_rules(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _, sub6 = _dual_stack(dp, "v6-dual", "10.84.0.0/24", "2001:db8:84::/64",
                               ra_mode="slaac", address_mode="slaac")
    router = dp.sdk.network.create_router(name="v6-dual-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub6.id)
    group = dp.sdk.network.create_security_group(name="v6-only-rules")
    for rule in list(dp.sdk.network.security_group_rules(security_group_id=group.id)):
        if rule.direction == "ingress":
            dp.sdk.network.delete_security_group_rule(rule)
    first = dp.server("vm-one", net.id)  # default group: its members reach it, both families
    second = dp.server("vm-two", net.id)
    target = dp.server("vm-target6", net.id, security_groups=["v6-only-rules"])
    one4, one6, _ = _wait_v6(dp, first)
    two4, two6, _ = _wait_v6(dp, second)
    target4, target6, _ = _wait_v6(dp, target)
    ns_two = dp.names.guest(second.id)

    # dual-stack members of the default group reach each other over IPv4 and IPv6
    assert dp.wait_ssh(ns_two, one4).strip() == "vm-one"
    assert dp.wait_ssh(ns_two, one6).strip() == "vm-one"
    assert eventually(lambda: _ping6(dp, ns_two, one6))

    # a group without ingress rules refuses ICMPv6 echo and TCP over IPv6
    assert not _ping6(dp, ns_two, target6)
    assert dp.unreachable(ns_two, target6)
    icmp = dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv6",
        protocol="ipv6-icmp", port_range_min=128, remote_ip_prefix="::/0")
    assert eventually(lambda: _ping6(dp, ns_two, target6))
    assert dp.unreachable(ns_two, target6)  # echo only, not TCP
    # TCP 22 over IPv6 from one address only: the other member stays out
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv6", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix=f"{two6}/128")
    assert dp.wait_ssh(ns_two, target6).strip() == "vm-target6"
    assert dp.unreachable(dp.names.guest(first.id), target6)
    # a remote group: its members' IPv6 addresses (an IPv4 rule for it opens nothing here)
    default = next(iter(dp.sdk.network.security_groups(name="default",
                                                       project_id=first.project_id)))
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_group_id=default.id)
    assert dp.wait_ssh(dp.names.guest(first.id), target4).strip() == "vm-target6"
    assert dp.unreachable(dp.names.guest(first.id), target6)
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv6", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_group_id=default.id)
    assert dp.wait_ssh(dp.names.guest(first.id), target6).strip() == "vm-target6"
    # an IPv4 rule opens nothing over IPv6
    dp.sdk.network.delete_security_group_rule(icmp)
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4", protocol="icmp",
        remote_ip_prefix="0.0.0.0/0")
    assert eventually(lambda: not _ping6(dp, ns_two, target6))


def test_a_router_routes_ipv6_between_its_subnets(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    left_net, _, left6 = _dual_stack(dp, "v6-left", "10.85.1.0/24", "2001:db8:85:1::/64",
                                     ra_mode="slaac", address_mode="slaac")
    right_net, _, right6 = _dual_stack(dp, "v6-right", "10.85.2.0/24", "2001:db8:85:2::/64",
                                       ra_mode="dhcpv6-stateful",
                                       address_mode="dhcpv6-stateful")
    router = dp.sdk.network.create_router(name="v6-router")
    dp.sdk.network.add_interface_to_router(router, subnet=left6.id)
    dp.sdk.network.add_interface_to_router(router, subnet=right6.id)
    left = dp.server("vm-left6", left_net.id)
    right = dp.server("vm-right6", right_net.id)
    _, left_v6, _ = _wait_v6(dp, left)
    right4, right_v6, _ = _wait_v6(dp, right)
    ns_left = dp.names.guest(left.id)
    # only the IPv6 subnets are on the router: IPv4 stays apart, IPv6 is routed, unNATed
    assert dp.unreachable(ns_left, right4)
    assert dp.wait_ssh(ns_left, right_v6).strip() == "vm-right6"
    peer = dp.ssh(ns_left, right_v6, "echo $SSH_CLIENT").stdout.split()
    assert peer and peer[0] == left_v6, peer
    hops = dp.in_ns(ns_left, "busybox", "ping6", "-c", "1", "-W", "2", right_v6).stdout
    assert "ttl=63" in hops, hops  # one router on the way

    # the router down: nothing is forwarded
    dp.sdk.network.update_router(router, is_admin_state_up=False)
    assert eventually(lambda: dp.unreachable(ns_left, right_v6))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_an_ipv6_subnet_added_later_is_served(dataplane_clouds: Any, backend: str) -> None:
    """The DHCP port gains an address on a DHCPv6 subnet added after it (as Neutron's DHCP
    agent asks for one); with no router, dnsmasq advertises the prefix (M flag) itself."""
    dp = dataplane_clouds(backend)
    net, _ = dp.network("v6-later", "10.86.0.0/24")

    def dhcp_port() -> Any:
        return next(iter(dp.sdk.network.ports(network_id=net.id,
                                              device_owner="network:dhcp")), None)

    assert eventually(lambda: dhcp_port() is not None)
    sub6 = dp.sdk.network.create_subnet(network_id=net.id, cidr="2001:db8:86::/64",
                                        ip_version=6, ipv6_ra_mode="dhcpv6-stateful",
                                        ipv6_address_mode="dhcpv6-stateful")
    assert eventually(lambda: any(ip["subnet_id"] == sub6.id
                                  for ip in dhcp_port().fixed_ips))
    server = dp.server("vm-later", net.id)
    _, v6 = _addresses(dp, server)
    seen: set[str] = set()

    def configured() -> bool:  # read in the guest's own network namespace, not over SSH
        out = dp.in_ns(dp.names.guest(server.id), "ip", "-6", "addr", "show", "dev",
                       "eth0").stdout
        seen.clear()
        seen.update(re.findall(r"inet6 ([0-9a-f:]+)/\d+ scope global", out))
        return v6 in seen

    assert eventually(configured, timeout=60), (seen, _console(dp, server))
    assert seen == {v6}, (seen, _console(dp, server))


def test_an_ipv6_address_of_its_own_is_cut_off_unless_a_pair_allows_it(
        dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _, sub6 = _dual_stack(dp, "v6-spoof", "10.87.0.0/24", "2001:db8:87::/64",
                               ra_mode="slaac", address_mode="slaac")
    group = dp.sdk.network.create_security_group(name="v6-ssh")
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv6", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="::/0")
    target = dp.server("vm-peer6", net.id, security_groups=["v6-ssh"])
    rogue = dp.server("vm-rogue6", net.id)
    _, target6, _ = _wait_v6(dp, target)
    _, rogue6, _ = _wait_v6(dp, rogue)
    ns = dp.names.guest(rogue.id)
    assert dp.wait_ssh(ns, target6).strip() == "vm-peer6"

    # the guest's root takes another address of the prefix instead of its own
    spoofed = "2001:db8:87::99"
    assert dp.in_ns(ns, "sh", "-c", "echo 0 > /proc/sys/net/ipv6/conf/eth0/autoconf"
                    ).returncode == 0
    assert dp.in_ns(ns, "ip", "addr", "del", f"{rogue6}/64", "dev", "eth0").returncode == 0
    assert dp.in_ns(ns, "ip", "addr", "add", f"{spoofed}/64", "dev", "eth0",
                    "nodad").returncode == 0
    assert dp.unreachable(ns, target6)
    port = next(iter(dp.sdk.network.ports(device_id=rogue.id)))
    dp.sdk.network.update_port(port, allowed_address_pairs=[{"ip_address": spoofed}])
    assert eventually(lambda: not dp.unreachable(ns, target6))


def _radvds(dp: DataplaneCloud) -> list[int]:
    """The cloud's radvd daemons (each is two processes: the daemon and its privileged
    helper, its child)."""
    marker = f"/run/stackling/{dp.prefix}/radvd/".encode()
    found = {}
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker in Path(f"/proc/{pid}/cmdline").read_bytes():
                stat = Path(f"/proc/{pid}/stat").read_text()
                found[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
    return sorted(pid for pid, parent in found.items() if parent not in found)


def test_kill_9_and_start_keeps_one_radvd_per_router(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _, sub6 = _dual_stack(dp, "v6-kill", "10.88.0.0/24", "2001:db8:88::/64",
                               ra_mode="slaac", address_mode="slaac")
    router = dp.sdk.network.create_router(name="v6-kill-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub6.id)
    first = dp.server("vm-kill-1", net.id)
    _wait_v6(dp, first)
    assert eventually(lambda: len(_radvds(dp)) == 1)
    before = _radvds(dp)

    dp.cloud.stop(kill=True)
    assert _radvds(dp) == before  # not the service's child: it keeps advertising
    dp.cloud.start()
    _, v6, seen = _wait_v6(dp, dp.server("vm-kill-2", net.id))
    assert seen == {v6}
    assert _radvds(dp) == before  # found again by its pid file, not started twice

    # the router's namespace deleted by hand: radvd starts anew in the new one
    dp.cloud.stop(kill=True)
    subprocess.run(["ip", "netns", "del", dp.names.router(router.id)], check=True)
    dp.cloud.start()
    assert eventually(lambda: len(_radvds(dp)) == 1 and _radvds(dp) != before)
    _, v6, seen = _wait_v6(dp, dp.server("vm-kill-3", net.id))
    assert seen == {v6}
    # a deleted router takes its radvd with it
    dp.sdk.network.remove_interface_from_router(router, subnet=sub6.id)
    dp.sdk.network.delete_router(router)
    assert eventually(lambda: not _radvds(dp))


def test_ipv6_between_a_guest_and_the_outside_without_nat(
        dataplane_cloud: DataplaneCloud) -> None:
    """An external network's IPv6 subnet: the router's gateway takes an address on it and
    routes the internal prefix unNATed; the outside (as DevStack's br-ex) routes it back."""
    dp = dataplane_cloud
    public = dp.sdk.network.find_network("public")
    ext6 = dp.sdk.network.create_subnet(network_id=public.id, cidr="2001:db8:ff::/64",
                                        ip_version=6, is_dhcp_enabled=False,
                                        name="public-v6")
    net, _, sub6 = _dual_stack(dp, "v6-out", "10.89.0.0/24", "2001:db8:89::/64",
                               ra_mode="slaac", address_mode="slaac")
    router = dp.sdk.network.create_router(name="v6-out-router", external_gateway_info={
        "network_id": public.id})
    dp.sdk.network.add_interface_to_router(router, subnet=sub6.id)
    gateway = next(iter(dp.sdk.network.ports(device_id=router.id,
                                             device_owner="network:router_gateway")))
    assert any(ip["subnet_id"] == ext6.id for ip in gateway.fixed_ips), gateway.fixed_ips
    server = dp.server("vm-out6", net.id)
    _, v6, _ = _wait_v6(dp, server)
    group = next(iter(dp.sdk.network.security_groups(name="default",
                                                     project_id=server.project_id)))
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv6", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="::/0")
    # from the outside namespace to the guest's own address, and it sees the outside's
    assert dp.wait_ssh(dp.names.outside, v6).strip() == "vm-out6"
    peer = dp.ssh(dp.names.outside, v6, "echo $SSH_CLIENT").stdout.split()
    assert peer and peer[0] == ext6.gateway_ip, peer


def test_an_ipv6_only_guest_gets_its_address_and_metadata(dataplane_cloud: DataplaneCloud
                                                          ) -> None:
    """No IPv4: the guest reads its metadata at fe80::a9fe:a9fe (as Neutron serves IPv6-only
    networks), so it has its key, name and user data, and asks DHCPv6 as network_data.json
    says; it gets exactly its port's address from dnsmasq."""
    dp = dataplane_cloud
    net = dp.sdk.network.create_network(name="v6-only")
    sub6 = dp.sdk.network.create_subnet(network_id=net.id, cidr="2001:db8:8a::/64",
                                        ip_version=6, ipv6_ra_mode="dhcpv6-stateful",
                                        ipv6_address_mode="dhcpv6-stateful")
    router = dp.sdk.network.create_router(name="v6-only-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub6.id)
    server = dp.server("vm-v6-only", net.id,
                       user_data="#!/bin/sh\necho v6-user-data > /tmp/ran\n")
    port = next(iter(dp.sdk.network.ports(device_id=server.id)))
    (v6,) = [ip["ip_address"] for ip in port.fixed_ips]
    ns = dp.names.guest(server.id)

    def addresses() -> set[str]:
        out = dp.in_ns(ns, "ip", "-6", "addr", "show", "dev", "eth0", "scope", "global").stdout
        return set(re.findall(r"inet6 ([0-9a-f:]+)/", out))

    assert eventually(lambda: v6 in addresses(), timeout=90), _console(dp, server)
    assert addresses() == {v6}
    # the key pair's key and the server's name came over IPv6, and so did its user data
    assert dp.wait_ssh(ns, v6, "hostname; cat /tmp/ran", timeout=90).split() == [
        "vm-v6-only", "v6-user-data"]
    assert "Authorized keys" in _console(dp, server)
