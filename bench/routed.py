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


# The parts, in order. Compute's parts (boot, scheduling, migration) append here.
MEASUREMENTS: list[Callable[[Bench], None]] = [
    subnet_create_on_segment,
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
