"""Security groups as Neutron's firewall drivers enforce them: remote groups, port
security off, and anti-spoofing with allowed address pairs."""

from __future__ import annotations

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
