"""The move machinery shared by resize, cold migration, live migration and unshelve:
migration records (os-migrations), scheduling to a new host under the same constraints
(flavor, availability zone, routed-network segments), the placement allocation moved as
Nova moves it, port bindings moved, instance actions and task states.

There is no hypervisor to wait for, so a move runs in the request's transaction: the
API's 202 is answered with the server already on its new host.

- resize / cold migrate: the server's allocation is claimed on the destination (the new
  flavor's resources, plus its segment IPv4 addresses carried unchanged) and the source
  allocation (old flavor) goes to the migration record as consumer; the server waits in
  VERIFY_RESIZE. `confirmResize` drops the migration's allocation; `revertResize` puts
  the server, its flavor, its ports and its allocation back on the source.
- live migrate: the allocation and the ports move to the destination; status
  `completed`.

Beyond upstream: a requested or forced host that does not reach a segment on which the
server's ports hold addresses is refused (400) before anything moves; upstream fails at
port binding, after the move began.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import in_int_range, utcnow_precise
from stackling.common.errors import BadRequest, NotFound
from stackling.compute import actions, aggregates, block_devices, hosts, network_api, scheduler, server_groups
from stackling.compute import flavors as flavors_logic
from stackling.compute.errors import (
    CannotResizeDisk,
    FlavorNotFound,
    InstanceInvalidState,
    InstanceIsLocked,
    NoValidHost,
    SegmentNotReachable,
)
from stackling.compute.models import ComputeNode, Instance
from stackling.compute.move_models import Migration


class HostNotFound(BadRequest):
    """ComputeHostNotFound, which the migrate APIs answer with 400."""

    message = "Compute host %(host)s could not be found."


class CannotMigrateToSameHost(BadRequest):
    message = "The target host can't be the same one."


class MigrationNotFoundForInstance(NotFound):
    message = "Migration %(migration_id)s not found for instance %(instance_id)s"


class InvalidMigrationState(BadRequest):
    message = ("Migration %(migration_id)s state of instance %(instance_uuid)s is %(state)s. "
               "Cannot %(method)s while the migration is in this state.")


class NotResized(BadRequest):
    message = "Instance has not been resized."


def check_state(ctx: RequestContext, inst: Instance, method: str,
                vm_states: tuple[str, ...], task_states: tuple[str | None, ...] = (None,)
                ) -> None:
    """Nova's check_instance_lock + check_instance_state: 409s with upstream's text."""
    if inst.locked and not ctx.is_admin:
        raise InstanceIsLocked(instance_uuid=inst.uuid)
    if inst.vm_state not in vm_states:
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr="vm_state",
                                   state=inst.vm_state)
    if inst.task_state not in task_states:
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr="task_state",
                                   state=inst.task_state)


def _event(name: str, start: Any, result: str, host: str | None,
           traceback: str | None = None) -> dict[str, Any]:
    return {"event": name, "start_time": start.isoformat(),
            "finish_time": utcnow_precise().isoformat(), "result": result,
            "traceback": traceback, "host": host}


def record_action(db: Session, ctx: RequestContext, inst: Instance, action: str,
                  events: list[tuple[str, str | None]], error: str | None = None) -> None:
    """An instance action with its events (name, host), all finished now; the last one
    failed with `error` if given."""
    row = actions.record(db, ctx, inst, action, finished=False)
    start = row.start_time
    row.events = [_event(name, start, "Error" if error and i == len(events) - 1 else "Success",
                         host, error if i == len(events) - 1 else None)
                  for i, (name, host) in enumerate(events)]
    if error:
        row.message = "Error"


def _host_exists(db: Session, host: str) -> ComputeNode:
    node = db.scalars(select(ComputeNode).where(ComputeNode.host == host)).first()
    if node is None:
        raise HostNotFound(host=host)
    return node


def _check_segments(db: Session, inst: Instance, host: str,
                    needs: list[network_api.RoutedNeed]) -> None:
    for need in needs:
        if not network_api.host_reaches(db, host, list(need.segments)):
            raise SegmentNotReachable(
                what=f"Server {inst.uuid} ({need.label})", segment=" or ".join(need.segments),
                network=need.network_id, host=host)


def _split_allocation(db: Session, inst: Instance) -> tuple[dict[str, dict[str, int]],
                                                           dict[str, dict[str, int]]]:
    """The server's allocation: (on its compute node, elsewhere: segment IPv4 addresses)."""
    from stackling.placement import interface as placement

    current = placement.get_allocations_for_consumer(db, inst.uuid)
    node = hosts.node_uuid(inst.host) if inst.host else None
    on_node = {rp: dict(e["resources"]) for rp, e in current.items() if rp == node}
    carried = {rp: dict(e["resources"]) for rp, e in current.items() if rp != node}
    return on_node, carried


def _flavor_id(db: Session, flavor: dict[str, Any]) -> int | None:
    from stackling.compute.models import Flavor

    return db.scalars(select(Flavor.id).where(Flavor.flavorid == flavor["flavorid"])).first()


def _new_migration(db: Session, ctx: RequestContext, inst: Instance, kind: str,
                   new_flavor: dict[str, Any]) -> Migration:
    now = utcnow_precise()
    mig = Migration(uuid=str(uuid.uuid4()), instance_uuid=inst.uuid,
                    project_id=inst.project_id, user_id=ctx.user_id, migration_type=kind,
                    status="pre-migrating", source_compute=inst.host, source_node=inst.node,
                    old_flavor=dict(inst.flavor), new_flavor=dict(new_flavor),
                    old_instance_type_id=_flavor_id(db, inst.flavor),
                    new_instance_type_id=_flavor_id(db, new_flavor),
                    old_vm_state=inst.vm_state, created_at=now, updated_at=now)
    db.add(mig)
    return mig


def _move_ports(db: Session, inst: Instance, host: str, zone: str) -> None:
    inst.network_info = network_api.rebind_ports(db, inst, host, zone)


# ------------------------------------------------------------------ resize / cold migrate
def resize(db: Session, ctx: RequestContext, inst: Instance, flavor_ref: str,
           zero_disk_allowed: bool = False) -> Migration:
    check_state(ctx, inst, "resize", ("active", "stopped"))
    flavor_id = str(flavor_ref).rstrip("/").rsplit("/", 1)[-1]
    try:
        flavor = flavors_logic.get_flavor(db, ctx, flavor_id)
    except FlavorNotFound:
        raise BadRequest("Unable to locate requested flavor.") from None
    new = flavors_logic.flavor_snapshot(flavor)
    if new["flavorid"] == inst.flavor["flavorid"]:
        raise BadRequest("When resizing, instances must change flavor!")
    volume_backed = block_devices.is_volume_backed(db, inst.uuid)
    if not new["root_gb"] and inst.flavor["root_gb"] and not volume_backed:
        raise CannotResizeDisk(reason="Resize to zero disk flavor is not allowed.")
    if not volume_backed:
        _check_resized_disk(db, ctx, inst, new, zero_disk_allowed)
    return _cold_move(db, ctx, inst, "resize", new, None)


def _check_resized_disk(db: Session, ctx: RequestContext, inst: Instance,
                        new: dict[str, Any], zero_disk_allowed: bool) -> None:
    """An image-backed server's new flavor against its image as Nova's resize checks it
    (the image as the server's system metadata keeps it: its min_ram, and a min_disk of at
    least the flavor's disk it has, so a resize never shrinks the root disk; no size). Nova
    keeps the flavor the server was built or rebuilt with there; this takes the one it has
    (after a resize up, a resize down to the first flavor is refused here, where Nova's
    compute fails it: a disk does not shrink)."""
    from stackling.common.errors import ApiError
    from stackling.compute.errors import FlavorMemoryTooSmall
    from stackling.compute.servers import check_root_disk
    from stackling.image import interface as images

    try:
        image = images.get_image(db, ctx.elevated(), inst.image_ref) if inst.image_ref else None
    except ApiError:
        image = None
    if image is not None and new["memory_mb"] < (image.min_ram or 0):
        raise FlavorMemoryTooSmall()
    min_disk = max((image.min_disk or 0) if image is not None else 0,
                   inst.flavor.get("root_gb") or 0)
    check_root_disk(new["root_gb"] or 0, 0, min_disk, zero_disk_allowed)


def migrate(db: Session, ctx: RequestContext, inst: Instance,
            host: str | None = None) -> Migration:
    check_state(ctx, inst, "migrate", ("active", "stopped"))
    if host is not None:
        _host_exists(db, host)
        if host == inst.host:
            raise CannotMigrateToSameHost()
    return _cold_move(db, ctx, inst, "migration", dict(inst.flavor), host)


def _zone(inst: Instance) -> str | None:
    """A server booted into an availability zone stays in it (Nova pins the AZ a request
    named)."""
    return (inst.requested_az or "").partition(":")[0] or None


def _cold_move(db: Session, ctx: RequestContext, inst: Instance, kind: str,
               new_flavor: dict[str, Any], host: str | None) -> Migration:
    action = "resize" if kind == "resize" else "migrate"
    needs = network_api.routed_needs_for_move(db, inst)
    if host is not None:
        _check_segments(db, inst, host, needs)
    source = inst.host
    mig = _new_migration(db, ctx, inst, kind, new_flavor)
    on_node, carried = _split_allocation(db, inst)
    spec = scheduler.RequestSpec(
        consumer=inst.uuid, project_id=inst.project_id, user_id=inst.user_id,
        flavor=new_flavor, operation=action, zone=_zone(inst), host=host,
        excluded=frozenset({source}) if source else frozenset(), routed=needs,
        carried=carried)
    try:
        with db.begin_nested():
            dest = scheduler.schedule(db, spec)
            if on_node:
                from stackling.placement import interface as placement

                # The migration record holds the source allocation while the server
                # waits in VERIFY_RESIZE (Nova's move of allocations to the migration).
                placement.claim_resources(db, mig.uuid, on_node, inst.project_id,
                                          inst.user_id, consumer_type="MIGRATION")
            _move_ports(db, inst, dest.host, dest.zone)
            db.flush()
    except NoValidHost as err:
        scheduler.record_failure(db, inst.uuid, err)
        mig.status = "error"
        record_action(db, ctx, inst, action, [("conductor_migrate_server", None)], err.text)
        return mig
    node = db.scalars(select(ComputeNode).where(ComputeNode.host == dest.host)).first()
    mig.dest_compute, mig.dest_node = dest.host, dest.node
    mig.dest_host = node.host_ip if node is not None else None
    mig.status = "finished"
    mig.updated_at = utcnow_precise()
    inst.host, inst.node, inst.availability_zone = dest.host, dest.node, dest.zone
    block_devices.move_to_host(db, block_devices.owner_context(inst), inst)  # volumes follow
    inst.flavor = dict(new_flavor)
    inst.vm_state, inst.task_state = "resized", None
    inst.updated_at = utcnow_precise()
    record_action(db, ctx, inst, action, [
        ("conductor_migrate_server", None), ("compute_prep_resize", dest.host),
        ("compute_resize_instance", source), ("compute_finish_resize", dest.host)])
    db.flush()
    return mig


def _pending_resize(db: Session, inst: Instance) -> Migration:
    mig = db.scalars(select(Migration).where(
        Migration.instance_uuid == inst.uuid, Migration.status == "finished",
        Migration.migration_type.in_(("resize", "migration"))).order_by(
        Migration.id.desc())).first()
    if mig is None:
        raise NotResized()
    return mig


def confirm_resize(db: Session, ctx: RequestContext, inst: Instance) -> None:
    check_state(ctx, inst, "confirmResize", ("resized",))
    mig = _pending_resize(db, inst)
    from stackling.placement import interface as placement

    placement.delete_allocation_for_instance(db, mig.uuid)
    mig.status, mig.updated_at = "confirmed", utcnow_precise()
    inst.vm_state = "stopped" if mig.old_vm_state == "stopped" else "active"
    inst.power_state = 4 if inst.vm_state == "stopped" else 1
    inst.updated_at = utcnow_precise()
    record_action(db, ctx, inst, "confirmResize", [("compute_confirm_resize", mig.source_compute)])
    db.flush()


def revert_resize(db: Session, ctx: RequestContext, inst: Instance) -> None:
    """Back to the source host with the old flavor; the migration's allocation becomes
    the server's again (with its segment addresses, which never moved)."""
    from stackling.placement import interface as placement

    check_state(ctx, inst, "revertResize", ("resized",))
    mig = _pending_resize(db, inst)
    _on_dest, carried = _split_allocation(db, inst)
    source_alloc = {rp: dict(e["resources"]) for rp, e in
                    placement.get_allocations_for_consumer(db, mig.uuid).items()}
    placement.delete_allocation_for_instance(db, mig.uuid)
    allocation = {**source_alloc}
    for rp, res in carried.items():
        allocation.setdefault(rp, {}).update(res)
    if allocation:
        placement.claim_resources(db, inst.uuid, allocation, inst.project_id, inst.user_id)
    dest = inst.host
    zone = aggregates.host_zones(db).get(mig.source_compute or "", hosts.DEFAULT_AZ)
    inst.host, inst.node, inst.availability_zone = mig.source_compute, mig.source_node, zone
    block_devices.move_to_host(db, block_devices.owner_context(inst), inst)  # volumes follow
    server_groups.follow_host(db, inst.uuid, inst.host)
    _move_ports(db, inst, inst.host or "", zone)
    inst.flavor = dict(mig.old_flavor)
    inst.vm_state = "stopped" if mig.old_vm_state == "stopped" else "active"
    inst.power_state = 4 if inst.vm_state == "stopped" else 1
    inst.task_state = None
    inst.updated_at = utcnow_precise()
    mig.status, mig.updated_at = "reverted", utcnow_precise()
    record_action(db, ctx, inst, "revertResize", [
        ("compute_revert_resize", dest), ("compute_finish_revert_resize", mig.source_compute)])
    db.flush()


# ------------------------------------------------------------------ live migration
def _requested_host_ok(db: Session, inst: Instance, host: str | None) -> Any:
    """The server's routed-network needs, after refusing a requested host that does not
    exist, is the current one, or cannot reach the server's segments (before anything
    moves)."""
    needs = network_api.routed_needs_for_move(db, inst)
    if host is not None:
        _host_exists(db, host)
        if host == inst.host:
            raise CannotMigrateToSameHost()
        _check_segments(db, inst, host, needs)
    return needs


def _place_elsewhere(db: Session, inst: Instance, operation: str, host: str | None,
                     force: bool, needs: Any, carried: dict[str, Any]) -> Any:
    """Claim a new host (forced: the requested one, unchecked) with the same constraints
    as a build, never the current host, and move the port bindings there."""
    if force and host is not None:
        dest = _forced_claim(db, inst, host, carried)
    else:
        dest = scheduler.schedule(db, scheduler.RequestSpec(
            consumer=inst.uuid, project_id=inst.project_id, user_id=inst.user_id,
            flavor=dict(inst.flavor), operation=operation, zone=_zone(inst), host=host,
            excluded=frozenset({inst.host}) if inst.host else frozenset(),
            routed=needs, carried=carried))
    _move_ports(db, inst, dest.host, dest.zone)
    return dest


def live_migrate(db: Session, ctx: RequestContext, inst: Instance, host: str | None, *,
                 force: bool = False, async_checks: bool = True) -> Migration:
    """`os-migrateLive`. With `async_checks` (2.34+) a failed scheduling is recorded (the
    migration `error`, the server still ACTIVE on its host); before, it is a 400."""
    check_state(ctx, inst, "os-migrateLive", ("active", "paused"))
    needs = _requested_host_ok(db, inst, host)
    source = inst.host
    mig = _new_migration(db, ctx, inst, "live-migration", dict(inst.flavor))
    on_node, carried = _split_allocation(db, inst)
    try:
        with db.begin_nested():
            dest = _place_elsewhere(db, inst, "live-migration", host, force, needs, carried)
            db.flush()
    except NoValidHost as err:
        scheduler.record_failure(db, inst.uuid, err)
        if not async_checks:
            raise BadRequest(err.text) from None  # Nova's pre-2.34 synchronous answer
        mig.status = "error"
        record_action(db, ctx, inst, "live-migration",
                      [("conductor_live_migrate_instance", None)], err.text)
        return mig
    node = db.scalars(select(ComputeNode).where(ComputeNode.host == dest.host)).first()
    mig.dest_compute, mig.dest_node = dest.host, dest.node
    mig.dest_host = node.host_ip if node is not None else None
    mig.status, mig.updated_at = "completed", utcnow_precise()
    inst.host, inst.node, inst.availability_zone = dest.host, dest.node, dest.zone
    block_devices.move_to_host(db, block_devices.owner_context(inst), inst)  # volumes follow
    inst.task_state = None
    inst.updated_at = utcnow_precise()
    record_action(db, ctx, inst, "live-migration", [
        ("conductor_live_migrate_instance", None),
        ("compute_check_can_live_migrate_destination", dest.host),
        ("compute_live_migration", source),
        ("compute_post_live_migration_at_destination", dest.host)])
    db.flush()
    return mig


def _forced_claim(db: Session, inst: Instance, host: str,
                  carried: dict[str, dict[str, int]]) -> scheduler.Destination:
    """A forced host bypasses the scheduler, not placement: claim there directly."""
    from stackling.placement import interface as placement

    node = _host_exists(db, host)
    allocation = {node.uuid: scheduler.resources_for(inst.flavor)}
    for rp, res in carried.items():
        allocation.setdefault(rp, {}).update(res)
    try:
        placement.claim_resources(db, inst.uuid, allocation, inst.project_id, inst.user_id)
    except placement.ClaimFailed:
        raise NoValidHost(reason=f"Unable to migrate instance to host {host}: not enough "
                                 "resources.") from None
    server_groups.follow_host(db, inst.uuid, host)  # forced past the group's rule, as Nova
    zone = aggregates.host_zones(db).get(host, hosts.DEFAULT_AZ)
    return scheduler.Destination(host, node.hypervisor_hostname, zone)


# ------------------------------------------------------------------ listing
def list_migrations(db: Session, *, host: str | None = None, status: str | None = None,
                    instance_uuid: str | None = None, migration_type: str | None = None,
                    source_compute: str | None = None, limit: int | None = None,
                    marker: str | None = None, changes_since: Any = None,
                    project_id: str | None = None, changes_before: Any = None,
                    user_id: str | None = None) -> list[Migration]:
    from sqlalchemy import or_

    stmt = select(Migration)
    if host:
        stmt = stmt.where(or_(Migration.source_compute == host, Migration.dest_compute == host))
    if status:
        stmt = stmt.where(Migration.status == status)
    if instance_uuid:
        stmt = stmt.where(Migration.instance_uuid == instance_uuid)
    if migration_type:
        stmt = stmt.where(Migration.migration_type == migration_type)
    if source_compute:
        stmt = stmt.where(Migration.source_compute == source_compute)
    if project_id:
        stmt = stmt.where(Migration.project_id == project_id)
    if changes_since is not None:
        stmt = stmt.where(Migration.updated_at >= changes_since)
    if changes_before is not None:  # 2.66
        stmt = stmt.where(Migration.updated_at <= changes_before)
    if user_id:  # 2.80
        stmt = stmt.where(Migration.user_id == user_id)
    if marker is not None:
        marked = db.scalars(select(Migration).where(Migration.uuid == marker)).first()
        if marked is None:
            raise BadRequest(f"Marker {marker} could not be found.")
        stmt = stmt.where(or_(Migration.created_at < marked.created_at,
                              (Migration.created_at == marked.created_at)
                              & (Migration.id < marked.id)))
    stmt = stmt.order_by(Migration.created_at.desc(), Migration.id.desc())
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(db.scalars(stmt))


def get_instance_migration(db: Session, inst: Instance, migration_id: str) -> Migration:
    try:
        ident = int(migration_id)
        if not in_int_range(ident):
            raise ValueError(migration_id)
    except ValueError:
        raise MigrationNotFoundForInstance(migration_id=migration_id,
                                           instance_id=inst.uuid) from None
    mig = db.scalars(select(Migration).where(Migration.id == ident,
                                             Migration.instance_uuid == inst.uuid)).first()
    if mig is None:
        raise MigrationNotFoundForInstance(migration_id=migration_id, instance_id=inst.uuid)
    return mig


def in_progress_live(db: Session, inst: Instance) -> list[Migration]:
    """Live migrations still running: never any here (a live migration completes within
    its request), so `GET /servers/{id}/migrations` is always empty."""
    return list(db.scalars(select(Migration).where(
        Migration.instance_uuid == inst.uuid, Migration.migration_type == "live-migration",
        Migration.status.in_(("queued", "preparing", "running")))))


def refuse_live_action(db: Session, inst: Instance, migration_id: str, method: str) -> None:
    """force_complete / abort of a live migration: it is never running here."""
    mig = get_instance_migration(db, inst, migration_id)
    raise InvalidMigrationState(migration_id=mig.id, instance_uuid=inst.uuid,
                                state=mig.status, method=method)




# ------------------------------------------------------------------ evacuate
class ComputeServiceInUse(BadRequest):
    message = "Compute service of %(host)s is still in use."


def evacuate(db: Session, ctx: RequestContext, inst: Instance, host: str | None, *,
             force: bool = False, stop: bool = False) -> Migration:
    """Rebuild a server of a down host elsewhere (the host must be down: here, forced down
    through os-services). Same image, ports and flavor; the allocation and the port
    bindings move; the migration is an `evacuation`, `done`."""
    from stackling.compute.models import ComputeService

    check_state(ctx, inst, "evacuate", ("active", "stopped", "error"))
    service = db.scalars(select(ComputeService).where(
        ComputeService.host == inst.host, ComputeService.binary == "nova-compute")).first()
    if service is not None and hosts.is_up(service):
        raise ComputeServiceInUse(host=inst.host)
    needs = _requested_host_ok(db, inst, host)
    mig = _new_migration(db, ctx, inst, "evacuation", dict(inst.flavor))
    _on_node, carried = _split_allocation(db, inst)
    try:
        with db.begin_nested():
            dest = _place_elsewhere(db, inst, "evacuate", host, force, needs, carried)
            db.flush()
    except NoValidHost as err:
        scheduler.record_failure(db, inst.uuid, err)
        mig.status = "error"
        record_action(db, ctx, inst, "evacuate", [("conductor_rebuild_server", None)],
                      err.text)
        return mig
    node = db.scalars(select(ComputeNode).where(ComputeNode.host == dest.host)).first()
    mig.dest_compute, mig.dest_node = dest.host, dest.node
    mig.dest_host = node.host_ip if node is not None else None
    mig.status, mig.updated_at = "done", utcnow_precise()
    inst.host, inst.node, inst.availability_zone = dest.host, dest.node, dest.zone
    block_devices.move_to_host(db, block_devices.owner_context(inst), inst)  # volumes follow
    stopped = inst.vm_state == "stopped" or stop  # `stop`: 2.95, stopped at the destination
    inst.vm_state, inst.task_state = ("stopped" if stopped else "active"), None
    inst.power_state = 4 if stopped else 1
    inst.updated_at = utcnow_precise()
    record_action(db, ctx, inst, "evacuate", [
        ("conductor_rebuild_server", None), ("compute_rebuild_instance", dest.host)])
    db.flush()
    return mig
