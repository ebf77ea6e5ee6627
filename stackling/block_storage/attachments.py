"""Attachments: the 3.27+ API (create = reserve, update with a connector = connect,
complete = attached, delete = detach) and the legacy actions (os-reserve, os-attach,
os-begin_detaching, os-detach, os-initialize_connection, os-terminate_connection) over
the same records, as cinder/volume/api.py and manager.py do.

States: the volume `available -> reserved -> attaching -> in-use -> detaching ->
available`; an attachment `reserved -> attaching -> attached` (then deleted). Two
reservations of one volume race on one conditional UPDATE of its status: one wins."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import errors
from stackling.block_storage.backend import Driver
from stackling.block_storage.models import Attachment, Volume
from stackling.block_storage.volumes import get_volume, transition
from stackling.common.context import RequestContext
from stackling.common.db import utcnow


def get_attachment(db: Session, ctx: RequestContext, attachment_id: str) -> Attachment:
    att = db.get(Attachment, attachment_id)
    if att is not None:
        volume = db.get(Volume, att.volume_id)
        if volume is not None and (ctx.is_admin or volume.project_id == ctx.project_id):
            return att
    raise errors.VolumeAttachmentNotFound(filter=f"attachment_id = {attachment_id}")


def list_attachments(db: Session, ctx: RequestContext, filters: dict[str, str], *,
                     all_tenants: bool) -> list[Attachment]:
    stmt = select(Attachment).join(Volume, Volume.id == Attachment.volume_id)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Volume.project_id == ctx.project_id)
    if filters.get("volume_id"):
        stmt = stmt.where(Attachment.volume_id == filters["volume_id"])
    if filters.get("instance_id"):
        stmt = stmt.where(Attachment.instance_uuid == filters["instance_id"])
    if filters.get("status"):
        stmt = stmt.where(Attachment.attach_status == filters["status"])
    return list(db.scalars(stmt.order_by(Attachment.created_at.desc(), Attachment.id)))


def reserve(db: Session, volume: Volume, instance_uuid: str | None, *,
            mode: str = "null") -> Attachment:
    """Cinder's _attachment_reserve: the volume `reserved` (one winner), a record."""
    if volume.multiattach:
        expected: tuple[str, ...] = ("available", "in-use", "downloading", "reserved")
    else:
        expected = ("available", "downloading")
    if not transition(db, volume, expected, {"status": "reserved",
                                             "previous_status": volume.status}):
        same_instance = instance_uuid and volume.status in ("in-use", "reserved") and any(
            a.instance_uuid == instance_uuid for a in db.scalars(
                select(Attachment).where(Attachment.volume_id == volume.id)))
        if not same_instance:  # a move of the same instance may reserve again
            statuses = " or ".join(expected)
            raise errors.InvalidVolume(reason=f"Volume {volume.id} status must be "
                                       f"{statuses} to reserve, but the current status is "
                                       f"{volume.status}.")
    att = Attachment(id=str(uuid.uuid4()), volume_id=volume.id, instance_uuid=instance_uuid,
                     attach_status="reserved", attach_mode=mode)
    db.add(att)
    db.flush()
    return att


def connect(db: Session, driver: Driver, volume: Volume, att: Attachment,
            connector: dict[str, Any], *, mark_attached: bool = False) -> dict[str, Any]:
    """attachment_update: the connection info for `connector`'s host; the attachment
    `attaching` (`attached` for the legacy os-attach), the volume `attaching`/`in-use`."""
    if "error" in volume.status:
        raise errors.InvalidVolume(reason=f"Volume attachments can not be updated if the "
                                   f"volume is in an error state. The Volume {volume.id} "
                                   f"currently has a status of: {volume.status} ")
    if not isinstance(connector, dict):
        raise errors.InvalidInput(reason="connector must be a dict")
    mode = att.attach_mode if att.attach_mode not in (None, "null") else connector.get(
        "mode", "rw")
    readonly = (volume.admin_metadata or {}).get("readonly") == "True"
    if readonly and mode == "rw" and att.attach_mode in (None, "null"):
        mode = "ro"
    info = driver.initialize_connection(volume.id, connector)
    info["data"]["access_mode"] = mode
    info["connector"] = connector
    att.connector = dict(connector)
    att.connection_info = info
    att.attach_mode = mode
    att.attached_host = connector.get("host") or None
    att.mountpoint = connector.get("mountpoint") or att.mountpoint
    att.attach_status = "attached" if mark_attached else "attaching"
    att.attach_time = utcnow()
    volume.status = "in-use" if mark_attached else "attaching"
    volume.updated_at = utcnow()
    db.flush()
    return info


def complete(db: Session, volume: Volume, att: Attachment) -> None:
    """3.44: the attachment `attached`, the volume `in-use`."""
    if att.attach_status not in ("attaching", "attached") or not att.connection_info:
        raise errors.InvalidVolume(reason=f"Attachment {att.id} has no connection to "
                                   "complete (update it with a connector first).")
    att.attach_status = "attached"
    volume.status = "in-use"
    volume.updated_at = utcnow()
    db.flush()


def delete(db: Session, driver: Driver, volume: Volume, att: Attachment) -> None:
    """Detach: the connection terminated, the record gone; the volume `available` once
    no attachment is left (else `in-use`, or `reserved` if only reservations remain)."""
    if att.connector:
        driver.terminate_connection(volume.id, att.connector)
    db.delete(att)
    db.flush()
    left = list(db.scalars(select(Attachment).where(Attachment.volume_id == volume.id)))
    if not left:
        volume.status = "available"
    elif any(a.attach_status == "attached" for a in left):
        volume.status = "in-use"
    elif any(a.attach_status == "attaching" for a in left):
        volume.status = "attaching"
    else:
        volume.status = "reserved"
    volume.updated_at = utcnow()
    db.flush()


def attachments_for_instance(db: Session, instance_uuid: str) -> list[Attachment]:
    return list(db.scalars(select(Attachment).where(Attachment.instance_uuid == instance_uuid)
                           .order_by(Attachment.created_at, Attachment.id)))


# ------------------------------------------------------------------ legacy actions
def legacy_reserve(db: Session, ctx: RequestContext, volume: Volume) -> None:
    """os-reserve: the volume `attaching` with an attachment record `attaching`."""
    att = reserve(db, volume, None)
    att.attach_status = "attaching"
    volume.status = "attaching"
    db.flush()


def legacy_unreserve(db: Session, volume: Volume) -> None:
    for att in db.scalars(select(Attachment).where(
            Attachment.volume_id == volume.id,
            Attachment.attach_status.in_(("reserved", "attaching")))):
        db.delete(att)
    db.flush()
    if volume.status in ("attaching", "reserved"):
        left = db.scalar(select(Attachment.id).where(Attachment.volume_id == volume.id))
        volume.status = "in-use" if left else "available"
    db.flush()


def legacy_attach(db: Session, driver: Driver, volume: Volume, body: dict[str, Any]) -> None:
    """os-attach: the reserved record (or a new one) attached to the instance or host."""
    mode = body.get("mode", "rw")
    if mode not in ("rw", "ro"):
        raise errors.InvalidInput(reason=f"Invalid attaching mode '{mode}' for volume "
                                  f"{volume.id}.")
    instance = body.get("instance_uuid")
    host = body.get("host_name")
    if not instance and not host:
        raise errors.InvalidInput(reason="Invalid request to attach volume to an invalid "
                                  "target")
    att = db.scalar(select(Attachment).where(
        Attachment.volume_id == volume.id,
        Attachment.attach_status.in_(("reserved", "attaching"))))
    if att is None:
        att = reserve(db, volume, instance)
    att.instance_uuid = instance
    att.attach_mode = mode
    connect(db, driver, volume, att, {"host": host or "", "mountpoint": body.get(
        "mountpoint")}, mark_attached=True)
    att.attached_host = host or att.attached_host


def begin_detaching(db: Session, volume: Volume) -> None:
    if not transition(db, volume, ("in-use",), {"status": "detaching"}):
        raise errors.InvalidVolume(reason="Unable to detach volume. Volume status must be "
                                   "'in-use' and attach_status must be 'attached' to detach.")


def roll_detaching(db: Session, volume: Volume) -> None:
    transition(db, volume, ("detaching",), {"status": "in-use"})


def legacy_detach(db: Session, driver: Driver, volume: Volume,
                  attachment_id: str | None) -> None:
    stmt = select(Attachment).where(Attachment.volume_id == volume.id)
    if attachment_id:
        stmt = stmt.where(Attachment.id == attachment_id)
    rows = list(db.scalars(stmt))
    if not rows:
        if attachment_id:
            raise errors.VolumeAttachmentNotFound(filter=f"attachment_id = {attachment_id}")
        if volume.status in ("detaching", "in-use"):
            volume.status = "available"
            db.flush()
        return
    if len(rows) > 1 and not attachment_id:
        raise errors.InvalidVolume(reason="Volume has more than one attachment: name the "
                                   "attachment_id to detach.")
    delete(db, driver, volume, rows[0])


def initialize_connection(db: Session, ctx: RequestContext, driver: Driver, volume: Volume,
                          connector: dict[str, Any]) -> dict[str, Any]:
    """os-initialize_connection: the connection info (the record of the attachment the
    instance reserved keeps the connector)."""
    if not isinstance(connector, dict):
        raise errors.InvalidInput(reason="Must specify 'connector'")
    if volume.status not in ("attaching", "in-use", "reserved", "available", "detaching"):
        raise errors.InvalidVolume(reason=f"Volume {volume.id} status must be available, "
                                   f"attaching or in-use, but is {volume.status}.")
    info = driver.initialize_connection(volume.id, connector)
    att = db.scalar(select(Attachment).where(
        Attachment.volume_id == volume.id,
        Attachment.attach_status.in_(("reserved", "attaching"))))
    if att is not None:
        att.connector = dict(connector)
        att.connection_info = info
        info["data"]["access_mode"] = att.attach_mode if att.attach_mode in ("rw", "ro") \
            else "rw"
    db.flush()
    return info


def terminate_connection(db: Session, driver: Driver, volume: Volume,
                         connector: dict[str, Any]) -> None:
    driver.terminate_connection(volume.id, connector or {})


def get_volume_for_attach(db: Session, ctx: RequestContext, volume_id: str) -> Volume:
    return get_volume(db, ctx, volume_id)
