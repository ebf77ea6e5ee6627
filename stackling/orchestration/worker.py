"""Stack-action workers: claim a pending action from the database and run its steps.

A claim is a compare-and-swap on `heat_stack_action.owner` (`UPDATE ... WHERE owner IS
<the owner we read>`), so exactly one process wins on SQLite, PostgreSQL and MariaDB.
Every step renews the lease in its own transaction (and commits only if the claim still
holds). An action is claimable when nobody owns it, when its lease ran out (its owner
died or hangs), or at once when its owner is a dead process on this host (a restart).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from sqlalchemy import func, select, update

from stackling.common.db import is_deadlock, retry_on_conflict, utcnow
from stackling.common.workers import WorkerPool, claim_next
from stackling.observability import logs, metrics
from stackling.orchestration import engine
from stackling.orchestration.models import Stack, StackAction

LOG = logging.getLogger(__name__)
HOST = socket.gethostname()
OWNER = f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
LEASE = dt.timedelta(seconds=30)
POLL_SECONDS = 1.0
# Seconds of work per transaction. SQLite holds its write lock meanwhile (other writers
# wait that long at most); each further step re-reads the stack and its resources, so a
# small stack (a dozen resources, ~0.1 s) should fit in one.
STEP_BUDGET = 0.2


def _owner_dead(owner: str | None) -> bool:
    if owner is None:
        return True
    try:
        host, pid, nonce = owner.rsplit(":", 2)
    except ValueError:
        return False
    if host != HOST:
        return False
    if owner == OWNER:
        return False
    if int(pid) == os.getpid():
        return True  # an earlier life of this pid
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError):
        return False
    return False


_PENDING = select(StackAction.stack_id, StackAction.owner, StackAction.lease_until).order_by(
    StackAction.started_at).limit(50)


def _claimable(owner: str | None, lease: dt.datetime | None, now: dt.datetime) -> bool:
    if owner == OWNER:
        return False  # one of this process's threads is on it
    return owner is None or lease is None or lease <= now or _owner_dead(owner)


class Stepped:
    """What a step did: `finished` (or lost), `waiting` (a resource is being polled) and,
    when the action ended, the stack's (action, status) for the log and the metric."""

    def __init__(self, finished: bool, waiting: bool,
                 outcome: tuple[str, str] | None = None) -> None:
        self.finished, self.waiting, self.outcome = finished, waiting, outcome


class Claimed(Stepped):
    """A claimed stack action after its first step (run in the claim's transaction)."""

    def __init__(self, stack_id: str, request_id: str | None, first: Stepped) -> None:
        super().__init__(first.finished, first.waiting, first.outcome)
        self.stack_id, self.request_id = stack_id, request_id


def _step(db: Any, runtime: Any, stack_id: str) -> Stepped:
    """One step in a savepoint. An error (a bug, a failing call) undoes the step and
    fails the action in this same transaction, so a claim never runs a raising step again
    (it would fail alike, for ever); only a lost lock race or connection propagates, to
    retry the whole transaction."""
    try:
        with db.begin_nested():
            finished, waiting = engine.advance(db, runtime, stack_id, STEP_BUDGET)
    except Exception as err:  # noqa: BLE001 - logged, and the stack's reason says it
        if engine.transient(err):
            raise
        LOG.exception("stack action %s: a step failed", stack_id)
        finished, waiting = engine.fail_action(db, runtime, stack_id, err), False
    stack = db.get(Stack, stack_id) if finished else None  # in the session already
    if stack is None or stack.status == "IN_PROGRESS":
        return Stepped(finished, waiting)
    return Stepped(finished, waiting, (stack.action, stack.status))


def step_in_request(db: Any, runtime: Any, stack_id: str) -> Stepped | None:
    """Run a new action's first step in the request's own transaction, so that a small
    stack is COMPLETE when the API answers: clients look once at once, then every few
    seconds (openstacksdk and heatclient's `--wait` poll every 5 s), so a stack finished
    a moment after the answer would cost them 5 s. Same step, same transaction rules as a
    worker's first step; an action another process owns, or any error, is left to the
    workers (the savepoint undoes the attempt). None when not run."""
    action = db.get(StackAction, stack_id)
    if action is None or action.owner is not None or not services_ready(runtime):
        return None  # (the workers run it once the other services have started)
    try:
        with db.begin_nested():
            return _step(db, runtime, stack_id)
    except Exception:  # noqa: BLE001 - logged; a worker runs the action from its start
        LOG.exception("stack action %s: first step in the request failed", stack_id)
        return None


def services_ready(runtime: Any) -> bool:
    """Every other service loaded and past its start hook (compute has registered its
    hosts): a resource calls them in process, not through their requests, which wait."""
    return runtime.loaded.is_set() and all(
        ready.is_set() for name, ready in list(runtime.ready.items()) if name != "orchestration")


def claim_one(runtime: Any) -> Claimed | None:
    """Claim one claimable stack action and run its first step in the same transaction
    (a failed step rolls the claim back with it); None when there is nothing to claim."""
    def peek(db: Any) -> bool:
        now = utcnow()
        return any(_claimable(owner, lease, now) for _, owner, lease in db.execute(_PENDING))

    def claim(db: Any) -> Claimed | None:
        now = utcnow()
        for stack_id, owner, lease in db.execute(_PENDING).all():
            if not _claimable(owner, lease, now):
                continue
            cond = StackAction.owner.is_(None) if owner is None else StackAction.owner == owner
            won = db.execute(update(StackAction).where(
                StackAction.stack_id == stack_id, cond).values(
                owner=OWNER, lease_until=now + LEASE).execution_options(
                synchronize_session=False))
            if won.rowcount == 1:
                action = db.get(StackAction, stack_id)
                request_id = (action.work or {}).get("request_id") if action else None
                with logs.bound(request_id):
                    return Claimed(stack_id, request_id, _step(db, runtime, stack_id))
        return None

    return claim_next(runtime.db, peek, claim)


def run_step(runtime: Any, stack_id: str) -> Stepped:
    """One more step of the claimed action."""

    def attempt() -> Stepped:
        with runtime.db.transaction() as db:
            renewed = db.execute(update(StackAction).where(
                StackAction.stack_id == stack_id, StackAction.owner == OWNER).values(
                lease_until=utcnow() + LEASE).execution_options(synchronize_session=False))
            if renewed.rowcount != 1:
                return Stepped(True, False)  # finished, or another process took it over
            return _step(db, runtime, stack_id)

    return retry_on_conflict(attempt, retry_if=is_deadlock)


def pending_count(runtime: Any) -> int:
    """Stack actions queued or running (the /metrics pending-work gauge)."""
    with runtime.db.transaction(write=False) as db:
        return db.scalar(select(func.count()).select_from(StackAction)) or 0


def observe_finished(stack_id: str, stepped: Stepped) -> None:
    """After an action ended (committed): one log line and the stack-actions metric."""
    if stepped.outcome is None:
        return  # another process finished or took it over
    action, status = stepped.outcome
    LOG.info("stack %s: %s_%s", stack_id, action, status)
    metrics.observe_stack_action(action, status.lower())


def run_claimed(runtime: Any, claimed: Claimed, stopping: threading.Event) -> None:
    """The rest of a claimed action, step by step, after its first step."""
    with logs.bound(claimed.request_id):
        if claimed.finished:
            observe_finished(claimed.stack_id, claimed)
        else:
            _run_claimed(runtime, claimed.stack_id, stopping, claimed.waiting)


def _run_claimed(runtime: Any, stack_id: str, stopping: threading.Event,
                 waiting: bool) -> None:
    while not stopping.is_set():
        if waiting:
            time.sleep(0.05)
        try:
            stepped = run_step(runtime, stack_id)
        except Exception:  # noqa: BLE001 - logged; the lease lapses and it is retried
            LOG.exception("stack action step of %s failed", stack_id)
            _release(runtime, stack_id)
            return
        if stepped.finished:
            observe_finished(stack_id, stepped)
            return
        waiting = stepped.waiting
    _release(runtime, stack_id)


def _release(runtime: Any, stack_id: str) -> None:
    """Give the claim back (stopping, or a bug): another worker may pick it up."""
    try:
        with runtime.db.transaction() as db:
            db.execute(update(StackAction).where(
                StackAction.stack_id == stack_id, StackAction.owner == OWNER).values(
                owner=None, lease_until=None).execution_options(synchronize_session=False))
    except Exception:  # noqa: BLE001
        LOG.exception("releasing stack action %s failed", stack_id)


class StackWorker:
    """Threads that run stack actions; `wake()` after a commit that queued one."""

    def __init__(self, runtime: Any, threads: int = 2) -> None:
        self.runtime = runtime
        self._pool = WorkerPool("heat-engine", threads, self._work_once, poll=POLL_SECONDS,
                                before=self._await_services)
        self.count = self._pool.count

    def start(self) -> None:
        self._pool.start()

    def wake(self) -> None:
        self._pool.wake()

    def stop(self) -> None:
        self._pool.stop()

    def _await_services(self) -> None:
        # Resources call the other services in process: wait for them to be loaded and
        # past their start hooks (compute registers its hosts), as their requests would.
        self.runtime.loaded.wait(timeout=60)
        for name, ready in list(self.runtime.ready.items()):
            if name != "orchestration":
                ready.wait(timeout=60)

    def _work_once(self) -> bool:
        # A failed claim (the database briefly unreachable, or the first step failed: claim
        # and step rolled back, retried later) is logged by the pool.
        claimed = claim_one(self.runtime)
        if claimed is None:
            return False
        run_claimed(self.runtime, claimed, self._pool.stopping)
        return True
