"""A floating IP port forwarding answers from the outside: the router's namespace DNATs
`floating IP:external port` to the server's `internal IP:internal port` (issue 23)."""

from __future__ import annotations

import time

from tests.dataplane.conftest import SSH_OPTS, DataplaneCloud, eventually


def test_port_forwarding_reaches_the_server_from_outside(dataplane_cloud: DataplaneCloud
                                                          ) -> None:
    dp = dataplane_cloud
    public = dp.sdk.network.find_network("public")
    net, sub = dp.network("dp-pf", "10.73.0.0/24")
    router = dp.sdk.network.create_router(name="dp-pf-router", external_gateway_info={
        "network_id": public.id})
    dp.sdk.network.add_interface_to_router(router, subnet=sub.id)
    server = dp.server("vm-pf", net.id)
    port = next(iter(dp.sdk.network.ports(device_id=server.id)))
    group = next(iter(dp.sdk.network.security_groups(name="default",
                                                     project_id=server.project_id)))
    dp.sdk.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="0.0.0.0/0")
    fip = dp.sdk.network.create_ip(floating_network_id=public.id)
    address = fip.floating_ip_address
    pf = dp.sdk.network.create_port_forwarding(
        floatingip_id=fip.id, internal_port_id=port.id,
        internal_ip_address=port.fixed_ips[0]["ip_address"], internal_port=22,
        external_port=2222, protocol="tcp")

    def ssh(port_number: int) -> tuple[int, str]:
        out = dp.in_ns(dp.names.outside, "ssh", "-i", str(dp.key), *SSH_OPTS, "-p",
                       str(port_number), f"cirros@{address}", "hostname")
        return out.returncode, out.stdout.strip()

    deadline = time.monotonic() + 60
    answer = ssh(2222)
    while answer[0] != 0 and time.monotonic() < deadline:
        time.sleep(0.2)
        answer = ssh(2222)
    assert answer == (0, "vm-pf"), answer
    # only the forwarded port: the floating IP's own port 22 leads nowhere
    assert dp.unreachable(dp.names.outside, address, 22)

    # a changed external port moves the forwarding; a deleted one closes it
    dp.sdk.network.update_port_forwarding(pf, fip.id, external_port=2223)
    assert eventually(lambda: ssh(2223) == (0, "vm-pf"), timeout=30)
    assert dp.unreachable(dp.names.outside, address, 2222)
    dp.sdk.network.delete_port_forwarding(pf, fip.id)
    assert eventually(lambda: dp.unreachable(dp.names.outside, address, 2223), timeout=30)
