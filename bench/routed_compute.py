"""Compute on routed networks, against the no-op floor measured in the same run (SQLite, one
process): boot to ACTIVE on a routed network vs a plain one (target: routed within 1.3×),
binding a deferred port vs an immediate one, and allocation candidates / scheduling with
100 segments × 10 hosts (1,000 compute hosts).

    python -m bench routed_compute [boots]

`bench/routed.py` (the network side) calls `measure()` so `python -m bench routed` reports
both.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.boot import MV, boot, wait_active
from bench.common import median_ms, noop_floor, report, server, table

PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}


def _routed(admin: httpx.Client, name: str, physnets: list[str], prefix: str,
            kind: str = "vlan") -> str:
    """A network with one segment (and a /24 subnet) per physical network."""
    r = admin.post("/networking/v2.0/networks", json={"network": {
        "name": name, "provider:network_type": kind,
        "provider:physical_network": physnets[0]}})
    r.raise_for_status()
    net = r.json()["network"]
    segs = admin.get(f"/networking/v2.0/segments?network_id={net['id']}").json()["segments"]
    for physnet in physnets[1:]:
        r = admin.post("/networking/v2.0/segments", json={"segment": {
            "network_id": net["id"], "network_type": kind, "physical_network": physnet}})
        r.raise_for_status()
        segs.append(r.json()["segment"])
    for i, seg in enumerate(segs):
        admin.post("/networking/v2.0/subnets", json={"subnet": {
            "network_id": net["id"], "segment_id": seg["id"], "ip_version": 4,
            "cidr": f"{prefix}.{i}.0/24"}}).raise_for_status()
    return net["id"]


def _plain(admin: httpx.Client, name: str, cidr: str) -> str:
    net = admin.post("/networking/v2.0/networks", json={"network": {"name": name}}).json()
    admin.post("/networking/v2.0/subnets", json={"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": cidr}}).raise_for_status()
    return net["network"]["id"]


def _boots(client: httpx.Client, net_id: str, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        wait_active(client, boot(client, [{"uuid": net_id}]))
        samples.append(time.perf_counter() - t0)
    for s in client.get("/compute/v2.1/servers").json()["servers"]:
        client.delete(f"/compute/v2.1/servers/{s['id']}").raise_for_status()
    return samples


def _bindings(admin: httpx.Client, net_id: str, n: int) -> list[float]:
    samples = []
    for i in range(n):
        port = admin.post("/networking/v2.0/ports", json={"port": {"network_id": net_id}}
                          ).json()["port"]
        t0 = time.perf_counter()
        admin.put(f"/networking/v2.0/ports/{port['id']}", json={"port": {
            "binding:host_id": f"compute-r{1 + i % 2}-1"}}).raise_for_status()
        samples.append(time.perf_counter() - t0)
        admin.delete(f"/networking/v2.0/ports/{port['id']}").raise_for_status()
    return samples


def measure(srv: Any, admin: httpx.Client, floor: float, boots: int = 20) -> list[list[Any]]:
    """Rows for the demo cloud (4 hosts, 2 racks): boots and bindings."""
    admin.headers.update(MV)
    project = admin.get("/identity/v3/auth/projects").json()["projects"][0]["id"]
    admin.put(f"/compute/v2.1/os-quota-sets/{project}", json={"quota_set": {
        "instances": -1, "cores": -1, "ram": -1}})
    plain = _plain(admin, "plain", "10.200.0.0/24")
    routed = _routed(admin, "routed", ["physnet1", "physnet2"], "10.201")
    _boots(admin, plain, 3)  # warm up both paths
    _boots(admin, routed, 3)
    plain_boot, routed_boot = [], []
    for _ in range(2):  # interleaved rounds: less load bias between the two
        plain_boot += _boots(admin, plain, boots // 2)
        routed_boot += _boots(admin, routed, boots // 2)
    immediate = _bindings(admin, plain, boots)
    deferred = _bindings(admin, routed, boots)
    p, r = median_ms(plain_boot), median_ms(routed_boot)
    i, d = median_ms(immediate), median_ms(deferred)
    return [
        ["boot → ACTIVE, plain network", p, p / floor],
        ["boot → ACTIVE, routed network (2 segments)", r, r / floor],
        ["  routed / plain", "", r / p],
        ["bind an immediate port (plain network)", i, i / floor],
        ["bind a deferred port (address from the host's segment)", d, d / floor],
        ["  deferred / immediate", "", d / i],
    ]


def measure_scale(segments: int = 100, hosts_per_segment: int = 10,
                  samples: int = 30) -> tuple[list[list[Any]], str]:
    """1,000 hosts over 100 racks, a routed network with a segment per rack: allocation
    candidates with the routed prefilter, and scheduling a boot on it."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-routed-"))
    config = tmp / "hosts.yaml"
    # Flat segments, one per rack: every physical network is allowed for flat.
    lines = ["network:", "  ml2:", "    flat_networks: ['*']", "compute:", "  hosts:"]
    for s in range(segments):
        for h in range(hosts_per_segment):
            lines.append(f"    - {{name: h{s:03d}-{h:02d}, physical_networks: [rack{s:03d}]}}")
    config.write_text("\n".join(lines) + "\n")
    with server(["--config", str(config)]) as srv:
        admin = srv.client()
        floor = noop_floor(admin)
        t0 = time.perf_counter()
        net_id = _routed(admin, "wide", [f"rack{s:03d}" for s in range(segments)], "10.220",
                         kind="flat")
        setup = time.perf_counter() - t0
        segs = admin.get(f"/networking/v2.0/segments?network_id={net_id}").json()["segments"]
        aggs = []
        for seg in segs:
            aggs += admin.get(f"/placement/resource_providers/{seg['id']}/aggregates",
                              headers=PLACEMENT).json()["aggregates"]
        base = "/placement/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:1"
        routed_q = f"{base}&member_of=in:{','.join(aggs)}&limit=1000"
        plain = []
        routed = []
        for _ in range(samples):
            for path, out in ((f"{base}&limit=1000", plain), (routed_q, routed)):
                t0 = time.perf_counter()
                r = admin.get(path, headers=PLACEMENT)
                r.raise_for_status()
                out.append(time.perf_counter() - t0)
        count = len(r.json()["allocation_requests"])
        admin.headers.update(MV)
        project = admin.get("/identity/v3/auth/projects").json()["projects"][0]["id"]
        admin.put(f"/compute/v2.1/os-quota-sets/{project}", json={"quota_set": {
            "instances": -1, "cores": -1, "ram": -1}})
        boots = _boots(admin, net_id, 10)
    c, q, b = median_ms(plain), median_ms(routed), median_ms(boots)
    rows = [
        [f"no-op floor ({segments * hosts_per_segment}-host cloud)", floor, 1.0],
        [f"allocation candidates, {segments * hosts_per_segment} hosts, no filter", c,
         c / floor],
        [f"allocation candidates, member_of {len(aggs)} segment aggregates", q, q / floor],
        [f"boot → ACTIVE on the {segments}-segment routed network", b, b / floor],
    ]
    note = (f"{segments} segments × {hosts_per_segment} hosts; {count} candidates per "
            f"request; creating the network, {segments} segments and subnets took "
            f"{setup:.1f} s; {samples} samples each.")
    return rows, note


def main() -> None:
    boots = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "routed_compute" else 20
    with server() as srv:
        admin = srv.client()
        floor = noop_floor(admin)
        rows = [["no-op floor (GET identity domain)", floor, 1.0], *measure(srv, admin, floor,
                                                                           boots)]
    scale, note = measure_scale()
    text = table(["measure (median)", "ms", "× floor"], rows + scale)
    text += f"\n\n{boots} boots per network (two interleaved rounds). {note}"
    report("routed_compute", text)


if __name__ == "__main__":
    main()
