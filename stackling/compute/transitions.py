"""Transitional states a client can see: a reboot or a rebuild keeps its task state
(`rebooting`, `rebooting_hard`, `rebuilding`: status REBOOT, HARD_REBOOT, REBUILD) for at
least `compute.action_min_duration` seconds, as upstream passes through them while the
hypervisor works.

The request sets the task state and records the end state in `compute_pending_task`, then
answers at once (no request thread sleeps). A worker thread in every process completes the
rows that are due: it deletes the row (the delete that removes it owns it, so two
processes never both complete one) and, under the instance's row lock, clears the task
state and sets the end state if the server is still in that task. A process that dies
leaves its rows to the others' workers (they look every second). With a minimum of 0 the
action completes inside its request, as every action did before.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import String, delete, event, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from stackling.common.db import Base, UTCDateTime, utcnow_precise

LOG = logging.getLogger(__name__)
POLL_SECONDS = 1.0  # how soon another process's (or a dead one's) due rows are completed
# What else completes with a task state: (session, instance uuid, the instance or None if
# it is gone), registered by the action that uses the state (snapshots: their images).
ON_COMPLETE: dict[str, Callable[[Session, str, Any], None]] = {}


class PendingTask(Base):
    """A server in a transitional task state, and what it becomes once `finish_after`."""

    __tablename__ = "compute_pending_task"
    instance_uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    task_state: Mapped[str] = mapped_column(String(32))
    vm_state: Mapped[str] = mapped_column(String(32))
    power_state: Mapped[int] = mapped_column()
    finish_after: Mapped[dt.datetime] = mapped_column(UTCDateTime, index=True)


def min_duration(db: Session) -> float:
    runtime = db.info.get("stackling.runtime")
    return float(runtime.settings.compute.action_min_duration) if runtime is not None else 0.0


def begin(db: Session, inst: Any, task_state: str, vm_state: str, power_state: int,
          seconds: float | None = None) -> bool:
    """Put `inst` in `task_state` until the minimum duration (or `seconds`) has passed,
    after which it becomes `vm_state`/`power_state`; `finish` may end it sooner. False
    (nothing done) when that is 0: the caller completes the action itself."""
    seconds = min_duration(db) if seconds is None else seconds
    if seconds <= 0:
        return False
    now = utcnow_precise()
    inst.task_state, inst.updated_at = task_state, now
    db.merge(PendingTask(instance_uuid=inst.uuid, task_state=task_state, vm_state=vm_state,
                         power_state=power_state,
                         finish_after=now + dt.timedelta(seconds=seconds)))
    worker = _worker_of(db)
    if worker is not None:  # this process's worker learns of it once it is committed
        event.listen(db, "after_commit", lambda _s: worker.wake(), once=True)
    return True


def _worker_of(db: Session) -> TransitionWorker | None:
    runtime = db.info.get("stackling.runtime")
    return runtime.state.get("compute.transitions") if runtime is not None else None


def complete_due(db: Session, now: dt.datetime) -> int:
    """Complete every due row this transaction wins; how many it completed."""
    from stackling.compute.models import Instance

    done = 0
    for row in db.scalars(select(PendingTask).where(PendingTask.finish_after <= now)
                          .order_by(PendingTask.finish_after).limit(100)).all():
        owned = db.execute(delete(PendingTask).where(
            PendingTask.instance_uuid == row.instance_uuid,
            PendingTask.finish_after == row.finish_after)).rowcount
        if not owned:
            continue  # another process completed it (or the action was asked again)
        inst = db.scalars(select(Instance).where(Instance.uuid == row.instance_uuid)
                          .with_for_update().execution_options(populate_existing=True)).first()
        if inst is not None and inst.task_state == row.task_state:
            inst.task_state = None
            inst.vm_state, inst.power_state = row.vm_state, row.power_state
            inst.updated_at = utcnow_precise()
        hook = ON_COMPLETE.get(row.task_state)
        if hook is not None:
            hook(db, row.instance_uuid, inst)
        done += 1
    db.flush()
    return done


def finish(db: Session, inst: Any, task_state: str) -> bool:
    """End `inst`'s transition now (what waited for it is done) if it is still in
    `task_state`: its end state set, its row gone (the delete owns it, as complete_due's).
    False when it is in another task or its row was completed already."""
    if inst.task_state != task_state:
        return False
    row = db.get(PendingTask, inst.uuid)
    if row is None or row.task_state != task_state or not db.execute(delete(PendingTask).where(
            PendingTask.instance_uuid == inst.uuid,
            PendingTask.finish_after == row.finish_after)).rowcount:
        return False
    inst.task_state = None
    inst.vm_state, inst.power_state = row.vm_state, row.power_state
    inst.updated_at = utcnow_precise()
    db.flush()
    return True


def next_due(db: Session) -> dt.datetime | None:
    return db.scalar(select(func.min(PendingTask.finish_after)))


class TransitionWorker:
    """One thread per process: completes due rows, then sleeps until the next one is due
    (at most POLL_SECONDS, to notice other processes' rows) or until woken."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self._cond = threading.Condition()
        self._woken = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="compute-transitions",
                                        daemon=True)
        self._thread.start()

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _once(self) -> float:
        """Complete what is due; seconds until the next due row (capped at the poll). The
        look is a read (on SQLite a write transaction would take the write lock each
        second); only due rows open a writing transaction."""
        while True:
            with self.runtime.db.transaction(write=False) as db:
                due = next_due(db)
            now = utcnow_precise()
            if due is None:
                return POLL_SECONDS
            if due > now:
                return min(POLL_SECONDS, (due - now).total_seconds())
            with self.runtime.db.transaction() as db:
                if not complete_due(db, now):
                    return POLL_SECONDS  # all taken by another process meanwhile

    def _loop(self) -> None:
        while True:
            try:
                wait = self._once()
            except Exception:  # noqa: BLE001 - logged; the next round tries again
                LOG.exception("compute-transitions: a round failed")
                wait = POLL_SECONDS
            with self._cond:
                if self._stopping:
                    return
                if not self._woken and wait > 0:
                    self._cond.wait(wait)
                self._woken = False
                if self._stopping:
                    return
