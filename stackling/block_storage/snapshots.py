"""Snapshots: create (a copy of the volume's file made by work.py), list, show, update,
delete, metadata, and the admin actions (os-reset_status, os-force_delete,
os-update_snapshot_status), as cinder/volume/api.py."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import errors, quotas
from stackling.block_storage.models import Snapshot, Volume, VolumeType
from stackling.common.context import RequestContext
from stackling.common.db import utcnow

STATUSES = ("creating", "available", "deleting", "error", "error_deleting", "unmanaging",
            "backing-up", "restoring")


def get_snapshot(db: Session, ctx: RequestContext, snapshot_id: str) -> Snapshot:
    snap = db.get(Snapshot, snapshot_id)
    if snap is None or not (ctx.is_admin or snap.project_id == ctx.project_id):
        raise errors.SnapshotNotFound(snapshot_id=snapshot_id)
    return snap


def create_snapshot(db: Session, ctx: RequestContext, settings: Any, volume: Volume, *,
                    name: str | None, description: str | None, force: bool,
                    metadata: dict[str, str] | None) -> Snapshot:
    allowed = ("available", "in-use") if force else ("available",)
    if volume.status not in allowed:
        if volume.status == "in-use":
            raise errors.InvalidVolume(reason="Volume in-use: use force to snapshot an "
                                       "attached volume")
        raise errors.InvalidVolume(reason=f"Volume {volume.id} status must be available, "
                                   f"but current status is: {volume.status}.")
    vtype = db.get(VolumeType, volume.volume_type_id)
    quotas.check(db, settings, volume.project_id, snapshots=1, gigabytes=volume.size,
                 type_name=vtype.name if vtype else None)
    snap = Snapshot(id=str(uuid.uuid4()), volume_id=volume.id, project_id=volume.project_id,
                    user_id=ctx.user_id or "", name=name, description=description,
                    status="creating", size=volume.size, volume_type_id=volume.volume_type_id,
                    metadata_=dict(metadata or {}), task="create")
    db.add(snap)
    db.flush()
    return snap


SORT_KEYS = ("created_at", "updated_at", "name", "status", "id", "size")


def list_snapshots(db: Session, ctx: RequestContext, filters: dict[str, Any], *,
                   all_tenants: bool, sorts: list[tuple[str, bool]], limit: int | None,
                   marker: str | None, offset: int = 0) -> tuple[list[Snapshot], int]:
    stmt = select(Snapshot)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Snapshot.project_id == ctx.project_id)
    for key in ("name", "status", "volume_id"):
        if filters.get(key):
            stmt = stmt.where(getattr(Snapshot, key) == filters[key])
    if filters.get("project_id") and ctx.is_admin:
        stmt = stmt.where(Snapshot.project_id == filters["project_id"])
    rows = list(db.scalars(stmt))
    wanted = filters.get("metadata")
    if isinstance(wanted, dict):
        rows = [s for s in rows if all((s.metadata_ or {}).get(k) == str(v)
                                       for k, v in wanted.items())]
    for key, ascending in reversed(sorts or [("created_at", False)]):
        rows.sort(key=lambda s: s.id)
        rows.sort(key=lambda s, key=key: (getattr(s, key) is not None, getattr(s, key) or 0),
                  reverse=not ascending)
    total = len(rows)
    if marker:
        ids = [s.id for s in rows]
        if marker not in ids:
            raise errors.SnapshotNotFound(snapshot_id=marker)
        rows = rows[ids.index(marker) + 1:]
    rows = rows[offset:]
    return (rows[:limit] if limit is not None else rows), total


def update_snapshot(db: Session, snap: Snapshot, fields: dict[str, Any]) -> Snapshot:
    for key in ("name", "description"):
        if key in fields:
            setattr(snap, key, fields[key])
    snap.updated_at = utcnow()
    db.flush()
    return snap


def delete_snapshot(db: Session, snap: Snapshot, *, force: bool = False) -> None:
    if not force and snap.status not in ("available", "error"):
        raise errors.InvalidSnapshot(reason="Volume Snapshot status must be available or "
                                     "error and must not be part of a group.")
    snap.status = "deleting"
    snap.task = "delete"
    snap.claimed_until = None
    snap.updated_at = utcnow()
    db.flush()


def set_metadata(db: Session, snap: Snapshot, metadata: dict[str, str], *,
                 replace: bool) -> dict[str, str]:
    if not isinstance(metadata, dict):
        raise errors.InvalidInput(reason="Metadata must be a dict")
    snap.metadata_ = dict(metadata) if replace else {**(snap.metadata_ or {}), **metadata}
    db.flush()
    return dict(snap.metadata_)


def delete_metadata_key(db: Session, snap: Snapshot, key: str) -> None:
    meta = dict(snap.metadata_ or {})
    if key not in meta:
        raise errors.SnapshotMetadataNotFound(snapshot_id=snap.id, metadata_key=key)
    del meta[key]
    snap.metadata_ = meta
    db.flush()


def reset_status(db: Session, snap: Snapshot, status: Any) -> None:
    if status not in STATUSES:
        raise errors.InvalidInput(reason=f"Must specify a valid status: {status}")
    snap.status = status
    snap.task = None
    snap.updated_at = utcnow()
    db.flush()


def update_status(db: Session, snap: Snapshot, status: Any, progress: Any) -> None:
    transitions = {"creating": ("creating", "available", "error"),
                   "deleting": ("deleting", "error_deleting")}
    if status not in transitions.get(snap.status, ()):
        raise errors.InvalidSnapshot(reason=f"Snapshot status {snap.status} not allowed for "
                                     f"update_snapshot_status to {status}")
    snap.status = status
    if progress is not None:
        snap.progress = str(progress)
    db.flush()
