"""Startup: exec of `stackling serve` to the first successful authenticated request, on an
existing data dir, beside `python -c pass` measured in the same run.

    python -m bench.startup [runs]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import BIN, Server, free_port, report, table


def python_floor(runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


# One authenticated read per service: with the progressive start, identity answers first
# and the others once they are loaded (their requests wait, never fail).
EVERY_SERVICE = ("/networking/v2.0/networks", "/compute/v2.1/flavors",
                 "/placement/resource_providers", "/image/v2/images")


def first_authenticated(srv: Server, token: str, timeout: float = 30) -> tuple[float, float]:
    """Seconds from exec to the first 200 on an authenticated GET with a token from before,
    and to a 200 from every service."""
    t0 = time.perf_counter()
    srv.proc = subprocess.Popen(srv.command(), env=srv.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    headers = {"X-Auth-Token": token, "OpenStack-API-Version": "placement 1.10"}
    with httpx.Client(headers=headers, timeout=10) as client:
        while time.perf_counter() - t0 < timeout:
            try:
                if client.get(f"{srv.url}/identity/v3/domains/default").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.001)
        else:
            raise RuntimeError("no answer")
        first = time.perf_counter() - t0
        for path in EVERY_SERVICE:
            r = client.get(f"{srv.url}{path}")
            r.raise_for_status()
        return first, time.perf_counter() - t0


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    # Measure an installed cloud: byte-compiled, as `make install` leaves it (an editable
    # checkout under PYTHONDONTWRITEBYTECODE would otherwise recompile every module).
    subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", "stackling"], check=True,
                   cwd=Path(__file__).resolve().parent.parent)
    tmp = Path(tempfile.mkdtemp(prefix="stackling-startup-"))
    try:
        srv = Server(tmp / "data", free_port())
        first = srv.start()  # migrates and bootstraps: the one-time cost
        token = srv.token()
        srv.stop()
        samples, every = [], []
        for _ in range(runs):
            first_ok, all_ok = first_authenticated(srv, token)
            samples.append(first_ok)
            every.append(all_ok)
            srv.stop()
        floor = python_floor(runs)
        import_probe = subprocess.run(
            [str(BIN / "python"), "-c", "import time; t=time.perf_counter(); "
             "import stackling.app, uvicorn; print(time.perf_counter()-t)"],
            capture_output=True, text=True, check=True)
        med = statistics.median(samples)
        rows = [
            ["first start (migrate + bootstrap)", first * 1000, first / floor],
            ["start on existing data dir → first authenticated 200 (median)", med * 1000,
             med / floor],
            ["  … → a 200 from every service (network, compute, placement, image)",
             statistics.median(every) * 1000, statistics.median(every) / floor],
            ["  of which importing stackling + uvicorn", float(import_probe.stdout) * 1000, ""],
            ["python -c pass (floor)", floor * 1000, 1.0],
        ]
        report("startup", f"## startup ({runs} runs, SQLite)\n\n"
               + table(["measure", "ms", "× python -c pass"], rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
