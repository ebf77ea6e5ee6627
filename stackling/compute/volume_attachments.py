"""os-volume_attachments: Nova's attach_volume / detach_volume / swap_volume and the
2.85 attachment update, over Cinder's attachments API (create, update with this host's
connector, complete; delete on detach)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.block_storage import interface as cinder
from stackling.common.context import RequestContext
from stackling.common.errors import BadRequest, Conflict, NotFound
from stackling.compute import actions, block_devices
from stackling.compute.errors import InstanceInvalidState, InstanceIsLocked
from stackling.compute.models import BlockDeviceMapping, Instance

# compute/api.py's check_instance_state for attach_volume and detach_volume
ATTACH_STATES = ("active", "paused", "stopped", "resized", "soft-delete", "shelved",
                 "shelved_offloaded")


class VolumeNotFound(NotFound):
    message = "Volume %(volume_id)s could not be found."


class NotAttached(NotFound):
    message = "Instance %(instance)s is not attached to volume %(volume)s"


class InvalidInput(BadRequest):
    message = "Invalid input received: %(reason)s"


def _check(inst: Instance, ctx: RequestContext, method: str) -> None:
    if inst.locked and not ctx.is_admin:
        raise InstanceIsLocked(instance_uuid=inst.uuid)
    if inst.vm_state not in ATTACH_STATES or inst.task_state is not None:
        attr, state = ("task_state", inst.task_state) if inst.task_state else (
            "vm_state", inst.vm_state)
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr=attr,
                                   state=state)


def _volume(db: Session, ctx: RequestContext, volume_id: str) -> cinder.VolumeInfo:
    try:
        return cinder.get_volume(db, ctx, volume_id)
    except cinder.VolumeNotFound:
        raise VolumeNotFound(volume_id=volume_id) from None


def mapping(db: Session, inst: Instance, volume_id: str) -> BlockDeviceMapping:
    row = db.scalar(select(BlockDeviceMapping).where(
        BlockDeviceMapping.instance_uuid == inst.uuid,
        BlockDeviceMapping.volume_id == volume_id))
    if row is None:
        raise NotAttached(instance=inst.uuid, volume=volume_id)
    return row


def list_attachments(db: Session, inst: Instance) -> list[BlockDeviceMapping]:
    return block_devices.volume_mappings(db, [inst.uuid])[inst.uuid]


def attach(db: Session, ctx: RequestContext, inst: Instance, volume_id: str, *,
           tag: str | None = None, delete_on_termination: bool = False) -> BlockDeviceMapping:
    """Reserve, connect to the server's host, complete: the volume in-use at the next
    free /dev/vdX. A shelved-offloaded server's volume stays reserved (no host, no
    device) until unshelve connects it. The caller holds the instance row's lock, so
    two attaches to one server take device names one after the other."""
    _check(inst, ctx, "attach_volume")
    volume = _volume(db, ctx, volume_id)
    rows = block_devices.mappings(db, inst.uuid)
    if any(r.volume_id == volume_id for r in rows):
        raise block_devices.InvalidVolume(reason=f"volume {volume_id} already attached")
    try:
        att = cinder.attachment_create(db, ctx, volume_id, inst.uuid)
    except cinder.InvalidVolume as err:
        raise InvalidInput(reason=f"{err.text} (HTTP 400)") from None
    offloaded = inst.vm_state == "shelved_offloaded" or not inst.host
    row = BlockDeviceMapping(
        uuid=str(uuid.uuid4()), instance_uuid=inst.uuid, source_type="volume",
        destination_type="volume", boot_index=None, volume_id=volume_id,
        volume_size=volume.size, delete_on_termination=delete_on_termination, tag=tag,
        attachment_id=att.id,
        device_name=None if offloaded else block_devices.next_device_name(rows))
    db.add(row)
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        raise block_devices.InvalidVolume(reason=f"volume {volume_id} already attached") \
            from None
    if not offloaded:
        cinder.attachment_update(db, ctx, att.id, block_devices.connector(inst,
                                                                          row.device_name))
        cinder.attachment_complete(db, ctx, att.id)
    actions.record(db, ctx, inst, "attach_volume")
    db.flush()
    return row


def detach(db: Session, ctx: RequestContext, inst: Instance, volume_id: str) -> None:
    _check(inst, ctx, "detach_volume")
    _volume(db, ctx, volume_id)
    row = mapping(db, inst, volume_id)
    if row.boot_index == 0:
        raise BadRequest("Cannot detach a root device volume")
    block_devices.disconnect(db, ctx, row)
    db.delete(row)
    actions.record(db, ctx, inst, "detach_volume")
    db.flush()


def update(db: Session, ctx: RequestContext, inst: Instance, volume_id: str,
           att: dict[str, Any]) -> None:
    """2.85's update of the attachment's own fields: only delete_on_termination changes."""
    row = mapping(db, inst, volume_id)
    if "id" in att and att["id"] != volume_id:
        raise BadRequest("The id property is not mutable")
    if "serverId" in att and att["serverId"] != inst.uuid:
        raise BadRequest("The serverId property is not mutable")
    if "device" in att and att["device"] != row.device_name:
        raise BadRequest("The device property is not mutable")
    if "tag" in att and att["tag"] != row.tag:
        raise BadRequest("The tag property is not mutable")
    if "delete_on_termination" in att:
        row.delete_on_termination = block_devices._bdm_bool(att["delete_on_termination"])
    db.flush()


def swap(db: Session, ctx: RequestContext, inst: Instance, old_id: str, new_id: str) -> None:
    """Nova's swap_volume is Cinder's to call during a volume migration (retype with
    migration): the old volume must be migrating, which no volume here ever is."""
    _volume(db, ctx, old_id)
    raise Conflict(f"volume {old_id} is not migrating; this API should only be called by "
                   "Cinder")
