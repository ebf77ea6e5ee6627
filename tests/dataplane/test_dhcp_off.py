"""`enable_dhcp: false` is honoured as Neutron's DHCP agent honours it: no DHCP server for
the subnet, and a guest on it gets no answer (its port keeps its fixed IP in the API)."""

from __future__ import annotations

import subprocess

from tests.dataplane.conftest import DataplaneCloud, eventually


def test_a_subnet_without_dhcp_gives_the_guest_no_lease(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net = dp.sdk.network.create_network(name="dp-nodhcp")
    dp.sdk.network.create_subnet(network_id=net.id, cidr="10.74.0.0/24", ip_version=4,
                                 name="dp-nodhcp-subnet", enable_dhcp=False)
    vm = dp.server("vm-nodhcp", net.id)
    ip = dp.address(vm)  # allocated by the API all the same

    def console() -> str:
        return dp.cloud.cli("console", "log", "show", vm.id, parse=False)

    # the guest asked, and nothing answered in udhcpc's 20 tries (waited on through the
    # API, read once more below through the CLI a user would use)
    assert eventually(lambda: "udhcpc: no lease on eth0" in dp.sdk.compute.
                      get_server_console_output(vm)["output"], timeout=90), console()
    log = console()
    assert "udhcpc: no lease on eth0" in log and "broadcasting discover" in log, log
    assert "lease of" not in log, log
    inside = dp.in_ns(dp.names.guest(vm.id), "ip", "-4", "-o", "addr", "show", "dev", "eth0")
    assert inside.returncode == 0 and ip not in inside.stdout and "inet " not in inside.stdout
    # no DHCP namespace nor dnsmasq for the network
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True,
                                text=True).stdout.split()
    assert dp.names.dhcp(net.id) not in namespaces
    assert not list(dp.sdk.network.ports(network_id=net.id, device_owner="network:dhcp"))
