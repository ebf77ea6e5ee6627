"""Per-project quotas (`quotas` extension): upstream's defaults, per-project overrides
(one row per overridden resource), usage counts, and the create-time check.

`check(db, project_id, resource)` costs one count query (plus one lookup of an
override); the L3 creates call it, and any other create may.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import Invalid, integer
from stackling.network.core.models import (
    Network,
    Port,
    SecurityGroup,
    SecurityGroupRule,
    Subnet,
    SubnetPool,
)
from stackling.network.l3 import errors as l3e
from stackling.network.l3.models import FloatingIP, Quota, Router

# neutron's [quotas] defaults; -1 is unlimited.
DEFAULTS: dict[str, int] = {
    "network": 100,
    "subnet": 100,
    "port": 500,
    "router": 10,
    "floatingip": 50,
    "security_group": 10,
    "security_group_rule": 100,
    "subnetpool": -1,
    "rbac_policy": 10,
}

# What a resource's usage counts: rows owned by the project.
_OWNED: dict[str, Any] = {
    "network": Network,
    "subnet": Subnet,
    "port": Port,
    "router": Router,
    "floatingip": FloatingIP,
    "security_group": SecurityGroup,
    "security_group_rule": SecurityGroupRule,
    "subnetpool": SubnetPool,
}


def _authorize_read(db: Session, ctx: RequestContext, project_id: str) -> None:
    if project_id != ctx.project_id and not (ctx.is_admin or ctx.is_service):
        raise l3e.QuotaNotAuthorized()
    pol.authorize(db, ctx, "get_quota", {"project_id": project_id})


def limits(db: Session, project_id: str) -> dict[str, int]:
    out = dict(DEFAULTS)
    for resource, limit in db.execute(select(Quota.resource, Quota.hard_limit)
                                      .where(Quota.project_id == project_id)):
        if resource in out:
            out[resource] = limit
    return out


def limit_of(db: Session, project_id: str, resource: str) -> int:
    value = db.scalar(select(Quota.hard_limit).where(Quota.project_id == project_id,
                                                     Quota.resource == resource))
    return DEFAULTS[resource] if value is None else value


def used(db: Session, project_id: str, resource: str) -> int:
    model = _OWNED.get(resource)
    if model is None:
        return 0
    return db.scalar(select(func.count()).select_from(model)
                     .where(model.project_id == project_id)) or 0


def check(db: Session, project_id: str, resource: str, requested: int = 1) -> None:
    """409 OverQuota when `requested` more `resource`s would pass the project's limit."""
    limit = limit_of(db, project_id, resource)
    if limit < 0:
        return
    if used(db, project_id, resource) + requested > limit:
        raise l3e.OverQuota(overs=[resource])


# ------------------------------------------------------------------ API logic
def show(db: Session, ctx: RequestContext, project_id: str) -> dict[str, int]:
    _authorize_read(db, ctx, project_id)
    return limits(db, project_id)


def show_default(db: Session, ctx: RequestContext, project_id: str) -> dict[str, int]:
    _authorize_read(db, ctx, project_id)
    return dict(DEFAULTS)


def details(db: Session, ctx: RequestContext, project_id: str) -> dict[str, dict[str, int]]:
    _authorize_read(db, ctx, project_id)
    return {resource: {"limit": limit, "used": used(db, project_id, resource),
                       "reserved": 0}
            for resource, limit in limits(db, project_id).items()}


def list_quotas(db: Session, ctx: RequestContext) -> list[dict[str, Any]]:
    """Projects with at least one override (admin only, as upstream)."""
    if not (ctx.is_admin or ctx.is_service):
        raise errors.NotAuthorized()
    projects = list(db.scalars(select(Quota.project_id).distinct().order_by(Quota.project_id)))
    out = []
    for project_id in projects:
        out.append({**limits(db, project_id), "project_id": project_id,
                    "tenant_id": project_id})
    return out


def parse_update(body: Any) -> dict[str, int]:
    if not isinstance(body, dict) or not isinstance(body.get("quota"), dict):
        raise errors.BadRequest("Unable to find 'quota' in request body")
    values = body["quota"]
    unknown = [k for k in values if k not in DEFAULTS]
    if unknown:
        raise errors.BadRequest(f"Unrecognized attribute(s) '{', '.join(map(str, unknown))}'")
    out = {}
    conv = integer(-1, 2**31 - 1)
    for key, value in values.items():
        try:
            out[key] = conv(value)
        except Invalid as exc:
            raise errors.BadRequest(f"Invalid input for {key}. Reason: {exc}.") from None
    return out


def update(db: Session, ctx: RequestContext, project_id: str, values: Mapping[str, int]
           ) -> dict[str, int]:
    pol.authorize(db, ctx, "update_quota", {"project_id": project_id})
    for resource, limit in values.items():
        row = db.get(Quota, (project_id, resource))
        if row is not None:
            row.hard_limit = limit
            continue
        try:
            with db.begin_nested():
                db.add(Quota(project_id=project_id, resource=resource, hard_limit=limit))
        except IntegrityError:  # set concurrently: the last writer wins, as upstream
            db.get_one(Quota, (project_id, resource), populate_existing=True).hard_limit = limit
    db.flush()
    return limits(db, project_id)


def reset(db: Session, ctx: RequestContext, project_id: str) -> None:
    pol.authorize(db, ctx, "delete_quota", {"project_id": project_id})
    db.execute(delete(Quota).where(Quota.project_id == project_id))
