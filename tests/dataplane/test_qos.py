"""QoS on the wire: a port's bandwidth limits are token buckets at the rates of its rules,
and its DSCP marking rule marks what the server sends (issue 23)."""

from __future__ import annotations

import re
import subprocess

from tests.dataplane.conftest import DataplaneCloud, eventually


def _rate(dp: DataplaneCloud, namespace: str, link: str) -> str | None:
    out = dp.in_ns(namespace, "tc", "qdisc", "show", "dev", link).stdout
    found = re.search(r"tbf .* rate (\S+)", out)
    return found.group(1) if found else None


def _tap_rate(dp: DataplaneCloud, tap: str) -> str | None:
    """The rate on the host's end of the port, wherever the host's namespace is."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    for ns in (n for n in names if n.startswith(dp.prefix + "-")):
        if tap in dp.in_ns(ns, "ip", "-o", "link", "show", "dev", tap).stdout:
            return _rate(dp, ns, tap)
    return None


def test_bandwidth_limits_and_dscp_marking_on_the_wire(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-qos", "10.74.0.0/24")
    policy = dp.sdk.network.create_qos_policy(name="dp-limited")
    dp.sdk.network.create_qos_bandwidth_limit_rule(policy, max_kbps=1000, max_burst_kbps=100,
                                                   direction="egress")
    dp.sdk.network.create_qos_bandwidth_limit_rule(policy, max_kbps=2000, direction="ingress")
    dp.sdk.network.create_qos_dscp_marking_rule(policy, dscp_mark=26)
    port = dp.sdk.network.create_port(network_id=net.id, qos_policy_id=policy.id)
    image = dp.sdk.image.find_image("cirros")
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    server = dp.sdk.compute.create_server(name="vm-qos", image_id=image.id, flavor_id=flavor.id,
                                          key_name=dp.keypair().name,
                                          networks=[{"port": port.id}])
    server = dp.sdk.compute.wait_for_server(server, wait=120, interval=0.2)
    guest = dp.names.guest(server.id)
    address = port.fixed_ips[0]["ip_address"]
    assert dp.wait_ssh(guest, address).strip() == "vm-qos"

    # egress (from the server) at 1 Mbit/s on its NIC, ingress at 2 Mbit/s on the host's end
    assert eventually(lambda: _rate(dp, guest, "eth0") == "1Mbit", timeout=30)
    assert eventually(lambda: _tap_rate(dp, dp.names.tap(port.id)) == "2Mbit", timeout=30)
    # the guest cannot lift its limit (no CAP_NET_ADMIN after boot)
    lifted = dp.ssh(guest, address, "tc qdisc del dev eth0 root 2>&1; echo rc=$?").stdout
    assert "rc=0" not in lifted
    assert _rate(dp, guest, "eth0") == "1Mbit"
    # DSCP 26 set on what leaves eth0
    table = dp.in_ns(guest, "nft", "list", "table", "inet", f"{dp.prefix}-qos").stdout
    assert 'oifname "eth0"' in table and "dscp set af31" in table, table  # af31 is 26

    # a changed rule changes the bucket; a port without the policy has none
    rules = {r.direction: r for r in dp.sdk.network.qos_bandwidth_limit_rules(policy)}
    dp.sdk.network.update_qos_bandwidth_limit_rule(rules["egress"], policy, max_kbps=3000)
    assert eventually(lambda: _rate(dp, guest, "eth0") == "3Mbit", timeout=30)
    dp.sdk.network.update_port(port, qos_policy_id=None)
    assert eventually(lambda: _rate(dp, guest, "eth0") is None, timeout=30)
    assert eventually(lambda: _tap_rate(dp, dp.names.tap(port.id)) is None, timeout=30)
    assert eventually(lambda: "dscp set" not in dp.in_ns(
        guest, "nft", "list", "table", "inet", f"{dp.prefix}-qos").stdout, timeout=30)
