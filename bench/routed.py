"""Routed networks: what the in-transaction placement work costs.

    python -m bench.routed [samples]

One `stackling serve` on SQLite (one process), one sequential client with a pre-issued
admin token. `MEASUREMENTS` is the list of parts, run in order against the same server;
each is `fn(bench)` and records rows with `bench.measure(...)`, which interleaves the
variants it is given with a no-op floor call (`GET /networking/v2.0/extensions`), so
every variant and the floor see the same machine load. Ratios are to that floor and to
the first variant, measured in the same run.

Network part (target: the in-transaction placement update adds at most 1 ms to a subnet
create): subnet create on a plain VLAN network vs on a segment of the same kind of
network, (a) the segment's first IPv4 subnet, which creates the segment's provider,
inventory and host aggregate (two mapped hosts joined), and (b) a further subnet on a
segment that has some, which only recomputes the inventory.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.common import median_ms, report, server, table

N = "/networking/v2.0"


def ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


@dataclass
class Bench:
    client: httpx.Client
    samples: int
    rows: list[list[Any]] = field(default_factory=list)
    ids: Any = field(default_factory=lambda: itertools.count(1000))  # VLAN ids, CIDRs

    def floor(self) -> None:
        ok(self.client.get(f"{N}/extensions"))

    def measure(self, variants: list[tuple[str, Callable[[], float | None]]],
                n: int | None = None) -> None:
        """Median ms of each variant, its ratio to the floor and to the first variant;
        one round calls every variant once, then the floor. A variant that returns
        seconds is timed by that (its own inner part, set-up left out), else whole."""
        n = n or self.samples
        times: dict[str, list[float]] = {label: [] for label, _ in variants}
        floors: list[float] = []
        for _label, fn in variants:
            fn()  # warm-up
        for _ in range(n):
            for label, fn in variants:
                t0 = time.perf_counter()
                inner = fn()
                times[label].append(inner if inner is not None else time.perf_counter() - t0)
            t0 = time.perf_counter()
            self.floor()
            floors.append(time.perf_counter() - t0)
        floor = median_ms(floors)
        base = median_ms(times[variants[0][0]])
        for label, _ in variants:
            ms = median_ms(times[label])
            self.rows.append([label, ms, floor, ms / floor, ms / base, ms - base])

    # -- helpers the parts share
    def vlan_network(self, physnet: str = "physnet1") -> tuple[str, str]:
        """A VLAN network with an explicit id (outside the configured ranges, which an
        admin may use): returns (network id, its segment id)."""
        net = ok(self.client.post(f"{N}/networks", json={"network": {
            "provider:network_type": "vlan", "provider:physical_network": physnet,
            "provider:segmentation_id": next(self.ids) % 3000 + 1000}}), 201)["network"]
        seg = ok(self.client.get(f"{N}/segments?network_id={net['id']}"))["segments"][0]
        return net["id"], seg["id"]

    def cidr(self) -> str:
        i = next(self.ids)
        return f"10.{i // 250 % 250}.{i % 250}.0/26"


# ------------------------------------------------------------------ network part
def subnet_create_on_segment(b: Bench) -> None:
    def subnet(net: str, segment: str | None) -> None:
        body: dict[str, Any] = {"network_id": net, "ip_version": 4, "cidr": b.cidr()}
        if segment is not None:
            body["segment_id"] = segment
        ok(b.client.post(f"{N}/subnets", json={"subnet": body}), 201)

    # (a) each sample on a fresh network (its creation not timed): the first subnet
    def first(segment: bool) -> Callable[[], float]:
        def call() -> float:
            net, seg = b.vlan_network()
            t0 = time.perf_counter()
            subnet(net, seg if segment else None)
            return time.perf_counter() - t0
        return call

    b.measure([("subnet create, plain network (first subnet)", first(False)),
               ("subnet create, first subnet on a segment (+ provider, inventory, "
                "aggregate of 2 hosts)", first(True))])
    # (b) further subnets on one network / one segment that has some
    plain_net, _ = b.vlan_network()
    routed_net, seg = b.vlan_network()
    for _ in range(5):
        subnet(plain_net, None)
        subnet(routed_net, seg)
    b.measure([("subnet create, plain network (6th+ subnet)", lambda: subnet(plain_net, None)),
               ("subnet create on a segment with subnets (+ inventory update)",
                lambda: subnet(routed_net, seg))], n=min(b.samples, 60))


# ------------------------------------------------------------------ compute part
# Targets: a boot on a routed network within 1.3x of a boot on a plain one (SQLite, one
# process). Boots are timed from POST /servers to ACTIVE (polled every 5 ms); deleting
# the server afterwards is not timed.
MV = {"OpenStack-API-Version": "compute 2.62"}
CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
C = "/compute/v2.1"


def _routed_network(b: Bench, physnets: list[str], kind: str = "vlan") -> str:
    """A network with one segment per physical network and a subnet on each."""
    net = ok(b.client.post(f"{N}/networks", json={"network": {
        "provider:network_type": kind, "provider:physical_network": physnets[0]}}),
        201)["network"]
    segs = ok(b.client.get(f"{N}/segments?network_id={net['id']}"))["segments"]
    for physnet in physnets[1:]:
        segs.append(ok(b.client.post(f"{N}/segments", json={"segment": {
            "network_id": net["id"], "network_type": kind, "physical_network": physnet}}),
            201)["segment"])
    for seg in segs:
        ok(b.client.post(f"{N}/subnets", json={"subnet": {
            "network_id": net["id"], "segment_id": seg["id"], "ip_version": 4,
            "cidr": b.cidr().replace("/26", "/24").rsplit(".", 1)[0] + ".0/24"}}), 201)
    return net["id"]


def _unlimited(b: Bench) -> None:
    project = ok(b.client.get("/identity/v3/auth/projects"))["projects"][0]["id"]
    ok(b.client.put(f"{C}/os-quota-sets/{project}", headers=MV, json={"quota_set": {
        "instances": -1, "cores": -1, "ram": -1}}))


def _boot(b: Bench, net_id: str) -> Callable[[], float]:
    def call() -> float:
        t0 = time.perf_counter()
        sid = ok(b.client.post(f"{C}/servers", headers=MV, json={"server": {
            "name": "b", "flavorRef": "1", "imageRef": CIRROS,
            "networks": [{"uuid": net_id}]}}), 202)["server"]["id"]
        while True:
            server = ok(b.client.get(f"{C}/servers/{sid}", headers=MV))["server"]
            if server["status"] in ("ACTIVE", "ERROR"):
                break
            time.sleep(0.005)
        took = time.perf_counter() - t0
        if server["status"] != "ACTIVE":
            raise RuntimeError(f"boot failed: {server.get('fault')}")
        ok(b.client.delete(f"{C}/servers/{sid}", headers=MV), 204)
        return took
    return call


def boot_routed_vs_plain(b: Bench) -> None:
    _unlimited(b)
    plain, _ = b.vlan_network()
    ok(b.client.post(f"{N}/subnets", json={"subnet": {
        "network_id": plain, "ip_version": 4, "cidr": "10.250.0.0/24"}}), 201)
    routed = _routed_network(b, ["physnet1", "physnet2"])
    b.measure([("boot → ACTIVE, plain network", _boot(b, plain)),
               ("boot → ACTIVE, routed network (2 segments, the IPv4 claim)",
                _boot(b, routed))], n=min(b.samples, 30))


def deferred_port_binding(b: Bench) -> None:
    plain, _ = b.vlan_network()
    ok(b.client.post(f"{N}/subnets", json={"subnet": {
        "network_id": plain, "ip_version": 4, "cidr": "10.251.0.0/24"}}), 201)
    routed = _routed_network(b, ["physnet1", "physnet2"])

    def bind(net_id: str) -> Callable[[], float]:
        hosts = itertools.cycle(["compute-r1-1", "compute-r2-1"])

        def call() -> float:
            port = ok(b.client.post(f"{N}/ports", json={"port": {"network_id": net_id}}),
                      201)["port"]
            t0 = time.perf_counter()
            ok(b.client.put(f"{N}/ports/{port['id']}", json={"port": {
                "binding:host_id": next(hosts)}}))
            took = time.perf_counter() - t0
            ok(b.client.delete(f"{N}/ports/{port['id']}"), 204)
            return took
        return call

    b.measure([("bind a port with its address (plain network)", bind(plain)),
               ("bind a deferred port (address from the host's segment)", bind(routed))])


def candidates_100_segments(b: Bench, segments: int = 100, per_segment: int = 10) -> None:
    """A cloud of its own: 1,000 hosts on 100 racks, a routed network with a flat segment
    per rack. Allocation candidates with and without the routed prefilter (member_of the
    100 segment aggregates), and a boot on that network."""
    import tempfile
    from pathlib import Path

    lines = ["network:", "  ml2:", "    flat_networks: ['*']", "compute:", "  hosts:"]
    lines += [f"    - {{name: h{s:03d}-{h:02d}, physical_networks: [rack{s:03d}]}}"
              for s in range(segments) for h in range(per_segment)]
    config = Path(tempfile.mkdtemp(prefix="bench-routed-")) / "hosts.yaml"
    config.write_text("\n".join(lines) + "\n")
    with server(["--config", str(config)]) as srv:
        deadline = time.perf_counter() + 300
        while True:  # registering 1,000 hosts at first start holds the write lock a while
            try:
                client = srv.client()
                break
            except httpx.TimeoutException:
                if time.perf_counter() > deadline:
                    raise
        big = Bench(client, b.samples)
        _unlimited(big)
        net_id = _routed_network(big, [f"rack{s:03d}" for s in range(segments)], "flat")
        segs = ok(big.client.get(f"{N}/segments?network_id={net_id}"))["segments"]
        aggs = [a for seg in segs for a in ok(big.client.get(
            f"/placement/resource_providers/{seg['id']}/aggregates",
            headers={"OpenStack-API-Version": "placement 1.28"}))["aggregates"]]
        base = ("/placement/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:1"
                "&limit=1000")

        def candidates(path: str) -> Callable[[], None]:
            return lambda: ok(big.client.get(path, headers={
                "OpenStack-API-Version": "placement 1.28"})) and None

        big.measure([(f"allocation candidates, {segments * per_segment} hosts",
                      candidates(base)),
                     (f"allocation candidates, member_of {len(aggs)} segment aggregates",
                      candidates(f"{base}&member_of=in:{','.join(aggs)}"))],
                    n=min(b.samples, 30))
        big.measure([(f"boot → ACTIVE, routed network of {segments} segments × "
                      f"{per_segment} hosts", _boot(big, net_id))], n=min(b.samples, 15))
        b.rows += big.rows


# The parts, in order.
MEASUREMENTS: list[Callable[[Bench], None]] = [
    subnet_create_on_segment,
    boot_routed_vs_plain,
    deferred_port_binding,
    candidates_100_segments,
]


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 60
    with server() as srv:
        b = Bench(srv.client(), samples)
        for part in MEASUREMENTS:
            part(b)
    text = ("Routed networks on SQLite, one process, one sequential client "
            f"({samples} samples unless noted; each round interleaves the variants and a "
            "no-op floor call, GET /networking/v2.0/extensions).\n\n" +
            table(["operation", "median ms", "floor ms", "x floor", "x first variant",
                   "+ms vs first variant"], b.rows))
    report("routed", text)


if __name__ == "__main__":
    main()
