"""Volumes: create (empty, from an image, a snapshot, a volume or a backup), show, list,
update, delete, metadata, and the actions (cinder/volume/api.py's rules).

Every status change that races another request is one conditional UPDATE
(`... WHERE id = ? AND status IN (...)`, Cinder's conditional_update): of two requests
only one finds the row in the state it expects, on every database. The file work a
status announces (`creating`, `deleting`) is a task on the row, done by work.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import exists, func, select, update
from sqlalchemy.orm import Session

from stackling.block_storage import errors, quotas, types
from stackling.block_storage.models import Attachment, Backup, Snapshot, Volume, VolumeType
from stackling.common.context import RequestContext
from stackling.common.db import utcnow

AZ = "nova"  # the one availability zone (Cinder's storage_availability_zone default)
HOST = "stackling@file#file"  # the backend's host@backend#pool (os-vol-host-attr:host)
DELETABLE = ("available", "error", "error_restoring", "error_extending", "error_managing")
IMAGE_KEYS_PROTECTED = ("image_id", "image_name", "checksum", "container_format",
                        "disk_format", "min_disk", "min_ram", "size")


def _visible(ctx: RequestContext, project_id: str) -> bool:
    return ctx.is_admin or project_id == ctx.project_id


def get_volume(db: Session, ctx: RequestContext, volume_id: str) -> Volume:
    """The volume if the context may see it (another project's: not found)."""
    volume = db.get(Volume, volume_id)
    if volume is None or not _visible(ctx, volume.project_id):
        raise errors.VolumeNotFound(volume_id=volume_id)
    return volume


def lock_volume(db: Session, volume_id: str) -> Volume | None:
    """The row, locked for update until the transaction ends (None when gone)."""
    return db.scalar(select(Volume).where(Volume.id == volume_id).with_for_update()
                     .execution_options(populate_existing=True))


def attachments_of(db: Session, volume_ids: Iterable[str]) -> dict[str, list[Attachment]]:
    ids = list(volume_ids)
    out: dict[str, list[Attachment]] = {i: [] for i in ids}
    if ids:
        for att in db.scalars(select(Attachment).where(Attachment.volume_id.in_(ids))
                              .order_by(Attachment.created_at, Attachment.id)):
            out[att.volume_id].append(att)
    return out


def transition(db: Session, volume: Volume, expected: Iterable[str], values: dict[str, Any],
               *, no_attachments: bool = False) -> bool:
    """Cinder's conditional_update: set `values` if the status is still one of `expected`
    (and, with `no_attachments`, the volume has none); True when this request won."""
    stmt = update(Volume).where(Volume.id == volume.id, Volume.status.in_(list(expected)))
    if no_attachments:
        stmt = stmt.where(~exists().where(Attachment.volume_id == Volume.id))
    values = {**values, "updated_at": utcnow()}
    done = db.execute(stmt.values(**values).execution_options(synchronize_session=False))
    if done.rowcount != 1:
        db.refresh(volume)
        return False
    db.refresh(volume)
    return True


# ------------------------------------------------------------------ create
def create_volume(db: Session, ctx: RequestContext, settings: Any, *, size: int | None,
                  name: str | None = None, description: str | None = None,
                  volume_type: str | None = None, metadata: dict[str, str] | None = None,
                  availability_zone: str | None = None, snapshot_id: str | None = None,
                  source_volid: str | None = None, image_id: str | None = None,
                  backup_id: str | None = None, multiattach: bool = False,
                  image: Any = None) -> Volume:
    """A new volume in `creating` with its task queued (work.py makes the file).
    `image` is the image record the caller found visible (from `image_id`)."""
    source_size = None
    source_type_id = None
    task_args: dict[str, Any] = {}
    if snapshot_id:
        snap = db.get(Snapshot, snapshot_id)
        if snap is None or not _visible(ctx, snap.project_id):
            raise errors.SnapshotNotFound(snapshot_id=snapshot_id)
        if snap.status != "available":
            raise errors.InvalidSnapshot(reason="Originating snapshot status must be one of "
                                         "'available' values")
        source_size, source_type_id = snap.size, snap.volume_type_id
        task_args = {"source": "snapshot", "id": snap.id}
    elif source_volid:
        src = db.get(Volume, source_volid)
        if src is None or not _visible(ctx, src.project_id):
            raise errors.VolumeNotFound(volume_id=source_volid)
        if src.status not in ("available", "in-use"):
            raise errors.InvalidVolume(reason="Unable to clone volumes that are in an error "
                                       "state")
        source_size, source_type_id = src.size, src.volume_type_id
        task_args = {"source": "volume", "id": src.id}
    elif backup_id:
        backup = db.get(Backup, backup_id)
        if backup is None or not _visible(ctx, backup.project_id):
            raise errors.BackupNotFound(backup_id=backup_id)
        if backup.status != "available":
            raise errors.InvalidBackup(reason="Backup status must be available")
        source_size = backup.size
        task_args = {"source": "backup", "id": backup.id}
    elif image is not None:
        image_gb = -(-(image.size or 0) // 1024 ** 3)
        source_size = max(image_gb, image.min_disk or 0, 1)
        if size is not None and size < source_size:
            if image_gb > size:
                raise errors.InvalidInput(reason=f"Size of specified image {image_gb}GB is "
                                          f"larger than volume size {size}GB.")
            raise errors.InvalidInput(reason=f"Volume size {size}GB cannot be smaller than "
                                      f"the image minDisk size {image.min_disk}GB.")
        task_args = {"source": "image", "id": image.id}
    if size is None:
        if source_size is None:
            raise errors.InvalidInput(reason="Size must be specified")
        size = source_size
    if source_size is not None and size < source_size and task_args.get("source") != "image":
        what = {"snapshot": "snapshot", "volume": "source volume",
                "backup": "backup"}[task_args["source"]]
        raise errors.InvalidInput(reason=f"Volume size '{size}'GB cannot be smaller than the "
                                  f"{what} size {source_size}GB. They must be >= original "
                                  f"{what} size.")
    if availability_zone not in (None, AZ):
        raise errors.InvalidInput(reason=f"Availability zone '{availability_zone}' is invalid.")
    if volume_type:
        vtype = types.find_type(db, ctx, volume_type)
    elif source_type_id and db.get(VolumeType, source_type_id) is not None:
        vtype = db.get(VolumeType, source_type_id)  # type: ignore[assignment]
    else:
        vtype = types.default_for(db, ctx.project_id or "")
    specs = vtype.extra_specs or {}
    if str(specs.get("multiattach", "")).lower() in ("<is> true", "true"):
        multiattach = True
    quotas.check(db, settings, ctx.project_id or "", volumes=1, gigabytes=size,
                 type_name=vtype.name, volume_size=size)
    volume = Volume(
        id=str(uuid.uuid4()), project_id=ctx.project_id or "", user_id=ctx.user_id or "",
        name=name, description=description, size=size, status="creating",
        availability_zone=AZ, volume_type_id=vtype.id, snapshot_id=snapshot_id or None,
        source_volid=source_volid or None, backup_id=backup_id or None,
        image_id=image.id if image is not None else None, multiattach=multiattach,
        bootable=image is not None, metadata_=dict(metadata or {}), host=HOST,
        image_metadata=_image_metadata(image) if image is not None else {},
        admin_metadata={}, task="create", task_args=task_args or {"source": "blank"})
    if snapshot_id or source_volid:
        parent = db.get(Volume, source_volid) if source_volid else db.get(
            Volume, db.get(Snapshot, snapshot_id).volume_id)  # type: ignore[union-attr]
        if parent is not None:
            volume.bootable = parent.bootable
            volume.image_metadata = dict(parent.image_metadata or {})
    db.add(volume)
    db.flush()
    return volume


def _image_metadata(image: Any) -> dict[str, str]:
    """The image's attributes and properties a volume made from it carries (Cinder's
    volume_glance_metadata)."""
    out = {"image_id": image.id, "image_name": image.name or "",
           "checksum": image.checksum or "", "container_format": image.container_format or "",
           "disk_format": image.disk_format or "", "min_disk": str(image.min_disk or 0),
           "min_ram": str(image.min_ram or 0), "size": str(image.size or 0)}
    for key, value in (image.properties or {}).items():
        out[key] = str(value)
    return out


# ------------------------------------------------------------------ list, show, update
SORT_KEYS = ("created_at", "updated_at", "name", "size", "status", "id", "bootable",
             "availability_zone", "volume_type", "project_id")
FILTERS = ("name", "status", "metadata", "availability_zone", "bootable", "volume_type",
           "project_id", "size", "group_id", "created_at", "updated_at", "name~",
           "status~", "description", "description~", "image_metadata", "multiattach")


def list_volumes(db: Session, ctx: RequestContext, filters: dict[str, Any], *,
                 all_tenants: bool, sorts: list[tuple[str, bool]], limit: int | None,
                 marker: str | None, offset: int = 0) -> tuple[list[Volume], int]:
    """A page of the volumes the context lists, and the count of all matching (3.45)."""
    stmt = select(Volume)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Volume.project_id == ctx.project_id)
    for key, value in filters.items():
        if key == "project_id" and ctx.is_admin:
            stmt = stmt.where(Volume.project_id == value)
        elif key in ("name", "status", "availability_zone", "description"):
            stmt = stmt.where(getattr(Volume, key) == value)
        elif key.endswith("~") and key[:-1] in ("name", "status", "description"):
            stmt = stmt.where(getattr(Volume, key[:-1]).like(f"%{value}%"))
        elif key == "size":
            try:
                stmt = stmt.where(Volume.size == int(value))
            except (TypeError, ValueError):
                raise errors.InvalidInput(reason=f"Invalid size {value}") from None
        elif key == "bootable":
            stmt = stmt.where(Volume.bootable == (str(value).lower() in ("true", "1", "t")))
        elif key == "multiattach":
            stmt = stmt.where(Volume.multiattach == (str(value).lower() in ("true", "1", "t")))
        elif key in ("created_at", "updated_at"):
            stmt = stmt.where(_compare(getattr(Volume, key), str(value)))
        elif key == "volume_type":
            vtype = db.scalar(select(VolumeType).where(
                (VolumeType.name == value) | (VolumeType.id == value)))
            stmt = stmt.where(Volume.volume_type_id == (vtype.id if vtype else value))
    rows = list(db.scalars(stmt))
    for key in ("metadata", "image_metadata"):
        wanted = filters.get(key)
        if isinstance(wanted, dict):
            attr = "metadata_" if key == "metadata" else key
            rows = [v for v in rows if all((getattr(v, attr) or {}).get(k) == str(w)
                                           for k, w in wanted.items())]
    type_names = dict(db.execute(select(VolumeType.id, VolumeType.name)).all())
    for key, ascending in reversed(sorts or [("created_at", False)]):
        def sort_value(v: Volume, key: str = key) -> Any:
            if key == "volume_type":
                return type_names.get(v.volume_type_id, "")
            value = getattr(v, key)
            return (value is not None, value if value is not None else 0)
        rows.sort(key=lambda v: v.id)  # the final tie-break, stable below
        rows.sort(key=sort_value, reverse=not ascending)
    total = len(rows)
    if marker:
        ids = [v.id for v in rows]
        if marker not in ids:
            raise errors.VolumeNotFound(volume_id=marker)
        rows = rows[ids.index(marker) + 1:]
    rows = rows[offset:]
    if limit is not None:
        rows = rows[:limit]
    return rows, total


def summary(db: Session, ctx: RequestContext, all_tenants: bool) -> dict[str, Any]:
    stmt = select(func.count(), func.coalesce(func.sum(Volume.size), 0))
    meta_stmt = select(Volume.metadata_)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Volume.project_id == ctx.project_id)
        meta_stmt = meta_stmt.where(Volume.project_id == ctx.project_id)
    count, size = db.execute(stmt).one()
    metadata: dict[str, list[str]] = {}
    for meta in db.scalars(meta_stmt):
        for key, value in (meta or {}).items():
            values = metadata.setdefault(key, [])
            if value not in values:
                values.append(value)
    return {"total_count": count, "total_size": int(size),
            "metadata": {k: v[0] if len(v) == 1 else v for k, v in metadata.items()}}


def update_volume(db: Session, volume: Volume, fields: dict[str, Any]) -> Volume:
    for key in ("name", "description"):
        if key in fields:
            setattr(volume, key, fields[key])
    if "metadata" in fields:
        volume.metadata_ = dict(fields["metadata"] or {})
    volume.updated_at = utcnow()
    db.flush()
    return volume


# ------------------------------------------------------------------ metadata
def set_metadata(db: Session, volume: Volume, metadata: dict[str, str], *,
                 replace: bool) -> dict[str, str]:
    _check_metadata(metadata)
    volume.metadata_ = dict(metadata) if replace else {**(volume.metadata_ or {}), **metadata}
    volume.updated_at = utcnow()
    db.flush()
    return dict(volume.metadata_)


def delete_metadata_key(db: Session, volume: Volume, key: str) -> None:
    meta = dict(volume.metadata_ or {})
    if key not in meta:
        raise errors.VolumeMetadataNotFound(volume_id=volume.id, metadata_key=key)
    del meta[key]
    volume.metadata_ = meta
    db.flush()


def _check_metadata(metadata: Any) -> None:
    if not isinstance(metadata, dict):
        raise errors.InvalidVolumeMetadata(reason="Metadata must be a dict")
    for key, value in metadata.items():
        if not isinstance(key, str) or not key or len(key) > 255:
            raise errors.InvalidVolumeMetadata(reason="Metadata property key blank or "
                                               "greater than 255 characters")
        if not isinstance(value, str) or len(value) > 255:
            raise errors.InvalidVolumeMetadata(reason="Metadata property value greater "
                                               "than 255 characters")


def set_image_metadata(db: Session, volume: Volume, metadata: dict[str, str]) -> dict[str, str]:
    _check_metadata(metadata)
    if volume.status not in ("available", "in-use"):
        raise errors.InvalidVolume(reason="Volume status must be available or in-use")
    volume.image_metadata = {**(volume.image_metadata or {}), **metadata}
    db.flush()
    return dict(volume.image_metadata)


def unset_image_metadata(db: Session, volume: Volume, key: str) -> None:
    meta = dict(volume.image_metadata or {})
    if key not in meta:
        raise errors.NotFound(f"Glance metadata for volume {volume.id} not found.")
    del meta[key]
    volume.image_metadata = meta
    db.flush()


# ------------------------------------------------------------------ delete
def delete_volume(db: Session, ctx: RequestContext, volume: Volume, *, cascade: bool = False,
                  force: bool = False) -> None:
    """`deleting`, its file removed by work.py; snapshots block it unless `cascade`."""
    snaps = list(db.scalars(select(Snapshot).where(Snapshot.volume_id == volume.id)))
    if snaps and not cascade:
        raise errors.InvalidVolume(reason="Volume has snapshots; delete them first, or use "
                                   "cascade")
    if any(s.status not in ("available", "error", "deleting") for s in snaps):
        raise errors.InvalidVolume(reason="Snapshot in a state that cannot be deleted")
    expected = DELETABLE if not force else (*DELETABLE, "creating", "error_deleting",
                                            "deleting", "extending", "retyping",
                                            "maintenance", "reserved", "attaching",
                                            "detaching", "downloading", "uploading")
    if not transition(db, volume, expected, {"status": "deleting", "task": "delete",
                                             "task_args": {"cascade": bool(snaps)},
                                             "claimed_until": None},
                      no_attachments=not force):
        if volume.status == "deleting" and force:
            return
        if db.scalar(select(Attachment.id).where(Attachment.volume_id == volume.id)):
            raise errors.InvalidVolume(reason="Volume status must be available or error or "
                                       "error_restoring or error_extending or error_managing "
                                       "and must not be migrating, attached, belong to a "
                                       "group, have snapshots, awaiting a transfer, or be "
                                       "disassociated from snapshots after volume transfer.")
        raise errors.InvalidVolume(reason="Volume status must be available or error or "
                                   "error_restoring or error_extending or error_managing and "
                                   "must not be migrating, attached, belong to a group, have "
                                   "snapshots, awaiting a transfer, or be disassociated from "
                                   "snapshots after volume transfer.")
    if force:
        for att in db.scalars(select(Attachment).where(Attachment.volume_id == volume.id)):
            db.delete(att)
    for snap in snaps:
        snap.status = "deleting"
    db.flush()


# ------------------------------------------------------------------ actions
def extend(db: Session, ctx: RequestContext, settings: Any, volume: Volume, new_size: Any,
           *, attached_ok: bool) -> None:
    try:
        new_size = int(new_size)
    except (TypeError, ValueError):
        raise errors.InvalidInput(reason="New volume size must be specified as an integer.") \
            from None
    allowed = ("available", "in-use") if attached_ok else ("available",)
    if volume.status not in allowed:
        raise errors.InvalidVolume(reason=f"Volume status must be "
                                   f"{' or '.join(allowed)} to extend, currently "
                                   f"{volume.status}.")
    if new_size <= volume.size:
        raise errors.InvalidInput(reason=f"New size for extend must be greater than current "
                                  f"size. (current: {volume.size}, extended: {new_size}).")
    vtype = db.get(VolumeType, volume.volume_type_id)
    quotas.check(db, settings, volume.project_id, gigabytes=new_size - volume.size,
                 type_name=vtype.name if vtype else None, volume_size=new_size)
    if not transition(db, volume, allowed, {"status": "extending",
                                            "previous_status": volume.status,
                                            "task": "extend", "claimed_until": None,
                                            "task_args": {"new_size": new_size}}):
        raise errors.InvalidVolume(reason="Volume status changed meanwhile")


def retype(db: Session, ctx: RequestContext, settings: Any, volume: Volume, new_type: str,
           policy: str) -> None:
    if volume.status not in ("available", "in-use"):
        raise errors.InvalidVolume(reason="Volume status must be available or in-use")
    if policy not in ("never", "on-demand"):
        raise errors.InvalidInput(reason="migration_policy must be 'on-demand' or 'never', "
                                  f"passed: {policy}")
    vtype = types.find_type(db, ctx, new_type)
    if vtype.id == volume.volume_type_id:
        raise errors.InvalidInput(reason="Retype requires a different volume type.")
    quotas.check(db, settings, volume.project_id, volumes=1, gigabytes=volume.size,
                 type_name=vtype.name)
    # One backend: a retype is a change of record (Cinder's driver retype returning True).
    volume.volume_type_id = vtype.id
    volume.updated_at = utcnow()
    db.flush()


def set_bootable(db: Session, volume: Volume, bootable: Any) -> None:
    volume.bootable = _strict_bool(bootable, "bootable")
    db.flush()


def set_readonly(db: Session, volume: Volume, readonly: Any) -> None:
    if volume.status not in ("available", "in-use"):
        raise errors.InvalidVolume(reason="Volume status must be available or in-use")
    flag = _strict_bool(readonly, "readonly")
    volume.admin_metadata = {**(volume.admin_metadata or {}), "readonly": str(flag)}
    db.flush()


def _strict_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "1", "t", "yes", "y", "on"):
        return True
    if text in ("false", "0", "f", "no", "n", "off"):
        return False
    raise errors.InvalidInput(reason=f"Invalid value '{value}' for {name}. Accepted values "
                              "are: 0, 1, f, false, n, no, off, on, t, true, y, yes")


STATUSES = ("creating", "available", "deleting", "error", "error_deleting", "error_managing",
            "managing", "attaching", "in-use", "detaching", "maintenance", "restoring-backup",
            "error_restoring", "reserved", "awaiting-transfer", "backing-up",
            "error_backing-up", "error_extending", "downloading", "uploading", "retyping",
            "extending")


def reset_status(db: Session, volume: Volume, body: dict[str, Any]) -> None:
    status = body.get("status")
    if status is not None:
        if status not in STATUSES:
            raise errors.InvalidInput(reason=f"Must specify a valid status: {status}")
        volume.status = status
        volume.task = None  # an admin decides: no more work on it
    attach_status = body.get("attach_status")
    if attach_status is not None:
        if attach_status not in ("attached", "detached"):
            raise errors.InvalidInput(reason=f"Must specify a valid attach status: "
                                      f"{attach_status}")
        if attach_status == "detached":
            for att in db.scalars(select(Attachment).where(Attachment.volume_id == volume.id)):
                db.delete(att)
    if body.get("migration_status") is not None:
        volume.migration_status = body["migration_status"] or None
    volume.updated_at = utcnow()
    db.flush()


def reimage(db: Session, volume: Volume, image: Any, *, reserved: bool) -> None:
    """os-reimage (3.68): the volume `downloading` while the image's bytes replace its
    data (work.py's create from an image again), then its status as before."""
    image_gb = -(-(image.size or 0) // 1024 ** 3)
    if image_gb > volume.size or (image.min_disk or 0) > volume.size:
        raise errors.InvalidInput(reason=f"Size of specified image {image_gb}GB is larger "
                                  f"than volume size {volume.size}GB.")
    expected = ("available", "error", "reserved") if reserved else ("available", "error")
    if not transition(db, volume, expected, {
            "status": "downloading", "previous_status": volume.status, "task": "create",
            "task_args": {"source": "image", "id": image.id, "reimage": True},
            "claimed_until": None, "image_id": image.id,
            "image_metadata": _image_metadata(image)}):
        raise errors.InvalidVolume(reason=f"Volume {volume.id} status must be "
                                   f"{' or '.join(expected)}, but current status is "
                                   f"{volume.status}.")


def _compare(column: Any, value: str) -> Any:
    """3.60's `created_at=gt:2024-01-01T00:00:00` (gt, gte, lt, lte, eq, neq)."""
    import datetime as dt

    op, _, when = value.partition(":")
    if not when:
        op, when = "eq", value
    try:
        moment = dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        raise errors.InvalidInput(reason=f"Invalid time {when}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    ops = {"gt": column > moment, "gte": column >= moment, "lt": column < moment,
           "lte": column <= moment, "eq": column == moment, "neq": column != moment}
    if op not in ops:
        raise errors.InvalidInput(reason=f"Invalid operator {op}: one of "
                                  f"{', '.join(ops)}")
    return ops[op]


def upload_check(volume: Volume, force: bool) -> None:
    allowed = ("available", "in-use") if force else ("available",)
    if volume.status not in allowed:
        raise errors.InvalidVolume(reason=f"Volume {volume.id} status must be available or "
                                   f"in-use, but current status is: {volume.status}.")
