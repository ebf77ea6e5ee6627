"""Resource signals (`POST .../resources/{name}/signal`): a signal to a type that takes
them (wait condition handles, software deployments, test resources) or the clearing of a
hook (`{"unset_hook": "pre-create"}`). Each runs in the request's transaction holding the
resource's row lock, so two signals at once are both counted on every backend."""

from __future__ import annotations

import hmac
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.orchestration import engine, hooks
from stackling.orchestration.errors import EntityNotFound, HeatError, NotSupported
from stackling.orchestration.models import Resource, Stack


class ResourceActionNotSupported(HeatError):
    status = 400
    message = "%(action)s is not supported for resource."


def locked_resource(db: Session, stack: Stack, name: str) -> Resource:
    row = db.scalars(select(Resource).where(
        Resource.stack_id == stack.id, Resource.name == name, Resource.role == "current")
        .with_for_update().execution_options(populate_existing=True)).first()
    if row is None:
        raise EntityNotFound(entity="Resource", name=name)
    return row


def token_matches(db: Session, stack_id: str, name: str, token: str | None) -> bool:
    """Whether `token` is the signal token of that resource (a wait condition handle's
    `token` attribute): it authorizes that one resource's signal and nothing else."""
    if not token:
        return False
    data = db.scalar(select(Resource.data).where(
        Resource.stack_id == stack_id, Resource.name == name, Resource.role == "current"))
    secret = (data or {}).get("signal_token")
    return isinstance(secret, str) and hmac.compare_digest(secret.encode(), token.encode())


def signal(db: Session, runtime: Any, stack: Stack, name: str, details: Any) -> None:
    row = locked_resource(db, stack, name)
    if isinstance(details, dict) and "unset_hook" in details:
        cleared = hooks.clear(row, details["unset_hook"])
        engine.add_event(db, stack, row.name, row.type, row.physical_resource_id, row.action,
                         row.status, cleared, row.properties)
        return
    if row.action in ("SUSPEND", "DELETE"):
        raise NotSupported(feature=f"Signal resource during {row.action}")
    plugin = engine.Runner(db, runtime, stack).plugin(row)
    handler = getattr(plugin, "handle_signal", None)
    if not callable(handler):
        raise ResourceActionNotSupported(action="signal")
    reason = handler(details)
    engine.add_event(db, stack, row.name, row.type, row.physical_resource_id, "SIGNAL",
                     row.status, reason, row.properties)
