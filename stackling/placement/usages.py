"""Usages: what is allocated, per provider or per project (and user, consumer type)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.placement.allocations import UNKNOWN_CONSUMER_TYPE
from stackling.placement.models import Allocation, Consumer, Inventory


def of_provider(db: Session, rp_id: int) -> dict[str, int]:
    """{rc: used} for every class the provider has inventory of (0 when unused)."""
    usage = (select(Allocation.resource_class.label("rc"), func.sum(Allocation.used).label("used"))
             .where(Allocation.resource_provider_id == rp_id)
             .group_by(Allocation.resource_class).subquery())
    rows = db.execute(select(Inventory.resource_class, func.coalesce(usage.c.used, 0))
                      .outerjoin(usage, usage.c.rc == Inventory.resource_class)
                      .where(Inventory.resource_provider_id == rp_id)
                      .order_by(Inventory.resource_class))
    return {rc: int(used) for rc, used in rows}


def of_project(db: Session, project_id: str, user_id: str | None = None,
               consumer_type: str | None = None, *, by_type: bool = False) -> dict[str, Any]:
    """GET /usages: totals per class; with `by_type` (1.38+) grouped by consumer type,
    each with a consumer_count. `consumer_type` filters: a type, "unknown" or "all"."""
    conds = [Consumer.project_id == project_id]
    if user_id is not None:
        conds.append(Consumer.user_id == user_id)
    if consumer_type not in (None, "all"):
        if consumer_type == UNKNOWN_CONSUMER_TYPE:
            conds.append(Consumer.consumer_type.is_(None))
        else:
            conds.append(Consumer.consumer_type == consumer_type)
    if not by_type:
        rows = db.execute(select(Allocation.resource_class, func.sum(Allocation.used))
                          .join(Consumer, Consumer.uuid == Allocation.consumer_id)
                          .where(*conds).group_by(Allocation.resource_class))
        return {rc: int(used) for rc, used in rows}
    rows = db.execute(select(Consumer.consumer_type, Allocation.resource_class,
                             func.sum(Allocation.used), func.count(Consumer.uuid.distinct()))
                      .join(Consumer, Consumer.uuid == Allocation.consumer_id)
                      .where(*conds).group_by(Consumer.consumer_type, Allocation.resource_class))
    grouped: dict[str, dict[str, int]] = defaultdict(dict)
    for ctype, rc, used, _count in rows:
        key = "all" if consumer_type == "all" else (ctype or UNKNOWN_CONSUMER_TYPE)
        grouped[key][rc] = grouped[key].get(rc, 0) + int(used)
    counts = db.execute(select(Consumer.consumer_type, func.count())
                        .where(*conds, Consumer.uuid.in_(select(Allocation.consumer_id)))
                        .group_by(Consumer.consumer_type))
    for ctype, count in counts:
        key = "all" if consumer_type == "all" else (ctype or UNKNOWN_CONSUMER_TYPE)
        if key in grouped:
            grouped[key]["consumer_count"] = grouped[key].get("consumer_count", 0) + int(count)
    return dict(grouped)
