"""L3 networking: router create, add_router_interface, floating IP create+associate, and
Get Me a Network (the first auto-allocated-topology call of a fresh project, which builds
a network, two subnets from the default pools, a router with its gateway and two
interfaces; and the repeat call), beside the server's no-op floor.

    python -m bench.network_l3 [samples]

One `stackling serve` on SQLite (one process) driven over HTTP with a pre-issued admin
token by one sequential client. Latency is the median per call; each operation's ratio is
against floor calls interleaved with its own samples (the host is shared and noisy).
What a timed call needs (subnets to attach, ports behind a router) is made beforehand,
untimed. Real Neutron takes 0.9-1.2 s for the first topology call.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from bench.common import median_ms, noop_floor, report, server, table

N = "/networking/v2.0"


def _ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 50
    rows: list[list[Any]] = []
    with server() as srv:
        c = srv.client()
        floor = noop_floor(c)

        def noop() -> None:
            _ok(c.get("/identity/v3/domains/default"))

        def measure(label: str, fn: Callable[[int], None], n: int = samples) -> None:
            """Sample i runs fn(i), then one floor call under the same load."""
            times, floors = [], []
            for i in range(n):
                t0 = time.perf_counter()
                fn(i)
                times.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                noop()
                floors.append(time.perf_counter() - t0)
            ms, fl = median_ms(times), median_ms(floors)
            rows.append([label, ms, fl, ms / fl])

        pub = _ok(c.get(f"{N}/networks?name=public"))["networks"][0]
        public = pub["id"]
        # the admin project (public's owner) makes hundreds of routers here: no quota
        _ok(c.put(f"{N}/quotas/{pub['project_id']}", json={"quota": {
            k: -1 for k in ("network", "subnet", "port", "router", "floatingip")}}))
        rows.append(["no-op floor: GET /identity/v3/domains/default", floor, floor, 1.0])

        routers: list[str] = []

        def router_create(i: int) -> None:
            routers.append(_ok(c.post(f"{N}/routers", json={"router": {"name": f"r{i}"}}),
                               201)["router"]["id"])

        def router_create_gw(i: int) -> None:
            _ok(c.post(f"{N}/routers", json={"router": {
                "name": f"g{i}", "external_gateway_info": {"network_id": public}}}), 201)

        measure("router create", router_create)
        measure("router create with external gateway", router_create_gw)

        # one subnet per timed add_router_interface, made untimed
        subnets = []
        for i in range(samples):
            net = _ok(c.post(f"{N}/networks", json={"network": {"name": f"n{i}"}}),
                      201)["network"]["id"]
            subnets.append(_ok(c.post(f"{N}/subnets", json={"subnet": {
                "network_id": net, "ip_version": 4, "cidr": f"10.{100 + i // 250}.{i % 250}.0/24"}}),
                201)["subnet"])
        measure("add_router_interface (by subnet)", lambda i: _ok(c.put(
            f"{N}/routers/{routers[0]}/add_router_interface",
            json={"subnet_id": subnets[i]["id"]})))

        # ports behind a router with a gateway: floating IP create + associate in one POST
        _ok(c.put(f"{N}/routers/{routers[0]}", json={"router": {
            "external_gateway_info": {"network_id": public}}}))
        ports = [_ok(c.post(f"{N}/ports", json={"port": {
            "network_id": subnets[i % len(subnets)]["network_id"]}}), 201)["port"]["id"]
            for i in range(samples)]
        measure("floating IP create + associate", lambda i: _ok(c.post(
            f"{N}/floatingips", json={"floatingip": {"floating_network_id": public,
                                                     "port_id": ports[i]}}), 201))

        projects = [uuid.uuid4().hex for _ in range(samples)]
        measure("auto-allocated topology: first call (builds)", lambda i: _ok(c.get(
            f"{N}/auto-allocated-topology/{projects[i]}")))
        measure("auto-allocated topology: repeat call", lambda i: _ok(c.get(
            f"{N}/auto-allocated-topology/{projects[i]}")))
        measure("auto-allocated topology: dry run", lambda i: _ok(c.get(
            f"{N}/auto-allocated-topology/{projects[i]}?fields=dry-run")))

    text = ("## bench.network_l3 (SQLite, one process, sequential client, "
            f"{samples} samples per row)\n\n"
            + table(["operation", "median ms", "floor ms (interleaved)", "x floor"], rows))
    report("network_l3", text)


if __name__ == "__main__":
    main()
