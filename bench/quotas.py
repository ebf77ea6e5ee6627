"""Quotas: what the per-project check costs a create, and how long the largest request
the two bounds allow holds the (SQLite) write lock.

    python -m bench.quotas [samples]

One `stackling serve` on SQLite. Creates in a project with a finite quota (lock row +
count) are interleaved with the same creates in a project whose quota is -1 (no check at
all), so the ratio is the check's cost under the same machine load. Then the largest
single requests: `POST /servers` with `max_count` 10^30 and an unlimited quota (bounded
by `quota.compute.max_count`, 1000), a bulk network POST of `quota.network.max_bulk`
(100) items, and one item more (refused before any work), against a one-item create.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import httpx

from bench.boot import CIRROS, new_project
from bench.common import median_ms, noop_floor, report, server, table

N = "/networking/v2.0"


def _ok(r: httpx.Response, status: int) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


def _once(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 30
    with server() as srv:
        admin = srv.client()
        floor = noop_floor(admin)
        limited_id, limited = new_project(admin, srv.url)
        free_id, free = new_project(admin, srv.url)
        for pid, value in ((limited_id, 1_000_000), (free_id, -1)):
            _ok(admin.put(f"{N}/quotas/{pid}", json={"quota": {"network": value}}), 200)
            _ok(admin.put(f"/compute/v2.1/os-quota-sets/{pid}", json={"quota_set": {
                "instances": value, "cores": value, "ram": value}}), 200)

        def net(client: httpx.Client) -> None:
            _ok(client.post(f"{N}/networks", json={"network": {"name": "q"}}), 201)

        def boot(client: httpx.Client) -> None:
            _ok(client.post("/compute/v2.1/servers", json={"server": {
                "name": "q", "flavorRef": "1", "imageRef": CIRROS, "networks": "none"}}), 202)

        rows: list[list[Any]] = [["no-op floor (GET identity domain)", floor, "", ""]]
        for label, fn in (("POST /networks", net), ("POST /servers (networks none)", boot)):
            fn(limited), fn(free)
            with_check, without = [], []
            for _ in range(samples):
                with_check.append(_once(lambda fn=fn: fn(limited)))
                without.append(_once(lambda fn=fn: fn(free)))
            a, b = median_ms(with_check), median_ms(without)
            rows.append([f"{label}: finite quota / unlimited (-1)", a, b, a / b])

        one = median_ms([_once(lambda: net(free)) for _ in range(5)])
        bulk = _once(lambda: _ok(free.post(f"{N}/networks", json={"networks": [
            {"name": f"b{i}"} for i in range(100)]}), 201)) * 1000
        refused = _once(lambda: _ok(free.post(f"{N}/networks", json={"networks": [
            {"name": f"b{i}"} for i in range(101)]}), 400)) * 1000
        rows.append(["bulk POST /networks of 100 (the bound) / one network", bulk, one,
                     bulk / one])
        rows.append(["bulk POST /networks of 101 (400) / one network", refused, one,
                     refused / one])
        single = median_ms([_once(lambda: boot(free)) for _ in range(5)])
        huge = _once(lambda: _ok(free.post("/compute/v2.1/servers", json={"server": {
            "name": "many", "flavorRef": "1", "imageRef": CIRROS, "networks": "none",
            "min_count": 1, "max_count": 10**30}}), 202)) * 1000
        rows.append(["POST /servers max_count=10^30, quota -1 (makes 1,000) / one server",
                     huge, single, huge / single])
    text = table(["measure (median ms)", "ms", "baseline ms", "ratio"], rows)
    text += (f"\n\nSamples: {samples} interleaved pairs per create. The finite quota is "
             "1,000,000 (checked: lock row + count); -1 skips the check. The bulk and "
             "max_count rows are one request each: how long one request may hold the "
             "write lock at the default bounds.")
    report("quotas", text)


if __name__ == "__main__":
    main()
