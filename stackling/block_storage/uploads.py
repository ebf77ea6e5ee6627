"""os-volume_upload_image (`openstack image create --volume`): a queued image made at
once in the caller's project, the volume `uploading` while work.py copies its file into
the image's data (then `active`, and the volume back to its previous status)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.block_storage import errors, volumes
from stackling.block_storage.backend import FileDriver
from stackling.block_storage.models import Volume, VolumeType
from stackling.common.context import RequestContext

DISK_FORMATS = ("raw", "vmdk", "vdi", "qcow2", "vhd", "vhdx", "ploop")
CONTAINER_FORMATS = ("bare",)


def upload_to_image(db: Session, ctx: RequestContext, driver: FileDriver, volume: Volume,
                    args: dict[str, Any], *, public_allowed: bool,
                    since_3_1: bool) -> dict[str, Any]:
    from stackling.image import interface as images

    name = args.get("image_name")
    if not isinstance(name, str) or not name:
        raise errors.InvalidInput(reason="Image name must be specified")
    disk_format = str(args.get("disk_format") or "raw").lower()
    if disk_format not in DISK_FORMATS:
        raise errors.InvalidInput(reason=f"Invalid disk-format '{disk_format}' is specified. "
                                  f"Allowed disk-formats are {', '.join(DISK_FORMATS)}.")
    container_format = str(args.get("container_format") or "bare")
    if container_format not in CONTAINER_FORMATS:
        raise errors.InvalidInput(reason=f"Invalid container-format '{container_format}' "
                                  "is specified. Allowed container-formats are bare.")
    visibility = args.get("visibility", "private") if since_3_1 else "private"
    if visibility == "public" and not public_allowed:
        raise errors.NotAuthorized("Policy doesn't allow volume_extension:volume_actions:"
                                   "upload_public to be performed.")
    protected = bool(args.get("protected", False)) if since_3_1 else False
    # the volume's image properties go with it (Cinder's glance metadata, less the
    # attributes the new image has of its own)
    properties = {k: v for k, v in (volume.image_metadata or {}).items()
                  if k not in volumes.IMAGE_KEYS_PROTECTED}
    image_id = images.create_image(db, ctx, {
        "name": name, "disk_format": disk_format, "container_format": container_format,
        "visibility": visibility, "protected": protected, "min_disk": volume.size,
        **properties})
    previous = volume.status
    if not volumes.transition(db, volume, ("available", "in-use"), {
            "status": "uploading", "previous_status": previous, "task": "upload",
            "task_args": {"image_id": image_id}, "claimed_until": None}):
        raise errors.InvalidVolume(reason="Volume status changed meanwhile")
    vtype = db.get(VolumeType, volume.volume_type_id)
    return {"id": volume.id, "updated_at": volume.updated_at, "status": "uploading",
            "display_description": volume.description, "size": volume.size,
            "volume_type": {"id": vtype.id, "name": vtype.name} if vtype else None,
            "image_id": image_id, "container_format": container_format,
            "disk_format": disk_format, "image_name": name, "visibility": visibility,
            "protected": protected}
