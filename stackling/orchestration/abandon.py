"""Abandon and adopt, as upstream's (`enable_stack_abandon`/`enable_stack_adopt`, which
upstream has off by default, are on here: see the README).

Abandon answers the stack's abandon data and deletes the stack (and its nested stacks)
without deleting any physical resource. Adopt creates a stack from abandon data: an
ADOPT action where each resource takes its object's id, data and metadata from the data
instead of creating one (a nested stack adopts its own resources alike)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete
from sqlalchemy.orm import Session

from stackling.common.db import utcnow
from stackling.common.errors import ApiError
from stackling.orchestration import abandon_data, engine, environment, limits
from stackling.orchestration import stacks as logic
from stackling.orchestration.errors import BadRequest, NotSupported
from stackling.orchestration.models import Resource, Stack
from stackling.orchestration.template import parse_document


def abandon(db: Session, stack: Stack) -> dict[str, Any]:
    if not limits.ENABLE_STACK_ABANDON:
        raise NotSupported(feature="Stack Abandon")
    logic.lock_stack(db, stack)
    logic._check_idle(db, stack)
    data = logic.export_stack(db, stack)
    _forget(db, stack)
    return data


def _forget(db: Session, stack: Stack) -> None:
    """The stack and its nested stacks deleted; their resources' objects left alone."""
    for child in logic.nested_stacks(db, stack):
        if child.deleted_at is None:
            _forget(db, child)
    engine.purge_actions(db, stack.id)
    db.execute(delete(Resource).where(Resource.stack_id == stack.id))
    abandon_data.delete_snapshots(db, stack)
    engine.set_stack_state(db, stack, "DELETE", "IN_PROGRESS", "Stack DELETE started")
    stack.deleted_at = utcnow()
    stack.live_name = None
    engine.set_stack_state(db, stack, "DELETE", "COMPLETE",
                           "Stack DELETE completed successfully")


def adopt_body(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A create body with `adopt_stack_data`: the body to create from (the data's
    template; its environment, parameters and files under the request's own) and the
    resources' abandon data."""
    if not limits.ENABLE_STACK_ADOPT:
        raise NotSupported(feature="Stack Adopt")
    raw = body["adopt_stack_data"]
    try:
        data = parse_document(raw, "adopt data")
    except ApiError as err:
        raise BadRequest(f"Invalid adopt data: {err.text}") from None
    if not isinstance(data, dict):
        raise BadRequest("Invalid adopt data: the adopt data must be a map")
    if "template" not in data:
        raise BadRequest("Invalid adopt data: 'template'")
    resources = data.get("resources") or {}
    if not isinstance(resources, dict):
        raise BadRequest("Invalid adopt data: resources must be a map")
    out = {k: v for k, v in body.items() if k != "adopt_stack_data"}
    out["template"] = data["template"]
    adopted_env = data.get("environment") or {}
    if not isinstance(adopted_env, dict):
        raise BadRequest("Invalid adopt data: environment must be a map")
    out["environment"] = environment.merge(
        environment.parse(adopted_env), environment.parse(body.get("environment")))
    files = data.get("files") or {}
    if isinstance(files, dict):
        out["files"] = {**files, **(body.get("files") or {})}
    return out, resources
