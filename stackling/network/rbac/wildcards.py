"""The wildcard RBAC policies that mirror a flag (`shared`, `router:external`) of a
network, subnet pool, security group or address scope, kept in step by the objects' own
writes; and the policies of an object being deleted. The owners of those objects call
these (the `rbac-policies` API, `policies.py`, sits above them and calls the owners).
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.db import uuid_str
from stackling.network.rbac import visibility
from stackling.network.rbac.models import RbacPolicy
from stackling.network.rbac.visibility import SHARED, WILDCARD

_P = RbacPolicy


def sync_wildcard(db: Session, object_type: str, object_id: str, owner: str, action: str,
                  on: bool) -> None:
    """Keep the wildcard policy in step with a flag (`shared`, `router:external`)."""
    if on:
        exists = db.scalar(select(_P.id).where(
            _P.object_type == object_type, _P.object_id == object_id, _P.action == action,
            _P.target_tenant == WILDCARD))
        if exists is None:
            try:
                with db.begin_nested():
                    db.add(RbacPolicy(id=uuid_str(), project_id=owner or "",
                                      object_type=object_type, object_id=object_id,
                                      action=action, target_tenant=WILDCARD))
                    db.flush()
            except IntegrityError:
                pass  # made concurrently: the same grant
            visibility.forget_grants(db)
        return
    where = [_P.object_type == object_type, _P.object_id == object_id, _P.action == action]
    if action == SHARED:  # upstream clears every external grant, but only `*` sharing
        where.append(_P.target_tenant == WILDCARD)
    db.execute(delete(_P).where(*where))
    visibility.forget_grants(db)


def has_grants(db: Session, object_type: str, object_id: str, action: str) -> bool:
    return db.scalar(select(_P.id).where(
        _P.object_type == object_type, _P.object_id == object_id, _P.action == action
    ).limit(1)) is not None


def delete_for(db: Session, object_type: str, object_id: str) -> None:
    """Drop the policies of an object being deleted."""
    db.execute(delete(_P).where(_P.object_type == object_type, _P.object_id == object_id))
    visibility.forget_grants(db)
