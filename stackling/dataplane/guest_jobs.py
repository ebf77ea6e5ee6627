"""The part of a pass's guest work that waits on the kernel rather than the CPU, run by a
few threads while the pass goes on with the next guest's serial netlink part (namespace,
NICs).

An nftables commit that adds chains waits out an RCU grace period (~13 ms each, whatever the
ruleset's size), and a guest's launch forks; one after another they were most of a pass
from nothing with 100 guests. A job is one guest's, in order (its filter before its boot),
submitted as soon as its NICs are plugged, so the first guests boot while the last are
still being plugged; a failed job is that guest's failure only (the next pass retries it).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

WORKERS = 16  # the waits overlap; more threads gain nothing on 2 cores


class Jobs:
    def __init__(self, attempt: Callable[..., Any]) -> None:
        """`attempt(key, job)` runs a job and records its failure (the reconciler's try)."""
        self.attempt = attempt
        self.pool: ThreadPoolExecutor | None = None
        self.futures: list[Future] = []

    def add(self, key: str, job: Callable[[], None]) -> None:
        if self.pool is None:
            self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="guest-job")
        self.futures.append(self.pool.submit(self.attempt, key, job))

    def wait(self) -> None:
        """Every job submitted so far has finished (the pass's end waits for them)."""
        for future in self.futures:
            future.result()
        self.futures = []
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
