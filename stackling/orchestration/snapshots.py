"""Stack snapshots, as upstream's: a snapshot is the stack's abandon data (template,
environment, files and every resource's id, state and data) taken by a SNAPSHOT action
(each resource goes SNAPSHOT_COMPLETE); a restore is a RESTORE action that brings the
stack back to the snapshot's definition (an update to it: resources changed since are
updated back, removed ones made again, added ones deleted). Deleted with their stack."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.orchestration import engine, limits
from stackling.orchestration import stacks as logic
from stackling.orchestration.errors import BadRequest, EntityNotFound, NotSupported
from stackling.orchestration.models import Snapshot, Stack


def view(snapshot: Snapshot) -> dict[str, Any]:
    """Upstream's `format_snapshot`."""
    from stackling.orchestration.views import ts

    return {"id": snapshot.id, "name": snapshot.name, "action": snapshot.action,
            "status": snapshot.status, "status_reason": snapshot.status_reason,
            "data": snapshot.data, "creation_time": ts(snapshot.created_at)}


def get(db: Session, stack: Stack, snapshot_id: str) -> Snapshot:
    snapshot = db.get(Snapshot, snapshot_id)
    if snapshot is None or snapshot.stack_id != stack.id:
        raise EntityNotFound(entity="Snapshot", name=snapshot_id)
    return snapshot


def list_for(db: Session, stack: Stack) -> list[Snapshot]:
    return list(db.scalars(select(Snapshot).where(Snapshot.stack_id == stack.id)
                           .order_by(Snapshot.created_at, Snapshot.id)))


def create(db: Session, ctx: RequestContext, stack: Stack, body: Any) -> Snapshot:
    """Starts the SNAPSHOT action; the snapshot is IN_PROGRESS until it ends."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise BadRequest("name must be a string")
    logic.lock_stack(db, stack)
    logic._check_idle(db, stack)
    if not ctx.is_admin and limits.MAX_SNAPSHOTS_PER_STACK >= 0:
        count = db.scalar(select(func.count()).select_from(Snapshot).where(
            Snapshot.stack_id == stack.id)) or 0
        if count >= limits.MAX_SNAPSHOTS_PER_STACK:
            raise limits.RequestLimitExceeded(
                message=f"You have reached the maximum snapshots per stack, "
                        f"{limits.MAX_SNAPSHOTS_PER_STACK}. Please delete some snapshots.")
    snapshot = Snapshot(id=str(uuid.uuid4()), stack_id=stack.id,
                        project_id=stack.project_id, name=name, action="CREATE",
                        status="IN_PROGRESS", status_reason="", data=None,
                        created_at=utcnow())
    db.add(snapshot)
    db.flush()
    engine.begin(db, stack, "SNAPSHOT", {"snapshot_id": snapshot.id})
    return snapshot


def remove(db: Session, stack: Stack, snapshot_id: str) -> None:
    snapshot = get(db, stack, snapshot_id)
    if snapshot.action == "CREATE" and snapshot.status == "IN_PROGRESS":
        raise NotSupported(feature="Deleting in-progress snapshot")
    db.delete(snapshot)


def restore(db: Session, stack: Stack, snapshot_id: str) -> None:
    """The RESTORE action: the stack's definition becomes the snapshot's."""
    logic.lock_stack(db, stack)
    snapshot = get(db, stack, snapshot_id)
    if snapshot.status != "COMPLETE" or not snapshot.data:
        raise NotSupported(feature="Restoring incomplete snapshot")
    logic._check_idle(db, stack)
    data = snapshot.data
    previous = engine.spec_of(stack).to_dict()
    # The data's environment carries the parameters (upstream's user environment).
    stack.template = data.get("template") or {}
    stack.environment = dict(data.get("environment") or {})
    stack.files = dict(data.get("files") or {})
    stack.parameters = {}
    engine.begin(db, stack, "RESTORE", {"previous": previous})
