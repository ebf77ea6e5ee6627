"""QoS on the wire: a port's bandwidth limits are token buckets at the rates of its rules,
and its DSCP marking rule marks what the server sends (issue 23), all of it on the host's
side where the guest's root cannot lift it (issue 29)."""

from __future__ import annotations

import re
import subprocess

from tests.dataplane.conftest import DataplaneCloud, eventually


def _rate(dp: DataplaneCloud, namespace: str, link: str) -> str | None:
    out = dp.in_ns(namespace, "tc", "qdisc", "show", "dev", link).stdout
    found = re.search(r"tbf .* rate (\S+)", out)
    return found.group(1) if found else None


def _host(dp: DataplaneCloud, tap: str) -> str | None:
    """The namespace holding the host's end of the port."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    for ns in (n for n in names if n.startswith(dp.prefix + "-")):
        if tap in dp.in_ns(ns, "ip", "-o", "link", "show", "dev", tap).stdout:
            return ns
    return None


def _tap_rate(dp: DataplaneCloud, tap: str) -> str | None:
    """The rate on the host's end of the port, wherever the host's namespace is."""
    ns = _host(dp, tap)
    return _rate(dp, ns, tap) if ns else None


def _sends(dp: DataplaneCloud, tap: str) -> str:
    """What the host's bridge table does to the frames the port sends (firewall.py)."""
    ns = _host(dp, tap)
    if ns is None:
        return ""
    table = dp.in_ns(ns, "nft", "list", "table", "bridge", dp.prefix).stdout
    chain = re.search(rf"chain from-{re.escape(tap)} {{(.*?)}}", table, re.S)
    return chain.group(1) if chain else ""


def _policed(dp: DataplaneCloud, tap: str) -> int | None:
    """The egress limit in kbit/s (nftables' limit rate, in bytes per second)."""
    found = re.search(r"limit rate over (\d+) (k?)bytes/second", _sends(dp, tap))
    if not found:
        return None
    return int(found.group(1)) * (1024 if found.group(2) else 1) * 8 // 1000


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

    # egress (from the server) policed at 1 Mbit/s where it enters its host's bridge,
    # ingress shaped at 2 Mbit/s on the host's end: both out of the guest's reach
    tap = dp.names.tap(port.id)
    assert eventually(lambda: _policed(dp, tap) == 1000, timeout=30), _sends(dp, tap)
    assert eventually(lambda: _tap_rate(dp, tap) == "2Mbit", timeout=30)
    # the guest cannot lift its limits, even as root in its own network namespace
    userns = f"/run/stackling/{dp.prefix}/guests/{server.id}/userns"
    for cmd in (["tc", "qdisc", "del", "dev", "eth0", "root"], ["nft", "flush", "ruleset"]):
        subprocess.run(["nsenter", f"--user={userns}", f"--net=/run/netns/{guest}", "-S", "0",
                        "-G", "0", "--", *cmd], capture_output=True)
    assert _policed(dp, tap) == 1000 and _tap_rate(dp, tap) == "2Mbit"
    # DSCP 26 set on what the port sends
    assert "ip dscp set af31" in _sends(dp, tap), _sends(dp, tap)  # af31 is 26

    # a changed rule changes the bucket; a port without the policy has none
    rules = {r.direction: r for r in dp.sdk.network.qos_bandwidth_limit_rules(policy)}
    dp.sdk.network.update_qos_bandwidth_limit_rule(rules["egress"], policy, max_kbps=3000)
    assert eventually(lambda: _policed(dp, tap) == 3000, timeout=30), _sends(dp, tap)
    dp.sdk.network.update_port(port, qos_policy_id=None)
    assert eventually(lambda: _policed(dp, tap) is None, timeout=30)
    assert eventually(lambda: _tap_rate(dp, tap) is None, timeout=30)
    assert eventually(lambda: "dscp set" not in _sends(dp, tap), timeout=30)
