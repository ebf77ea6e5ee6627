"""What every benchmark shares: a throwaway server, timing, the no-op floor, a table.

Benchmarks report medians and ratios measured in one run (ours against a floor measured
in the same process and moment), never absolute pass/fail thresholds.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ADMIN_PASSWORD = "bench-admin"
SERVER_ENV = {
    "STACKLING_ADMIN_PASSWORD": ADMIN_PASSWORD,
    "STACKLING_DEMO_PASSWORD": "bench-demo",
    "STACKLING_IDENTITY__PASSWORD_HASH_ROUNDS": "4",
    # Benchmarks make thousands of objects in one project: quotas high enough never to
    # refuse, but finite, so every create still pays for its quota check.
    **{f"STACKLING_QUOTA__COMPUTE__{k}": "1000000" for k in ("INSTANCES", "CORES", "RAM")},
    **{f"STACKLING_QUOTA__NETWORK__{k}": "1000000" for k in (
        "NETWORK", "SUBNET", "PORT", "ROUTER", "FLOATINGIP", "SECURITY_GROUP",
        "SECURITY_GROUP_RULE")},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A `stackling serve` process on SQLite in a temporary data dir."""

    def __init__(self, data_dir: Path, port: int, extra_args: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.extra_args = extra_args or []
        self.env = {**os.environ, **SERVER_ENV, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        return [str(BIN / "stackling"), "serve", "--data-dir", str(self.data_dir), "--port",
                str(self.port), "--quiet", *self.extra_args]

    def start(self, timeout: float = 60) -> float:
        """Start and wait for the first answer; returns seconds from exec to that answer."""
        t0 = time.perf_counter()
        # stderr to a file, not a pipe: the access lines (always logged) would fill an
        # unread pipe and block the server mid-benchmark.
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self.log = self.data_dir.parent / f"server-{self.port}.log"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command(), env=self.env,
                                         stdout=subprocess.DEVNULL, stderr=log)
        deadline = t0 + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text(errors="replace")[-4000:])
            try:
                httpx.get(f"{self.url}/identity/v3", timeout=0.5)
                return time.perf_counter() - t0
            except httpx.HTTPError:
                time.sleep(0.002)
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)

    def token(self, user: str = "admin", password: str = ADMIN_PASSWORD,
              project: str | None = None) -> str:
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"id": "default"}, "password": password}}},
            "scope": {"project": {"name": project or user, "domain": {"id": "default"}}}}}
        r = httpx.post(f"{self.url}/identity/v3/auth/tokens", json=body, timeout=30)
        r.raise_for_status()
        return r.headers["X-Subject-Token"]

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"X-Auth-Token": token or self.token()}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@contextmanager
def server(extra_args: list[str] | None = None, env: dict[str, str] | None = None,
           data_dir: Path | None = None) -> Iterator[Server]:
    """A fresh SQLite server, stopped and removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="stackling-bench-"))
    srv = Server(data_dir or tmp / "data", free_port(), extra_args, env)
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def timed(fn: Callable[[], Any], n: int, warmup: int = 3) -> list[float]:
    """Seconds per call, `n` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def noop_floor(client: httpx.Client, n: int = 200) -> float:
    """Median ms of the server's authenticated near-no-op GET (token check + one row)."""

    def call() -> None:
        r = client.get("/identity/v3/domains/default")
        r.raise_for_status()

    return median_ms(timed(call, n))


def table(headers: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def report(name: str, text: str) -> None:
    """Print and keep a copy under bench/results/NAME.md."""
    print(text)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"{name}.md").write_text(text + "\n")
