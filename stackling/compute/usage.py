"""os-simple-tenant-usage: instance hours per project over a period (Nova's arithmetic).

An instance counts from `launched_at` (never-launched instances cost nothing) to the end
of the period. Deleted servers are not kept here, so only existing servers are counted.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.errors import BadRequest
from stackling.compute.models import Instance

_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%d %H:%M:%S.%f")


def parse_time(value: str | None, now: dt.datetime) -> dt.datetime:
    if not value:
        return now
    for fmt in _FORMATS:
        try:
            return dt.datetime.strptime(value, fmt).replace(tzinfo=dt.UTC)
        except ValueError:
            continue
    raise BadRequest("Invalid input for query parameters start/end: Datetime is in invalid "
                     "format")


def period(start: str | None, end: str | None) -> tuple[dt.datetime, dt.datetime]:
    now = dt.datetime.now(dt.UTC)
    begin, stop = parse_time(start, now), parse_time(end, now)
    if stop < begin:
        raise BadRequest("Invalid start time. The start time cannot occur after the end time.")
    return begin, stop


def hours(inst: Instance, begin: dt.datetime, stop: dt.datetime) -> float:
    launched = inst.launched_at
    if launched is None or launched > stop:
        return 0.0
    return (stop - max(launched, begin)).total_seconds() / 3600.0


@dataclass
class TenantUsage:
    tenant_id: str
    start: dt.datetime
    stop: dt.datetime
    total_hours: float = 0.0
    total_vcpus_usage: float = 0.0
    total_memory_mb_usage: float = 0.0
    total_local_gb_usage: float = 0.0
    server_usages: list[dict[str, Any]] = field(default_factory=list)


def instances(db: Session, begin: dt.datetime, stop: dt.datetime, *,
              project_id: str | None = None, limit: int | None = None,
              marker: str | None = None) -> list[Instance]:
    """Instances launched before the period's end, oldest first (the paging order)."""
    stmt = select(Instance).where(Instance.launched_at.is_not(None),
                                  Instance.launched_at < stop)
    if project_id is not None:
        stmt = stmt.where(Instance.project_id == project_id)
    stmt = stmt.order_by(Instance.created_at, Instance.id)
    if marker is not None:
        # the marker must be one of the listed project's servers (no probing others)
        marked = select(Instance).where(Instance.uuid == marker)
        if project_id is not None:
            marked = marked.where(Instance.project_id == project_id)
        row = db.scalars(marked).first()
        if row is None:
            raise BadRequest(f"Marker {marker} could not be found.")
        stmt = stmt.where((Instance.created_at > row.created_at)
                          | ((Instance.created_at == row.created_at) & (Instance.id > row.id)))
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(db.scalars(stmt))


def usages(rows: list[Instance], begin: dt.datetime, stop: dt.datetime,
           now: dt.datetime) -> list[TenantUsage]:
    by_tenant: dict[str, TenantUsage] = {}
    for inst in rows:
        h = hours(inst, begin, stop)
        f = inst.flavor
        local_gb = f["root_gb"] + f["ephemeral_gb"]
        usage = by_tenant.setdefault(inst.project_id, TenantUsage(inst.project_id, begin, stop))
        usage.total_hours += h
        usage.total_vcpus_usage += f["vcpus"] * h
        usage.total_memory_mb_usage += f["memory_mb"] * h
        usage.total_local_gb_usage += local_gb * h
        launched = inst.launched_at or now
        usage.server_usages.append({
            "instance_id": inst.uuid, "name": inst.display_name, "hours": h,
            "memory_mb": f["memory_mb"], "local_gb": local_gb, "vcpus": f["vcpus"],
            "tenant_id": inst.project_id, "flavor": f["name"], "started_at": launched,
            "ended_at": None, "state": inst.vm_state,
            "uptime": int((now - launched).total_seconds())})
    return [by_tenant[k] for k in sorted(by_tenant)]


def project_usage_on(db: Session, host: str) -> dict[str, dict[str, int]]:
    """os-hosts show: vcpus/ram/disk of each project's instances on a host."""
    out: dict[str, dict[str, int]] = {}
    stmt = select(Instance.project_id, Instance.flavor).where(Instance.host == host)
    for project_id, f in db.execute(stmt):
        u = out.setdefault(project_id, {"vcpus": 0, "ram": 0, "disk": 0})
        u["vcpus"] += f["vcpus"]
        u["ram"] += f["memory_mb"]
        u["disk"] += f["root_gb"] + f["ephemeral_gb"]
    return out
