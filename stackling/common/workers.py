"""Background work claimed from the database (server builds, stack actions): the claim
and the threads that run it, shared by compute's build workers and Heat's engine workers.

The work itself is rows in the database, so any process may do it and a dead process's
work is picked up by another: a worker claims one item in a write transaction (row locks,
`SKIP LOCKED` or a lease: the caller's rules), runs it, and looks again. Idle, it sleeps
until woken (`wake()` after a commit that queued work here) or until the poll interval
passes (work queued by another process, or left by a crashed one).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from stackling.common.db import is_deadlock, retry_on_conflict

LOG = logging.getLogger(__name__)
T = TypeVar("T")


def claim_next(database: Any, peek: Callable[[Session], bool] | None,
               claim: Callable[[Session], T | None]) -> T | None:
    """`claim(db)` in a write transaction (retried on a deadlock), after `peek(db)` found
    work in a read transaction: an idle poll (or a second thread woken while the first
    works) must not queue for SQLite's write lock, delaying the running work, only to find
    nothing. None when there is nothing to claim."""
    if peek is not None:
        with database.transaction(write=False) as db:
            if not peek(db):
                return None

    def attempt() -> T | None:
        with database.transaction() as db:
            return claim(db)

    return retry_on_conflict(attempt, retry_if=is_deadlock)


class WorkerPool:
    """`threads` threads in this process, each calling `work_once()` until it reports no
    work (False), then sleeping until `wake()` or `poll` seconds. An exception is logged
    and counts as no work (e.g. the database briefly unreachable). `before` runs once in
    each thread first (waiting for what the work needs)."""

    def __init__(self, name: str, threads: int, work_once: Callable[[], bool], *,
                 poll: float, before: Callable[[], None] | None = None) -> None:
        self.name = name
        self.count = max(1, threads)
        self.poll = poll
        self.stopping = threading.Event()
        self._work_once = work_once
        self._before = before
        self._cond = threading.Condition()
        self._wakeups = 0
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for i in range(self.count):
            t = threading.Thread(target=self._loop, name=f"{self.name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def wake(self) -> None:
        with self._cond:
            self._wakeups += 1
            self._cond.notify()

    def stop(self) -> None:
        self.stopping.set()
        with self._cond:
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=10)
        self._threads.clear()

    def _loop(self) -> None:
        if self._before is not None:
            self._before()
        while not self.stopping.is_set():
            try:
                worked = self._work_once()
            except Exception:  # noqa: BLE001 - logged; the next poll tries again
                LOG.exception("%s: an iteration failed", self.name)
                worked = False
            if worked:
                continue  # there may be more: keep going until nothing is left
            with self._cond:
                if not self._wakeups and not self.stopping.is_set():
                    self._cond.wait(self.poll)
                self._wakeups = max(0, self._wakeups - 1)
