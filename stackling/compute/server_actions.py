"""Server actions a control plane honours without a hypervisor, with Nova's state machine:
pause/unpause, suspend/resume, shelve/shelveOffload/unshelve, rescue/unrescue, rebuild,
createImage, trigger_crash_dump, console output, remote consoles and diagnostics.

Each takes effect within its request (no hypervisor to wait for), so the intermediate task
states (pausing, shelving_offloading...) are never visible. Shelving offloads at once, as
Nova's default `shelved_offload_time = 0` does: the host's resources are released and the
ports unbound; unshelve schedules again (staying on the segments where the ports hold
addresses) and claims anew. One exception: with the netns dataplane, createImage of a server
booted from an image with data stays `image_uploading` (its image `queued`, then `saving`)
until the dataplane has written the server's filesystem into the image
(dataplane/snapshots.py, `snapshot_done`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow_precise
from stackling.common.errors import ApiError, BadRequest, Conflict
from stackling.compute import block_devices, hosts, network_api, scheduler, transitions
from stackling.compute.errors import ImageNotFound, InstanceInvalidState
from stackling.compute.models import Instance
from stackling.compute.move_models import ConsoleAuthToken
from stackling.compute.moves import check_state, record_action

RUNNING, PAUSED, SHUTDOWN, SUSPENDED = 1, 3, 4, 7
CONSOLE_TOKEN_TTL = 600  # Nova's [consoleauth] token_ttl


class InstanceNotRunning(Conflict):
    message = "Instance %(instance_id)s is not running."


class InstanceNotReady(Conflict):
    message = "Instance %(instance_id)s is not ready"


class ConsoleNotImplemented(ApiError):
    """What Nova answers when the virt driver lacks a console type."""

    status = 501
    message = "Unable to get %(kind)s console, functionality not implemented"


class PasswordNotImplemented(ApiError):
    status = 501
    message = "Unable to set password on instance"


def _set(inst: Instance, vm_state: str, power_state: int) -> None:
    inst.vm_state, inst.power_state, inst.task_state = vm_state, power_state, None
    inst.updated_at = utcnow_precise()


# ------------------------------------------------------------------ simple state changes
# action -> (allowed vm_states, new vm_state, new power state, instance action, event)
SIMPLE = {
    "pause": (("active",), "paused", PAUSED, "pause", "compute_pause_instance"),
    "unpause": (("paused",), "active", RUNNING, "unpause", "compute_unpause_instance"),
    "suspend": (("active",), "suspended", SUSPENDED, "suspend", "compute_suspend_instance"),
    "resume": (("suspended",), "active", RUNNING, "resume", "compute_resume_instance"),
    "unrescue": (("rescued",), "active", RUNNING, "unrescue", "compute_unrescue_instance"),
}


def simple_action(db: Session, ctx: RequestContext, inst: Instance, name: str) -> None:
    states, vm_state, power, action, event = SIMPLE[name]
    check_state(ctx, inst, name, states)
    _set(inst, vm_state, power)
    record_action(db, ctx, inst, action, [(event, inst.host)])
    db.flush()


def rescue(db: Session, ctx: RequestContext, inst: Instance, admin_pass: str | None,
           rescue_image_ref: str | None) -> str:
    check_state(ctx, inst, "rescue", ("active", "stopped", "error"))
    if rescue_image_ref:
        _image(db, ctx, rescue_image_ref)
    _set(inst, "rescued", RUNNING)
    record_action(db, ctx, inst, "rescue", [("compute_rescue_instance", inst.host)])
    db.flush()
    return admin_pass or secrets.token_urlsafe(9)


def trigger_crash_dump(db: Session, ctx: RequestContext, inst: Instance) -> None:
    check_state(ctx, inst, "trigger_crash_dump",
                ("active", "paused", "rescued", "resized", "error"))
    if inst.power_state != RUNNING:
        raise InstanceNotRunning(instance_id=inst.uuid)
    record_action(db, ctx, inst, "trigger_crash_dump",
                  [("compute_trigger_crash_dump", inst.host)])
    db.flush()


# ------------------------------------------------------------------ shelve
def shelve(db: Session, ctx: RequestContext, inst: Instance) -> None:
    """Snapshot to an image named `<server>-shelved`, then offload at once."""
    check_state(ctx, inst, "shelve", ("active", "stopped", "paused", "suspended"))
    _snapshot(db, ctx, inst, f"{inst.display_name}-shelved", {})
    _set(inst, "shelved", SHUTDOWN)
    _offload(db, inst)
    record_action(db, ctx, inst, "shelve", [("compute_shelve_instance", None)])
    db.flush()


def _drop_shelved_image(db: Session, inst: Instance) -> None:
    """Unshelve deletes the snapshot shelve made (Nova keeps its id in system metadata;
    here the image's `instance_uuid` property and name find it)."""
    from stackling.image import interface as images

    images.delete_image_records(db, images.instance_images(
        db, inst.project_id, inst.uuid, name=f"{inst.display_name}-shelved"))


def shelve_offload(db: Session, ctx: RequestContext, inst: Instance) -> None:
    check_state(ctx, inst, "shelveOffload", ("shelved",))
    _offload(db, inst)
    record_action(db, ctx, inst, "shelveOffload",
                  [("compute_shelve_offload_instance", None)])
    db.flush()


def _offload(db: Session, inst: Instance) -> None:
    """Release the host: its placement resources (the segment IPv4 addresses stay claimed,
    the ports keep them) and the port bindings."""
    from stackling.placement import interface as placement

    current = placement.get_allocations_for_consumer(db, inst.uuid)
    node = hosts.node_uuid(inst.host) if inst.host else None
    kept = {rp: dict(e["resources"]) for rp, e in current.items() if rp != node}
    if kept:
        placement.claim_resources(db, inst.uuid, kept, inst.project_id, inst.user_id)
    else:
        placement.delete_allocation_for_instance(db, inst.uuid)
    network_api.unbind_ports(db, inst)
    block_devices.release_host(db, block_devices.owner_context(inst), inst)
    inst.host = inst.node = None
    inst.vm_state = "shelved_offloaded"
    inst.updated_at = utcnow_precise()


KEEP_AZ = object()  # unshelve without an availability_zone: the server's pin stays


def unshelve(db: Session, ctx: RequestContext, inst: Instance, new_az: Any = KEEP_AZ,
             host: str | None = None) -> None:
    """`new_az` (2.77): schedule into that zone, which the server keeps from then on;
    None (2.91) unpins the server from any zone. `host` (2.91, admin): onto that host,
    which must be in the zone the server will be pinned to."""
    check_state(ctx, inst, "unshelve", ("shelved", "shelved_offloaded"))
    if new_az is not KEEP_AZ or host:
        from stackling.compute import aggregates
        from stackling.compute.errors import UnshelveHostNotInAZ, UnshelveInstanceInvalidState

        if inst.vm_state != "shelved_offloaded":
            raise UnshelveInstanceInvalidState(instance_uuid=inst.uuid,
                                               state=inst.vm_state.upper())
        zones = aggregates.host_zones(db)
        if (new_az is not KEEP_AZ and new_az
                and new_az not in set(zones.values()) | {hosts.DEFAULT_AZ}):
            raise BadRequest("The requested availability zone is not available")
        pinned = (inst.requested_az or "").partition(":")[0] or None
        zone = pinned if new_az is KEEP_AZ else new_az
        if host:
            from stackling.compute.models import ComputeNode

            if db.scalars(select(ComputeNode.id).where(ComputeNode.host == host)).first() is None:
                raise BadRequest(f"Compute host {host} could not be found.")
            if zone and zones.get(host, hosts.DEFAULT_AZ) != zone:
                raise UnshelveHostNotInAZ(host=host, availability_zone=zone)
        inst.requested_az = zone  # the pin from now on (the host is for this move only)
    if inst.vm_state == "shelved_offloaded":
        from stackling.placement import interface as placement

        carried = {rp: dict(e["resources"]) for rp, e in
                   placement.get_allocations_for_consumer(db, inst.uuid).items()}
        zone = (inst.requested_az or "").partition(":")[0] or None
        try:
            with db.begin_nested():
                dest = scheduler.schedule(db, scheduler.RequestSpec(
                    consumer=inst.uuid, project_id=inst.project_id, user_id=inst.user_id,
                    flavor=dict(inst.flavor), operation="unshelve", zone=zone, host=host,
                    routed=network_api.routed_needs_for_move(db, inst), carried=carried))
                inst.network_info = network_api.rebind_ports(db, inst, dest.host, dest.zone)
                db.flush()
        except scheduler.NoValidHost as err:
            scheduler.record_failure(db, inst.uuid, err)
            record_action(db, ctx, inst, "unshelve", [("compute_unshelve_instance", None)],
                          err.text)
            return
        inst.host, inst.node, inst.availability_zone = dest.host, dest.node, dest.zone
    if inst.host:  # its volumes, kept reserved while offloaded, connect to the new host
        block_devices.move_to_host(db, block_devices.owner_context(inst), inst)
    _drop_shelved_image(db, inst)
    _set(inst, "active", RUNNING)
    record_action(db, ctx, inst, "unshelve", [("compute_unshelve_instance", inst.host)])
    db.flush()


# ------------------------------------------------------------------ images
def _image(db: Session, ctx: RequestContext, image_ref: str) -> Any:
    from stackling.image import interface as images

    image_id = str(image_ref).rstrip("/").rsplit("/", 1)[-1]
    try:
        image = images.get_image(db, ctx, image_id)
    except ApiError:
        raise ImageNotFound(image_id=image_id) from None
    if image.status != "active":
        raise BadRequest(f"Image {image_id} is not active.")
    return image


def _snapshot(db: Session, ctx: RequestContext, inst: Instance, name: str,
              metadata: dict[str, str], *, saving: bool = False, pending: bool = False) -> str:
    """An image record in the image service, as Nova's snapshot leaves one (no data: there
    is no disk to upload)."""
    from stackling.image import interface as images

    base = None
    try:
        base = images.get_image(db, ctx, inst.image_ref) if inst.image_ref else None
    except ApiError:
        base = None
    props = {k: v for k, v in (base.properties or {}).items()} if base is not None else {}
    props.update(metadata)
    props.update({"image_type": "snapshot", "instance_uuid": inst.uuid,
                  "base_image_ref": inst.image_ref or "", "user_id": ctx.user_id or "",
                  "owner_project_name": "", "image_location": "snapshot"})
    body = {"name": name, "visibility": "private",
            "disk_format": (base.disk_format if base is not None else None) or "qcow2",
            "container_format": (base.container_format if base is not None else None)
            or "bare",
            "min_disk": inst.flavor.get("root_gb") or 0,
            "min_ram": (base.min_ram if base is not None else 0) or 0, **props}
    if pending:  # (what the dataplane writes: an ext4 root filesystem in a qcow2)
        body["disk_format"], body["container_format"] = "qcow2", "bare"
    return images.create_snapshot(db, ctx, body, saving=saving, pending=pending)


def _snapshot_done(db: Session, instance_uuid: str, inst: Instance | None) -> None:
    """A snapshot's upload is over: its image becomes active (deleted if the server went
    away meanwhile, as Nova)."""
    from stackling.image import interface as images

    images.finish_snapshots(db, instance_uuid, keep=inst is not None)


transitions.ON_COMPLETE["image_uploading"] = _snapshot_done


def _snapshot_uploading(db: Session, ctx: RequestContext, inst: Instance, name: str,
                        metadata: dict[str, str]) -> str:
    """The snapshot image, `saving` while the server shows task state `image_uploading`
    for the minimum action duration (a second snapshot meanwhile is Nova's 409); active
    at once when that minimum is 0."""
    saving = transitions.min_duration(db) > 0
    image_id = _snapshot(db, ctx, inst, name, metadata, saving=saving)
    if saving:
        transitions.begin(db, inst, "image_uploading", inst.vm_state, inst.power_state)
    return image_id


# Whether the dataplane captures the servers' disks (compute.interface's
# register_snapshot_capture, from a process that runs the netns driver)
_CAPTURE = {"on": False}


def set_snapshot_capture(on: bool) -> None:
    _CAPTURE["on"] = on


def _captured(db: Session, ctx: RequestContext, inst: Instance) -> bool:
    """The dataplane writes this server's snapshot: it runs guests and the server's root is
    an image with data (a tree the dataplane prepares; cirros's kit has none, nor has a
    volume-backed server an image disk)."""
    if not _CAPTURE["on"] or not inst.image_ref:
        return False
    from stackling.image import interface as images

    try:
        base = images.get_image(db, ctx, inst.image_ref)
    except ApiError:
        return False
    return images.data_path(db, base) is not None


def create_image(db: Session, ctx: RequestContext, inst: Instance, name: str,
                 metadata: dict[str, str]) -> str:
    check_state(ctx, inst, "createImage", ("active", "stopped", "paused", "suspended"))
    if block_devices.is_volume_backed(db, inst.uuid):
        image_id = snapshot_volume_backed(db, ctx, inst, name, metadata)
    elif _captured(db, ctx, inst):
        # as Nova: the image `queued`, the server `image_uploading` until the dataplane's
        # lease holder has written its disk into the image (dataplane/snapshots.py)
        image_id = _snapshot(db, ctx, inst, name, metadata, pending=True)
        inst.task_state, inst.updated_at = "image_uploading", utcnow_precise()
    else:
        image_id = _snapshot_uploading(db, ctx, inst, name, metadata)
    record_action(db, ctx, inst, "createImage", [("compute_snapshot_instance", inst.host)])
    db.flush()
    return image_id


# Nova's VIM_IMAGE_ATTRIBUTES: a volume's image metadata that is the image's own, not
# its properties
_VOLUME_IMAGE_ATTRIBUTES = ("image_id", "image_name", "size", "checksum", "container_format",
                            "disk_format", "min_ram", "min_disk")


def snapshot_volume_backed(db: Session, ctx: RequestContext, inst: Instance, name: str,
                           metadata: dict[str, str]) -> str:
    """Nova's snapshot_volume_backed: a Cinder snapshot of each volume (forced: they are
    attached), then an image with no data (size 0, active) whose properties are the
    server's image properties (the root volume's image metadata) and the request's
    metadata, `block_device_mapping` (the server's mappings, each volume one made from
    its snapshot), `bdm_v2` and `root_device_name`. Booting it makes volumes from the
    snapshots (block_devices.check_create)."""
    from stackling.block_storage import interface as cinder
    from stackling.image import interface as images

    rows = block_devices.mappings(db, inst.uuid)
    root = next((r for r in rows if r.boot_index == 0), None)
    base: dict[str, Any] = {}
    if root is not None and root.volume_id:
        base = dict(cinder.get_volume(db, ctx, root.volume_id).image_metadata)
    min_ram = int(base.get("min_ram") or 0)
    min_disk = int(base.get("min_disk") or 0)
    props: dict[str, Any] = {k: v for k, v in base.items() if k not in _VOLUME_IMAGE_ATTRIBUTES}
    for key in ("block_device_mapping", "bdm_v2", "root_device_name"):
        props.pop(key, None)
    props.update(metadata)
    if ctx.project_id != inst.project_id:
        props["instance_owner"] = inst.project_id
    props["root_device_name"] = (root.device_name if root is not None and root.device_name
                                 else block_devices.ROOT_DEVICE)
    mapping = []
    for row in rows:
        if row.destination_type == "volume" and row.volume_id:
            description = cinder.volume_body(db, ctx, row.volume_id).get("description")
            snap = cinder.create_snapshot(db, ctx, row.volume_id, name=f"snapshot for {name}",
                                          description=description, force=True)
            mapping.append(block_devices.image_mapping(row, snap))
        else:
            mapping.append(block_devices.image_mapping(row))
    if mapping:
        # (Glance keeps text: Nova sends the list as JSON and True as "True")
        props["block_device_mapping"] = json.dumps(mapping)
        props["bdm_v2"] = "True"
    body = {"name": name,
            "visibility": "private" if ctx.project_id == inst.project_id else "shared",
            # as Nova's glance client activates an image with no data
            "disk_format": "qcow2", "container_format": "bare",
            "min_ram": min_ram, "min_disk": min_disk,
            **{k: v if isinstance(v, str) else str(v) for k, v in props.items()}}
    return images.create_snapshot(db, ctx, body)


def snapshot_done(db: Session, server_id: str, error: str | None) -> bool:
    from stackling.compute.models import InstanceAction

    inst = db.scalars(select(Instance).where(Instance.uuid == server_id)
                      .with_for_update()).first()
    if inst is not None and inst.task_state == "image_uploading":
        inst.task_state, inst.updated_at = None, utcnow_precise()
    if error is None:
        return inst is not None
    action = db.scalars(select(InstanceAction).where(
        InstanceAction.instance_uuid == server_id, InstanceAction.action == "createImage")
        .order_by(InstanceAction.id.desc())).first()
    if action is not None:
        action.message = "Error"
        events = [dict(e) for e in action.events or []]
        if events:
            events[-1].update(result="Error", traceback=error,
                              finish_time=utcnow_precise().isoformat())
        action.events = events
        action.updated_at = utcnow_precise()
    return inst is not None


# ------------------------------------------------------------------ rebuild
def rebuild(db: Session, ctx: RequestContext, inst: Instance, values: dict[str, Any],
            zero_disk_allowed: bool = False) -> None:
    """Same ports, same host, same flavor; a new image (and name, metadata... if given),
    checked against the flavor as a create is (`zero_disk_allowed`: the create policy's)."""
    from stackling.compute import block_devices
    from stackling.compute.servers import _check_image

    check_state(ctx, inst, "rebuild", ("active", "stopped", "error"))
    from stackling.compute.flavors import get_flavor

    try:
        flavor: Any = get_flavor(db, ctx.elevated(), inst.flavor["flavorid"])
    except ApiError:
        flavor = None
    if flavor is not None:
        inst.image_ref = _check_image(db, ctx, values["imageRef"], flavor, zero_disk_allowed,
                                      not block_devices.is_volume_backed(db, inst.uuid))
    else:
        inst.image_ref = _image(db, ctx, values["imageRef"]).id
    from stackling.compute.servers import booted_image_properties

    inst.image_properties = booted_image_properties(db, ctx, inst.image_ref)  # 2.98
    mapping = {"name": "display_name", "accessIPv4": "access_ip_v4",
               "accessIPv6": "access_ip_v6", "OS-DCF:diskConfig": "disk_config",
               "description": "description", "user_data": "user_data",
               "hostname": "hostname"}  # hostname: 2.90
    for key, attr in mapping.items():
        if key in values:
            setattr(inst, attr, values[key])
    if "metadata" in values:
        inst.metadata_ = dict(values["metadata"])
    if "trusted_image_certificates" in values:  # 2.63: null forgets them
        inst.trusted_certs = values["trusted_image_certificates"] or None
    if "key_name" in values:
        from stackling.compute import keypairs
        from stackling.compute.errors import KeypairNotFound

        if values["key_name"] is None:
            inst.key_name = inst.key_data = None
        else:
            try:
                key = keypairs.get_keypair(db, inst.user_id or "", values["key_name"])
            except KeypairNotFound:
                raise BadRequest("Invalid key_name provided.") from None
            inst.key_name, inst.key_data = key.name, key.public_key
    stopped = inst.vm_state == "stopped"
    end = ("stopped", SHUTDOWN) if stopped else ("active", RUNNING)
    # a running guest: REBUILD until its new boot has started (interface.guest_booted), as
    # Nova's until the driver's spawn returns; else REBUILD for the minimum duration
    from stackling.compute.servers import guest_boot_bound

    bound = guest_boot_bound(db) if inst.vm_state == "active" else None
    if not transitions.begin(db, inst, "rebuilding", *end, seconds=bound):
        _set(inst, *end)
    inst.fault = None
    inst.launched_at = utcnow_precise()
    record_action(db, ctx, inst, "rebuild", [("compute_rebuild_instance", inst.host)])
    db.flush()


# ------------------------------------------------------------------ consoles
def _check_on_host(inst: Instance, method: str) -> None:
    if inst.vm_state in ("building", "shelved_offloaded") or not inst.host:
        raise InstanceNotReady(instance_id=inst.uuid)
    if inst.task_state is not None:
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid,
                                   attr="task_state", state=inst.task_state)


# The guests' console logs: a look-up the dataplane registers when it runs guests in this
# process (compute.interface.register_console_log); none registered, no guests.
_console_logs: list[Callable[[str], str | None]] = []


def set_console_log(fn: Callable[[str], str | None]) -> None:
    _console_logs[:] = [fn]


def console_output(inst: Instance, length: int | None) -> str:
    """The guest's console log when the dataplane runs it, else a plausible boot log of the
    server's image and NICs (`length`: its last lines)."""
    _check_on_host(inst, "get_console_output")
    guest_log = _console_logs[0](inst.uuid) if _console_logs else None
    if guest_log is not None:
        lines = guest_log.splitlines()
        if length is not None and length >= 0:
            lines = lines[-length:] if length else []
        return "\n".join(lines) + ("\n" if lines else "")
    started = inst.launched_at or inst.created_at
    stamp = 0.0
    lines = []

    def log(text: str, step: float = 0.137) -> None:
        nonlocal stamp
        stamp += step
        lines.append(f"[{stamp:12.6f}] {text}")

    log("Linux version 6.1.0-stackling (build@stackling) #1 SMP PREEMPT_DYNAMIC", 0.0)
    log(f"Command line: root=/dev/vda1 console=tty1 console=ttyS0 ds=nocloud "
        f"instance={inst.uuid}")
    log(f"Memory: {inst.flavor.get('memory_mb', 0) * 1024}K available")
    log(f"smpboot: Allowing {inst.flavor.get('vcpus', 1)} CPUs")
    log("virtio_blk virtio2: [vda] attached")
    for i, vif in enumerate(inst.network_info or []):
        log(f"virtio_net virtio{i}: eth{i}: link up, mac {vif.get('mac')}")
    log("Run /sbin/init as init process")
    lines.append(f"cloud-init: starting at {started:%a, %d %b %Y %H:%M:%S +0000}")
    for i, vif in enumerate(inst.network_info or []):
        for ip in vif.get("ips") or []:
            lines.append(f"ci-info: | eth{i} | True | {ip['address']} | {vif.get('mac')} |")
    lines.append(f"{inst.hostname} login: ")
    if length is not None and length >= 0:
        lines = lines[-length:] if length else []
    return "\n".join(lines) + ("\n" if lines else "")


def get_console(db: Session, inst: Instance, protocol: str, kind: str,
                base_url: str) -> str:
    """A console URL whose token is good for CONSOLE_TOKEN_TTL seconds; the page it opens
    answers (there is no display to show: it says so, with the console log)."""
    if protocol != "vnc":
        raise ConsoleNotImplemented(kind=protocol)
    _check_on_host(inst, "get_vnc_console")
    now = utcnow_precise()
    db.execute(delete(ConsoleAuthToken).where(ConsoleAuthToken.expires < now))
    token = secrets.token_urlsafe(24)
    db.add(ConsoleAuthToken(token_hash=hashlib.sha256(token.encode()).hexdigest(),
                            instance_uuid=inst.uuid, console_type=kind,
                            expires=now + dt.timedelta(seconds=CONSOLE_TOKEN_TTL)))
    db.flush()
    page = "vnc_lite.html" if kind == "novnc" else "console"
    return f"{base_url}/{page}?path=%3Ftoken%3D{token}"


def console_for_token(db: Session, token: str) -> Instance | None:
    """The server a live console token opens, or None."""
    row = db.get(ConsoleAuthToken, hashlib.sha256(token.encode()).hexdigest())
    if row is None or row.expires < utcnow_precise():
        return None
    return db.scalars(select(Instance).where(Instance.uuid == row.instance_uuid)).first()


# The port a console proxy would reach a simulated server's VNC display on (libvirt's
# first display); there is no display behind it.
VNC_PORT = 5900


def console_connect_info(db: Session, token: str) -> dict[str, Any] | None:
    """A live token's connection info (Nova's os-console-auth-tokens body), or None."""
    row = db.get(ConsoleAuthToken, hashlib.sha256(token.encode()).hexdigest())
    if row is None or row.expires < utcnow_precise():
        return None
    inst = db.scalars(select(Instance).where(Instance.uuid == row.instance_uuid)).first()
    if inst is None:
        return None
    return {"instance_uuid": inst.uuid, "host": inst.host, "port": VNC_PORT,
            "internal_access_path": None}


# ------------------------------------------------------------------ diagnostics
def diagnostics(inst: Instance, standard: bool) -> dict[str, Any]:
    """Nova's diagnostics: the libvirt-style dict before 2.48, the standard form after.
    Counters are zero: there is no guest to measure."""
    _check_on_host(inst, "get_diagnostics")
    memory = inst.flavor.get("memory_mb", 0) * 1024
    vcpus = inst.flavor.get("vcpus", 1)
    nics = inst.network_info or []
    if not standard:
        out: dict[str, Any] = {f"cpu{i}_time": 0 for i in range(vcpus)}
        out.update({"memory": memory, "memory-actual": memory, "memory-rss": 0,
                    "vda_errors": -1, "vda_read": 0, "vda_read_req": 0, "vda_write": 0,
                    "vda_write_req": 0})
        for vif in nics:
            tap = f"tap{vif['port_id'][:11]}"
            out.update({f"{tap}_{k}": 0 for k in ("rx", "rx_drop", "rx_errors",
                                                   "rx_packets", "tx", "tx_drop",
                                                   "tx_errors", "tx_packets")})
        return out
    state = {RUNNING: "running", PAUSED: "paused", SHUTDOWN: "shutdown",
             SUSPENDED: "suspended"}.get(inst.power_state, "pending")
    uptime = 0
    if inst.launched_at is not None and state == "running":
        uptime = int((utcnow_precise() - inst.launched_at).total_seconds())
    return {
        "state": state, "driver": "libvirt", "hypervisor": "qemu", "hypervisor_os": "linux",
        "uptime": uptime, "config_drive": bool(inst.config_drive),
        "num_cpus": vcpus, "num_disks": 1, "num_nics": len(nics),
        "cpu_details": [{"id": i, "time": 0, "utilisation": None} for i in range(vcpus)],
        "memory_details": {"maximum": inst.flavor.get("memory_mb", 0), "used": 0},
        "disk_details": [{"read_bytes": 0, "read_requests": 0, "write_bytes": 0,
                          "write_requests": 0, "errors_count": 0}],
        "nic_details": [{"mac_address": vif.get("mac"), "rx_octets": 0, "rx_errors": 0,
                         "rx_drop": 0, "rx_packets": 0, "rx_rate": None, "tx_octets": 0,
                         "tx_errors": 0, "tx_drop": 0, "tx_packets": 0, "tx_rate": None}
                        for vif in nics],
    }


# ------------------------------------------------------------------ admin actions
def reset_state(db: Session, ctx: RequestContext, inst: Instance, state: str) -> None:
    """os-resetState: the vm_state an admin says, task state cleared."""
    inst.vm_state, inst.task_state = state, None
    inst.updated_at = utcnow_precise()
    record_action(db, ctx, inst, "resetState", [])
    db.flush()


def record_only(db: Session, ctx: RequestContext, inst: Instance, action: str,
                event: str) -> None:
    """injectNetworkInfo / resetNetwork: nothing to push to a guest; recorded."""
    record_action(db, ctx, inst, action, [(event, inst.host)])
    db.flush()


def create_backup(db: Session, ctx: RequestContext, inst: Instance, name: str,
                  backup_type: str, rotation: int, metadata: dict[str, str]) -> str:
    """A snapshot marked as a backup; the oldest backups of this type beyond `rotation`
    are deleted, as Nova's rotation does."""
    from stackling.image import interface as images

    check_state(ctx, inst, "createBackup", ("active", "stopped", "paused", "suspended"))
    # Image timestamps have second precision: the rotation orders by this property.
    image_id = _snapshot_uploading(db, ctx, inst, name, {
        **metadata, "backup_type": backup_type,
        "backup_created_at": utcnow_precise().isoformat()})
    backups = [i for i in images.instance_images(db, inst.project_id, inst.uuid)
               if (i.properties or {}).get("backup_type") == backup_type]
    backups.sort(key=lambda i: str((i.properties or {}).get("backup_created_at", "")),
                 reverse=True)
    images.delete_image_records(db, backups[rotation:])
    record_action(db, ctx, inst, "createBackup", [("compute_backup_instance", inst.host)])
    db.flush()
    return image_id
