"""Backups: create (full or incremental; chunked into the backup store by work.py),
list, show, update (3.9), delete, restore (to a new or an existing volume), export and
import of the record, and the admin actions, as cinder/backup/api.py."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import errors, quotas, volumes
from stackling.block_storage.models import Backup, Snapshot, Volume
from stackling.common.context import RequestContext
from stackling.common.db import utcnow

STATUSES = ("creating", "available", "deleting", "error", "restoring", "error_deleting")
DRIVER = "cinder.backup.drivers.posix.PosixBackupDriver"


def get_backup(db: Session, ctx: RequestContext, backup_id: str) -> Backup:
    backup = db.get(Backup, backup_id)
    if backup is None or not (ctx.is_admin or backup.project_id == ctx.project_id):
        raise errors.BackupNotFound(backup_id=backup_id)
    return backup


def has_dependents(db: Session, backup: Backup) -> bool:
    return db.scalar(select(Backup.id).where(Backup.parent_id == backup.id)) is not None


def create_backup(db: Session, ctx: RequestContext, settings: Any, volume: Volume, *,
                  name: str | None, description: str | None, incremental: bool,
                  force: bool, snapshot_id: str | None, container: str | None,
                  metadata: dict[str, str] | None,
                  availability_zone: str | None) -> Backup:
    allowed = ("available", "in-use") if force else ("available",)
    if volume.status not in allowed:
        raise errors.InvalidVolume(reason=f"Volume to be backed up must be available or "
                                   f"in-use, but the current status is \"{volume.status}\".")
    if snapshot_id:
        snap = db.get(Snapshot, snapshot_id)
        if snap is None or snap.volume_id != volume.id:
            raise errors.SnapshotNotFound(snapshot_id=snapshot_id)
        if snap.status != "available":
            raise errors.InvalidSnapshot(reason="Snapshot to be backed up must be available")
    parent = None
    if incremental:
        parent = db.scalar(select(Backup).where(
            Backup.volume_id == volume.id, Backup.status == "available",
            Backup.project_id == volume.project_id)
            .order_by(Backup.data_timestamp.desc(), Backup.created_at.desc()).limit(1))
        if parent is None:
            raise errors.InvalidBackup(reason="No backups available to do an incremental "
                                       "backup.")
    quotas.check(db, settings, volume.project_id, backups=1, backup_gigabytes=volume.size)
    backup = Backup(
        id=str(uuid.uuid4()), volume_id=volume.id, snapshot_id=snapshot_id or None,
        parent_id=parent.id if parent else None, project_id=volume.project_id,
        user_id=ctx.user_id or "", name=name, description=description, status="creating",
        size=volume.size, container=container or "backups", availability_zone=volumes.AZ,
        is_incremental=parent is not None, metadata_=dict(metadata or {}), task="create",
        task_args={"previous_status": volume.status}, data_timestamp=utcnow())
    db.add(backup)
    # Cinder marks the volume backing-up while the backup reads it.
    volume.previous_status = volume.status
    volume.status = "backing-up"
    db.flush()
    return backup


SORT_KEYS = ("created_at", "updated_at", "name", "status", "id", "size")


def list_backups(db: Session, ctx: RequestContext, filters: dict[str, Any], *,
                 all_tenants: bool, sorts: list[tuple[str, bool]], limit: int | None,
                 marker: str | None, offset: int = 0) -> tuple[list[Backup], int]:
    stmt = select(Backup)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Backup.project_id == ctx.project_id)
    for key in ("name", "status", "volume_id"):
        if filters.get(key):
            stmt = stmt.where(getattr(Backup, key) == filters[key])
    rows = list(db.scalars(stmt))
    for key, ascending in reversed(sorts or [("created_at", False)]):
        rows.sort(key=lambda b: b.id)
        rows.sort(key=lambda b, key=key: (getattr(b, key) is not None, getattr(b, key) or 0),
                  reverse=not ascending)
    total = len(rows)
    if marker:
        ids = [b.id for b in rows]
        if marker not in ids:
            raise errors.BackupNotFound(backup_id=marker)
        rows = rows[ids.index(marker) + 1:]
    rows = rows[offset:]
    return (rows[:limit] if limit is not None else rows), total


def update_backup(db: Session, backup: Backup, fields: dict[str, Any]) -> Backup:
    for key in ("name", "description"):
        if key in fields:
            setattr(backup, key, fields[key])
    if "metadata" in fields:
        backup.metadata_ = dict(fields["metadata"] or {})
    backup.updated_at = utcnow()
    db.flush()
    return backup


def delete_backup(db: Session, backup: Backup, *, force: bool = False) -> None:
    allowed = ("available", "error") if not force else ("available", "error", "creating",
                                                        "restoring", "error_deleting")
    if backup.status not in allowed:
        raise errors.InvalidBackup(reason="Backup status must be available or error")
    if has_dependents(db, backup):
        raise errors.InvalidBackup(reason="Incremental backups exist for this backup.")
    backup.status = "deleting"
    backup.task = "delete"
    backup.claimed_until = None
    db.flush()


def restore(db: Session, ctx: RequestContext, settings: Any, backup: Backup,
            volume_id: str | None, name: str | None) -> Volume:
    if backup.status != "available":
        raise errors.InvalidBackup(reason="Backup status must be available")
    if volume_id:
        volume = volumes.get_volume(db, ctx, volume_id)
        if volume.status != "available":
            raise errors.InvalidVolume(reason="Volume to be restored to must be available")
        if volume.size < backup.size:
            raise errors.InvalidVolume(reason=f"volume size {volume.size} is too small to "
                                       f"restore backup of size {backup.size}.")
        if not volumes.transition(db, volume, ("available",),
                                  {"status": "restoring-backup"}):
            raise errors.InvalidVolume(reason="Volume to be restored to must be available")
    else:
        volume = volumes.create_volume(db, ctx, settings, size=backup.size,
                                       name=name or f"restore_backup_{backup.id}")
        volume.status = "restoring-backup"
        volume.task = None  # the backup's task fills it
    backup.status = "restoring"
    backup.task = "restore"
    backup.task_args = {"volume_id": volume.id}
    backup.claimed_until = None
    db.flush()
    return volume


def export_record(backup: Backup) -> dict[str, str]:
    if backup.status != "available":
        raise errors.InvalidBackup(reason="Backup status must be available and not restoring.")
    record = {"id": backup.id, "volume_id": backup.volume_id, "project_id": backup.project_id,
              "user_id": backup.user_id, "display_name": backup.name,
              "display_description": backup.description, "size": backup.size,
              "object_count": backup.object_count, "container": backup.container,
              "parent_id": backup.parent_id,
              "availability_zone": backup.availability_zone,
              "is_incremental": backup.is_incremental,
              "data_timestamp": backup.data_timestamp.isoformat(),
              "metadata": dict(backup.metadata_ or {})}
    url = base64.b64encode(json.dumps(record).encode()).decode()
    return {"backup_service": DRIVER, "backup_url": url}


def import_record(db: Session, ctx: RequestContext, service: Any, url: Any) -> Backup:
    if service != DRIVER:
        raise errors.InvalidInput(reason=f"Unsupported backup service {service}")
    try:
        record = json.loads(base64.b64decode(str(url)))
        backup_id = str(record["id"])
    except (ValueError, KeyError, TypeError):
        raise errors.InvalidInput(reason="Can't parse backup record.") from None
    existing = db.get(Backup, backup_id)
    if existing is not None:
        if existing.status != "deleted":
            raise errors.InvalidBackup(reason="Backup already exists in database.")
    import datetime as dt

    backup = Backup(
        id=backup_id, volume_id=str(record.get("volume_id") or ""),
        project_id=ctx.project_id or "", user_id=ctx.user_id or "",
        name=record.get("display_name"), description=record.get("display_description"),
        status="available", size=int(record.get("size") or 0),
        object_count=int(record.get("object_count") or 0),
        container=record.get("container"), parent_id=record.get("parent_id"),
        availability_zone=record.get("availability_zone"),
        is_incremental=bool(record.get("is_incremental")),
        metadata_=dict(record.get("metadata") or {}),
        data_timestamp=dt.datetime.fromisoformat(record["data_timestamp"])
        if record.get("data_timestamp") else utcnow())
    db.add(backup)
    db.flush()
    return backup


def reset_status(db: Session, backup: Backup, status: Any) -> None:
    if status not in ("available", "error"):
        raise errors.InvalidInput(reason=f"Must specify a valid status: {status}")
    backup.status = status
    backup.task = None
    db.flush()
