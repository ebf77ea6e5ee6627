"""Trunk sub-ports appear in the guest as its VLAN interfaces (`eth0.<vid>`, the sub-port's
MAC, an address by DHCP, at boot or when added to the running trunk), the sub-port's address
answers on its network, and its security groups filter it (issue 23)."""

from __future__ import annotations

from tests.dataplane.conftest import DataplaneCloud, eventually, wire_findings


def test_a_trunk_sub_port_is_a_vlan_interface_with_its_address(dataplane_cloud: DataplaneCloud
                                                               ) -> None:
    dp = dataplane_cloud
    parent_net, _ = dp.network("dp-trunk-parent", "10.75.0.0/24")
    child_net, _ = dp.network("dp-trunk-child", "10.76.0.0/24")
    parent = dp.sdk.network.create_port(network_id=parent_net.id, name="trunk-parent")
    child = dp.sdk.network.create_port(network_id=child_net.id, name="trunk-child")
    trunk = dp.sdk.network.create_trunk(name="dp-trunk", port_id=parent.id, sub_ports=[
        {"port_id": child.id, "segmentation_type": "vlan", "segmentation_id": 101}])
    image = dp.sdk.image.find_image("cirros")
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    server = dp.sdk.compute.create_server(name="vm-trunk", image_id=image.id,
                                          flavor_id=flavor.id, key_name=dp.keypair().name,
                                          networks=[{"port": parent.id}])
    server = dp.sdk.compute.wait_for_server(server, wait=120, interval=0.2)
    other = dp.server("vm-child-net", child_net.id)
    guest = dp.names.guest(server.id)
    parent_ip = parent.fixed_ips[0]["ip_address"]
    child_ip = child.fixed_ips[0]["ip_address"]

    # in the guest: eth0.101 with the sub-port's MAC and address (by DHCP, at boot)
    assert dp.wait_ssh(guest, parent_ip).strip() == "vm-trunk"

    def configured() -> str:
        return dp.ssh(guest, parent_ip, "ip -o addr show dev eth0.101; ip -o link show "
                      "dev eth0.101").stdout

    assert eventually(lambda: child_ip in configured(), timeout=60), configured()
    assert child.mac_address in configured().lower()
    # the guest's metadata lists it as Nova does (a vlan link on the parent's link)
    data = dp.ssh(guest, parent_ip, "cat /run/network_data.json").stdout
    assert '"type": "vlan"' in data and '"vlan_id": 101' in data

    # the sub-port's address answers on the sub-port's network
    assert dp.wait_ssh(dp.names.guest(other.id), child_ip).strip() == "vm-trunk"
    # and the parent's network does not carry it
    assert dp.unreachable(dp.names.guest(other.id), parent_ip)

    # the sub-port's security groups filter what reaches it, as a server port's do
    closed = dp.sdk.network.create_security_group(name="dp-trunk-closed")
    dp.sdk.network.update_port(child, security_group_ids=[closed.id])
    assert eventually(lambda: dp.unreachable(dp.names.guest(other.id), child_ip), timeout=30)
    dp.sdk.network.create_security_group_rule(
        security_group_id=closed.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="0.0.0.0/0")
    assert dp.wait_ssh(dp.names.guest(other.id), child_ip).strip() == "vm-trunk"

    # anti-spoofing: an address the sub-port was not given is cut off until an allowed
    # address pair lets it through, as for a server's port
    spoofed = "10.76.0.200"
    assert dp.in_ns(guest, "ip", "addr", "add", f"{spoofed}/24", "dev", "eth0.101"
                    ).returncode == 0
    assert dp.unreachable(dp.names.guest(other.id), spoofed)
    dp.sdk.network.update_port(child, allowed_address_pairs=[{"ip_address": spoofed}])
    assert dp.wait_ssh(dp.names.guest(other.id), spoofed).strip() == "vm-trunk"

    # the audit of the wire expects the sub-port NICs (no finding while they are in use)
    assert wire_findings(dp) == []

    # a removed sub-port leaves the guest
    dp.sdk.network.delete_trunk_subports(trunk, [{"port_id": child.id}])
    assert eventually(lambda: "eth0.101" not in dp.ssh(guest, parent_ip, "ip -o link").stdout,
                      timeout=30)

    # a sub-port added to the running trunk is hot-plugged and takes its address (no reboot)
    late = dp.sdk.network.create_port(network_id=child_net.id, name="trunk-late")
    late_ip = late.fixed_ips[0]["ip_address"]
    dp.sdk.network.add_trunk_subports(trunk, [
        {"port_id": late.id, "segmentation_type": "vlan", "segmentation_id": 102}])

    def late_config() -> str:
        return dp.ssh(guest, parent_ip, "ip -o addr show dev eth0.102").stdout

    assert eventually(lambda: late_ip in late_config(), timeout=60), late_config()
    assert dp.wait_ssh(dp.names.guest(other.id), late_ip).strip() == "vm-trunk"
    # its address only: the default route stays the parent's
    default = dp.ssh(guest, parent_ip, "ip route | grep ^default").stdout
    assert "dev eth0" in default and "eth0.10" not in default, default
    dp.sdk.network.delete_trunk_subports(trunk, [{"port_id": late.id}])
    assert eventually(lambda: "eth0.102" not in dp.ssh(guest, parent_ip, "ip -o link").stdout,
                      timeout=30)
