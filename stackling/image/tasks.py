"""Glance's tasks (`/v2/tasks`): each image import leaves an `api_image_import` task.

Imports run inside their request here, so a task is written once its import is done
(`success`, or `failure` with its message); it expires as Glance's do after
`task_time_to_live` (48 hours). Reading tasks is an admin's (Glance's defaults)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.errors import BadRequest, NotFound
from stackling.common.listing import ListParams, Page, paginate
from stackling.image.models import Task

TIME_TO_LIVE = dt.timedelta(hours=48)
TYPES = ("import", "api_image_import", "location_import")
STATUSES = ("pending", "processing", "success", "failure")


class TaskNotFound(NotFound):
    message = "Task with the given ID %(task_id)s was not found"


def _time(value: dt.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def view(task: Task, stub: bool = False) -> dict[str, Any]:
    """A task; a list shows its stub (no input, no result), as Glance."""
    body: dict[str, Any] = {
        "id": task.id, "type": task.type, "status": task.status, "owner": task.owner,
        "message": task.message, "expires_at": _time(task.expires_at),
        "created_at": _time(task.created_at), "updated_at": _time(task.updated_at),
        "image_id": task.image_id, "request_id": task.request_id, "user_id": task.user_id,
        "self": f"/v2/tasks/{task.id}", "schema": "/v2/schemas/task"}
    if not stub:
        body["input"] = task.input
        body["result"] = task.result
    return body


def record_import(db: Session, ctx: RequestContext, image_id: str, request: dict[str, Any],
                  status: str = "success", message: str = "",
                  backend: list[str] | None = None) -> Task:
    now = utcnow()
    task = Task(id=str(uuid.uuid4()), type="api_image_import", status=status,
                owner=ctx.project_id or "", image_id=image_id, user_id=ctx.user_id,
                request_id=ctx.request_id,
                input={"image_id": image_id, "import_req": request,
                       "backend": backend or ["file"]},
                result={"image_id": image_id} if status == "success" else None,
                message=message, expires_at=now + TIME_TO_LIVE, created_at=now,
                updated_at=now)
    db.add(task)
    db.flush()
    return task


def record(db: Session, ctx: RequestContext, task_type: str, task_input: dict[str, Any], *,
           status: str, result: dict[str, Any] | None = None, message: str = "",
           image_id: str | None = None) -> Task:
    """A task created through `POST /v2/tasks`, already run (imports run in the request)."""
    now = utcnow()
    task = Task(id=str(uuid.uuid4()), type=task_type, status=status,
                owner=ctx.project_id or "", image_id=image_id, user_id=ctx.user_id,
                request_id=ctx.request_id, input=task_input, result=result,
                message=message, expires_at=now + TIME_TO_LIVE, created_at=now,
                updated_at=now)
    db.add(task)
    db.flush()
    return task


def get_task(db: Session, ctx: RequestContext, task_id: str) -> Task:
    task = db.get(Task, task_id)
    if task is None:
        raise TaskNotFound(task_id=task_id)
    return task


def list_tasks(db: Session, ctx: RequestContext, filters: dict[str, str],
               params: ListParams) -> Page:
    stmt = select(Task)
    if "type" in filters:
        if filters["type"] not in TYPES:
            raise BadRequest(f"Invalid type value: {filters['type']}")
        stmt = stmt.where(Task.type == filters.pop("type"))
    if "status" in filters:
        if filters["status"] not in STATUSES:
            raise BadRequest(f"Invalid status value: {filters['status']}")
        stmt = stmt.where(Task.status == filters.pop("status"))
    if params.marker:
        get_task(db, ctx, params.marker)
    columns = {"created_at": Task.created_at, "updated_at": Task.updated_at,
               "status": Task.status, "type": Task.type, "id": Task.id}
    return paginate(db, stmt, columns=columns, id_column=Task.id, params=params,
                    marker_scope=select(Task))
