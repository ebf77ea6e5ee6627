"""Servers: create (the API-time checks, then pending rows the build worker picks up),
list, show, update, delete."""

from __future__ import annotations

import re
import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import inspect, select
from sqlalchemy.orm import Session

from stackling.common import memo
from stackling.common.context import RequestContext
from stackling.common.db import utcnow_precise
from stackling.common.errors import ApiError, BadRequest, Forbidden
from stackling.common.listing import to_bool
from stackling.common.patterns import PatternError, PatternTooCostly, UserPattern
from stackling.compute import (
    actions,
    aggregates,
    hosts,
    network_api,
    scheduler,
    server_groups,
    transitions,
)
from stackling.compute import flavors as flavors_logic
from stackling.compute.errors import (
    BootFromVolumeRequiredForZeroDiskFlavor,
    FlavorDiskSmallerThanImage,
    FlavorDiskSmallerThanMinDisk,
    FlavorMemoryTooSmall,
    FlavorNotFound,
    ImageNotActive,
    ImageNotFound,
    InstanceIsLocked,
    InstanceNotFound,
    KeypairNotFound,
)
from stackling.compute.models import ComputeNode, Instance
from stackling.compute.validation import is_uuid_like

# status -> vm_states it covers (nova.api.openstack.common._STATE_MAP, reversed)
STATUS_VM_STATES = {
    "ACTIVE": ["active"], "BUILD": ["building"], "ERROR": ["error"], "SHUTOFF": ["stopped"],
    "DELETED": ["deleted"], "SOFT_DELETED": ["soft-delete"], "PAUSED": ["paused"],
    "SUSPENDED": ["suspended"], "RESCUE": ["rescued"], "VERIFY_RESIZE": ["resized"],
    "SHELVED": ["shelved"], "SHELVED_OFFLOADED": ["shelved_offloaded"],
    "REBOOT": ["active"], "HARD_REBOOT": ["active"], "PASSWORD": ["active"],
    "REBUILD": ["active", "stopped", "error"], "MIGRATING": ["active"],
    "RESIZE": ["active", "stopped"], "REVERT_RESIZE": ["resized"], "UNKNOWN": [],
}


@dataclass
class CreateRequest:
    """A validated create body, in the terms the logic needs."""

    name: str
    flavor_ref: str
    image_ref: str
    networks: Any  # None | "auto" | "none" | list[{network_id, port_id, address, tag}]
    min_count: int = 1
    max_count: int = 1
    key_name: str | None = None
    availability_zone: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    security_groups: list[str] = field(default_factory=lambda: ["default"])
    access_ip_v4: str | None = None
    access_ip_v6: str | None = None
    config_drive: bool = False
    disk_config: str = "MANUAL"
    user_data: str | None = None
    description: str | None = None
    admin_pass: str | None = None
    return_reservation_id: bool = False
    group: str | None = None  # the `group` scheduler hint: a server group's uuid
    has_bdm: bool = False
    # the body's block_device_mapping(_v2) lists, as given (block_devices checks them)
    block_devices: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    trusted_certs: list[str] | None = None  # 2.63
    port_resource_requests_ok: bool = True  # False below 2.72
    requested_host: str | None = None  # 2.74: filters still run, on this host only
    requested_node: str | None = None  # 2.74 hypervisor_hostname
    hostname: str | None = None  # 2.90
    scheduler_hints: dict[str, Any] = field(default_factory=dict)  # shown from 2.100


def request_from_body(s: dict[str, Any]) -> CreateRequest:
    """The `server` object of a schema-validated create body, as a CreateRequest."""
    # As Nova: an entry without a name is ignored (`security_groups: [{}]` is no error).
    groups = list(dict.fromkeys(g["name"] for g in s.get("security_groups", []) if g.get("name")))
    return CreateRequest(
        name=s["name"], flavor_ref=str(s["flavorRef"]), image_ref=s.get("imageRef", ""),
        networks=s.get("networks"), min_count=int(s.get("min_count", 1)),
        max_count=int(s.get("max_count", s.get("min_count", 1))), key_name=s.get("key_name"),
        availability_zone=s.get("availability_zone"), metadata=s.get("metadata", {}),
        security_groups=groups or ["default"], access_ip_v4=s.get("accessIPv4"),
        access_ip_v6=s.get("accessIPv6"), config_drive=to_bool(s.get("config_drive", False)),
        disk_config=s.get("OS-DCF:diskConfig", "MANUAL"), user_data=s.get("user_data"),
        description=s.get("description"), admin_pass=s.get("adminPass"),
        return_reservation_id=to_bool(s.get("return_reservation_id", False)),
        has_bdm=bool(s.get("block_device_mapping_v2") or s.get("block_device_mapping")),
        block_devices={k: s[k] for k in ("block_device_mapping", "block_device_mapping_v2")
                       if k in s},
        tags=list(dict.fromkeys(s.get("tags", []))),
        trusted_certs=s.get("trusted_image_certificates") or None,
        requested_host=s.get("host"), requested_node=s.get("hypervisor_hostname"),
        hostname=s.get("hostname"))


def _href_id(ref: Any) -> str:
    text = str(ref)
    return text.rstrip("/").rsplit("/", 1)[-1] if "/" in text else text


def parse_networks(networks: Any) -> Any:
    """Nova's _get_requested_networks: the request's networks as NetworkRequests."""
    if networks is None or isinstance(networks, str):
        return networks
    out = []
    seen_ports: set[str] = set()
    for item in networks:
        address, port, tag = item.get("fixed_ip"), item.get("port"), item.get("tag")
        if port:
            if address is not None:
                raise BadRequest(f"Specified Fixed IP '{address}' cannot be used with port "
                                 f"'{port}': the two cannot be specified together.")
            if port in seen_ports:
                raise BadRequest(f"Port ID '{port}' was specified twice: you cannot attach a "
                                 "port multiple times.")
            seen_ports.add(port)
            out.append({"network_id": None, "port_id": port, "address": None, "tag": tag})
            continue
        if "uuid" not in item:
            raise BadRequest("Bad network format: missing 'uuid'")
        if not is_uuid_like(item["uuid"]):
            raise BadRequest("Bad networks format: network uuid is not in proper format "
                             f"({item['uuid']})")
        out.append({"network_id": item["uuid"], "port_id": None, "address": address, "tag": tag})
    return out


GiB = 1 << 30


def check_root_disk(root_gb: int, image_size: int, image_min_disk: int,
                    zero_disk_allowed: bool) -> None:
    """Nova's check of an image-backed server's root disk (`_validate_flavor_image_nostatus`;
    a volume-backed one is not checked here): the flavor's disk holds the image's bytes and
    its `min_disk` (GiB). A flavor of disk 0 has no size to check (its disk is then the
    image's size), and is only for callers allowed `servers:create:zero_disk_flavor`."""
    dest = root_gb * GiB
    if dest:
        if image_size > dest:
            raise FlavorDiskSmallerThanImage(flavor_size=dest, image_size=image_size)
        if image_min_disk * GiB > dest:
            raise FlavorDiskSmallerThanMinDisk(flavor_size=dest,
                                               image_min_disk=image_min_disk * GiB)
    elif not zero_disk_allowed:
        raise BootFromVolumeRequiredForZeroDiskFlavor()


def _check_image(db: Session, ctx: RequestContext, image_ref: str, flavor: Any,
                 zero_disk_allowed: bool = True, image_backed: bool = True) -> str:
    """The image to boot (or rebuild with): active, and the flavor fits it (its root disk
    only when `image_backed`: a volume-backed server's disk is its volume)."""
    from stackling.image import interface as images

    image_id = _href_id(image_ref)
    try:
        image = images.get_image(db, ctx, image_id)
    except ApiError:
        raise ImageNotFound(image_id=image_id) from None
    if image.status != "active":
        raise ImageNotActive(image_id=image_id)
    if flavor.memory_mb < (image.min_ram or 0):
        raise FlavorMemoryTooSmall()
    if image_backed:
        check_root_disk(flavor.root_gb or 0, image.size or 0, image.min_disk or 0,
                        zero_disk_allowed)
    return image.id


def _check_az(db: Session, ctx: RequestContext, zone: str | None,
              forced_host_allowed: bool) -> str | None:
    if not zone:
        return None
    name, _, host = zone.partition(":")
    if host:
        if not forced_host_allowed:
            raise Forbidden("Policy doesn't allow os_compute_api:servers:create:forced_host "
                            "to be performed.")
        if not db.scalars(select(ComputeNode.id).where(ComputeNode.host == host)).first():
            raise BadRequest(f"Compute host {host} could not be found.")
    zones = set(aggregates.host_zones(db).values()) | {hosts.DEFAULT_AZ}
    if name and name not in zones:
        raise BadRequest("The requested availability zone is not available")
    # "zone:host" is kept whole for the scheduler, which then only considers that host.
    return zone if host else (name or None)


def _requested_destination(db: Session, zone: str | None, host: str | None,
                           node: str | None) -> str:
    """2.74's host/hypervisor_hostname: the node must exist (on that host, if both are
    given); kept as "zone:host" like a forced host, which the scheduler also narrows to
    while running every filter (here a forced host is not exempt from them either)."""
    if zone and ":" in zone:
        raise BadRequest("One mechanism with host and/or hypervisor_hostname and another "
                         "mechanism with zone:host:node are mutually exclusive.")
    stmt = select(ComputeNode.host)
    if host:
        stmt = stmt.where(ComputeNode.host == host)
    if node:
        stmt = stmt.where(ComputeNode.hypervisor_hostname == node)
    found = db.scalars(stmt).first()
    if found is None:
        raise BadRequest(f"Compute host {host or node} could not be found.")
    return f"{zone or ''}:{found}"


def booted_image_properties(db: Session, ctx: RequestContext, image_id: str) -> dict[str, str]:
    """The image's properties the server keeps (2.98), read as the build reads the image."""
    from stackling.compute import image_properties
    from stackling.image import interface as images

    return image_properties.snapshot(images.get_image(db, ctx, image_id).properties)


def _kept_properties(properties: dict[str, Any]) -> dict[str, str]:
    from stackling.compute import image_properties

    return image_properties.snapshot(properties)


def hints_as_kept(hints: dict[str, Any]) -> dict[str, list[str]]:
    """Nova's request spec keeps each hint as a list of strings (2.100 shows them so)."""
    return {key: [str(v) for v in value] if isinstance(value, list) else [str(value)]
            for key, value in hints.items()}


def create_servers(db: Session, ctx: RequestContext, req: CreateRequest, *,
                   forced_host_allowed: bool = False,
                   zero_disk_allowed: bool = False) -> list[Instance]:
    """Everything Nova checks before its 202, then one pending instance per count."""
    try:
        flavor = flavors_logic.get_flavor(db, ctx, _href_id(req.flavor_ref))
    except FlavorNotFound:
        raise BadRequest("Invalid flavorRef provided.") from None
    if flavor.disabled:
        raise BadRequest("Invalid flavorRef provided.")
    from stackling.compute import block_devices

    bdms = block_devices.check_create(db, ctx, req.block_devices, _href_id(req.image_ref)
                                      if req.image_ref else "", flavor, req.max_count)
    if bdms is not None and bdms.volume_backed:
        # Volume-backed: no image disk (imageRef is "" in the server), the root volume's
        # image metadata (or the image it is made of) is the server's image meta.
        image_id = ""
        meta = bdms.image_meta or {}
        if flavor.memory_mb < (meta.get("min_ram") or 0):
            raise FlavorMemoryTooSmall()
        image_props = _kept_properties(meta.get("properties") or {})
    elif req.image_ref:
        image_id = _check_image(db, ctx, req.image_ref, flavor, zero_disk_allowed)
        image_props = booted_image_properties(db, ctx, image_id)
    else:
        raise BadRequest("Missing imageRef attribute")
    if req.min_count > req.max_count:
        raise BadRequest("min_count must be <= max_count")
    if req.hostname and req.max_count > 1:
        raise BadRequest("Unable to allocate a single hostname to multiple instances")
    key_data = None
    if req.key_name is not None:
        from stackling.compute import keypairs

        try:
            key_data = keypairs.get_keypair(db, ctx.user_id or "", req.key_name).public_key
        except KeypairNotFound:
            raise BadRequest("Invalid key_name provided.") from None
    requested = parse_networks(req.networks)
    if isinstance(requested, list) and req.max_count > 1:
        if any(r["address"] for r in requested):
            raise BadRequest("max_count cannot be greater than 1 if an fixed_ip is specified.")
        if any(r["port_id"] for r in requested):
            raise BadRequest("Unable to launch multiple instances with a single configured port "
                             "ID. Please launch your instance one by one with different ports.")
    zone = _check_az(db, ctx, req.availability_zone, forced_host_allowed)
    if req.requested_host or req.requested_node:
        zone = _requested_destination(db, zone, req.requested_host, req.requested_node)
    if requested != network_api.NONE:
        network_api.resolve_security_groups(db, ctx, req.security_groups)
    network_api.validate_networks(db, ctx, requested, req.max_count,
                                  resource_requests_ok=req.port_resource_requests_ok)
    count = _count_that_fits(db, ctx, req, requested, flavor)
    reservation = "r-" + secrets.token_hex(4)
    now = utcnow_precise()
    out = []
    for index in range(count):
        inst_uuid = str(uuid.uuid4())
        name = req.name if count == 1 else f"{req.name}-{index + 1}"
        inst = Instance(
            uuid=inst_uuid, display_name=name, description=req.description,
            project_id=ctx.project_id, user_id=ctx.user_id, roles=list(ctx.roles),
            flavor=flavors_logic.flavor_snapshot(flavor), image_ref=image_id,
            key_name=req.key_name, key_data=key_data, vm_state="building",
            task_state="scheduling", power_state=0, requested_az=zone,
            availability_zone=(zone or "").partition(":")[0] or None,
            metadata_=dict(req.metadata),
            access_ip_v4=req.access_ip_v4, access_ip_v6=req.access_ip_v6,
            config_drive="True" if req.config_drive else "", disk_config=req.disk_config,
            user_data=req.user_data, reservation_id=reservation, launch_index=index,
            hostname=req.hostname or _hostname(name),
            security_groups=list(req.security_groups),
            requested_networks=requested, network_info=[], tags=list(req.tags),
            trusted_certs=req.trusted_certs, build_state="pending",
            image_properties=image_props, scheduler_hints=hints_as_kept(req.scheduler_hints),
            created_at=now, updated_at=now)
        db.add(inst)
        if bdms is not None:
            block_devices.reserve_at_boot(db, ctx, inst, [dict(b) for b in bdms.bdms])
        actions.record(db, ctx, inst, "create", finished=False)
        out.append(inst)
    db.flush()
    if req.group is not None:
        server_groups.join_at_boot(db, ctx, req.group, [i.uuid for i in out])
    memo.table(db).setdefault(_CREATED, {}).update((i.uuid, i) for i in out)
    return out


_CREATED = "compute.created_instances"  # memo: uuid -> instance inserted by this transaction


def created_here(db: Session, ctx: RequestContext, server_id: str) -> Instance | None:
    """The instance if this transaction inserted it (and the caller may see it): no other
    transaction can see, lock or change that row yet, so it needs no locking read."""
    inst = memo.table(db).get(_CREATED, {}).get(server_id)
    if inst is None or not inspect(inst).persistent:
        return None
    if not ctx.is_admin and inst.project_id != ctx.project_id:
        return None
    return inst


def _count_that_fits(db: Session, ctx: RequestContext, req: CreateRequest, requested: Any,
                     flavor: Any) -> int:
    """How many servers this request makes: max_count bounded by the per-request cap
    (whatever the quota), then reduced to what the port and instance quotas leave, as
    Nova does; 403 when not even min_count fits. Takes the project's quota lock."""
    from stackling.compute import quotas

    # The limits, once for both checks (the usage is counted under the lock below).
    known = quotas.request_limits(db, ctx.project_id or "", ctx.user_id)
    quotas.check_metadata(db, ctx.project_id or "", len(req.metadata), known.project)
    cap = quotas.settings_of(db).max_count
    if req.min_count > cap:
        raise BadRequest(f"min_count {req.min_count} is above the {cap} servers one request "
                         "may create.")
    count = min(req.max_count, cap)
    if requested != network_api.NONE:
        new_ports = 1 if not isinstance(requested, list) else sum(
            1 for r in requested if not r["port_id"])
        fit = quotas.ports_fit(db, ctx.project_id or "", new_ports, count)
        if fit < req.min_count:
            raise quotas.PortLimitExceeded()
        count = fit
    return quotas.check_instances(db, ctx.project_id or "", ctx.user_id,
                                  flavors_logic.flavor_snapshot(flavor), req.min_count, count,
                                  known)


def _hostname(name: str) -> str:
    host = re.sub(r"[^\w.-]+", "", name.replace(" ", "-").replace("_", "-")).lower()
    return host.strip(".-")[:63] or "server"


# ------------------------------------------------------------------ read
def get_instance(db: Session, ctx: RequestContext, server_id: str, *,
                 for_update: bool = False) -> Instance:
    """The instance, if the caller's project owns it (admins see all); else 404."""
    stmt = select(Instance).where(Instance.uuid == server_id)
    if not ctx.is_admin:
        stmt = stmt.where(Instance.project_id == ctx.project_id)
    if for_update:
        # Fresh from the database: the request may already hold an older copy of the row
        # (read before the lock was granted, e.g. while a build was still in flight).
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
    inst = db.scalars(stmt).first()
    if inst is None:
        raise InstanceNotFound(instance_id=server_id)
    return inst


@dataclass
class ListQuery:
    project_id: str | None  # None: all projects (admin all_tenants)
    status: list[str] | None = None
    name: str | None = None
    image: str | None = None
    flavor: str | None = None
    host: str | None = None
    ip: str | None = None
    changes_since: Any = None
    changes_before: Any = None  # 2.66
    locked: bool | None = None  # 2.73
    # Filters on a server's own fields (admins, and from 2.83 everyone): exact ones
    # (user_id, vm_state, task_state) and regular expressions over the rest (see REGEX_FILTERS)
    exact: dict[str, str] = field(default_factory=dict)
    regex: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)  # all of
    tags_any: list[str] = field(default_factory=list)
    not_tags: list[str] = field(default_factory=list)  # not all of
    not_tags_any: list[str] = field(default_factory=list)
    sort_keys: list[tuple[str, bool]] = field(default_factory=list)
    limit: int | None = None
    marker: str | None = None


_SORT_COLUMNS = {"created_at": Instance.created_at, "display_name": Instance.display_name,
                 "uuid": Instance.uuid, "updated_at": Instance.updated_at,
                 "vm_state": Instance.vm_state, "task_state": Instance.task_state,
                 "host": Instance.host, "launched_at": Instance.launched_at,
                 "availability_zone": Instance.availability_zone, "id": Instance.id,
                 "locked": Instance.locked}  # `locked` from 2.73


EXACT_FILTERS = {"user_id": Instance.user_id, "vm_state": Instance.vm_state,
                 "task_state": Instance.task_state}


def _column_text(inst: Instance, key: str) -> str | None:
    """A field as Nova's REGEXP filter sees the column (None: NULL, never matches)."""
    value: Any = {"availability_zone": inst.availability_zone, "key_name": inst.key_name,
                  "config_drive": inst.config_drive, "power_state": inst.power_state,
                  "progress": 0, "created_at": inst.created_at,
                  "launched_at": inst.launched_at, "terminated_at": None,
                  "hostname": inst.hostname}[key]
    if value is None:
        return None
    if hasattr(value, "strftime"):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


REGEX_FILTERS = ("availability_zone", "key_name", "config_drive", "power_state", "progress",
                 "created_at", "launched_at", "terminated_at")


def list_instances(db: Session, q: ListQuery) -> list[Instance]:
    stmt = select(Instance)
    if q.project_id is not None:
        stmt = stmt.where(Instance.project_id == q.project_id)
    if q.status is not None:
        stmt = stmt.where(Instance.vm_state.in_(q.status))
    if q.image:
        stmt = stmt.where(Instance.image_ref == _href_id(q.image))
    if q.host:
        stmt = stmt.where(Instance.host == q.host)
    if q.changes_since is not None:
        stmt = stmt.where(Instance.updated_at >= q.changes_since)
    if q.changes_before is not None:
        stmt = stmt.where(Instance.updated_at <= q.changes_before)
    if q.locked is not None:
        stmt = stmt.where(Instance.locked == q.locked)
    for key, value in q.exact.items():
        stmt = stmt.where(EXACT_FILTERS[key] == value)
    sorts = q.sort_keys or [("created_at", False), ("id", False)]
    order = [(_SORT_COLUMNS[k], asc) for k, asc in sorts]
    if all(c is not Instance.id for c, _ in order):
        order.append((Instance.id, False))
    stmt = stmt.order_by(*[c.asc() if asc else c.desc() for c, asc in order])
    needs_python = bool(q.name or q.flavor or q.ip or q.tags or q.tags_any or q.not_tags
                        or q.not_tags_any or q.regex)
    if q.marker is not None:
        marker = db.scalars(select(Instance).where(Instance.uuid == q.marker)).first()
        if marker is None or (q.project_id is not None and marker.project_id != q.project_id):
            raise BadRequest(f"marker [{q.marker}] not found")
        stmt = stmt.where(_after(order, marker))
    if q.limit is not None and not needs_python:
        stmt = stmt.limit(q.limit)
    rows = list(db.scalars(stmt))
    if needs_python:
        name, ip = _pattern(q.name), _pattern(q.ip)
        regex = {k: _pattern(v) for k, v in q.regex.items()}
        rows = [i for i in rows if _matches(i, q, name, ip, regex)]
        if q.limit is not None:
            rows = rows[: q.limit]
    return rows


def _after(order: list[tuple[Any, bool]], marker: Instance) -> Any:
    from sqlalchemy import and_, or_

    values = {c.key: getattr(marker, c.key if c.key != "metadata" else "metadata_")
              for c, _ in order}
    clauses = []
    for i, (col, asc) in enumerate(order):
        eq = [order[j][0] == values[order[j][0].key] for j in range(i)]
        value = values[col.key]
        if value is None:
            continue
        cmp = col > value if asc else col < value
        clauses.append(and_(*eq, cmp) if eq else cmp)
    return or_(*clauses)


def _pattern(value: str | None) -> UserPattern | str | None:
    """A filter's regular expression (one time budget for all rows); not one: itself,
    matched as a substring (name) or not at all (ip). Too costly a pattern is a 400."""
    if not value:
        return None
    try:
        return UserPattern(value)
    except PatternTooCostly as err:
        raise BadRequest(f"Invalid filter {value!r}: {err}") from None
    except PatternError:
        return value


def _search(pattern: UserPattern | str, text: str) -> bool:
    try:
        return pattern.search(text) if isinstance(pattern, UserPattern) else pattern in text
    except PatternTooCostly as err:
        raise BadRequest(f"Invalid filter {pattern.rx.pattern!r}: {err}") from None


def _matches(inst: Instance, q: ListQuery, name: Any, ip: Any,
             regex: dict[str, Any] | None = None) -> bool:
    tags = set(inst.tags or [])
    if q.tags and not set(q.tags) <= tags:
        return False
    if q.tags_any and not set(q.tags_any) & tags:
        return False
    if q.not_tags and set(q.not_tags) <= tags:
        return False
    if q.not_tags_any and set(q.not_tags_any) & tags:
        return False
    if name is not None and not _search(name, inst.display_name or ""):
        return False
    if q.flavor and inst.flavor.get("flavorid") != _href_id(q.flavor):
        return False
    if ip is not None:
        if not isinstance(ip, UserPattern):
            return False  # not a regular expression: matches no address
        addrs = [a["address"] for vif in inst.network_info or [] for a in vif["ips"]]
        if not any(_search(ip, a) for a in addrs):
            return False
    for key, pattern in (regex or {}).items():
        text = _column_text(inst, key)
        if text is None or (pattern is not None and not _search(pattern, text)):
            return False
    return True


# ------------------------------------------------------------------ write
def update_instance(db: Session, ctx: RequestContext, server_id: str,
                    values: dict[str, Any]) -> Instance:
    inst = get_instance(db, ctx, server_id)
    mapping = {"name": "display_name", "description": "description",
               "accessIPv4": "access_ip_v4", "accessIPv6": "access_ip_v6",
               "OS-DCF:diskConfig": "disk_config", "hostname": "hostname"}  # hostname: 2.90
    if "pinned_availability_zone" in values:  # 2.104
        _set_pinned_az(inst, values["pinned_availability_zone"])
    for key, attr in mapping.items():
        if key in values:
            setattr(inst, attr, values[key])
    inst.updated_at = utcnow_precise()
    db.flush()
    return inst


def _set_pinned_az(inst: Instance, requested: str | None) -> None:
    """2.104: null unpins (the next move may go to any zone); a zone re-pins, but only to
    the zone the server is in, and only from unpinned (Nova's 409s); the same value again
    changes nothing. A 2.74 requested host kept beside the zone stays."""
    from stackling.common.errors import Conflict

    pinned, _, host = (inst.requested_az or "").partition(":")
    if requested is None:
        inst.requested_az = f":{host}" if host else None
        return
    if pinned:
        if requested != pinned:
            raise Conflict("Cannot change pinned availability zone directly. Unpin first by "
                           "setting pinned_availability_zone to null.")
        return
    current = inst.availability_zone or ""
    if requested != current:
        raise Conflict(f"Server can only be pinned to its current availability zone "
                       f"'{current}', but '{requested}' was requested.")
    inst.requested_az = f"{requested}:{host}" if host else requested


def delete_instance(db: Session, ctx: RequestContext, server_id: str) -> None:
    """Release everything the server holds (ports, placement allocation), then forget it.

    The row lock waits out a build in flight and the row is re-read under it, so the
    delete sees what that build committed (its ports and its placement claim) and
    releases it; a build that has not claimed the row yet never will (it skips locked
    rows and finds this one gone).
    """
    inst = get_instance(db, ctx, server_id, for_update=True)
    if inst.locked and not ctx.is_admin:
        raise InstanceIsLocked(instance_uuid=inst.uuid)
    actions.record(db, ctx, inst, "delete")
    network_api.deallocate_for_instance(db, inst)
    from stackling.compute import block_devices

    block_devices.delete_all(db, ctx, inst)  # detached; delete_on_termination ones deleted
    scheduler.release(db, inst.uuid)  # idempotent: nothing to release before a build
    server_groups.leave(db, inst.uuid)
    db.delete(inst)
    db.flush()


def usage(db: Session, project_id: str) -> dict[str, int]:
    rows = list(db.scalars(select(Instance.flavor).where(Instance.project_id == project_id)))
    return {"instances": len(rows), "cores": sum(f["vcpus"] for f in rows),
            "ram": sum(f["memory_mb"] for f in rows)}


# ------------------------------------------------------------------ actions
# action -> (allowed vm_states, new vm_state, new power_state, policy name)
ACTIONS = {
    "os-stop": (("active", "error"), "stopped", 4, "stop"),
    "os-start": (("stopped",), "active", 1, "start"),
    "reboot": (("active", "stopped", "error"), "active", 1, "reboot"),
}


REBOOT_TASKS = ("rebooting", "rebooting_hard")
# Tasks that end when the guest's next boot has started (the netns dataplane's word)
BOOTING_TASKS = (*REBOOT_TASKS, "powering-on", "rebuilding")
REBOOT_BOOT_BOUND = 120.0  # seconds a guest's boot may take to start, past its power-off


def guest_boot_bound(db: Session, power_off: bool = True) -> float | None:
    """Seconds at most that an action waits for its guest's next boot to start (the
    guest's power-off first if `power_off`), or None when no guests run (no netns
    dataplane): the action then ends as it always did."""
    runtime = db.info.get("stackling.runtime")
    if runtime is None or runtime.settings.dataplane.driver != "netns":
        return None
    wait = REBOOT_BOOT_BOUND + (runtime.settings.dataplane.shutdown_timeout if power_off else 0)
    return max(wait, transitions.min_duration(db))


def run_action(db: Session, ctx: RequestContext, inst: Instance, action: str, *,
               hard: bool = False) -> None:
    """Power actions take effect at once: there is no hypervisor to wait for; a reboot
    (`hard`: HARD_REBOOT) stays in its task state for the minimum duration (transitions).
    A stop of a server whose guest runs (the netns dataplane) is `powering-off` until the
    guest's init has powered off or been killed (dataplane.shutdown_timeout)."""
    from stackling.compute.errors import InstanceInvalidState

    allowed_states, vm_state, power_state, method = ACTIONS[action]
    if inst.locked and not ctx.is_admin:
        raise InstanceIsLocked(instance_uuid=inst.uuid)
    # Nova's ALLOW_REBOOT: a HARD reboot may cut a reboot under way short
    busy = inst.task_state is not None and not (
        action == "reboot" and hard and inst.task_state in REBOOT_TASKS)
    if inst.vm_state not in allowed_states or busy:
        attr, state = ("task_state", inst.task_state) if inst.task_state else (
            "vm_state", inst.vm_state)
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr=attr,
                                   state=state)
    task = ("rebooting_hard" if hard else "rebooting") if action == "reboot" else None
    bound = guest_boot_bound(db, power_off=action == "reboot")
    guests = bound is not None
    if action == "os-stop" and inst.vm_state == "active" and guests:
        # a guest runs: its init is asked to power off, and the dataplane sets STOPPED
        # once it is gone (interface.guest_stopped), as Nova's compute manager does after
        # the driver's power_off (shutdown_timeout)
        inst.task_state, inst.updated_at = "powering-off", utcnow_precise()
    elif action == "os-start" and guests:
        # SHUTOFF in task state `powering-on` until the guest's boot has started
        # (interface.guest_booted), as Nova's until the driver's power_on returns; bounded
        transitions.begin(db, inst, "powering-on", vm_state, power_state, seconds=bound)
    elif task is not None and inst.vm_state == "active" and guests:
        # the guest is rebooted (a soft one asked to power off first): REBOOT/HARD_REBOOT
        # until its next boot has started (interface.guest_booted), as Nova's compute
        # manager clears the task once the driver's reboot returns; bounded all the same
        # (the power-off's wait and a boot's) in case no dataplane process is running
        transitions.begin(db, inst, task, vm_state, power_state, seconds=bound)
    elif task is None or not transitions.begin(db, inst, task, vm_state, power_state):
        inst.vm_state, inst.power_state = vm_state, power_state
        inst.updated_at = utcnow_precise()
    row = actions.record(db, ctx, inst, method)
    if action == "reboot" and row.events:  # (the dataplane's: a HARD one is not asked first)
        row.events = [{**row.events[0], "reboot_type": "HARD" if hard else "SOFT"}]
    db.flush()


def set_locked(db: Session, ctx: RequestContext, inst: Instance, locked: bool,
               reason: str | None = None) -> None:
    """Lock (with the 2.73 reason, if any) or unlock, which forgets the reason."""
    actions.record(db, ctx, inst, "lock" if locked else "unlock")
    inst.locked = locked
    inst.locked_reason = reason if locked else None
    inst.updated_at = utcnow_precise()
    db.flush()


def set_tags(db: Session, inst: Instance, tags: list[str]) -> None:
    inst.tags = tags
    inst.updated_at = utcnow_precise()
    db.flush()


def set_metadata(db: Session, inst: Instance, metadata: dict[str, str]) -> None:
    from stackling.compute import quotas

    quotas.check_metadata(db, inst.project_id, len(metadata))
    inst.metadata_ = metadata
    inst.updated_at = utcnow_precise()
    db.flush()


def names_on_hosts(db: Session, host_names: list[str]) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    for host, name, uuid_ in db.execute(select(Instance.host, Instance.display_name,
                                               Instance.uuid).where(Instance.host.in_(host_names))
                                        .order_by(Instance.id)):
        out.setdefault(host, []).append({"name": name, "uuid": uuid_})
    return out
