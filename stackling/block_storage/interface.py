"""The block-storage service's in-process interface: Nova's calls to Cinder (boot from
volume, os-volume_attachments, delete on termination), Heat's volume resources, and the
dataplane's view of attached volumes. Everything else in `stackling.block_storage` is
its own.

Functions take the caller's session and request context and follow Cinder's rules as
its API does (a volume the context may not see is `VolumeNotFound`, a 404 in Cinder's
body; a volume in the wrong state is `InvalidVolume`, a 400); nothing here commits: the
caller's transaction does. Work a call queues (a volume's file made from an image, a
deletion) starts when the caller's transaction has committed and `wake(runtime)` is
called (or within the workers' poll interval otherwise).

The calls Nova makes, in the order of an attach (the attachments API, 3.44):

    att = attachment_create(db, ctx, volume_id, instance_uuid)            # reserved
    info = attachment_update(db, ctx, att.id, connector)                  # attaching
    attachment_complete(db, ctx, att.id)                                  # attached/in-use
    ...
    attachment_delete(db, ctx, att.id)                                    # available

and of a boot from volume: `create_volume(...)` (status `creating`), then wait until
`get_volume(...).status` is `available` (or `error`: the build fails with Nova's fault),
then the attach above. `connection_info["data"]["path"]` (or `volume_path`) is the
volume's file that the dataplane hands the guest as a block device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import attachments, backend, volumes, work
from stackling.block_storage.errors import (
    ImageNotFound,
    InvalidInput,
    InvalidVolume,
    QoSSpecsNotFound,
    SnapshotNotFound,
    VolumeAttachmentNotFound,
    VolumeNotFound,
    VolumeTypeNotFound,
)
from stackling.block_storage.models import Attachment, Volume
from stackling.common.context import RequestContext

__all__ = [
    "VolumeNotFound", "InvalidVolume", "InvalidInput", "SnapshotNotFound", "ImageNotFound",
    "VolumeAttachmentNotFound", "VolumeInfo", "AttachmentInfo", "get_volume",
    "create_volume", "delete_volume", "attachment_create", "attachment_update",
    "attachment_complete", "attachment_delete", "attachments_for_instance",
    "volume_ids_for_instance", "volume_path", "attached_volume_path", "wake",
    "volume_body", "update_volume", "extend_volume", "retype_volume", "set_readonly",
    "VolumeTypeNotFound", "QoSSpecsNotFound", "create_volume_type", "update_volume_type",
    "delete_volume_type", "volume_type_body", "create_qos_specs", "update_qos_specs",
    "delete_qos_specs", "qos_specs_body", "authorize", "volume_type_visible",
    "create_snapshot", "snapshot_status",
]


@dataclass(frozen=True)
class AttachmentInfo:
    id: str
    volume_id: str
    instance_uuid: str | None
    status: str  # reserved | attaching | attached
    attach_mode: str  # rw | ro | null (not connected yet)
    host: str | None
    mountpoint: str | None
    connection_info: dict[str, Any] | None


@dataclass(frozen=True)
class VolumeInfo:
    id: str
    project_id: str
    name: str | None
    status: str  # Cinder's: creating, available, reserved, attaching, in-use, error, ...
    size: int  # GiB
    availability_zone: str
    bootable: bool
    multiattach: bool
    volume_type_id: str
    fault: str | None  # why a create ended in `error`
    image_metadata: dict[str, str] = field(default_factory=dict)
    attachments: tuple[AttachmentInfo, ...] = ()


def _att(att: Attachment) -> AttachmentInfo:
    return AttachmentInfo(att.id, att.volume_id, att.instance_uuid, att.attach_status,
                          att.attach_mode, att.attached_host, att.mountpoint,
                          att.connection_info)


def _info(db: Session, volume: Volume) -> VolumeInfo:
    atts = volumes.attachments_of(db, [volume.id])[volume.id]
    return VolumeInfo(volume.id, volume.project_id, volume.name, volume.status, volume.size,
                      volume.availability_zone, volume.bootable, volume.multiattach,
                      volume.volume_type_id, volume.fault, dict(volume.image_metadata or {}),
                      tuple(_att(a) for a in atts))


def _driver(db: Session) -> backend.FileDriver:
    runtime = db.info.get("stackling.runtime")
    if runtime is None:
        raise RuntimeError("the session carries no runtime (block_storage component not built)")
    return backend.driver_for(runtime.settings)


def get_volume(db: Session, ctx: RequestContext, volume_id: str) -> VolumeInfo:
    """`GET /v3/volumes/{id}`'s volume as the context sees it (VolumeNotFound)."""
    return _info(db, volumes.get_volume(db, ctx, volume_id))


def create_volume(db: Session, ctx: RequestContext, *, size: int | None,
                  source_type: str = "blank", source_id: str | None = None,
                  name: str | None = None, volume_type: str | None = None,
                  availability_zone: str | None = None,
                  description: str | None = None, metadata: dict[str, str] | None = None,
                  multiattach: bool = False) -> VolumeInfo:
    """A volume for a block device mapping, in the context's project, with Cinder's
    checks and quota: `source_type` blank | image | snapshot | volume (`source_id` the
    image, snapshot or volume id; `size` in GiB may be None for a copy: the source's
    size). Returned `creating`; its file is made after the caller commits (see `wake`).
    Raises VolumeNotFound, SnapshotNotFound, ImageNotFound, InvalidInput, and Cinder's
    quota errors (413 `VolumeLimitExceeded`, `VolumeSizeExceedsAvailableQuota`)."""
    runtime = db.info.get("stackling.runtime")
    settings = runtime.settings if runtime is not None else None
    image = None
    kwargs: dict[str, Any] = {}
    if source_type == "image":
        image = _image(db, ctx, source_id or "")
    elif source_type == "snapshot":
        kwargs["snapshot_id"] = source_id
    elif source_type == "volume":
        kwargs["source_volid"] = source_id
    elif source_type == "backup":
        kwargs["backup_id"] = source_id
    elif source_type != "blank":
        raise InvalidInput(reason=f"Unknown source type {source_type}")
    if metadata is not None:
        volumes._check_metadata(metadata)
    volume = volumes.create_volume(db, ctx, settings, size=size, name=name,
                                   description=description, volume_type=volume_type,
                                   availability_zone=availability_zone, image=image,
                                   metadata=metadata, multiattach=multiattach, **kwargs)
    return _info(db, volume)


def _image(db: Session, ctx: RequestContext, image_id: str) -> Any:
    from stackling.image import interface as images

    try:
        return images.get_image(db, ctx, image_id)
    except images.ImageNotFound:
        raise ImageNotFound(image_id=image_id) from None


def delete_volume(db: Session, ctx: RequestContext, volume_id: str) -> None:
    """Delete a volume (delete_on_termination after its detach): `deleting`, then gone.
    A volume still attached is InvalidVolume; one already gone is a no-op."""
    volume = db.get(Volume, volume_id)
    if volume is None:
        return
    volumes.delete_volume(db, ctx, volumes.get_volume(db, ctx, volume_id))


def create_snapshot(db: Session, ctx: RequestContext, volume_id: str, *, name: str | None,
                    description: str | None, force: bool = False) -> str:
    """`POST /v3/snapshots` (`force` for an attached volume, as Nova's
    create_snapshot_force): `creating`, made by the workers after the commit; its id."""
    from stackling.block_storage import snapshots

    runtime = db.info.get("stackling.runtime")
    return snapshots.create_snapshot(
        db, ctx, runtime.settings if runtime else None, volumes.get_volume(db, ctx, volume_id),
        name=name, description=description, force=force, metadata=None).id


def snapshot_status(db: Session, ctx: RequestContext, snapshot_id: str) -> str:
    """The snapshot's status as `GET /v3/snapshots/{id}` shows it (SnapshotNotFound)."""
    from stackling.block_storage import snapshots

    return snapshots.get_snapshot(db, ctx, snapshot_id).status


def attachment_create(db: Session, ctx: RequestContext, volume_id: str,
                      instance_uuid: str, *, connector: dict[str, Any] | None = None,
                      mode: str | None = None) -> AttachmentInfo:
    """`POST /v3/attachments`: reserve the volume for the instance (`reserved`); with a
    connector, connected at once (`attaching`, connection info returned). A second
    reservation of a non-multiattach volume is InvalidVolume (one of two racing wins)."""
    volume = volumes.get_volume(db, ctx, volume_id)
    att = attachments.reserve(db, volume, instance_uuid, mode=mode or "null")
    if connector is not None:
        attachments.connect(db, _driver(db), volume, att, connector)
    return _att(att)


def attachment_update(db: Session, ctx: RequestContext, attachment_id: str,
                      connector: dict[str, Any]) -> dict[str, Any]:
    """`PUT /v3/attachments/{id}` with the host's connector: the connection info
    (`{"driver_volume_type": "file", "data": {"path": ..., "access_mode": ...}}`)."""
    att = attachments.get_attachment(db, ctx, attachment_id)
    volume = volumes.get_volume(db, ctx, att.volume_id)
    return attachments.connect(db, _driver(db), volume, att, connector)


def attachment_complete(db: Session, ctx: RequestContext, attachment_id: str) -> None:
    """`POST /v3/attachments/{id}/action {"os-complete"}`: attached, the volume in-use."""
    att = attachments.get_attachment(db, ctx, attachment_id)
    attachments.complete(db, volumes.get_volume(db, ctx, att.volume_id), att)


def attachment_delete(db: Session, ctx: RequestContext, attachment_id: str) -> None:
    """`DELETE /v3/attachments/{id}`: detached; the volume `available` when no other
    attachment is left. An attachment already gone is VolumeAttachmentNotFound."""
    att = attachments.get_attachment(db, ctx, attachment_id)
    attachments.delete(db, _driver(db), volumes.get_volume(db, ctx, att.volume_id), att)


def attachments_for_instance(db: Session, instance_uuid: str) -> list[AttachmentInfo]:
    """Every attachment record of the instance (any project: Nova's own bookkeeping),
    oldest first (the attachment order the guest's device names follow)."""
    return [_att(a) for a in attachments.attachments_for_instance(db, instance_uuid)]


def volume_ids_for_instance(db: Session, instance_uuid: str) -> list[str]:
    """The ids of the volumes attached (or being attached) to the instance, in order."""
    return list(dict.fromkeys(a.volume_id for a in
                              attachments.attachments_for_instance(db, instance_uuid)))


def volume_path(settings: Any, volume_id: str) -> Path:
    """The file of a volume on the file backend (it may not exist yet: `creating`)."""
    return backend.driver_for(settings).volume_path(volume_id)


def attached_volume_path(db: Session, settings: Any, instance_uuid: str,
                         volume_id: str) -> Path | None:
    """The file the dataplane hands instance `instance_uuid` for `volume_id`, or None when
    that volume is not attached (`attaching`/`attached`) to it: a guest never reaches a
    volume that is not its own."""
    att = db.scalar(select(Attachment).where(
        Attachment.volume_id == volume_id, Attachment.instance_uuid == instance_uuid,
        Attachment.attach_status.in_(("attaching", "attached"))))
    if att is None:
        return None
    return backend.driver_for(settings).volume_path(volume_id)


def wake(runtime: Any) -> None:
    """Start the work the committed transaction queued (volume files, deletions)."""
    work.wake(runtime)


# ------------------------------------------------------------------ for orchestration
def authorize(runtime: Any, ctx: RequestContext, action: str,
              project_id: str | None = None) -> None:
    """Cinder's policy `action` for `ctx` on a resource of `project_id` (its own by
    default): Heat's resources call Cinder as the stack's owner."""
    from stackling.common.errors import PolicyNotAuthorized

    target = {"project_id": project_id or ctx.project_id}
    if not runtime.enforcer.enforce(action, target, ctx.policy_creds()):
        raise PolicyNotAuthorized(action=action)


def volume_body(db: Session, ctx: RequestContext, volume_id: str) -> dict[str, Any]:
    """The volume as `GET /v3/volumes/{id}` shows its main fields (Heat's `show`)."""
    from stackling.block_storage.models import VolumeType

    volume = volumes.get_volume(db, ctx, volume_id)
    vtype = db.get(VolumeType, volume.volume_type_id)
    atts = volumes.attachments_of(db, [volume.id])[volume.id]
    return {
        "id": volume.id, "name": volume.name, "description": volume.description,
        "status": volume.status, "size": volume.size,
        "availability_zone": volume.availability_zone,
        "created_at": volume.created_at.isoformat(), "snapshot_id": volume.snapshot_id,
        "source_volid": volume.source_volid, "backup_id": volume.backup_id,
        "volume_type": vtype.name if vtype else volume.volume_type_id,
        "metadata": dict(volume.metadata_ or {}), "bootable": str(volume.bootable).lower(),
        "encrypted": False, "multiattach": volume.multiattach,
        "volume_image_metadata": dict(volume.image_metadata or {}),
        "attachments": [{"id": a.volume_id, "attachment_id": a.id, "volume_id": a.volume_id,
                         "server_id": a.instance_uuid, "device": a.mountpoint,
                         "host_name": a.attached_host} for a in atts
                        if a.attach_status == "attached"]}


def update_volume(db: Session, ctx: RequestContext, volume_id: str,
                  fields: dict[str, Any]) -> None:
    """`PUT /v3/volumes/{id}`: name, description and/or metadata (replaced)."""
    if "metadata" in fields:
        volumes._check_metadata(fields["metadata"])
    volumes.update_volume(db, volumes.get_volume(db, ctx, volume_id), fields)


def extend_volume(db: Session, ctx: RequestContext, volume_id: str, new_size: int) -> None:
    """os-extend (an in-use volume too, as 3.42): `extending`, then its status again."""
    runtime = db.info.get("stackling.runtime")
    volumes.extend(db, ctx, runtime.settings if runtime else None,
                   volumes.get_volume(db, ctx, volume_id), new_size, attached_ok=True)


def retype_volume(db: Session, ctx: RequestContext, volume_id: str, new_type: str) -> None:
    runtime = db.info.get("stackling.runtime")
    volumes.retype(db, ctx, runtime.settings if runtime else None,
                   volumes.get_volume(db, ctx, volume_id), new_type, "on-demand")


def set_readonly(db: Session, ctx: RequestContext, volume_id: str, readonly: bool) -> None:
    volumes.set_readonly(db, volumes.get_volume(db, ctx, volume_id), readonly)


def create_volume_type(db: Session, ctx: RequestContext, *, name: str,
                       description: str | None, is_public: bool,
                       extra_specs: dict[str, str], projects: list[str]) -> str:
    """`POST /v3/types` (+ os-volume-type-access for `projects`): the type's id."""
    from stackling.block_storage import types

    vtype = types.create_type(db, name, description, is_public,
                              {str(k): str(v) for k, v in extra_specs.items()})
    for project in projects:
        types.add_access(db, vtype, project)
    return vtype.id


def update_volume_type(db: Session, ctx: RequestContext, type_id: str, *,
                       fields: dict[str, Any]) -> None:
    """name/description/is_public; `extra_specs` replaced; `projects` the access list."""
    from stackling.block_storage import types

    vtype = types.get_type(db, ctx, type_id)
    types.update_type(db, vtype, name=fields.get("name"),
                      description=fields.get("description"),
                      description_given="description" in fields,
                      is_public=fields.get("is_public"))
    if "extra_specs" in fields:
        vtype.extra_specs = {str(k): str(v) for k, v in (fields["extra_specs"] or {}).items()}
    if "projects" in fields and not vtype.is_public:
        have = set(types.access_list(db, vtype))
        want = set(fields["projects"] or [])
        for project in want - have:
            types.add_access(db, vtype, project)
        for project in have - want:
            types.remove_access(db, vtype, project)
    db.flush()


def delete_volume_type(db: Session, ctx: RequestContext, type_id: str) -> None:
    from stackling.block_storage import types

    types.delete_type(db, types.get_type(db, ctx, type_id))


def volume_type_visible(db: Session, ctx: RequestContext, ref: str) -> bool:
    """Whether a volume type of that id or name is one the context may see (Nova checks a
    boot's `volume_type` so before it builds)."""
    from stackling.block_storage import types

    try:
        types.find_type(db, ctx, ref)
    except VolumeTypeNotFound:
        return False
    return True


def volume_type_body(db: Session, ctx: RequestContext, type_id: str) -> dict[str, Any]:
    from stackling.block_storage import types

    vtype = types.get_type(db, ctx, type_id)
    return {"id": vtype.id, "name": vtype.name, "description": vtype.description,
            "is_public": vtype.is_public, "extra_specs": dict(vtype.extra_specs or {}),
            "qos_specs_id": vtype.qos_specs_id}


def create_qos_specs(db: Session, name: str, specs: dict[str, Any]) -> str:
    from stackling.block_storage import types

    return types.create_qos(db, name, specs).id


def update_qos_specs(db: Session, qos_id: str, specs: dict[str, Any]) -> None:
    """The specs replaced by `specs` (keys gone from it are unset)."""
    from stackling.block_storage import types

    qos = types.get_qos(db, qos_id)
    qos.specs = {}
    types.update_qos(db, qos, specs)


def delete_qos_specs(db: Session, qos_id: str) -> None:
    """Deleted, its volume types disassociated first (Heat's handle_delete)."""
    from stackling.block_storage import types

    types.delete_qos(db, types.get_qos(db, qos_id), force=True)


def qos_specs_body(db: Session, qos_id: str) -> dict[str, Any]:
    from stackling.block_storage import types

    qos = types.get_qos(db, qos_id)
    return {"id": qos.id, "name": qos.name, "consumer": qos.consumer,
            "specs": dict(qos.specs or {})}
