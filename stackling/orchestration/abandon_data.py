"""Upstream's abandon data of a stack (what export and abandon answer and a snapshot
keeps), and a snapshot's end. Below the engine: it reads rows only."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.db import utcnow
from stackling.orchestration.models import Resource, Snapshot, Stack


def stack_data(db: Session, stack: Stack) -> dict[str, Any]:
    """The stack, its definition (the environment as upstream's user environment, the
    request's parameters inside it) and each resource's id, state and data (a nested
    stack's resources inside its owner's)."""
    children = {c.owner_resource: c for c in db.scalars(select(Stack).where(
        Stack.parent_id == stack.id)) if c.deleted_at is None}
    resources: dict[str, Any] = {}
    for row in db.scalars(select(Resource).where(
            Resource.stack_id == stack.id, Resource.role == "current").order_by(Resource.id)):
        item: dict[str, Any] = {
            "name": row.name, "resource_id": row.physical_resource_id, "type": row.type,
            "action": row.action, "status": row.status, "metadata": row.rsrc_metadata or {},
            "resource_data": {k: v if isinstance(v, str) else json.dumps(v)
                              for k, v in (row.data or {}).items()}}
        if row.name in children:
            item["resources"] = stack_data(db, children[row.name])["resources"]
        resources[row.name] = item
    env = dict(stack.environment or {})
    if stack.parameters:
        env["parameters"] = {**(env.get("parameters") or {}), **stack.parameters}
    return {"id": stack.id, "name": stack.name, "action": stack.action,
            "status": stack.status, "template": stack.template,
            "environment": env, "files": stack.files or {},
            "resources": resources, "project_id": stack.project_id,
            "stack_user_project_id": stack.project_id, "tags": stack.tags or []}


def finish_snapshot(db: Session, stack: Stack, work: dict[str, Any], status: str,
                    reason: str) -> None:
    """The SNAPSHOT action's end (the engine calls it before the stack's own state
    changes, as upstream's save_snapshot): the data, the snapshot's status."""
    snapshot = db.get(Snapshot, work.get("snapshot_id") or "")
    if snapshot is None:
        return
    data = stack_data(db, stack)
    data["status"] = status
    snapshot.data, snapshot.status, snapshot.status_reason = data, status, reason
    snapshot.updated_at = utcnow()


def delete_snapshots(db: Session, stack: Stack) -> None:
    db.execute(delete(Snapshot).where(Snapshot.stack_id == stack.id))
