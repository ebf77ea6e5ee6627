"""Segmentation ids and network segment ranges: what configured and used ids cost.

    python -m bench.segments [samples]

1. Startup and peak memory (VmHWM of the server process) with the demo configuration
   (VXLAN and Geneve 1:16777215, GRE 1:4294967295) against the same with every tunnel
   range 1:1000; and a restart whose changed configuration replaces the default ranges.
2. Range create / show / list latency for a 1,000-id range and a 2^32-id range.
3. Network create latency (a project network from the shared default) with 10, 10,000 and
   100,000 VNIs already allocated (seeded straight into the allocation table in one
   transaction), and with the segment-range extension switched off.

One `stackling serve` on SQLite per configuration, one sequential client with a pre-issued
token. Every latency sample is followed by one floor call (`GET /networking/v2.0/extensions`)
so each ratio compares the two under the same machine load.
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert, select

from bench.common import Server, free_port, median_ms, report, server, table
from bench.startup import first_authenticated
from stackling.common.db import Database
from stackling.network.core.models import SegmentAllocation

N = "/networking/v2.0"
R = f"{N}/network_segment_ranges"
SMALL = ("network:\n  ml2:\n    vni_ranges: ['1:1000']\n    tunnel_id_ranges: ['1:1000']\n"
         "    geneve_vni_ranges: ['1:1000']\n")
OFF = "network:\n  network_segment_range: false\n"


def _ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


def vm_hwm_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


# ------------------------------------------------------------------ 1. startup and memory
def startup(runs: int) -> list[list[Any]]:
    """Every configuration measured in turn within each round, so load hits them alike."""
    rows: list[list[Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="stackling-segments-"))
    try:
        small_cfg = tmp / "small.yaml"
        small_cfg.write_text(SMALL)
        configs = {"demo (VXLAN/Geneve 1:16777215, GRE 1:4294967295)": [],
                   "tunnel ranges 1:1000": ["--config", str(small_cfg)]}
        firsts: dict[str, list[float]] = {k: [] for k in configs}
        starts: dict[str, list[float]] = {k: [] for k in configs}
        hwms: dict[str, list[int]] = {k: [] for k in configs}
        servers: dict[str, Server] = {}
        tokens: dict[str, str] = {}
        for i in range(runs):
            for n, (label, args) in enumerate(configs.items()):
                srv = Server(tmp / f"{n}-{i}" / "data", free_port(), args)
                firsts[label].append(srv.start())
                tokens[label] = srv.token()
                srv.stop()
                servers[label] = srv
        # a third data dir restarted alternately with the small and the demo
        # configuration: every start there finds changed defaults and replaces them
        flip_demo = Server(tmp / "flip" / "data", free_port(), [])
        flip_demo.start()
        flip_token = flip_demo.token()
        flip_demo.stop()
        flip = [Server(flip_demo.data_dir, free_port(), ["--config", str(small_cfg)]),
                flip_demo]
        swaps = []
        for i in range(runs):
            for label, srv in servers.items():
                starts[label].append(first_authenticated(srv, tokens[label]))
                with httpx.Client(headers={"X-Auth-Token": tokens[label]}, timeout=30) as c:
                    assert _ok(c.get(f"{srv.url}{R}"))["network_segment_ranges"]
                assert srv.proc is not None
                hwms[label].append(vm_hwm_kb(srv.proc.pid))
                srv.stop()
            target = flip[i % 2]
            swaps.append(first_authenticated(target, flip_token))
            target.stop()
        base = "tunnel ranges 1:1000"
        med = statistics.median
        for label in configs:
            rows.append([f"first start (migrate, bootstrap, defaults): {label}",
                         med(firsts[label]) * 1000, med(firsts[label]) / med(firsts[base]), ""])
            rows.append([f"restart → first authenticated 200: {label}",
                         med(starts[label]) * 1000, med(starts[label]) / med(starts[base]), ""])
            rows.append([f"peak RSS (VmHWM) after start + range list: {label}", "",
                         med(hwms[label]) / med(hwms[base]),
                         f"{med(hwms[label]) / 1024:.1f} MB"])
        rows.append(["restart with a changed configuration (defaults replaced)",
                     med(swaps) * 1000, med(swaps) / med(starts[base]), ""])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


# ------------------------------------------------------------------ 2, 3. latencies
class Meter:
    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.rows: list[list[Any]] = []

    def floor(self) -> None:
        _ok(self.client.get(f"{N}/extensions"))

    def measure(self, label: str, fn: Callable[[], Any], n: int,
                between: Callable[[], Any] | None = None) -> float:
        fn()
        if between:
            between()
        times, floors = [], []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            if between:
                between()
            t0 = time.perf_counter()
            self.floor()
            floors.append(time.perf_counter() - t0)
        ms, floor = median_ms(times), median_ms(floors)
        self.rows.append([label, ms, floor, ms / floor])
        return ms


def seed_allocations(db: Database, count: int) -> None:
    """`count` more taken VNIs, random over the default 1:16777215, in one transaction."""
    a = SegmentAllocation
    with db.transaction() as s:
        taken = set(s.scalars(select(a.segmentation_id).where(a.network_type == "vxlan")))
        values: set[int] = set()
        while len(values) < count:
            v = random.randint(1, 2**24 - 1)
            if v not in taken:
                values.add(v)
        rows = [{"network_type": "vxlan", "physical_network": "", "segmentation_id": v}
                for v in values]
        for i in range(0, len(rows), 10000):
            s.execute(insert(a), rows[i:i + 10000])


def latencies(samples: int) -> list[list[Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="stackling-segments-off-"))
    off_cfg = tmp / "off.yaml"
    off_cfg.write_text(OFF)
    try:
        with server() as srv, server(["--config", str(off_cfg)]) as off_srv:
            return _latencies(srv, off_srv, samples)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _latencies(srv: Server, off_srv: Server, samples: int) -> list[list[Any]]:
    admin = srv.client()
    demo = srv.client(srv.token("demo", "bench-demo"))
    m = Meter(admin)
    ids: list[str] = []

    def create(body: dict[str, Any]) -> Callable[[], None]:
        def call() -> None:
            ids.append(_ok(admin.post(R, json={"network_segment_range": body}),
                           201)["network_segment_range"]["id"])
        return call

    def delete_last() -> None:
        _ok(admin.delete(f"{R}/{ids.pop()}"), 204)

    k1 = {"name": "k1", "network_type": "vxlan", "minimum": 5_000_000, "maximum": 5_000_999}
    g32 = {"name": "g32", "network_type": "gre", "minimum": 1, "maximum": 2**32 - 1}
    m.measure("range create, 1,000 ids", create(k1), samples, delete_last)
    m.measure("range create, 2^32 - 1 ids", create(g32), samples, delete_last)
    create(k1)()
    create(g32)()
    small, huge = ids
    m.measure("range show, 1,000 ids", lambda: _ok(admin.get(f"{R}/{small}")), samples)
    m.measure("range show, 2^32 - 1 ids", lambda: _ok(admin.get(f"{R}/{huge}")), samples)
    m.measure("range list (5 defaults incl. 2^24 and 2^32, + both)",
              lambda: _ok(admin.get(R)), samples)
    m.measure("range update (rename), 2^32 - 1 ids", lambda: _ok(admin.put(
        f"{R}/{huge}", json={"network_segment_range": {"name": "g"}})), samples)

    def net_create(client: httpx.Client) -> Callable[[], None]:
        return lambda: _ok(client.post(f"{N}/networks", json={"network": {"name": "b"}}), 201)

    # the reference: the same create on a server with the extension off, its samples
    # interleaved with the first measurement below
    off_demo = off_srv.client(off_srv.token("demo", "bench-demo"))
    off_create, off_times = net_create(off_demo), []
    off_create()

    def with_reference() -> None:
        t0 = time.perf_counter()
        off_create()
        off_times.append(time.perf_counter() - t0)

    db = Database(f"sqlite:///{srv.data_dir / 'stackling.db'}")
    have = 0
    for target in (10, 10_000, 100_000):
        seed_allocations(db, target - have)
        have = target
        m.measure(f"network create, {target:,} VNIs allocated", net_create(demo), samples,
                  with_reference if target == 10 else None)
        have += samples + 1
        if target == 10:
            floor = m.rows[-1][2]
            ms = median_ms(off_times)
            m.rows.append(["network create, extension off (reference, interleaved)", ms,
                           floor, ms / floor])
    db.dispose()
    return m.rows


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 60
    runs = 7
    start_rows = startup(runs)
    lat_rows = latencies(samples)
    text = (f"Segment ranges on SQLite, one process ({runs} starts per configuration; "
            f"{samples} samples per latency, each followed by one floor call).\n\n"
            + table(["startup", "ms", "x tunnel ranges 1:1000", "peak RSS"], start_rows)
            + "\n\n"
            + table(["operation", "median ms", "floor ms (interleaved)", "x floor"],
                    lat_rows))
    report("segments", text)


if __name__ == "__main__":
    main()
