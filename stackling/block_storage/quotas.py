"""Cinder's quotas: per-project limits (volume_quota), classes (the `default` class
overrides the settings' defaults), usage counted from the rows themselves (no usage
table that could drift), checked under the project's lock row so that two creates
cannot both take the last unit.

Resources: volumes, snapshots, gigabytes, backups, backup_gigabytes, groups,
per_volume_gigabytes, and per volume type `volumes_<type>`, `snapshots_<type>`,
`gigabytes_<type>`. A volume in any state counts until its row is gone (as upstream:
an `error` volume holds its quota until deleted); a create refused or failed within
its request leaves no row, so no usage."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.block_storage import errors
from stackling.block_storage.models import (
    Backup,
    Quota,
    QuotaClass,
    QuotaLock,
    Snapshot,
    Volume,
    VolumeType,
)
from stackling.common.quota_lock import lock_project

BASE = ("volumes", "snapshots", "gigabytes", "backups", "backup_gigabytes", "groups",
        "per_volume_gigabytes")
PER_TYPE = ("volumes", "snapshots", "gigabytes")


def settings_defaults(settings: Any) -> dict[str, int]:
    bs = settings.block_storage
    return {"volumes": bs.quota_volumes, "snapshots": bs.quota_snapshots,
            "gigabytes": bs.quota_gigabytes, "backups": bs.quota_backups,
            "backup_gigabytes": bs.quota_backup_gigabytes, "groups": bs.quota_groups,
            "per_volume_gigabytes": bs.per_volume_size_limit}


def resources(db: Session) -> list[str]:
    names = list(BASE)
    for type_name in db.scalars(select(VolumeType.name).order_by(VolumeType.name)):
        names += [f"{r}_{type_name}" for r in PER_TYPE]
    return names


def class_limits(db: Session, settings: Any, class_name: str = "default") -> dict[str, int]:
    out: dict[str, int] = {r: -1 for r in resources(db)}
    out.update(settings_defaults(settings))
    for row in db.scalars(select(QuotaClass).where(QuotaClass.class_name == "default")):
        out[row.resource] = row.hard_limit
    if class_name != "default":
        for row in db.scalars(select(QuotaClass).where(QuotaClass.class_name == class_name)):
            out[row.resource] = row.hard_limit
    return {k: v for k, v in out.items() if k in set(resources(db))}


def limits(db: Session, settings: Any, project_id: str) -> dict[str, int]:
    out = class_limits(db, settings)
    for row in db.scalars(select(Quota).where(Quota.project_id == project_id)):
        if row.resource in out:
            out[row.resource] = row.hard_limit
    return out


def usage(db: Session, project_id: str) -> dict[str, int]:
    used: dict[str, int] = {r: 0 for r in resources(db)}
    names = dict(db.execute(select(VolumeType.id, VolumeType.name)).all())
    for type_id, count, size in db.execute(
            select(Volume.volume_type_id, func.count(), func.coalesce(func.sum(Volume.size), 0))
            .where(Volume.project_id == project_id).group_by(Volume.volume_type_id)):
        used["volumes"] += count
        used["gigabytes"] += int(size)
        name = names.get(type_id)
        if name is not None:
            used[f"volumes_{name}"] = used.get(f"volumes_{name}", 0) + count
            used[f"gigabytes_{name}"] = used.get(f"gigabytes_{name}", 0) + int(size)
    for type_id, count, size in db.execute(
            select(Snapshot.volume_type_id, func.count(),
                   func.coalesce(func.sum(Snapshot.size), 0))
            .where(Snapshot.project_id == project_id).group_by(Snapshot.volume_type_id)):
        used["snapshots"] += count
        used["gigabytes"] += int(size)  # snapshots count in gigabytes (no_snapshot_gb_quota)
        name = names.get(type_id)
        if name is not None:
            used[f"snapshots_{name}"] = used.get(f"snapshots_{name}", 0) + count
            used[f"gigabytes_{name}"] = used.get(f"gigabytes_{name}", 0) + int(size)
    count, size = db.execute(select(func.count(), func.coalesce(func.sum(Backup.size), 0))
                             .where(Backup.project_id == project_id)).one()
    used["backups"], used["backup_gigabytes"] = count, int(size)
    return used


def check(db: Session, settings: Any, project_id: str, *, volumes: int = 0,
          gigabytes: int = 0, snapshots: int = 0, backups: int = 0,
          backup_gigabytes: int = 0, type_name: str | None = None,
          volume_size: int | None = None) -> None:
    """Refuse (Cinder's 413s) what would take the project past a limit. Holds the
    project's lock row until the transaction ends: the caller inserts in the same one."""
    lock_project(db, QuotaLock, project_id)
    hard = limits(db, settings, project_id)
    per_volume = hard.get("per_volume_gigabytes", -1)
    if volume_size is not None and per_volume >= 0 and volume_size > per_volume:
        raise errors.VolumeSizeExceedsLimit(size=volume_size, limit=per_volume)
    used = usage(db, project_id)

    def over(resource: str, delta: int) -> bool:
        limit = hard.get(resource, -1)
        return delta > 0 and limit >= 0 and used.get(resource, 0) + delta > limit

    wanted = [("gigabytes", gigabytes), ("volumes", volumes), ("snapshots", snapshots),
              ("backups", backups), ("backup_gigabytes", backup_gigabytes)]
    if type_name is not None:
        wanted = [(f"gigabytes_{type_name}", gigabytes), *wanted[:1],
                  (f"volumes_{type_name}", volumes), *wanted[1:2],
                  (f"snapshots_{type_name}", snapshots), *wanted[2:]]
    for resource, delta in wanted:
        if not over(resource, delta):
            continue
        if resource.startswith("gigabytes"):
            raise errors.VolumeSizeExceedsAvailableQuota(
                name=resource, requested=delta, quota=hard[resource],
                consumed=used.get(resource, 0))
        if resource == "backup_gigabytes":
            raise errors.VolumeBackupSizeExceedsAvailableQuota(
                requested=delta, quota=hard[resource], consumed=used.get(resource, 0))
        if resource.startswith("volumes"):
            raise errors.VolumeLimitExceeded(allowed=hard[resource], name=resource)
        if resource.startswith("snapshots"):
            raise errors.SnapshotLimitExceeded(allowed=hard[resource])
        raise errors.BackupLimitExceeded(allowed=hard[resource])


def update(db: Session, settings: Any, project_id: str, values: dict[str, Any],
           skip_validation: bool = True) -> dict[str, int]:
    known = set(resources(db))
    bad = [k for k in values if k not in known]
    if bad:
        raise errors.InvalidInput(reason=f"Bad key(s) in quota set: {', '.join(bad)}")
    parsed: dict[str, int] = {}
    for key, value in values.items():
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise errors.InvalidInput(
                reason=f"Quota limit for {key} must be an integer") from None
        if number < -1:
            raise errors.InvalidInput(
                reason=f"Quota limit {number} for {key} must be -1 or greater.")
        parsed[key] = number
    if not skip_validation:
        used = usage(db, project_id)
        for key, number in parsed.items():
            if number >= 0 and used.get(key, 0) > number:
                raise errors.InvalidInput(reason=f"Quota limit {number} for {key} must be "
                                          f"equal or greater than existing resources.")
    for key, number in parsed.items():
        row = db.scalar(select(Quota).where(Quota.project_id == project_id,
                                            Quota.resource == key))
        if row is None:
            db.add(Quota(project_id=project_id, resource=key, hard_limit=number))
        else:
            row.hard_limit = number
    db.flush()
    return limits(db, settings, project_id)


def delete(db: Session, project_id: str) -> None:
    for row in db.scalars(select(Quota).where(Quota.project_id == project_id)).all():
        db.delete(row)
    db.flush()


def update_class(db: Session, settings: Any, class_name: str, values: dict[str, Any]
                 ) -> dict[str, int]:
    known = set(resources(db))
    for key, value in values.items():
        if key not in known:
            continue  # Cinder ignores unknown keys of a quota class set
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise errors.InvalidInput(
                reason=f"Quota class limit for {key} must be an integer") from None
        row = db.scalar(select(QuotaClass).where(QuotaClass.class_name == class_name,
                                                 QuotaClass.resource == key))
        if row is None:
            db.add(QuotaClass(class_name=class_name, resource=key, hard_limit=number))
        else:
            row.hard_limit = number
    db.flush()
    return class_limits(db, settings, class_name)
