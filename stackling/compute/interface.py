"""The compute service's in-process interface (for orchestration), with the REST API's
semantics: bodies are the `server` objects of `POST /servers` (validated by the schema of
the given microversion), results are the API's dicts, errors are Nova's ApiErrors.

Like the API, nothing here commits: the caller's transaction does. A created server is
built by the build workers once that transaction commits; call `wake_builder(runtime)`
after the commit to start at once (otherwise a worker notices within a second).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.microversion import Version
from stackling.compute import flavors, microversions, network_api, schemas, servers, validation
from stackling.compute import views as views_
from stackling.compute.errors import FlavorNotFound
from stackling.compute.models import Instance

__all__ = ["create_server", "get_server", "delete_server", "update_server",
           "attach_interface", "detach_interface", "find_flavor", "flavor_ref",
           "server_project", "attach_volume", "detach_volume", "volume_attachments",
           "wake_builder"]


def _version(version: str | None) -> Version:
    return Version.parse(version) if version else microversions.MAX


def _view(inst: Instance, ctx: RequestContext, version: Version, service_url: str
          ) -> dict[str, Any]:
    return views_.server_detail(views_.Links(service_url), inst, version,
                                is_admin=ctx.is_admin, show_extended_attrs=ctx.is_admin,
                                show_host_status=ctx.is_admin)


def create_server(db: Session, ctx: RequestContext, server: dict[str, Any], *,
                  version: str | None = None, service_url: str = "",
                  render: bool = True,
                  scheduler_hints: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Validate and accept a boot (202 semantics); returns the new servers' detail views
    (status BUILD), or only their `{"id"}` without `render`. `scheduler_hints` are the
    body's `os:scheduler_hints` (the `group` one places the server in its group). Raises
    the 400/403/409 errors `POST /servers` would."""
    mv = _version(version)
    wanted: dict[str, Any] = {"server": server}
    if scheduler_hints:
        wanted["os:scheduler_hints"] = scheduler_hints
    body = validation.validate(microversions.pick(mv, schemas.SERVER_CREATE), wanted)
    req = servers.request_from_body(body["server"])
    hints = body.get("os:scheduler_hints") or {}
    req.group, req.scheduler_hints = hints.get("group"), dict(hints)
    created = servers.create_servers(db, ctx, req, forced_host_allowed=ctx.is_admin,
                                     zero_disk_allowed=ctx.is_admin)
    if not render:
        return [{"id": i.uuid} for i in created]
    return [_view(i, ctx, mv, service_url) for i in created]


def get_server(db: Session, ctx: RequestContext, server_id: str, *,
               version: str | None = None, service_url: str = "") -> dict[str, Any]:
    """`GET /servers/{id}`; InstanceNotFound (404) for unknown or other projects' ids."""
    return _view(servers.get_instance(db, ctx, server_id), ctx, _version(version), service_url)


def update_server(db: Session, ctx: RequestContext, server_id: str, values: dict[str, Any], *,
                  version: str | None = None, service_url: str = "") -> dict[str, Any]:
    mv = _version(version)
    validation.validate(microversions.pick(mv, schemas.SERVER_UPDATE), {"server": values})
    return _view(servers.update_instance(db, ctx, server_id, values), ctx, mv, service_url)


def delete_server(db: Session, ctx: RequestContext, server_id: str) -> None:
    """`DELETE /servers/{id}`: ports compute made are deleted, the user's unbound, the
    placement allocation released; the server is gone when the transaction commits."""
    servers.delete_instance(db, ctx, server_id)


def attach_interface(db: Session, ctx: RequestContext, server_id: str, *,
                     net_id: str | None = None, port_id: str | None = None,
                     fixed_ip: str | None = None) -> dict[str, Any]:
    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    port = network_api.attach_interface(db, ctx, inst, net_id, port_id, fixed_ip)
    return views_.interface_view(port, microversions.MAX)


def detach_interface(db: Session, ctx: RequestContext, server_id: str, port_id: str) -> None:
    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    network_api.detach_interface(db, ctx, inst, port_id)


def attach_volume(db: Session, ctx: RequestContext, server_id: str, volume_id: str, *,
                  device: str | None = None) -> dict[str, Any]:
    """`POST /servers/{id}/os-volume_attachments` (2.1 body, `device` a hint Nova's
    libvirt driver does not honour: the next free /dev/vdX is taken): the volume in-use
    once done; returns the attachment view {"id", "volumeId", "serverId", "device"}. The
    caller checks Nova's policy `os-volumes-attachments:create` on the server's project
    (`server_project`). Raises the API's 400/404/409."""
    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    from stackling.compute import volume_attachments

    row = volume_attachments.attach(db, ctx, inst, volume_id)
    return {"id": row.volume_id, "volumeId": row.volume_id, "serverId": inst.uuid,
            "device": row.device_name}


def detach_volume(db: Session, ctx: RequestContext, server_id: str, volume_id: str) -> None:
    """`DELETE /servers/{id}/os-volume_attachments/{volume_id}` (NotFound when the
    volume is not attached to the server); the caller checks `...:delete` as above."""
    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    from stackling.compute import volume_attachments

    volume_attachments.detach(db, ctx, inst, volume_id)


def volume_attachments(db: Session, ctx: RequestContext, server_id: str) -> list[str]:
    """The ids of the volumes attached to the server (`GET .../os-volume_attachments`)."""
    from stackling.compute import volume_attachments as va

    inst = servers.get_instance(db, ctx, server_id)
    return [r.volume_id for r in va.list_attachments(db, inst) if r.volume_id]


def find_flavor(db: Session, ctx: RequestContext, name_or_id: str) -> dict[str, Any]:
    """A flavor by id, else by exact name: {"id", "name", "ram", "vcpus", "disk", ...}."""
    try:
        flavor = flavors.get_flavor(db, ctx, name_or_id)
    except FlavorNotFound:
        flavor = flavors.get_flavor_by_name(db, ctx, name_or_id)
    return views_.flavor_detail(views_.Links(""), flavor, microversions.MAX)


def flavor_ref(db: Session, ctx: RequestContext, name_or_id: str) -> str:
    """`find_flavor(...)["id"]` in one query (a Heat server names its flavor so)."""
    return flavors.flavor_ref(db, ctx, name_or_id)


def server_project(db: Session, server_id: str) -> str | None:
    """The project owning server `server_id`, or None if there is none (for network's
    device ownership check; no policy: the caller only compares projects)."""
    return db.scalar(select(Instance.project_id).where(Instance.uuid == server_id))


def wake_builder(runtime: Any) -> None:
    worker = runtime.state.get("compute.builder")
    if worker is not None:
        worker.wake()


# ------------------------------------------------------------------ for orchestration
def build_now(db: Session, ctx: RequestContext, server_id: str) -> dict[str, Any]:
    """Build a server accepted by `create_server` at once, in the caller's transaction
    (what a build worker does after the commit): the result is ACTIVE or ERROR with its
    fault. Heat's engine uses it so a server and its stack resource commit together."""
    from stackling.compute import build

    inst = servers.created_here(db, ctx, server_id) or servers.get_instance(
        db, ctx, server_id, for_update=True)
    if inst.build_state == "pending":
        build.build_instance(db, inst)
        db.flush()
    return _view(inst, ctx, microversions.MAX, "")


def resize_server(db: Session, ctx: RequestContext, server_id: str, flavor_ref: str,
                  confirm: bool = True) -> None:
    """`resize` then (as Heat does once VERIFY_RESIZE is reached) `confirmResize`."""
    from stackling.compute import moves

    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    moves.resize(db, ctx, inst, flavor_ref, zero_disk_allowed=ctx.is_admin)
    if confirm and inst.vm_state == "resized":
        moves.confirm_resize(db, ctx, inst)


def rebuild_server(db: Session, ctx: RequestContext, server_id: str,
                   values: dict[str, Any]) -> None:
    """`rebuild` with the action body's values (`imageRef`, optional `name`, ...)."""
    from stackling.compute import server_actions

    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    server_actions.rebuild(db, ctx, inst, values, zero_disk_allowed=ctx.is_admin)


def server_action(db: Session, ctx: RequestContext, server_id: str, action: str) -> None:
    """`suspend`, `resume`, `pause`, `unpause` as the server action API."""
    from stackling.compute import server_actions

    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    server_actions.simple_action(db, ctx, inst, action)


def list_interfaces(db: Session, ctx: RequestContext, server_id: str) -> list[dict[str, Any]]:
    """`GET /servers/{id}/os-interface`."""
    inst = servers.get_instance(db, ctx, server_id)
    return [views_.interface_view(p, microversions.MAX)
            for p in network_api.list_ports(db, ctx, inst)]


def set_server_metadata(db: Session, ctx: RequestContext, server_id: str,
                        metadata: dict[str, str]) -> None:
    """`PUT /servers/{id}/metadata`: the server's metadata becomes `metadata` (quota-checked)."""
    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    servers.set_metadata(db, inst, dict(metadata))


def set_server_tags(db: Session, ctx: RequestContext, server_id: str, tags: list[str]) -> None:
    """`PUT /servers/{id}/tags` (2.26): the server's tags become `tags`."""
    inst = servers.get_instance(db, ctx, server_id, for_update=True)
    servers.set_tags(db, inst, list(dict.fromkeys(tags)))


# ------------------------------------------------------------------ for the dataplane
# Power states a hypervisor holds a guest in, by vm_state (the rest has no guest).
_GUEST_STATES = {"active": "running", "rescued": "running", "paused": "paused",
                 "resized": "running"}
# Actions after which the guest boots again (its boot count changes). A live migration is
# not one: the guest keeps running while its NICs move to the new host (dataplane).
_BOOTING_ACTIONS = ("reboot", "rebuild", "start", "resize", "confirmResize", "revertResize",
                    "unshelve", "resume", "migrate", "evacuate")


def dataplane_servers(db: Session) -> list[dict[str, Any]]:
    """Every server on a host with what its guest needs: `state` running | paused |
    stopping (powering off) | off, `boots` (changes when the server is rebooted, rebuilt,
    started...), `hard_boot` (the last boot a HARD reboot or an evacuation), the key's public
    key and the decoded user data (stackling/dataplane)."""
    import base64

    from sqlalchemy import func

    from stackling.compute.models import InstanceAction

    boots: dict[str, int] = {}
    rebuilds: dict[str, int] = {}
    # the last booting action: a HARD reboot's guest is killed, not asked to power off
    hard: set[str] = set()
    last = select(func.max(InstanceAction.id)).where(
        InstanceAction.action.in_(_BOOTING_ACTIONS)).group_by(InstanceAction.instance_uuid)
    for uuid, action, events in db.execute(
            select(InstanceAction.instance_uuid, InstanceAction.action, InstanceAction.events)
            .where(InstanceAction.id.in_(last))).all():
        if action == "evacuate" or any(e.get("reboot_type") == "HARD" for e in events or []):
            hard.add(uuid)
    for uuid, action, n in db.execute(
            select(InstanceAction.instance_uuid, InstanceAction.action, func.count())
            .where(InstanceAction.action.in_(_BOOTING_ACTIONS))
            .group_by(InstanceAction.instance_uuid, InstanceAction.action)).all():
        boots[uuid] = boots.get(uuid, 0) + n
        if action == "rebuild":  # (a rebuild's root disk starts afresh)
            rebuilds[uuid] = n
    rows = db.execute(select(Instance.uuid, Instance.display_name, Instance.hostname,
                             Instance.vm_state, Instance.key_name, Instance.key_data,
                             Instance.user_data,
                             Instance.host, Instance.image_ref, Instance.project_id,
                             Instance.availability_zone, Instance.metadata_,
                             Instance.launched_at, Instance.flavor, Instance.config_drive,
                             Instance.task_state)
                      .where(Instance.host.is_not(None))).all()
    from stackling.compute import block_devices

    runtime = db.info.get("stackling.runtime")  # (volume files live under its data dir)
    volumes = block_devices.dataplane_volumes(db, runtime.settings if runtime else None,
                                              [r.uuid for r in rows])
    out = []
    for r in rows:
        disks = volumes.get(r.uuid, [])
        try:
            user_data = base64.b64decode(r.user_data) if r.user_data else None
        except ValueError:
            user_data = None
        state = _GUEST_STATES.get(r.vm_state, "off")
        if r.task_state == "powering-off" and state != "off":
            state = "stopping"  # its init asked to power off; guest_stopped once it is gone
        elif r.task_state == "powering-on":
            state = "running"  # started: SHUTOFF until its boot has begun (guest_booted)
        out.append({"id": r.uuid, "name": r.display_name, "hostname": r.hostname or "",
                    "state": state, "vm_state": r.vm_state, "task_state": r.task_state,
                    "hard_boot": r.uuid in hard,
                    "key_name": r.key_name, "key_data": r.key_data, "user_data": user_data, "host": r.host,
                    "image_ref": r.image_ref, "project_id": r.project_id,
                    "availability_zone": r.availability_zone, "metadata": r.metadata_ or {},
                    "boots": boots.get(r.uuid, 0), "rebuilds": rebuilds.get(r.uuid, 0),
                    "memory_mb": (r.flavor or {}).get("memory_mb"),
                    "vcpus": (r.flavor or {}).get("vcpus"),
                    "root_gb": (r.flavor or {}).get("root_gb"),  # the root disk's size
                    "config_drive": bool(r.config_drive),
                    "launched_at": r.launched_at.isoformat() if r.launched_at else None,
                    # attached volumes in order ({volume_id, device, serial, path,
                    # boot_index}); the root one for a volume-backed server, else None
                    "volumes": disks,
                    "root_volume": next((d for d in disks if d["boot_index"] == 0), None)})
    return out


def guest_stopped(db: Session, server_id: str) -> bool:
    """The server's guest is gone after its power-off (os-stop): STOPPED, SHUTDOWN, its
    task state cleared; False when the server is gone or no longer powering off."""
    from stackling.common.db import utcnow_precise

    inst = db.execute(select(Instance).where(Instance.uuid == server_id)
                      .with_for_update()).scalar_one_or_none()
    if inst is None or inst.task_state != "powering-off":
        return False
    inst.vm_state, inst.task_state, inst.power_state = "stopped", None, 4  # SHUTDOWN
    inst.updated_at = utcnow_precise()
    return True


BOOTING_TASKS = servers.BOOTING_TASKS  # (the dataplane's: which servers await guest_booted)


def guest_booted(db: Session, server_id: str, boots: int) -> bool:
    """The server's guest has started its boot number `boots` (the dataplane): a reboot or
    a start waiting for it ends (ACTIVE). False when the server is in no such task, or was
    asked for another boot since (that one's start ends it)."""
    from sqlalchemy import func

    from stackling.compute import transitions
    from stackling.compute.models import InstanceAction

    inst = db.execute(select(Instance).where(Instance.uuid == server_id)
                      .with_for_update()).scalar_one_or_none()
    if inst is None or inst.task_state not in servers.BOOTING_TASKS:
        return False
    asked = db.scalar(select(func.count()).select_from(InstanceAction).where(
        InstanceAction.instance_uuid == server_id,
        InstanceAction.action.in_(_BOOTING_ACTIONS)))
    return asked == boots and transitions.finish(db, inst, inst.task_state)


def fail_server(db: Session, server_id: str, message: str) -> bool:
    """ERROR with a fault (code 500, as Nova records a hypervisor's failure), for a guest
    the dataplane cannot run as it must; False when the server is gone or already ERROR."""
    from stackling.common.db import utcnow_precise
    from stackling.compute.build import fault

    inst = db.execute(select(Instance).where(Instance.uuid == server_id)).scalar_one_or_none()
    if inst is None or inst.vm_state == "error":
        return False
    # (its host, ports and allocations stay, as Nova leaves them to a delete or rebuild)
    inst.vm_state, inst.task_state, inst.power_state = "error", None, 4  # SHUTDOWN
    inst.fault = fault(500, message)
    inst.updated_at = utcnow_precise()
    return True


# ------------------------------------------------------------------ key pairs and flavors
# For orchestration's OS::Nova::KeyPair and OS::Nova::Flavor: the steps of the REST
# handlers (the caller checks Nova's policy itself, between validation and the write).
def validate_request(kind: str, body: dict[str, Any]) -> None:
    """Validate `body` as Heat's `keypair_create` (2.10) or `flavor_create` (2.55)
    request (Nova's 400 ValidationError otherwise)."""
    specs = {"keypair_create": schemas.KEYPAIR_CREATE, "flavor_create": schemas.FLAVOR_CREATES}
    # Heat asks for key pairs at 2.10 at most (2.92 stopped generating them), and for
    # flavors at 2.55 (descriptions; rxtx_factor, which its template still takes, went at 2.102)
    version = Version(2, 10) if kind == "keypair_create" else Version(2, 55)
    validation.validate(microversions.pick(version, specs[kind]), body)


def check_key_pairs_quota(db: Session, project_id: str, user_id: str) -> None:
    from stackling.compute import quotas

    quotas.check_key_pairs(db, project_id, user_id)


def create_keypair(db: Session, user_id: str, name: str, public_key: str | None,
                   key_type: str = "ssh") -> tuple[Any, str | None]:
    """The new key pair and its private key (generated when no `public_key` is given)."""
    from stackling.compute import keypairs

    return keypairs.create_keypair(db, user_id, name, public_key, key_type)


def get_keypair(db: Session, user_id: str, name: str) -> Any:
    from stackling.compute import keypairs

    return keypairs.get_keypair(db, user_id, name)


def delete_keypair(db: Session, user_id: str, name: str) -> None:
    from stackling.compute import keypairs

    keypairs.delete_keypair(db, user_id, name)


def create_flavor(db: Session, ctx: RequestContext, body: dict[str, Any]) -> Any:
    return flavors.create_flavor(db, ctx, body)


def get_flavor(db: Session, ctx: RequestContext, flavor_id: str) -> Any:
    return flavors.get_flavor(db, ctx, flavor_id)


def delete_flavor(db: Session, ctx: RequestContext, flavor_id: str) -> None:
    flavors.delete_flavor(db, ctx, flavor_id)


def set_flavor_extra_specs(db: Session, ctx: RequestContext, flavor_id: str,
                           specs: dict[str, Any]) -> None:
    flavors.set_extra_specs(db, ctx, flavor_id, specs)


def delete_flavor_extra_spec(db: Session, ctx: RequestContext, flavor_id: str,
                             key: str) -> None:
    flavors.delete_extra_spec(db, ctx, flavor_id, key)


def set_flavor_description(db: Session, ctx: RequestContext, flavor_id: str,
                           description: str | None) -> None:
    flavors.set_description(db, ctx, flavor_id, description)


def create_server_group(db: Session, ctx: RequestContext, name: str, policy: str,
                        rules: dict[str, Any] | None = None) -> str:
    """`POST /os-server-groups` at 2.64 semantics (one policy, rules for anti-affinity
    only, the server_groups quota); returns the group's uuid."""
    from stackling.common.errors import BadRequest
    from stackling.compute import server_groups

    if rules and policy != "anti-affinity":
        raise BadRequest("Only anti-affinity policy supports rules.")
    rules = dict(rules or {})
    if "max_server_per_host" in rules:
        rules["max_server_per_host"] = int(rules["max_server_per_host"])
    return server_groups.create_group(db, ctx, name, policy, rules).uuid


def server_group(db: Session, group_uuid: str) -> dict[str, Any]:
    """A group's fields and members (404 InstanceGroupNotFound when it is gone)."""
    from stackling.compute import server_groups

    group = server_groups.get_group(db, group_uuid)
    return {"id": group.uuid, "name": group.name, "policy": group.policy,
            "policies": [group.policy], "rules": dict(group.rules or {}),
            "project_id": group.project_id, "user_id": group.user_id,
            "members": server_groups.members(db, [group])[group.id]}


def delete_server_group(db: Session, group_uuid: str) -> None:
    from stackling.compute import server_groups

    server_groups.delete_group(db, server_groups.get_group(db, group_uuid))


def register_console_log(fn: Any) -> None:
    """The dataplane's look-up of a guest's console log (`fn(server_id) -> str | None`),
    which `GET .../os-getConsoleOutput` serves; without it compute makes up a boot log.
    Registered by the dataplane when it runs guests (it imports compute, never the reverse)."""
    from stackling.compute import server_actions

    server_actions.set_console_log(fn)


def register_snapshot_capture() -> None:
    """The dataplane captures its guests' disks (dataplane/snapshots.py): a createImage of
    a server booted from an image with data leaves its image `queued` and the server in
    `image_uploading` until `snapshot_done`. Registered by the dataplane when it runs."""
    from stackling.compute import server_actions

    server_actions.set_snapshot_capture(True)


def snapshot_done(db: Session, server_id: str, error: str | None = None) -> bool:
    """The dataplane's capture of the server's snapshot is over: its task state cleared (as
    Nova's snapshot ends, failed or not); `error` marks its createImage action failed with
    the reason, as Nova's event records it. False when the server is gone."""
    from stackling.compute import server_actions

    return server_actions.snapshot_done(db, server_id, error)
