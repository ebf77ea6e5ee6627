"""Block device mappings: Nova's `nova/block_device.py` and the BDM half of
`compute/api.py` (`_check_and_transform_bdm`, `_validate_bdm`), and the compute manager's
`_prep_block_device` for a build. Volumes are Cinder's, reached only through
`block_storage.interface`.

A server's disks are rows of `compute_block_device_mapping`: the root of an image-backed
server is implied (/dev/vda, no row), volumes hold their Cinder attachment. Device names
are given as Nova's libvirt driver gives them: the root is vda, each volume the next free
vdX in attachment order (a requested name is ignored, as libvirt ignores it).
"""

from __future__ import annotations

import json
import string
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import interface as cinder
from stackling.common.context import RequestContext
from stackling.common.errors import ApiError, BadRequest
from stackling.common.listing import to_bool
from stackling.compute.models import BlockDeviceMapping, Instance

# nova.objects.fields.DiskBus.ALL
DISK_BUSES = ("fdc", "ide", "sata", "scsi", "usb", "virtio", "xen", "lxc", "uml")
MAX_LOCAL_BLOCK_DEVICES = 3  # Nova's [DEFAULT] max_local_block_devices
# Nova's block_device_allocate_retries (60) x block_device_allocate_retries_interval (3 s)
VOLUME_WAIT_SECONDS = 180
VOLUME_WAIT_INTERVAL = 3
ROOT_DEVICE = "/dev/vda"

_V2_FIELDS = {"source_type", "destination_type", "guest_format", "device_type", "disk_bus",
              "boot_index", "device_name", "delete_on_termination", "snapshot_id",
              "volume_id", "volume_size", "image_id", "no_device", "connection_info", "tag",
              "volume_type", "uuid", "virtual_name"}


class InvalidBDM(BadRequest):
    message = "Block Device Mapping is Invalid."


class InvalidBDMFormat(InvalidBDM):
    message = "Block Device Mapping is Invalid: %(details)s"


class InvalidBDMBootSequence(InvalidBDM):
    message = ("Block Device Mapping is Invalid: Boot sequence for the instance and "
               "image/block device mapping combination is not valid.")


class InvalidBDMVolume(InvalidBDM):
    message = "Block Device Mapping is Invalid: failed to get volume %(id)s."


class InvalidBDMImage(InvalidBDM):
    message = "Block Device Mapping is Invalid: failed to get image %(id)s."


class InvalidBDMVolumeNotBootable(InvalidBDM):
    message = "Block Device %(id)s is not bootable."


class InvalidBDMLocalsLimit(InvalidBDM):
    message = ("Block Device Mapping is Invalid: You specified more local devices than the "
               "limit allows")


class InvalidBDMEphemeralSize(InvalidBDM):
    message = ("Ephemeral disks requested are larger than the instance type allows. If no "
               "size is given in one block device mapping, flavor ephemeral size will be used.")


class InvalidBDMSwapSize(InvalidBDM):
    message = "Swap drive requested is larger than instance type allows."


class VolumeTypeNotFound(BadRequest):
    message = "Volume type %(id_or_name)s could not be found."


class InvalidVolume(BadRequest):
    message = "Invalid volume: %(reason)s"


# ------------------------------------------------------------------ API-time parsing
def _bdm_bool(value: Any) -> bool:
    return to_bool(value) if isinstance(value, str) else bool(value)


def _validated(bdm: dict[str, Any]) -> dict[str, Any]:
    """BlockDeviceDict._validate: unknown fields, required source_type, device name,
    volume_size, boot_index."""
    unknown = set(bdm) - _V2_FIELDS
    if unknown:
        raise InvalidBDMFormat(details="Following fields are invalid: " + " ".join(unknown))
    if bdm.get("no_device"):
        return bdm
    if "source_type" not in bdm:
        raise InvalidBDMFormat(details="Some required fields are missing")
    bdm["delete_on_termination"] = _bdm_bool(bdm.get("delete_on_termination", False))
    name = bdm.get("device_name")
    if name is not None:
        if not 1 <= len(name) <= 255:
            raise InvalidBDMFormat(details="Device name empty or too long.")
        if " " in name:
            raise InvalidBDMFormat(details="Device name contains spaces.")
    if bdm.get("volume_size"):
        try:
            bdm["volume_size"] = int(bdm["volume_size"])
            if bdm["volume_size"] < 0:
                raise ValueError
        except (TypeError, ValueError):
            raise InvalidBDMFormat(details="Invalid volume_size.") from None
    if bdm.get("boot_index"):
        try:
            bdm["boot_index"] = int(bdm["boot_index"])
        except (TypeError, ValueError):
            raise InvalidBDMFormat(details="Boot index is invalid.") from None
    elif bdm.get("boot_index") in (0, "0"):
        bdm["boot_index"] = 0
    return bdm


def from_api(item: dict[str, Any], image_given: bool) -> dict[str, Any]:
    """BlockDeviceDict.from_api: one block_device_mapping_v2 item."""
    bdm = dict(item)
    if not bdm.get("no_device"):
        source, dest = bdm.get("source_type"), bdm.get("destination_type")
        device_uuid, vtype = bdm.get("uuid"), bdm.get("volume_type")
        if source == "blank" and device_uuid:
            raise InvalidBDMFormat(details="Invalid device UUID.")
        if source != "blank":
            if not device_uuid:
                raise InvalidBDMFormat(details="Missing device UUID.")
            bdm[f"{source}_id"] = device_uuid
        if source == "image" and dest == "local":
            boot_index = bdm.get("boot_index", -1)
            if not (image_given and int(-1 if boot_index is None else boot_index) == 0):
                raise InvalidBDMFormat(details="Mapping image to local is not supported.")
        if dest == "local" and vtype:
            raise InvalidBDMFormat(details="Specifying a volume_type with destination_type="
                                           "local is not supported.")
        if source == "volume" and vtype:
            raise InvalidBDMFormat(details="Specifying volume type to existing volume is not "
                                           "supported.")
    bdm.pop("uuid", None)
    return _validated(bdm)


def _strip_dev(name: str | None) -> str:
    return (name or "").removeprefix("/dev/")


def from_legacy(items: list[dict[str, Any]], image_ref: str) -> list[dict[str, Any]]:
    """BlockDeviceDict.from_legacy and from_legacy_mapping (root device name vda)."""
    out = []
    for legacy in items:
        bdm = {k: v for k, v in legacy.items() if k != "virtual_name"}
        virt = legacy.get("virtual_name") or ""
        if virt == "swap" or virt.startswith("ephemeral"):
            bdm.update(source_type="blank", destination_type="local",
                       delete_on_termination=True,
                       guest_format="swap" if virt == "swap" else None)
        elif legacy.get("snapshot_id"):
            bdm.update(source_type="snapshot", destination_type="volume")
        elif legacy.get("volume_id"):
            bdm.update(source_type="volume", destination_type="volume")
        elif not legacy.get("no_device"):
            raise InvalidBDMFormat(details="Unrecognized legacy format.")
        out.append(_validated(bdm))
    if not image_ref:
        non_blank = [b for b in out if b.get("source_type") not in (None, "blank")]
        if non_blank:
            non_blank[0]["boot_index"] = 0
        return out
    for bdm in out:
        if bdm.get("source_type") in ("volume", "snapshot") and \
                _strip_dev(bdm.get("device_name")) == "vda":
            bdm["boot_index"] = 0
        else:
            bdm["boot_index"] = None if bdm.get("no_device") else -1
    return out


@dataclass
class Checked:
    """The mappings a create accepted, and what they mean for the server."""

    bdms: list[dict[str, Any]]
    volume_backed: bool
    image_meta: dict[str, Any] | None  # the root's image (or volume image metadata)


def check_create(db: Session, ctx: RequestContext, server: dict[str, Any], image_ref: str,
                 flavor: Any, max_count: int) -> Checked | None:
    """The servers API's _process_bdms_for_create and compute's _check_and_transform_bdm
    and _validate_bdm; None when the request maps no block device."""
    legacy, v2 = server.get("block_device_mapping") or [], \
        server.get("block_device_mapping_v2") or []
    if legacy and v2:
        raise BadRequest("Using different block_device_mapping syntaxes is not allowed in "
                         "the same request.")
    image = _image_of(db, ctx, image_ref)
    image_bdms = image_defined(image.properties if image is not None else None)
    if not legacy and not v2 and not image_bdms:
        return None
    bdms = from_legacy(legacy, image_ref) if legacy else \
        [from_api(item, bool(image_ref)) for item in v2]
    bdms = [b for b in bdms if not b.get("no_device")]
    if image_bdms:
        # Nova's _check_and_transform_bdm: the image's mappings (a volume-backed server's
        # snapshot), under the request's on the same device; an image root of the request
        # gives way to the image's own root mapping, and one is added when neither has it
        root_in_image = any(b.get("boot_index") == 0 for b in image_bdms)
        if root_in_image:
            bdms = [b for b in bdms if not (b.get("source_type") == "image"
                                            and b.get("boot_index") == 0)]
            if legacy:
                for b in bdms:
                    if b.get("boot_index") == 0:
                        b["boot_index"] = -1
        bdms = _merge(image_bdms, bdms)
        if not any(b.get("boot_index") == 0 for b in bdms):
            bdms.insert(0, {"source_type": "image", "destination_type": "local",
                            "boot_index": 0, "image_id": image_ref,
                            "delete_on_termination": True})
        if max_count > 1 and any(b["source_type"] == "volume" for b in bdms):
            raise BadRequest("Cannot attach one or more volumes to multiple instances")
        checked = _validate(db, ctx, bdms, image_ref, flavor)
        if checked.volume_backed and image is not None:
            # the image booted is the server's image meta, as Nova's boot_meta
            checked.image_meta = {"id": image.id, "min_ram": image.min_ram or 0,
                                  "properties": {k: v for k, v in
                                                 (image.properties or {}).items() if k not in
                                                 ("block_device_mapping", "bdm_v2")}}
        return checked
    if image_ref:
        for bdm in bdms:
            if bdm.get("destination_type") == "volume" and \
                    _strip_dev(bdm.get("device_name")) == "vda":
                raise BadRequest("The volume cannot be assigned the same device name as the "
                                 "root device vda")
    if max_count > 1 and any(b["source_type"] == "volume" for b in bdms):
        raise BadRequest("Cannot attach one or more volumes to multiple instances")
    if not bdms:
        return None
    return _validate(db, ctx, bdms, image_ref, flavor)


def _image_of(db: Session, ctx: RequestContext, image_ref: str) -> Any:
    """The image booted, for the mappings it defines (None: no image, or one the caller
    cannot use, which the create's image check reports)."""
    if not image_ref:
        return None
    from stackling.image import interface as images

    try:
        return images.get_image(db, ctx, image_ref)
    except ApiError:
        return None


def _validate(db: Session, ctx: RequestContext, bdms: list[dict[str, Any]], image_ref: str,
              flavor: Any) -> Checked:
    from stackling.image import interface as images

    boot = sorted(b["boot_index"] for b in bdms
                  if b.get("boot_index") is not None and b["boot_index"] >= 0)
    if not boot or any(i != v for i, v in enumerate(boot)):
        raise InvalidBDMBootSequence()
    root_meta: dict[str, Any] | None = None
    for bdm in bdms:
        root = bdm.get("boot_index") == 0
        if bdm.get("image_id") is not None:
            try:
                image = images.get_image(db, ctx, bdm["image_id"])
            except ApiError:
                raise InvalidBDMImage(id=bdm["image_id"]) from None
            if bdm["source_type"] == "image" and bdm.get("destination_type") == "volume":
                if not bdm.get("volume_size"):
                    raise InvalidBDM(message="Images with destination_type 'volume' need to "
                                             "have a non-zero size specified")
                if root and (image.min_disk or 0) > bdm["volume_size"]:
                    raise BadRequest(
                        f"Volume is smaller than the minimum size specified in image "
                        f"metadata. Volume size is {bdm['volume_size'] * 1024 ** 3} bytes, "
                        f"minimum size is {image.min_disk * 1024 ** 3} bytes.")
            if root:
                root_meta = {"id": image.id, "min_ram": image.min_ram or 0,
                             "properties": dict(image.properties or {})}
        elif bdm.get("volume_id") is not None:
            try:
                volume = cinder.get_volume(db, ctx, bdm["volume_id"])
            except cinder.VolumeNotFound:
                raise InvalidBDMVolume(id=bdm["volume_id"]) from None
            if volume.status != "available":
                raise InvalidVolume(reason=f"volume '{volume.id}' status must be 'available'. "
                                           f"Currently in '{volume.status}'")
            bdm["volume_size"] = volume.size
            if root:
                if not volume.bootable:
                    raise InvalidBDMVolumeNotBootable(id=volume.id)
                meta = dict(volume.image_metadata)
                root_meta = {"id": None, "min_ram": int(meta.pop("min_ram", 0) or 0),
                             "properties": meta}
        elif bdm["source_type"] == "snapshot":
            pass  # the interface has no snapshot look-up: a bad one fails the build
        elif bdm["source_type"] == "blank" and bdm.get("destination_type") == "volume" \
                and not bdm.get("volume_size"):
            raise InvalidBDM(message="Blank volumes (source: 'blank', dest: 'volume') need to "
                                     "have non-zero size")
        if bdm.get("volume_type") and not cinder.volume_type_visible(db, ctx,
                                                                      bdm["volume_type"]):
            raise VolumeTypeNotFound(id_or_name=bdm["volume_type"])
        if bdm.get("disk_bus") and bdm["disk_bus"] not in DISK_BUSES:
            raise InvalidBDM()  # (Nova's InvalidBDMDiskBus misspells its msg_fmt)
    ephemeral = sum(b.get("volume_size") or flavor.ephemeral_gb for b in bdms
                    if _is_ephemeral(b))
    if ephemeral > flavor.ephemeral_gb:
        raise InvalidBDMEphemeralSize()
    swaps = [b for b in bdms if _is_swap(b)]
    if len(swaps) > 1:
        raise InvalidBDMFormat(details="More than one swap drive requested.")
    if swaps and (swaps[0].get("volume_size") or 0) > flavor.swap:
        raise InvalidBDMSwapSize()
    if sum(1 for b in bdms if b.get("destination_type") == "local") > MAX_LOCAL_BLOCK_DEVICES:
        raise InvalidBDMLocalsLimit()
    root_bdm = next(b for b in bdms if b.get("boot_index") == 0)
    volume_backed = root_bdm.get("destination_type") == "volume"
    if not volume_backed and not image_ref:
        raise BadRequest("Missing imageRef attribute")
    return Checked(bdms, volume_backed, root_meta)


# ------------------------------------------------------------------ images' mappings
# BlockDeviceDict's fields an image's `block_device_mapping` keeps (get_image_mapping drops
# the database-only ones: id, uuid, instance_uuid, attachment_id, connection_info)
IMAGE_MAPPING_FIELDS = ("source_type", "destination_type", "guest_format", "device_type",
                        "disk_bus", "boot_index", "device_name", "delete_on_termination",
                        "snapshot_id", "volume_id", "volume_size", "image_id", "no_device",
                        "tag", "volume_type")


def image_mapping(row: BlockDeviceMapping, snapshot_id: str | None = None) -> dict[str, Any]:
    """A server's mapping as an image keeps it (get_image_mapping); with `snapshot_id`,
    Nova's snapshot_from_bdm of a volume mapping: a volume made from that snapshot, with
    the template's bus, type, boot index, delete flag, size, device name and volume type."""
    out: dict[str, Any] = {k: getattr(row, k, None) for k in IMAGE_MAPPING_FIELDS}
    out["no_device"] = None
    if snapshot_id is not None:
        kept = ("disk_bus", "device_type", "boot_index", "delete_on_termination",
                "volume_size", "device_name", "volume_type")
        out = {k: (out[k] if k in kept else None) for k in IMAGE_MAPPING_FIELDS}
        out.update(source_type="snapshot", destination_type="volume",
                   snapshot_id=snapshot_id)
    return out


def image_defined(properties: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The mappings an image defines (a volume-backed server's snapshot): its
    `block_device_mapping` property, a JSON list of v2 mappings when `bdm_v2` is true (as
    Nova reads it); an image with legacy (v1) mappings defines none here."""
    props = properties or {}
    if not _bdm_bool(props.get("bdm_v2") or False):
        return []
    raw = props.get("block_device_mapping")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return []
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        bdm = {k: v for k, v in item.items() if k in _V2_FIELDS and v is not None
               and k not in ("connection_info", "uuid")}
        out.append(_validated(bdm))
    return [b for b in out if not b.get("no_device")]


def _merge(image_bdms: list[dict[str, Any]], requested: list[dict[str, Any]]
           ) -> list[dict[str, Any]]:
    """Nova's _merge_bdms_lists: a requested mapping overrides the image's one on the same
    device name."""
    names = {_strip_dev(b.get("device_name")) for b in requested if b.get("device_name")}
    return [b for b in image_bdms if not b.get("device_name")
            or _strip_dev(b["device_name"]) not in names] + requested


def _is_swap(bdm: dict[str, Any]) -> bool:
    return bdm.get("source_type") == "blank" and bdm.get("destination_type") == "local" \
        and bdm.get("guest_format") == "swap"


def _is_ephemeral(bdm: dict[str, Any]) -> bool:
    return bdm.get("source_type") == "blank" and bdm.get("destination_type") == "local" \
        and bdm.get("guest_format") != "swap"


def reserve_at_boot(db: Session, ctx: RequestContext, inst: Instance,
                    bdms: list[dict[str, Any]]) -> None:
    """The rows of a new server's mappings; an existing volume is reserved for it now
    (Cinder's attachment_create, as Nova's API does), the others are made by the build."""
    for bdm in bdms:
        if bdm.get("source_type") == "image" and bdm.get("destination_type") == "local":
            continue  # the image root disk: vda, no row needed
        row = BlockDeviceMapping(
            uuid=str(uuid.uuid4()), instance_uuid=inst.uuid, source_type=bdm["source_type"],
            destination_type=bdm.get("destination_type") or "volume",
            boot_index=bdm.get("boot_index"), volume_id=bdm.get("volume_id"),
            snapshot_id=bdm.get("snapshot_id"), image_id=bdm.get("image_id"),
            volume_size=bdm.get("volume_size"), volume_type=bdm.get("volume_type"),
            delete_on_termination=bool(bdm.get("delete_on_termination")),
            disk_bus=bdm.get("disk_bus"), device_type=bdm.get("device_type"),
            guest_format=bdm.get("guest_format"), tag=bdm.get("tag"))
        if row.volume_id:
            try:
                row.attachment_id = cinder.attachment_create(db, ctx, row.volume_id,
                                                             inst.uuid).id
            except cinder.InvalidVolume as err:
                raise InvalidVolume(reason=err.text) from None
        db.add(row)
    db.flush()


# ------------------------------------------------------------------ reads
def mappings(db: Session, instance_uuid: str) -> list[BlockDeviceMapping]:
    """The server's mappings in attachment order (Nova's list is ordered by id)."""
    return list(db.scalars(select(BlockDeviceMapping).where(
        BlockDeviceMapping.instance_uuid == instance_uuid).order_by(BlockDeviceMapping.id)))


def volume_mappings(db: Session, instance_uuids: list[str]
                    ) -> dict[str, list[BlockDeviceMapping]]:
    """Each server's volume mappings, in order (one query for a page of servers)."""
    out: dict[str, list[BlockDeviceMapping]] = {u: [] for u in instance_uuids}
    if not instance_uuids:
        return out
    for row in db.scalars(select(BlockDeviceMapping).where(
            BlockDeviceMapping.instance_uuid.in_(instance_uuids),
            BlockDeviceMapping.volume_id.is_not(None)).order_by(BlockDeviceMapping.id)):
        out[row.instance_uuid].append(row)
    return out


def is_volume_backed(db: Session, instance_uuid: str) -> bool:
    return db.scalar(select(BlockDeviceMapping.id).where(
        BlockDeviceMapping.instance_uuid == instance_uuid, BlockDeviceMapping.boot_index == 0,
        BlockDeviceMapping.destination_type == "volume").limit(1)) is not None


def next_device_name(rows: list[BlockDeviceMapping]) -> str:
    """libvirt's get_next_device_name: vda is the root, then the first free vdX."""
    taken = {_strip_dev(r.device_name) for r in rows if r.device_name} | {"vda"}
    for letters in _device_letters():
        if f"vd{letters}" not in taken:
            return f"/dev/vd{letters}"
    raise BadRequest("The maximum allowed number of disk devices (26) to attach to a single "
                     "instance has been exceeded.")


def _device_letters() -> Any:
    yield from string.ascii_lowercase


# ------------------------------------------------------------------ connect / disconnect
def connector(inst: Instance, device: str | None) -> dict[str, Any]:
    """os-brick's connector for the server's host (what Nova passes attachment_update)."""
    return {"host": inst.host, "initiator": f"iqn.2010-10.org.openstack:{inst.host}",
            "platform": "x86_64", "os_type": "linux", "multipath": False,
            "mountpoint": device, "instance": inst.uuid}


def connect(db: Session, ctx: RequestContext, inst: Instance, row: BlockDeviceMapping) -> None:
    """attachment_update with this host's connector, then complete: the volume in-use."""
    if row.attachment_id is None:
        row.attachment_id = cinder.attachment_create(db, ctx, row.volume_id or "",
                                                     inst.uuid).id
    cinder.attachment_update(db, ctx, row.attachment_id, connector(inst, row.device_name))
    cinder.attachment_complete(db, ctx, row.attachment_id)


def disconnect(db: Session, ctx: RequestContext, row: BlockDeviceMapping) -> None:
    """The Cinder attachment deleted (an attachment already gone is no error)."""
    if row.attachment_id is None:
        return
    try:
        cinder.attachment_delete(db, ctx, row.attachment_id)
    except cinder.VolumeAttachmentNotFound:
        pass
    row.attachment_id = None


def move_to_host(db: Session, ctx: RequestContext, inst: Instance) -> None:
    """A move (resize, migrations, evacuate, unshelve) takes the volumes along: each
    attachment is updated with the new host's connector (Nova's attachment_update in
    post-live-migration / finish_resize), a shelved server's reservations connected."""
    for row in volume_mappings(db, [inst.uuid])[inst.uuid]:
        if row.device_name is None:
            row.device_name = next_device_name(mappings(db, inst.uuid))
            db.flush()
        connect(db, ctx, inst, row)


def release_host(db: Session, ctx: RequestContext, inst: Instance) -> None:
    """Shelve-offload: each volume's connection to the old host is dropped and the volume
    kept reserved for the server (Nova deletes the attachment and creates a new one)."""
    for row in volume_mappings(db, [inst.uuid])[inst.uuid]:
        disconnect(db, ctx, row)
        row.attachment_id = cinder.attachment_create(db, ctx, row.volume_id or "",
                                                     inst.uuid).id
        row.device_name = None
    db.flush()


def delete_all(db: Session, ctx: RequestContext, inst: Instance) -> bool:
    """A server's delete: every volume detached, those with delete_on_termination
    deleted (Nova's _local_cleanup_bdm_volumes); True when a volume deletion was queued."""
    queued = False
    for row in mappings(db, inst.uuid):
        disconnect(db, ctx, row)
        if row.volume_id and row.delete_on_termination:
            try:
                cinder.delete_volume(db, ctx, row.volume_id)
                queued = True
            except (cinder.VolumeNotFound, cinder.InvalidVolume):
                pass  # (Nova logs and goes on: the server is deleted all the same)
        db.delete(row)
    db.flush()
    return queued


# ------------------------------------------------------------------ the build
def owner_context(inst: Instance) -> RequestContext:
    """The booting user's context: volumes are made in (and quota counted for) the
    server's project, as Nova's compute manager calls Cinder with the user's token."""
    return RequestContext(user_id=inst.user_id, project_id=inst.project_id,
                          roles=tuple(inst.roles or ("member", "reader")))


def create_volumes(db: Session, inst: Instance) -> bool:
    """The build's first step for a server with image/snapshot/blank volumes: Cinder
    creates them (`creating`; made after the commit). False when there is none to make.
    Cinder's refusals (quota, a missing snapshot or image) are the build's fault."""
    ctx = owner_context(inst)
    made = False
    for row in mappings(db, inst.uuid):
        if row.destination_type != "volume" or row.volume_id is not None:
            continue
        source_id = {"image": row.image_id, "snapshot": row.snapshot_id}.get(row.source_type)
        vol = cinder.create_volume(db, ctx, size=row.volume_size, source_type=row.source_type,
                                   source_id=source_id, name=f"{inst.uuid}-{row.source_type}",
                                   volume_type=row.volume_type,
                                   availability_zone=inst.availability_zone)
        row.volume_id = vol.id
        made = True
    db.flush()
    return made


def volumes_ready(db: Session, inst: Instance) -> bool:
    """True when no volume of the server is still being made."""
    ctx = owner_context(inst)
    for row in volume_mappings(db, [inst.uuid])[inst.uuid]:
        try:
            if cinder.get_volume(db, ctx, row.volume_id or "").status in ("creating",
                                                                           "downloading"):
                return False
        except cinder.VolumeNotFound:
            continue
    return True


class VolumeNotCreated(ApiError):
    status = 500
    message = ("Volume %(volume_id)s did not finish being created even after we waited "
               "%(seconds)s seconds or %(attempts)s attempts. And its status is "
               "%(volume_status)s.")


def attach_at_build(db: Session, inst: Instance, waited: int) -> None:
    """_prep_block_device: every volume available (else VolumeNotCreated), reserved and
    connected to the chosen host with the next device name."""
    ctx = owner_context(inst)
    rows = mappings(db, inst.uuid)
    for row in rows:
        if row.volume_id is None:
            continue
        try:
            status = cinder.get_volume(db, ctx, row.volume_id).status
        except cinder.VolumeNotFound:
            status = "deleted"
        if row.attachment_id is None and status != "available":
            raise VolumeNotCreated(volume_id=row.volume_id, seconds=waited,
                                   attempts=max(1, waited // VOLUME_WAIT_INTERVAL + 1),
                                   volume_status=status)
        row.device_name = ROOT_DEVICE if row.boot_index == 0 else next_device_name(rows)
        db.flush()
        connect(db, ctx, inst, row)


# ------------------------------------------------------------------ for the dataplane
def dataplane_volumes(db: Session, settings: Any, instance_uuids: list[str]
                      ) -> dict[str, list[dict[str, Any]]]:
    """Each server's attached volumes in order, as the guest sees them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for inst_uuid, rows in volume_mappings(db, instance_uuids).items():
        out[inst_uuid] = [{
            "volume_id": r.volume_id, "device": r.device_name, "serial": (r.volume_id or "")[:20],
            "path": str(cinder.volume_path(settings, r.volume_id or ""))
            if settings is not None else None,
            "boot_index": r.boot_index} for r in rows if r.device_name]
    return out
