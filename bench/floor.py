"""The server's own floor: a hello-world Starlette app under the same uvicorn as
`stackling serve` (same HTTP protocol class, same event loop), and its median GET.

    python -m bench.floor [samples]                 # ms per GET, h11/asyncio and ours
    python -m bench.floor --serve PORT HTTP LOOP    # (what the benchmarks start)

A request to stackling costs this much before any of stackling's own code runs: the
ratios of bench/network.py are against it, measured in the same run.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import httpx

from bench.common import free_port, median_ms, table, timed

H11 = ("stackling.common.server:TimedH11Protocol", "asyncio")


def app() -> Any:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def hello(request: Any) -> JSONResponse:
        return JSONResponse({"hello": "world"})

    return Starlette(routes=[Route("/", hello)])


def serve(port: int, http: str, loop: str) -> None:
    import uvicorn

    uvicorn.run(app(), host="127.0.0.1", port=port, http=http, loop=loop,
                access_log=False, log_level="warning")


class Hello:
    """The hello-world app in a process of its own (as stackling serve is)."""

    def __init__(self, http: str, loop: str, tree: str | None = None) -> None:
        """`tree`: a checkout whose stackling (and bench) to import first."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        run = (f"import sys; sys.path.insert(0, {tree!r}); " if tree else "") + \
            "from bench.floor import serve; serve(int(sys.argv[1]), sys.argv[2], sys.argv[3])"
        self.proc = subprocess.Popen([sys.executable, "-c", "import sys; " + run,
                                      str(self.port), http, loop], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url, timeout=0.5)
                return
            except httpx.HTTPError:
                time.sleep(0.01)
        raise RuntimeError("the hello-world server did not start")

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return
    from stackling.common.server import HTTP, LOOP

    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rows = []
    for http, loop in (H11, (HTTP, LOOP)):
        hello = Hello(http, loop)
        try:
            with hello.client() as c:
                ms = median_ms(timed(lambda c=c: c.get("/").raise_for_status(), samples))
        finally:
            hello.stop()
        rows.append([http.rsplit(":", 1)[-1], loop, ms])
    print(table(["protocol", "loop", "hello-world GET ms"], rows))


if __name__ == "__main__":
    main()
