"""The image's os_admin_user is the guest's SSH user; an attached interface is hot-plugged
into the running guest, which takes its address by DHCP, and a detached one is unplugged,
neither rebooting it; resize boots the guest again."""

from __future__ import annotations

import time

from tests.dataplane.conftest import DataplaneCloud, eventually


def test_image_user_interface_hot_plug_and_resize(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    image = dp.sdk.image.find_image("cirros")
    dp.sdk.image.update_image(image, os_admin_user="debian")
    net1, _ = dp.network("dp-att1", "10.83.1.0/24")
    net2, _ = dp.network("dp-att2", "10.83.2.0/24")
    probe1 = dp.server("vm-probe1", net1.id)
    probe2 = dp.server("vm-probe2", net2.id)
    vm = dp.server("vm-att", net1.id)
    ip1 = dp.address(vm)
    ns1, ns2 = dp.names.guest(probe1.id), dp.names.guest(probe2.id)
    assert dp.wait_ssh(ns1, ip1, user="debian").strip() == "vm-att"
    assert dp.ssh(ns1, ip1, "true", user="cirros").returncode != 0

    def console() -> str:
        return dp.cloud.cli("console", "log", "show", vm.id, parse=False)

    # a file in the guest's tmpfs and one boot in its console: both stay through hot-plug
    assert dp.ssh(ns1, ip1, "touch /dev/shm/booted-once", user="debian").returncode == 0
    assert console().count("vm-att login:") == 1

    port = dp.sdk.network.create_port(network_id=net2.id)
    dp.sdk.compute.create_server_interface(vm, port_id=port.id)
    ip2 = port.fixed_ips[0]["ip_address"]
    out = dp.wait_ssh(ns2, ip2, "ip -4 -o addr show eth1; ls /dev/shm/booted-once", user="debian")
    assert f"inet {ip2}/24" in out and "/dev/shm/booted-once" in out, out
    assert "NIC eth1 hot-plugged" in console()
    assert console().count("vm-att login:") == 1  # not booted again

    # detach: the NIC is gone from the running guest, its address answers no more
    dp.sdk.compute.delete_server_interface(port.id, server=vm)
    assert eventually(lambda: dp.unreachable(ns2, ip2))
    out = dp.wait_ssh(ns1, ip1, "ip -o link; ls /dev/shm/booted-once", user="debian")
    assert "eth1" not in out and "/dev/shm/booted-once" in out, out
    assert console().count("vm-att login:") == 1

    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.small")
    dp.sdk.compute.resize_server(vm, flavor.id)
    dp.sdk.compute.wait_for_server(vm, status="VERIFY_RESIZE", wait=60, interval=0.2)
    dp.sdk.compute.confirm_server_resize(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=60, interval=0.2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and console().count("vm-att login:") < 2:
        time.sleep(0.2)
    assert console().count("vm-att login:") >= 2
    assert dp.wait_ssh(ns1, ip1, "ls /dev/shm/booted-once 2>/dev/null || echo rebooted",
                       user="debian").strip() == "rebooted"
