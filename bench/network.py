"""Networking: latency and throughput of network/subnet/port create, show and list, beside
the server's authenticated no-op floors measured in the same run; and port create as one
subnet fills up (10, 1,000 and 50,000 existing ports) and across subnet sizes (/24, /8,
IPv6 /64).

    python -m bench.network [samples]

One `stackling serve` on SQLite (one process), driven over HTTP with a pre-issued admin
token by one client (latency = median per call; throughput = calls per second of that
sequential client; each operation's ratio is against floor calls interleaved with its
own samples, so both see the same machine load). The 50,000 ports are seeded straight into the database in one
transaction (the same rows IPAM writes), then port create is measured over HTTP.
"""

from __future__ import annotations

import random
import sys
import time
import uuid
from typing import Any

import httpx
import netaddr
from sqlalchemy import insert, select

from bench.common import median_ms, noop_floor, report, server, table, timed
from stackling.common.db import Database, utcnow
from stackling.network.core.ipam import key
from stackling.network.core.models import IPAllocation, Port, Subnet

N = "/networking/v2.0"


def _ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


def seed_ports(db: Database, subnet_id: str, count: int) -> None:
    """`count` more ports with one random free address each, in one transaction."""
    with db.transaction() as s:
        subnet = s.get_one(Subnet, subnet_id)
        pool = subnet.allocation_pools[0]
        lo, hi = int(netaddr.IPAddress(pool["start"])), int(netaddr.IPAddress(pool["end"]))
        taken = {int(k, 16) for k in s.scalars(select(IPAllocation.ip_key)
                                               .where(IPAllocation.subnet_id == subnet_id))}
        values: set[int] = set()
        while len(values) < count:
            v = random.randint(lo, hi)
            if v not in taken:
                values.add(v)
        now = utcnow()
        ports, ips = [], []
        for v in values:
            pid = str(uuid.uuid4())
            # another OUI than base_mac, so seeded MACs never meet generated ones; the
            # pool offset keeps them unique (pools up to 2^24 addresses)
            o = (v - lo) & 0xFFFFFF
            mac = f"fa:16:3f:{o >> 16:02x}:{o >> 8 & 255:02x}:{o & 255:02x}"
            ports.append({"id": pid, "project_id": subnet.project_id, "network_id":
                          subnet.network_id, "name": "", "mac_address": mac,
                          "admin_state_up": True, "status": "DOWN", "device_id": "",
                          "device_owner": "", "port_security_enabled": False,
                          "ip_allocation": "immediate", "binding_host_id": "",
                          "binding_vnic_type": "normal", "binding_vif_type": "unbound",
                          "binding_profile": {}, "binding_vif_details": {}, "description": "",
                          "created_at": now, "updated_at": now, "revision_number": 1})
            ips.append({"subnet_id": subnet_id, "ip_address": str(netaddr.IPAddress(v)),
                        "port_id": pid, "network_id": subnet.network_id, "ip_key": key(v),
                        "next_key": key(v + 1), "ordinal": 0})
        for i in range(0, len(ports), 5000):
            s.execute(insert(Port), ports[i:i + 5000])
            s.execute(insert(IPAllocation), ips[i:i + 5000])


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100
    rows: list[list[Any]] = []
    with server() as srv:
        c = srv.client()
        db = Database(f"sqlite:///{srv.data_dir / 'stackling.db'}")
        floor_identity = noop_floor(c)

        def extensions() -> None:
            _ok(c.get(f"{N}/extensions"))

        floor = median_ms(timed(extensions, 200))

        def measure(label: str, fn: Any, n: int = samples) -> None:
            """Each sample is followed by one floor call, so the ratio compares the two
            under the same machine load (the host is shared and noisy)."""
            fn()
            times, floors = [], []
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                extensions()
                floors.append(time.perf_counter() - t0)
            ms = median_ms(times)
            rows.append([label, ms, 1000 / ms, median_ms(floors), ms / median_ms(floors)])

        rows.append(["no-op floor: GET /networking/v2.0/extensions", floor, 1000 / floor,
                     floor, 1.0])
        rows.append(["no-op floor: GET /identity/v3/domains/default", floor_identity,
                     1000 / floor_identity, floor, floor_identity / floor])

        nets: list[str] = []

        def net_create() -> None:
            nets.append(_ok(c.post(f"{N}/networks", json={"network": {"name": "b"}}),
                            201)["network"]["id"])

        measure("network create", net_create, 198)
        measure("list 200 networks", lambda: _ok(c.get(f"{N}/networks")), 50)
        measure("network show", lambda: _ok(c.get(f"{N}/networks/{nets[0]}")))

        counter = iter(range(1, 100000))

        def subnet_create() -> None:
            i = next(counter)
            _ok(c.post(f"{N}/subnets", json={"subnet": {
                "network_id": nets[i], "ip_version": 4,
                "cidr": f"10.{i // 250}.{i % 250}.0/24"}}), 201)

        measure("subnet create (/24, given CIDR)", subnet_create, min(samples, 150))

        def make_subnet(cidr: str, **extra: Any) -> tuple[str, str]:
            net = _ok(c.post(f"{N}/networks", json={"network": {}}), 201)["network"]["id"]
            sub = _ok(c.post(f"{N}/subnets", json={"subnet": {
                "network_id": net, "ip_version": 6 if ":" in cidr else 4, "cidr": cidr,
                **extra}}), 201)["subnet"]["id"]
            return net, sub

        def port_create(net: str) -> Any:
            ports: list[str] = []

            def call() -> None:
                ports.append(_ok(c.post(f"{N}/ports", json={"port": {"network_id": net}}),
                                 201)["port"]["id"])
            call.ports = ports  # type: ignore[attr-defined]
            return call

        net24, _ = make_subnet("172.16.5.0/24")
        measure("port create on a /24", port_create(net24), min(samples, 200))
        net8, _ = make_subnet("11.0.0.0/8")
        create8 = port_create(net8)
        measure("port create on a /8", create8, samples)
        net64, _ = make_subnet("fd99::/64", ipv6_ra_mode="dhcpv6-stateful",
                               ipv6_address_mode="dhcpv6-stateful")
        measure("port create on an IPv6 /64 (DHCPv6-stateful)", port_create(net64), samples)
        while len(create8.ports) < 1000:  # type: ignore[attr-defined]
            create8()
        measure("port show", lambda: _ok(c.get(f"{N}/ports/{create8.ports[0]}")))  # type: ignore[attr-defined]
        measure("list 1,000 ports (one network)",
                lambda: _ok(c.get(f"{N}/ports?network_id={net8}")), 20)

        # port create as one subnet fills: a /16 holding 10, 1,000 and 50,000 ports
        net16, sub16 = make_subnet("100.64.0.0/16")
        fill = 0
        for target in (10, 1000, 50000):
            seed_ports(db, sub16, target - fill)
            fill = target
            measure(f"port create, /16 holding {target:,} ports", port_create(net16),
                    min(samples, 100))
            fill += min(samples, 100) + 2
        db.dispose()
    text = ("Networking latency on SQLite, one process, one sequential client "
            f"({samples} samples unless fewer noted by the operation).\n\n" +
            table(["operation", "median ms", "ops/s (1 client)", "floor ms (interleaved)",
                   "x floor"], rows))
    report("network", text)


if __name__ == "__main__":
    main()
