"""A 1 GiB image goes up and comes down without the server holding it (issue 19, item 2).

Before, one 300 MB download took the server from 96 MB to 856 MB and three at once to
1,581 MB. Here a live `stackling serve` (one process) takes a 1 GiB upload generated on
the fly (the test never holds it either), then serves it once and three times at once; the
server's resident memory (VmRSS in /proc, its peak VmHWM reset before each phase) must stay
within 50 MB of what it used idle. A resource assertion, not a timed one.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

GIB = 1 << 30
PIECE = 1 << 20
BUDGET_KIB = 50 * 1024  # 50 MB over idle


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])  # kB
    raise AssertionError(f"{key} not in /proc/{pid}/status")


class Peak:
    """The highest VmRSS of `pid` while the block runs: the kernel's own high-water mark
    (reset through clear_refs), and samples taken meanwhile in case it cannot be reset."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.kib = 0
        self._done = threading.Event()

    def __enter__(self) -> Peak:
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # resets VmHWM
            self._hwm = True
        except OSError:
            self._hwm = False
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.kib = max(self.kib, _status(self.pid, "VmRSS"))

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        self._thread.join()
        self.kib = max(self.kib, _status(self.pid, "VmRSS"))
        if self._hwm:
            self.kib = max(self.kib, _status(self.pid, "VmHWM"))


def generated(size: int, digest: Any) -> Iterator[bytes]:
    """`size` bytes made a MiB at a time (each MiB differs), hashed as they go."""
    for i in range(size // PIECE):
        piece = i.to_bytes(8, "big") * (PIECE // 8)
        digest.update(piece)
        yield piece


def download(url: str, token: str) -> tuple[str, int, str]:
    md5, size = hashlib.md5(usedforsecurity=False), 0
    with httpx.stream("GET", url, headers={"X-Auth-Token": token}, timeout=600) as r:
        assert r.status_code == 200, r.read()
        header_md5 = r.headers["content-md5"]
        assert r.headers["content-length"] == str(GIB)
        for chunk in r.iter_bytes(PIECE):
            md5.update(chunk)
            size += len(chunk)
    return md5.hexdigest(), size, header_md5


def test_a_1_gib_image_is_streamed_both_ways_in_bounded_memory(cloud_factory):
    server = cloud_factory("sqlite")
    pid = server.proc.pid
    token = server.token()
    http = server.http(token)
    images = f"{server.url}/image/v2/images"

    def new_image(name: str) -> str:
        r = http.post(images, json={"name": name, "disk_format": "raw", "container_format": "bare"})
        assert r.status_code == 201, r.text
        return r.json()["id"]

    # Warm every path once (services loaded, threads started) before taking the idle size.
    small = new_image("warm")
    assert http.put(f"{images}/{small}/file", content=generated(4 * PIECE, hashlib.md5()),
                    headers={"Content-Type": "application/octet-stream"}).status_code == 204
    assert len(http.get(f"{images}/{small}/file").content) == 4 * PIECE
    idle = _status(pid, "VmRSS")

    big, sent = new_image("one-gib"), hashlib.md5(usedforsecurity=False)
    with Peak(pid) as upload:
        r = httpx.put(f"{images}/{big}/file", content=generated(GIB, sent), timeout=600,
                      headers={"X-Auth-Token": token, "Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    assert http.get(f"{images}/{big}").json()["size"] == GIB

    url = f"{images}/{big}/file"
    with Peak(pid) as one:
        got, size, header_md5 = download(url, token)
    assert (got, size, header_md5) == (sent.hexdigest(), GIB, sent.hexdigest())

    with Peak(pid) as three, ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: download(url, token), range(3)))
    assert results == [(sent.hexdigest(), GIB, sent.hexdigest())] * 3

    report = (f"idle {idle} kB; peaks: upload {upload.kib}, one download {one.kib}, "
              f"three downloads {three.kib} kB")
    print(report)
    assert upload.kib - idle < BUDGET_KIB, report
    assert one.kib - idle < BUDGET_KIB, report
    assert three.kib - idle < BUDGET_KIB, report
