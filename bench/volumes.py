"""Block storage: what a volume's create, attach, detach and delete cost against the
authenticated no-op floor; a create from a 300 MB image (MB/s, and the server's RSS while
it copies: bounded); 100 volumes attached across 20 servers.

    python -m bench.volumes [samples]

One `stackling serve` on SQLite. Create and delete are timed until the volume is
`available` (its sparse file made by the workers) and gone; attach is the attachments
API as Nova drives it (create with the host's connector, then os-complete, 3.44), detach
its DELETE. The image's bytes are random (no hole to skip), written by the image API.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
import uuid
from typing import Any

import httpx

from bench.common import median_ms, noop_floor, report, server, table

V3 = "/volume/v3"
MV = {"OpenStack-API-Version": "volume 3.44"}
IMAGE_MB = 300


def _ok(r: httpx.Response, status: int) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


def _until(client: httpx.Client, url: str, done: Any, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(url)
        if done(r):
            return
        time.sleep(0.002)
    raise RuntimeError(f"{url} never done")


def _available(r: httpx.Response) -> bool:
    if r.status_code == 200 and r.json()["volume"]["status"] == "error":
        raise RuntimeError(r.text)
    return r.status_code == 200 and r.json()["volume"]["status"] == "available"


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 30
    with server() as srv:
        admin = srv.client()
        project = _ok(admin.get("/identity/v3/auth/projects"), 200)["projects"]
        pid = next(p["id"] for p in project if p["name"] == "admin")
        _ok(admin.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {
            k: -1 for k in ("volumes", "gigabytes", "snapshots", "backups")}}), 200)
        floor = noop_floor(admin)

        creates, availables, attaches, detaches, deletes = [], [], [], [], []
        for _ in range(samples):
            t0 = time.perf_counter()
            vid = _ok(admin.post(f"{V3}/volumes", json={"volume": {"size": 1}}), 202)[
                "volume"]["id"]
            creates.append(time.perf_counter() - t0)
            _until(admin, f"{V3}/volumes/{vid}", _available)
            availables.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            att = _ok(admin.post(f"{V3}/attachments", headers=MV, json={"attachment": {
                "volume_uuid": vid, "instance_uuid": str(uuid.uuid4()),
                "connector": {"host": "compute1"}}}), 200)["attachment"]
            _ok(admin.post(f"{V3}/attachments/{att['id']}/action", headers=MV,
                           json={"os-complete": None}), 204)
            attaches.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            _ok(admin.delete(f"{V3}/attachments/{att['id']}", headers=MV), 200)
            detaches.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            _ok(admin.delete(f"{V3}/volumes/{vid}"), 202)
            _until(admin, f"{V3}/volumes/{vid}", lambda r: r.status_code == 404)
            deletes.append(time.perf_counter() - t0)

        rows: list[list[Any]] = [["no-op floor (GET identity domain)", floor, 1.0]]
        for label, values in (("POST /volumes (the 202)", creates),
                              ("create until available", availables),
                              ("attach (create with connector + os-complete)", attaches),
                              ("detach (DELETE attachment)", detaches),
                              ("delete until gone", deletes)):
            ms = median_ms(values)
            rows.append([label, ms, ms / floor])

        # a create from a 300 MB image: throughput and the server's RSS meanwhile
        image = _ok(admin.post("/image/v2/images", json={
            "name": "bench-300", "disk_format": "raw", "container_format": "bare"}), 201)
        block = os.urandom(1024 * 1024)

        def chunks() -> Any:
            for _ in range(IMAGE_MB):
                yield block

        _ok(admin.put(f"/image/v2/images/{image['id']}/file", content=chunks(),
                      headers={"Content-Type": "application/octet-stream"}), 204)
        assert srv.proc is not None
        rss_before = _rss_kb(srv.proc.pid)
        peak = [rss_before]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], _rss_kb(srv.proc.pid))  # type: ignore[union-attr]
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.perf_counter()
        vid = _ok(admin.post(f"{V3}/volumes", json={"volume": {
            "size": 1, "imageRef": image["id"]}}), 202)["volume"]["id"]
        _until(admin, f"{V3}/volumes/{vid}", _available)
        seconds = time.perf_counter() - t0
        stop.set()
        sampler.join()
        rows.append([f"create from a {IMAGE_MB} MB image, until available", seconds * 1000, ""])

        # 100 volumes attached across 20 servers (5 each)
        servers = [str(uuid.uuid4()) for _ in range(20)]
        many: list[float] = []
        t_all = time.perf_counter()
        made = []
        for _ in range(100):
            made.append(_ok(admin.post(f"{V3}/volumes", json={"volume": {"size": 1}}), 202)[
                "volume"]["id"])
        for vid in made:
            _until(admin, f"{V3}/volumes/{vid}", _available)
        for i, vid in enumerate(made):
            t0 = time.perf_counter()
            att = _ok(admin.post(f"{V3}/attachments", headers=MV, json={"attachment": {
                "volume_uuid": vid, "instance_uuid": servers[i % 20],
                "connector": {"host": f"compute{i % 4}"}}}), 200)["attachment"]
            _ok(admin.post(f"{V3}/attachments/{att['id']}/action", headers=MV,
                           json={"os-complete": None}), 204)
            many.append(time.perf_counter() - t0)
        total = time.perf_counter() - t_all
        listed = _ok(admin.get(f"{V3}/attachments?instance_id={servers[0]}", headers=MV), 200)
        assert len(listed["attachments"]) == 5
        ms = median_ms(many)
        rows.append(["attach, 100 volumes over 20 servers (median)", ms, ms / floor])
        rows.append(["100 volumes: create, wait, attach all", total * 1000, ""])

        text = table(["operation", "ms (median)", "x floor"], rows)
        text += (f"\n\ncreate from a {IMAGE_MB} MB image: {IMAGE_MB / seconds:.0f} MB/s; "
                 f"server RSS {rss_before / 1024:.0f} MB before, peak "
                 f"{peak[0] / 1024:.0f} MB during the copy "
                 f"(+{(peak[0] - rss_before) / 1024:.1f} MB); attach p90 "
                 f"{statistics.quantiles(many, n=10)[-1] * 1000:.1f} ms")
        report("volumes", text)


if __name__ == "__main__":
    main()
