"""Instance actions (os-instance-actions): what was done to a server, by whom, with its
events (the compute manager steps Nova records, e.g. compute__do_build_and_run_instance).
Recorded in the same transaction as the action itself."""

from __future__ import annotations

from typing import Any

from sqlalchemy import inspect, select
from sqlalchemy.orm import Session

from stackling.common import memo
from stackling.common.context import RequestContext
from stackling.common.db import utcnow_precise
from stackling.common.errors import BadRequest, NotFound
from stackling.compute.errors import InstanceNotFound
from stackling.compute.models import Instance, InstanceAction

# action -> the compute manager event Nova records for it
EVENTS = {
    "create": "compute__do_build_and_run_instance",
    "delete": "compute_terminate_instance",
    "stop": "compute_stop_instance",
    "start": "compute_start_instance",
    "reboot": "compute_reboot_instance",
    "attach_interface": "compute_attach_interface",
    "detach_interface": "compute_detach_interface",
}


def record(db: Session, ctx: RequestContext, inst: Instance, action: str, *,
           finished: bool = True, result: str = "Success") -> InstanceAction:
    """Record `action` on `inst`; its event (if Nova has one) finished unless told not."""
    now = utcnow_precise()
    row = InstanceAction(instance_uuid=inst.uuid, action=action, request_id=ctx.request_id,
                         project_id=inst.project_id, user_id=ctx.user_id, start_time=now,
                         updated_at=now, events=[])
    if action in EVENTS and finished:
        row.events = [_event(EVENTS[action], now, now, result, inst.host)]
    db.add(row)
    if action == "create":  # a build in this same transaction (Heat's) finds it here
        memo.table(db).setdefault(_CREATED, {})[inst.uuid] = row
    return row


_CREATED = "compute.create_actions"  # memo: instance uuid -> its `create` action


def create_action(db: Session, instance_uuid: str) -> InstanceAction | None:
    """The server's `create` action: the one this transaction recorded, else read."""
    row = memo.table(db).get(_CREATED, {}).get(instance_uuid)
    if row is not None and inspect(row).persistent:
        return row
    return db.scalars(select(InstanceAction).where(
        InstanceAction.instance_uuid == instance_uuid,
        InstanceAction.action == "create")).first()


def _event(name: str, start: Any, finish: Any, result: str | None, host: str | None,
           traceback: str | None = None) -> dict[str, Any]:
    return {"event": name, "start_time": start.isoformat(),
            "finish_time": finish.isoformat() if finish else None, "result": result,
            "traceback": traceback, "host": host}


def build_finished(db: Session, inst: Instance, started: Any, error: str | None,
                   row: InstanceAction | None = None) -> None:
    """Add the build event to the server's `create` action (`row`, if the caller has it)."""
    if row is None or not inspect(row).persistent:
        row = create_action(db, inst.uuid)
    if row is None:
        return
    now = utcnow_precise()
    row.events = [*row.events, _event(EVENTS["create"], started, now,
                                      "Error" if error else "Success", inst.host, error)]
    row.updated_at = now
    if error:
        row.message = "Error"


def _check_server(db: Session, ctx: RequestContext, server_id: str,
                  allow_deleted: bool) -> None:
    stmt = select(Instance.project_id).where(Instance.uuid == server_id)
    project = db.scalars(stmt).first()
    if project is not None:
        if ctx.is_admin or project == ctx.project_id:
            return
        raise InstanceNotFound(instance_id=server_id)
    if allow_deleted:  # 2.21: actions of deleted servers stay readable
        stmt = select(InstanceAction.id).where(InstanceAction.instance_uuid == server_id)
        if not ctx.is_admin:
            stmt = stmt.where(InstanceAction.project_id == ctx.project_id)
        if db.scalars(stmt.limit(1)).first() is not None:
            return
    raise InstanceNotFound(instance_id=server_id)


def list_actions(db: Session, ctx: RequestContext, server_id: str, *, allow_deleted: bool,
                 limit: int | None = None, marker: str | None = None,
                 changes_since: Any = None, changes_before: Any = None) -> list[InstanceAction]:
    _check_server(db, ctx, server_id, allow_deleted)
    stmt = select(InstanceAction).where(InstanceAction.instance_uuid == server_id)
    if changes_since is not None:
        stmt = stmt.where(InstanceAction.updated_at >= changes_since)
    if changes_before is not None:  # 2.66
        stmt = stmt.where(InstanceAction.updated_at <= changes_before)
    if marker is not None:
        marked = db.scalars(select(InstanceAction.id).where(
            InstanceAction.instance_uuid == server_id,
            InstanceAction.request_id == marker)).first()
        if marked is None:
            raise BadRequest(f"Marker {marker} could not be found.")
        stmt = stmt.where(InstanceAction.id < marked)
    stmt = stmt.order_by(InstanceAction.id.desc())
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(db.scalars(stmt))


def get_action(db: Session, ctx: RequestContext, server_id: str, request_id: str, *,
               allow_deleted: bool) -> InstanceAction:
    _check_server(db, ctx, server_id, allow_deleted)
    row = db.scalars(select(InstanceAction).where(
        InstanceAction.instance_uuid == server_id,
        InstanceAction.request_id == request_id)).first()
    if row is None:
        raise NotFound(f"Action {request_id} on instance {server_id} could not be found")
    return row
