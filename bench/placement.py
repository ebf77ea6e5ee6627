"""Placement: allocation-candidates latency with 100, 1,000 and 10,000 compute providers, and
claims per second, each beside the authenticated no-op floor measured in the same run.

    python -m bench.placement [samples]

One `stackling serve` on SQLite (one process). Providers are seeded straight into the
database in one transaction per size (VCPU 32 x4, MEMORY_MB 65536, DISK_GB 1000 each;
every tenth in one aggregate; every other one already holding an instance), then queried
over HTTP at microversion 1.39 exactly as Nova's scheduler asks:
`resources=VCPU:1,MEMORY_MB:512,DISK_GB:10` with and without `member_of`, and with Nova's
default `limit=1000`.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import insert, select, update

from bench.common import median_ms, report, server, table, timed
from stackling.common.db import Database, utcnow
from stackling.placement.models import (
    Allocation,
    Consumer,
    Inventory,
    ProviderAggregate,
    ResourceProvider,
)

V = {"OpenStack-API-Version": "placement 1.39"}
RESOURCES = "resources=VCPU:1,MEMORY_MB:512,DISK_GB:10"
SIZES = (100, 1000, 10000)
AGG = str(uuid.uuid4())


def seed(db: Database, start: int, stop: int) -> list[str]:
    """Providers start..stop-1 with inventory, aggregates and some usage, in one transaction."""
    now = utcnow()
    with db.transaction() as s:
        s.execute(insert(ResourceProvider), [
            {"uuid": str(uuid.uuid4()), "name": f"bench-cn-{i:06d}", "generation": 1,
             "created_at": now, "updated_at": now} for i in range(start, stop)])
        s.execute(update(ResourceProvider).where(ResourceProvider.root_provider_id.is_(None))
                  .values(root_provider_id=ResourceProvider.id))
        rows = s.execute(select(ResourceProvider.id, ResourceProvider.uuid, ResourceProvider.name)
                         .where(ResourceProvider.name >= f"bench-cn-{start:06d}",
                                ResourceProvider.name < f"bench-cn-{stop:06d}")).all()
        inventories, aggregates, consumers, allocations = [], [], [], []
        for rp_id, _rp_uuid, name in rows:
            i = int(name.rsplit("-", 1)[1])
            for rc, total, ratio in (("VCPU", 32, 4.0), ("MEMORY_MB", 65536, 1.0),
                                     ("DISK_GB", 1000, 1.0)):
                inventories.append({"resource_provider_id": rp_id, "resource_class": rc,
                                    "total": total, "reserved": 0, "min_unit": 1,
                                    "max_unit": total, "step_size": 1, "allocation_ratio": ratio,
                                    "created_at": now, "updated_at": now})
            if i % 10 == 0:
                aggregates.append({"resource_provider_id": rp_id, "aggregate_uuid": AGG})
            if i % 2 == 0:
                consumer = str(uuid.uuid4())
                consumers.append({"uuid": consumer, "project_id": "bench", "user_id": "bench",
                                  "generation": 1, "consumer_type": "INSTANCE",
                                  "created_at": now, "updated_at": now})
                for rc, used in (("VCPU", 4), ("MEMORY_MB", 8192), ("DISK_GB", 80)):
                    allocations.append({"resource_provider_id": rp_id, "consumer_id": consumer,
                                        "resource_class": rc, "used": used, "created_at": now})
        for model, batch in ((Inventory, inventories), (ProviderAggregate, aggregates),
                             (Consumer, consumers), (Allocation, allocations)):
            if batch:
                s.execute(insert(model), batch)
    return [r[1] for r in rows]


def measure(http: Any, url: str, n: int) -> tuple[float, int]:
    """Median ms to the last byte of the answer (the client's JSON parsing is not timed)."""

    def call() -> None:
        http.get(url, headers=V).raise_for_status()

    ms = median_ms(timed(call, n, warmup=2))
    return ms, len(http.get(url, headers=V).json()["allocation_requests"])


def claims(srv: Any, token: str, providers: list[str], n: int, threads: int) -> float:
    """Claims per second: PUT /allocations/{new consumer} (1.39 body), `threads` clients."""
    import httpx

    local = threading.local()

    def claim(i: int) -> None:
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=srv.url, timeout=60,
                                      headers={"X-Auth-Token": token, **V})
        body = {"allocations": {providers[i % len(providers)]: {"resources": {
            "VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 10}}}, "project_id": "bench-claims",
            "user_id": "bench", "consumer_generation": None, "consumer_type": "INSTANCE"}
        r = local.http.put(f"/placement/allocations/{uuid.uuid4()}", json=body)
        assert r.status_code == 204, r.text

    for i in range(threads * 2):  # warm the connections
        claim(i)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(claim, range(n)))
    return n / (time.perf_counter() - t0)


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with server() as srv:
        token = srv.token()
        db = Database(f"sqlite:///{srv.data_dir / 'stackling.db'}")
        rows = []
        with srv.client(token) as http:
            floor_url = "/placement/resource_classes/VCPU"

            def floor_call() -> None:
                http.get(floor_url, headers=V).raise_for_status()

            floor = median_ms(timed(floor_call, 200))
            rows.append(["floor: GET /placement/resource_classes/VCPU (token)", "", "",
                         floor, 1.0])
            seeded: list[str] = []
            done = 0
            per_size: dict[int, float] = {}
            for size in SIZES:
                t0 = time.perf_counter()
                seeded += seed(db, done, size)
                seed_s = time.perf_counter() - t0
                done = size
                base = f"/placement/allocation_candidates?{RESOURCES}"
                for label, url in (
                        ("member_of (a tenth)", f"{base}&member_of={AGG}"),
                        ("all providers", base),
                        ("all providers, limit=1000", f"{base}&limit=1000")):
                    ms, count = measure(http, url, samples)
                    if label == "all providers":
                        per_size[size] = ms
                    rows.append([f"candidates, {label}", size, count, ms, ms / floor])
                print(f"seeded {size} providers in {seed_s:.1f}s", file=sys.stderr)
        db.dispose()
        claim_rows = []
        for threads in (1, 4):
            rate = claims(srv, token, seeded, 300, threads)
            claim_rows.append([f"claims/s, PUT /allocations, {threads} client(s)", len(seeded),
                               "", rate, rate * floor / 1000])
    growth = per_size[SIZES[-1]] / per_size[SIZES[1]]
    text = (f"## placement (SQLite, one process, {samples} samples per median)\n\n"
            + table(["measure", "providers", "candidates", "median ms", "× floor"], rows)
            + "\n\n"
            + table(["measure", "providers", "", "per second", "× floor rate"], claim_rows)
            + f"\n\nAll-providers cost growth 1,000 → 10,000: ×{growth:.1f} for ×10 providers "
              "(linear would be ×10).\n")
    report("placement", text)


if __name__ == "__main__":
    main()
