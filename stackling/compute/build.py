"""The build workflow: a server accepted by the API (a `pending` instance row) is built
by a background worker in any process that shares the database.

One build is one transaction: claim the row (`SELECT ... FOR UPDATE SKIP LOCKED` on
PostgreSQL/MariaDB; on SQLite the write transaction is already exclusive and a guarded
`UPDATE ... WHERE build_state='pending'` claims), schedule and claim in placement,
create and bind the ports, and mark the server ACTIVE. A failure after the API
answered rolls the build's savepoint back and records ERROR with a fault. A process
killed mid-build rolls the whole transaction back: the row is still pending, nothing
is leaked, and the next worker (this process after restart, or another) builds it.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from stackling.common.db import utcnow_precise
from stackling.common.errors import ApiError
from stackling.common.workers import WorkerPool, claim_next
from stackling.compute import actions, block_devices, network_api, scheduler
from stackling.compute.errors import NoValidHost
from stackling.compute.models import Instance, InstanceAction
from stackling.observability import logs, metrics

LOG = logging.getLogger(__name__)
POLL_SECONDS = 1.0  # how soon another process's (or a crashed one's) work is noticed
MAX_ATTEMPTS = 3  # hosts tried per build (Nova's max_attempts); also unexpected errors
NETWORK_FAULT = "Build of instance %s aborted: Failed to allocate the network(s), not rescheduling."


_ANY_PENDING = select(Instance.id).where(Instance.build_state == "pending").limit(1)
# A boot from volume commits its new volumes (`volumes`: Cinder makes them after that
# commit), then is claimed again once they are made (or the wait has run out).
VOLUMES = "volumes"
_WAITING = select(Instance).where(Instance.build_state == VOLUMES).order_by(Instance.id)
IN_REQUEST_WAIT = 60.0  # how long build_now's request waits for its volumes; then workers


# SQLite: the next pending instance with its `create` action (no row locks there: one
# query for both); the others lock the instance row alone, then read the action.
_NEXT_WITH_ACTION = select(Instance, InstanceAction).outerjoin(
    InstanceAction, (InstanceAction.instance_uuid == Instance.uuid)
    & (InstanceAction.action == "create")).where(
    Instance.build_state == "pending").order_by(Instance.id).limit(1)


def _claim(db: Session, uuid: str | None = None, state: str = "pending"
           ) -> tuple[Instance, InstanceAction | None] | None:
    """The claimed instance (the next pending one, or `uuid` if still pending) and its
    `create` action (None without one); `state` VOLUMES: one whose volumes are made."""
    stmt = select(Instance).where(Instance.build_state == state).order_by(
        Instance.id).limit(1)
    following = _NEXT_WITH_ACTION
    if state != "pending":
        following = select(Instance, InstanceAction).outerjoin(
            InstanceAction, (InstanceAction.instance_uuid == Instance.uuid)
            & (InstanceAction.action == "create")).where(
            Instance.build_state == state).order_by(Instance.id).limit(1)
    if uuid is not None:
        stmt, following = stmt.where(Instance.uuid == uuid), following.where(Instance.uuid == uuid)
    if db.get_bind().dialect.name == "sqlite":
        row = db.execute(following).first()
        if row is None:
            return None
        inst, action = row
        claimed = db.execute(update(Instance).where(
            Instance.id == inst.id, Instance.build_state == state).values(
            build_attempts=Instance.build_attempts + 1).execution_options(
            synchronize_session=False))
        return (inst, action) if claimed.rowcount == 1 else None
    # Locked and read fresh: a delete that held the row first has removed it by now.
    inst = db.scalars(stmt.with_for_update(skip_locked=True).execution_options(
        populate_existing=True)).first()
    return None if inst is None else (inst, actions.create_action(db, inst.uuid))


def fault(code: int, message: str, details: str = "") -> dict[str, Any]:
    return {"code": code, "message": message, "details": details,
            "created": utcnow_precise().strftime("%Y-%m-%dT%H:%M:%SZ")}


def explain(decision: Any) -> str:
    """The scheduler's decision as the fault's `details` (shown to admins, where Nova puts
    the traceback): each candidate host and what excluded it. "No valid host was found"
    then says why, which upstream only tells in scheduler logs."""
    if decision is None:
        return ""
    hosts = decision.as_dict().get("hosts", {}) if hasattr(decision, "as_dict") else {}
    lines = ["Scheduler decision (host: why it was not chosen):"]
    lines += [f"{host}: {why or 'a candidate, but the claim failed'}"
              for host, why in sorted(hosts.items())]
    return "\n".join(lines) if hosts else ""


def set_error(inst: Instance, flt: dict[str, Any]) -> None:
    inst.vm_state, inst.task_state, inst.power_state = "error", None, 0
    inst.build_state = "done"
    inst.host = inst.node = None
    inst.network_info = []
    inst.fault = flt
    inst.updated_at = utcnow_precise()


def _waited(inst: Instance) -> int:
    started = inst.updated_at or inst.created_at
    return max(0, int((utcnow_precise() - started).total_seconds()))


def volumes_due(db: Session, inst: Instance) -> bool:
    """A server waiting for its volumes may go on: they are made, or the wait is over."""
    return _waited(inst) >= block_devices.VOLUME_WAIT_SECONDS or \
        block_devices.volumes_ready(db, inst)


def build_instance(db: Session, inst: Instance, action: InstanceAction | None = None) -> None:
    """Schedule, claim, allocate networks, go ACTIVE; or ERROR with a fault.

    A server with volumes to make (image, snapshot or blank sources) first asks Cinder
    for them and commits (build_state VOLUMES, task_state block_device_mapping): the
    next claim, once they are available, builds it and attaches them.

    A port that cannot bind on the chosen host (Neutron's `binding_failed`) reschedules
    to another host, as Nova's compute manager does, up to MAX_ATTEMPTS hosts.
    """
    started = utcnow_precise()
    failed_on: list[str] = []
    try:
        if inst.build_state == "pending":
            with db.begin_nested():  # all the volumes or none
                if block_devices.create_volumes(db, inst):
                    inst.build_state, inst.task_state = VOLUMES, "block_device_mapping"
                    inst.updated_at = utcnow_precise()
                    return
        while True:
            try:
                _build_on_a_host(db, inst, frozenset(failed_on))
                break
            except network_api.PortBindingFailed as err:
                failed_on.append(err.kwargs["host"])
                if len(failed_on) >= MAX_ATTEMPTS:
                    raise NoValidHost(reason=(
                        f"Exceeded maximum number of retries. Exceeded max scheduling "
                        f"attempts {MAX_ATTEMPTS} for instance {inst.uuid}. Last exception: "
                        f"{err.text}")) from None
    except NoValidHost as err:
        scheduler.record_failure(db, inst.uuid, err)
        set_error(inst, fault(500, err.text, explain(getattr(err, "decision", None))))
    except _NetworkFailed as err:
        set_error(inst, fault(500, NETWORK_FAULT % inst.uuid, str(err)))
    except ApiError as err:
        set_error(inst, fault(err.status, f"Build of instance {inst.uuid} aborted: {err.text}"))
    actions.build_finished(db, inst, started, inst.fault["message"] if inst.fault else None,
                           action)


def _build_on_a_host(db: Session, inst: Instance, excluded: frozenset[str]) -> None:
    """One attempt, in a savepoint: nothing of it stays when it raises."""
    with db.begin_nested():
        lookups = network_api.BuildLookups()  # ports and networks, read once per attempt
        dest = scheduler.select_destination(db, inst, excluded, lookups)
        try:
            network_info = network_api.allocate_for_instance(db, inst, dest.host, dest.zone,
                                                             lookups)
        except network_api.PortBindingFailed:
            raise
        except ApiError as err:
            raise _NetworkFailed(str(err)) from err
        # Set with the rest (one UPDATE): nothing the allocation reads needs them.
        inst.host, inst.node, inst.availability_zone = dest.host, dest.node, dest.zone
        inst.network_info = network_info
        block_devices.attach_at_build(db, inst, _waited(inst))  # the volumes on this host
        now = utcnow_precise()
        inst.vm_state, inst.task_state, inst.power_state = "active", None, 1
        inst.launched_at = inst.updated_at = now
        inst.build_state = "done"
        db.flush()


class _NetworkFailed(Exception):
    pass


def build_next(runtime: Any, uuid: str | None = None) -> bool:
    """Build one pending server (the next one, or `uuid`) if there is one; False when
    there was nothing to do."""
    claimed: list[str] = []

    def build(db: Session) -> tuple[str, str, str | None, str | None] | None:
        claimed.clear()
        got = _claim(db, uuid)
        if got is None:
            due = [i.uuid for i in db.scalars(_WAITING.where(Instance.uuid == uuid)
                                              if uuid else _WAITING.limit(20))
                   if volumes_due(db, i)]
            got = _claim(db, due[0], VOLUMES) if due else None
        if got is None:
            return None
        inst, action = got
        claimed.append(inst.uuid)
        request_id = action.request_id if action is not None else None  # tags the logs
        with logs.bound(request_id):
            build_instance(db, inst, action)
        return inst.uuid, inst.vm_state, inst.host, request_id

    # A server just accepted is built at once; the workers peek before they claim.
    peek = None if uuid is not None else (lambda db: db.scalar(_ANY_PENDING) is not None or any(
        volumes_due(db, i) for i in db.scalars(_WAITING.limit(20))))
    try:
        outcome = claim_next(runtime.db, peek, build)
    except Exception:  # noqa: BLE001 - a bug must not kill the worker or loop forever
        LOG.exception("build of %s failed unexpectedly", claimed)
        if claimed:
            _count_failure(runtime, claimed[0])
        return bool(claimed)
    if outcome is None:
        return False
    if outcome[1] != "building":
        _report(*outcome)
    else:  # its volumes are being made: Cinder works after our commit
        from stackling.block_storage import interface as cinder

        cinder.wake(runtime)
        if uuid is not None:
            _await_volumes(runtime, uuid)
            return build_next(runtime, uuid)
    return True


def _await_volumes(runtime: Any, uuid: str) -> None:
    """Wait (bounded) until the server's volumes are made, polling as Nova's compute
    manager does (_await_block_device_map_created), but more often."""
    import time

    deadline = time.monotonic() + IN_REQUEST_WAIT
    while time.monotonic() < deadline:
        with runtime.db.transaction(write=False) as db:
            inst = db.scalars(select(Instance).where(Instance.uuid == uuid)).first()
            if inst is None or inst.build_state != VOLUMES or volumes_due(db, inst):
                return
        time.sleep(0.1)


def pending_count(runtime: Any) -> int:
    """Servers accepted but not yet built (the /metrics pending-work gauge)."""
    with runtime.db.transaction(write=False) as db:
        return db.scalar(select(func.count()).select_from(Instance).where(
            Instance.build_state == "pending")) or 0


def _report(uuid: str, vm_state: str, host: str | None, request_id: str | None) -> None:
    """After the build committed: one log line (with the requester's id) and the metric."""
    with logs.bound(request_id):
        LOG.info("server %s built: %s%s", uuid, vm_state, f" on {host}" if host else "")
    metrics.observe_build(vm_state)


def _count_failure(runtime: Any, uuid: str) -> None:
    with runtime.db.transaction() as db:
        inst = db.scalars(select(Instance).where(Instance.uuid == uuid)).first()
        if inst is None or inst.build_state != "pending":
            return
        inst.build_attempts += 1
        if inst.build_attempts >= MAX_ATTEMPTS:
            set_error(inst, fault(500, f"Build of instance {uuid} aborted: unexpected error"))


class BuildWorker:
    """Threads in this process that build pending servers; `wake()` after a commit starts
    one of them (only one: on SQLite a second would just queue for the write lock)."""

    def __init__(self, runtime: Any, threads: int) -> None:
        self.runtime = runtime
        self._pool = WorkerPool("compute-build", threads, lambda: build_next(runtime),
                                poll=POLL_SECONDS)
        self.count = self._pool.count

    def start(self) -> None:
        self._pool.start()

    def build_now(self, uuid: str) -> None:
        """Build server `uuid`, just accepted and committed, in the calling request's
        thread before it answers: the 202 then finds the build done, and a client's first
        look (`server create --wait` polls every 5 s) sees ACTIVE. The same crash-safe claim
        as a worker's: killed meanwhile, the server is still pending for the workers; a
        worker that claimed it first builds it instead. The workers are woken either way
        (for a build that failed unexpectedly, or other pending ones)."""
        try:
            build_next(self.runtime, uuid)
        finally:
            self.wake()

    def wake(self) -> None:
        self._pool.wake()

    def stop(self) -> None:
        self._pool.stop()
