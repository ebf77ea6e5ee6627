"""dnsmasq serves what a port asks for beyond its address, as Neutron's DHCP agent does:
its `extra_dhcp_opts`, and DNS names (`dns_name` / `dns_assignment`) that the other guests
of the network resolve through it (issue 23, "the dataplane honours ...")."""

from __future__ import annotations

from tests.dataplane.conftest import DataplaneCloud, eventually


def test_extra_dhcp_options_reach_the_guest_and_names_resolve(dataplane_clouds) -> None:
    dp: DataplaneCloud = dataplane_clouds(
        "sqlite", extra_env={"STACKLING_NETWORK__DNS_DOMAIN": "example.org."})
    net, _ = dp.network("dp-dns", "10.72.0.0/24")
    port = dp.sdk.network.create_port(
        network_id=net.id, dns_name="vm-b",
        extra_dhcp_opts=[{"opt_name": "domain-name", "opt_value": "custom.example"},
                         {"opt_name": "ntp-server", "opt_value": "10.72.0.123"},
                         {"opt_name": "no-such-option", "opt_value": "x"}])
    assert port.dns_assignment[0]["fqdn"] == "vm-b.example.org."
    image = dp.sdk.image.find_image("cirros")
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    b = dp.sdk.compute.create_server(name="vm-b", image_id=image.id, flavor_id=flavor.id,
                                     key_name=dp.keypair().name, networks=[{"port": port.id}])
    b = dp.sdk.compute.wait_for_server(b, wait=120, interval=0.2)
    a = dp.server("vm-a", net.id)
    b_ip = port.fixed_ips[0]["ip_address"]

    # the guest's lease carries the port's options (an option dnsmasq does not know is left
    # out, and the network's DHCP still works)
    lease = dp.wait_ssh(dp.names.guest(b.id), b_ip, "cat /run/udhcpc.eth0")
    assert "domain=custom.example" in lease, lease
    assert "ntpsrv=10.72.0.123" in lease, lease
    assert "search custom.example" in dp.ssh(dp.names.guest(b.id), b_ip,
                                             "cat /etc/resolv.conf").stdout

    # another guest resolves vm-b through the network's dnsmasq (its DNS server by DHCP)
    a_ip = dp.address(a)
    resolv = dp.wait_ssh(dp.names.guest(a.id), a_ip, "cat /etc/resolv.conf")
    dhcp_port = next(iter(dp.sdk.network.ports(network_id=net.id, device_owner="network:dhcp")))
    assert f"nameserver {dhcp_port.fixed_ips[0]['ip_address']}" in resolv
    assert "search example.org" in resolv
    out = dp.ssh(dp.names.guest(a.id), a_ip, "nslookup vm-b.example.org").stdout
    assert b_ip in out, out

    # a changed dns_name is served under its new name
    dp.sdk.network.update_port(port, dns_name="vm-renamed")

    def renamed() -> bool:
        return b_ip in dp.ssh(dp.names.guest(a.id), a_ip,
                              "nslookup vm-renamed.example.org").stdout

    assert eventually(renamed, timeout=30)
