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


def first_authenticated(srv: Server, token: str, timeout: float = 30) -> float:
    """Seconds from exec to the first 200 on an authenticated GET with a token from before."""
    t0 = time.perf_counter()
    srv.proc = subprocess.Popen(srv.command(), env=srv.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    with httpx.Client(headers={"X-Auth-Token": token}, timeout=1) as client:
        while time.perf_counter() - t0 < timeout:
            try:
                if client.get(f"{srv.url}/identity/v3/domains/default").status_code == 200:
                    return time.perf_counter() - t0
            except httpx.HTTPError:
                pass
            time.sleep(0.001)
    raise RuntimeError("no answer")


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
        samples = []
        for _ in range(runs):
            samples.append(first_authenticated(srv, token))
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
            ["  of which importing stackling + uvicorn", float(import_probe.stdout) * 1000, ""],
            ["python -c pass (floor)", floor * 1000, 1.0],
        ]
        report("startup", f"## startup ({runs} runs, SQLite)\n\n"
               + table(["measure", "ms", "× python -c pass"], rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
