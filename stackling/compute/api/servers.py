"""/servers: create, list, detail, show, update, delete; ips; os-interface."""

from __future__ import annotations

import hashlib
import secrets
from functools import partial
from typing import Any

from stackling.common.errors import BadRequest, Forbidden, NotFound
from stackling.common.http import ApiRequest
from stackling.common.listing import filter_values, to_bool
from stackling.compute import (
    actions,
    network_api,
    network_proxy,
    schemas,
    servers,
    validation,
    views,
)
from stackling.compute.api import server_actions
from stackling.compute.api.common import (
    MAX_LIMIT,
    allowed,
    authorize,
    body,
    changes_before,
    known_query,
    links,
    page_limit,
    query_timestamp,
    since,
    takes_query,
    version,
)
from stackling.compute.api.server_views import attached as _attached
from stackling.compute.api.server_views import detail as _detail
from stackling.compute.api.server_views import target as _target
from stackling.compute.errors import InstanceInvalidState, InstanceIsLocked
from stackling.compute.models import Instance

REQUESTED_DESTINATION = "compute:servers:create:requested_destination"

# The list parameters Nova's schema names (2.75: any other is a 400); "_"-prefixed ones
# are a 400 at every version upstream and are not served here.
SERVER_LIST_QUERY = frozenset({
    "access_ip_v4", "access_ip_v6", "all_tenants", "auto_disk_config", "availability_zone",
    "block_device_mapping", "changes-before", "changes-since", "config_drive", "created_at",
    "deleted", "description", "display_description", "display_name", "flavor", "host", "hostname",
    "image", "image_ref", "info_cache", "ip", "ip6", "kernel_id", "key_name", "launch_index",
    "launched_at", "limit", "locked", "locked_by", "marker", "metadata", "name", "node",
    "not-tags", "not-tags-any", "pci_devices", "power_state", "progress", "project_id",
    "ramdisk_id", "reservation_id", "root_device_name", "security_groups", "services",
    "soft_deleted", "sort_dir", "sort_key", "status", "system_metadata", "tags", "tags-any",
    "task_state", "tenant_id", "terminated_at", "user_id", "uuid", "vm_state"})
# Sort keys Nova ignores; from 2.75 they are a 400 (`locked` leaves this list at 2.73).
IGNORED_SORT_KEYS = frozenset({
    "architecture", "cell_name", "cleaned", "default_ephemeral_device",
    "default_swap_device", "deleted", "deleted_at", "disable_terminate", "ephemeral_gb",
    "ephemeral_key_uuid", "id", "key_data", "launched_on", "memory_mb", "os_type",
    "reservation_id", "root_gb", "shutdown_terminate", "user_data", "vcpus", "vm_mode"})

# Nova ignores unknown list filters (before 2.75); these are the ones it honours.
USER_FILTERS = {"name", "status", "image", "flavor", "ip", "changes-since", "reservation_id",
                "all_tenants", "limit", "marker", "sort_key", "sort_dir", "tags", "tags-any",
                "not-tags", "not-tags-any", "locked", "description", "ip6"}


# ------------------------------------------------------------------ create
def create(rq: ApiRequest) -> Any:
    authorize(rq, "servers:create")
    data = body(rq, schemas.SERVER_CREATE, versioned=True)
    _check_bdm_volume_type(rq, data["server"])
    req = servers.request_from_body(data["server"])
    req.port_resource_requests_ok = version(rq).matches("2.72")
    if req.trusted_certs:
        authorize(rq, "servers:create:trusted_certs")
    if req.requested_host or req.requested_node:  # 2.74
        rq.authorize(REQUESTED_DESTINATION, {"project_id": rq.ctx.project_id},
                     exc=Forbidden(f"Policy doesn't allow {REQUESTED_DESTINATION} to be "
                                   "performed."))
    hints = data.get("os:scheduler_hints") or data.get("OS-SCH-HNT:scheduler_hints") or {}
    req.group = hints.get("group")
    req.scheduler_hints = dict(hints)
    if req.networks != network_api.NONE:
        authorize(rq, "servers:create:attach_network")
    instances = servers.create_servers(
        rq.db, rq.ctx, req, forced_host_allowed=allowed(rq, "servers:create:forced_host"),
        zero_disk_allowed=allowed(rq, "servers:create:zero_disk_flavor"))
    worker = rq.runtime.state.get("compute.builder")
    if worker is not None and len(instances) == 1:
        # One server: built after the commit, before the answer (see BuildWorker.build_now).
        rq.after_commit(partial(worker.build_now, instances[0].uuid))
    elif worker is not None:
        rq.after_commit(worker.wake)
    if req.return_reservation_id:
        return 202, {"reservation_id": instances[0].reservation_id}
    inst = instances[0]
    server: dict[str, Any] = {"id": inst.uuid, "links": links(rq).pair("servers", inst.uuid),
                              "OS-DCF:diskConfig": inst.disk_config,
                              "security_groups": [{"name": g} for g in req.security_groups]}
    server["adminPass"] = req.admin_pass or secrets.token_urlsafe(9)
    return 202, {"server": server}, {"Location": server["links"][0]["href"]}


def _check_bdm_volume_type(rq: ApiRequest, server: dict[str, Any]) -> None:
    """`volume_type` in a block_device_mapping_v2 item is known from 2.67 (Nova's schema
    refuses it as an additional property before)."""
    if version(rq).matches("2.67"):
        return
    for i, item in enumerate(server.get("block_device_mapping_v2") or []):
        if isinstance(item, dict) and "volume_type" in item:
            raise BadRequest(f"Invalid input for field/attribute {i}. Value: {item}. "
                             "Additional properties are not allowed ('volume_type' was "
                             "unexpected)")


# ------------------------------------------------------------------ list / show
def _list_query(rq: ApiRequest) -> servers.ListQuery:
    q = rq.query
    known_query(rq, SERVER_LIST_QUERY)
    is_admin_listing = False
    if "all_tenants" in q:
        try:
            all_tenants = q.get("all_tenants") == "" or to_bool(q.get("all_tenants"))
        except ValueError:
            raise BadRequest(f"Invalid all_tenants value: {q.get('all_tenants')}") from None
        if all_tenants:
            authorize(rq, "servers:detail:get_all_tenants")
            is_admin_listing = True
    project = None if is_admin_listing else rq.ctx.project_id
    if is_admin_listing and (q.get("project_id") or q.get("tenant_id")):
        project = q.get("project_id") or q.get("tenant_id")
    admin_filters = allowed(rq, "servers:allow_all_filters")
    query = servers.ListQuery(project_id=project)
    statuses = q.getlist("status")
    if statuses:
        states: list[str] = []
        for status in statuses:
            mapped = servers.STATUS_VM_STATES.get(status.upper())
            if mapped is None:
                if version(rq).matches("2.38"):
                    raise BadRequest(f"Invalid status value: {status}")
                mapped = []
            states += mapped
        query.status = states
    if version(rq).matches("2.26"):
        for key, attr in (("tags", "tags"), ("tags-any", "tags_any"), ("not-tags", "not_tags"),
                          ("not-tags-any", "not_tags_any")):
            value = q.get(key)
            if value:
                setattr(query, attr, filter_values(
                    key, [value], max_values=rq.settings.http.max_filter_values))
    query.name = q.get("name")
    query.image = q.get("image")
    query.flavor = q.get("flavor")
    query.ip = q.get("ip")
    if admin_filters:
        query.host = q.get("host")
    if admin_filters or version(rq).matches("2.83"):  # 2.83: these for everyone
        query.exact = {k: q.get(k) for k in servers.EXACT_FILTERS if q.get(k)}
        query.regex = {k: q.get(k) for k in servers.REGEX_FILTERS if q.get(k)}
    if (admin_filters or version(rq).matches("2.90")) and q.get("hostname"):
        query.regex["hostname"] = q.get("hostname")
    if q.get("changes-since"):
        query.changes_since = query_timestamp(q.get("changes-since"), "changes-since")
    if version(rq).matches("2.66"):
        query.changes_before = changes_before(rq, query.changes_since)
    if version(rq).matches("2.73") and "locked" in q:
        try:
            query.locked = to_bool(q.get("locked"))
        except ValueError:
            raise BadRequest("Invalid input received: Unrecognized value "
                             f"'{q.get('locked')}', acceptable values are: '0', '1', 'f', "
                             "'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'") from None
    keys, dirs = q.getlist("sort_key"), q.getlist("sort_dir")
    for i, key in enumerate(keys):
        if key == "locked" and not version(rq).matches("2.73"):
            continue  # known to Nova's schema but ignored before 2.73
        if key in IGNORED_SORT_KEYS and version(rq).matches("2.75"):
            raise BadRequest(f"Invalid input for query parameters sort_key. Value: {key}.")
        if key not in servers._SORT_COLUMNS:
            raise BadRequest(f"Invalid input for query parameters sort_key. Value: {key}.")
        direction = dirs[i] if i < len(dirs) else "desc"
        if direction not in ("asc", "desc"):
            raise BadRequest(f"Invalid input for query parameters sort_dir. Value: {direction}.")
        query.sort_keys.append((key, direction == "asc"))
    limit = page_limit(rq)
    query.limit = MAX_LIMIT if limit is None else limit
    query.marker = q.get("marker")
    return query


def _collection(rq: ApiRequest, items: list[dict[str, Any]], query: servers.ListQuery,
                key: str) -> dict[str, Any]:
    out: dict[str, Any] = {key: items}
    if items and query.limit and len(items) == query.limit:
        params = [(k, v) for k, v in rq.query.multi_items() if k != "marker"]
        params.append(("marker", items[-1]["id"]))
        from urllib.parse import urlencode

        suffix = "servers/detail" if key == "servers" and rq.request.url.path.endswith(
            "/detail") else "servers"
        out["servers_links"] = [{"rel": "next", "href": f"{links(rq).versioned}/{suffix}?"
                                 f"{urlencode(params)}"}]
    return out


@takes_query(*SERVER_LIST_QUERY)
def index(rq: ApiRequest) -> Any:
    authorize(rq, "servers:index")
    query = _list_query(rq)
    rows = [] if _deleted_only(rq) else servers.list_instances(rq.db, query)
    return _collection(rq, [views.server_brief(links(rq), i) for i in rows], query, "servers")


@takes_query(*SERVER_LIST_QUERY)
def detail(rq: ApiRequest) -> Any:
    authorize(rq, "servers:detail")
    query = _list_query(rq)
    rows = [] if _deleted_only(rq) else servers.list_instances(rq.db, query)
    floating = network_proxy.floating_by_port(rq.db, rows)  # one query for the page
    shown: dict[tuple[str, str], tuple[bool, bool, bool]] = {}
    volumes = _attached(rq, rows)  # one query for the page
    return _collection(rq, [_detail(rq, i, floating=floating, shown=shown, volumes=volumes)
                            for i in rows],
                       query, "servers")


def _deleted_only(rq: ApiRequest) -> bool:
    """An admin's `deleted=True` lists deleted servers only; a deleted server's row is
    gone here, so that list is empty (non-admins' `deleted` is ignored, as Nova's)."""
    value = rq.query.get("deleted")
    if value is None or not allowed(rq, "servers:allow_all_filters"):
        return False
    return value.lower() in ("true", "1", "yes", "on", "t", "y")


def _get(rq: ApiRequest, *, for_update: bool = False) -> Instance:
    return servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"],
                                for_update=for_update)


def show(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "servers:show", _target(inst))
    return {"server": _detail(rq, inst, with_groups=True)}


def update(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "servers:update", _target(inst))
    data = body(rq, schemas.SERVER_UPDATE, versioned=True)
    inst = servers.update_instance(rq.db, rq.ctx, inst.uuid, data["server"])
    # 2.75: the whole server, as GET shows it
    return {"server": _detail(rq, inst, full=version(rq).matches("2.75"), with_groups=True)}


def delete(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "servers:delete", _target(inst))
    servers.delete_instance(rq.db, rq.ctx, inst.uuid)
    from stackling.block_storage import interface as cinder

    rq.after_commit(lambda: cinder.wake(rq.runtime))  # delete_on_termination volumes
    return None


# ------------------------------------------------------------------ ips
def ips_index(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "ips:index", _target(inst))
    floating = network_proxy.floating_by_port(rq.db, [inst])
    return {"addresses": views.addresses(inst, extended=False, floating=floating)}


def ips_show(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "ips:show", _target(inst))
    label = rq.path_params["network_label"]
    addrs = views.addresses(inst, extended=False,
                            floating=network_proxy.floating_by_port(rq.db, [inst]))
    if label not in addrs:
        raise NotFound("Instance is not a member of specified network")
    return {label: addrs[label]}


# ------------------------------------------------------------------ os-interface
def interfaces_index(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "os-attach-interfaces:list", _target(inst))
    ports = network_api.list_ports(rq.db, rq.ctx, inst)
    tags = _vif_tags(inst)
    return {"interfaceAttachments": [views.interface_view(p, version(rq), tags.get(p["id"]))
                                     for p in ports]}


def interfaces_show(rq: ApiRequest) -> Any:
    inst = _get(rq)
    authorize(rq, "os-attach-interfaces:show", _target(inst))
    port_id = rq.path_params["port_id"]
    port = next((p for p in network_api.list_ports(rq.db, rq.ctx, inst) if p["id"] == port_id),
                None)
    if port is None:
        raise NotFound(f"Instance {inst.uuid} is not attached to port {port_id}")
    return {"interfaceAttachment": views.interface_view(port, version(rq),
                                                        _vif_tags(inst).get(port_id))}


def _vif_tags(inst: Instance) -> dict[str, str | None]:
    """The device tag each NIC was requested with (2.32/2.42 at boot, 2.49 on attach)."""
    return {vif["port_id"]: vif.get("tag") for vif in inst.network_info or []}


def _check_attach_state(inst: Instance, method: str, is_admin: bool) -> None:
    if inst.locked and not is_admin:
        raise InstanceIsLocked(instance_uuid=inst.uuid)
    if inst.vm_state not in ("active", "paused", "stopped") or inst.task_state is not None:
        attr, state = ("task_state", inst.task_state) if inst.task_state else (
            "vm_state", inst.vm_state)
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr=attr,
                                   state=state)


def interfaces_create(rq: ApiRequest) -> Any:
    inst = _get(rq, for_update=True)
    authorize(rq, "os-attach-interfaces:create", _target(inst))
    data = body(rq, schemas.INTERFACE_ATTACH, versioned=True) if rq.raw_body.strip() else {}
    att = (data or {}).get("interfaceAttachment", {})
    net_id, port_id = att.get("net_id"), att.get("port_id")
    fixed = att.get("fixed_ips")
    if net_id and port_id:
        raise BadRequest("Must not input both network_id and port_id")
    if fixed and not net_id:
        raise BadRequest("Must input network_id when request IP address")
    _check_attach_state(inst, "attach_interface", rq.ctx.is_admin)
    address = fixed[0]["ip_address"] if fixed else None
    port = network_api.attach_interface(rq.db, rq.ctx, inst, net_id, port_id, address,
                                        att.get("tag"))
    return {"interfaceAttachment": views.interface_view(port, version(rq), att.get("tag"))}


def interfaces_delete(rq: ApiRequest) -> Any:
    inst = _get(rq, for_update=True)
    authorize(rq, "os-attach-interfaces:delete", _target(inst))
    _check_attach_state(inst, "detach_interface", rq.ctx.is_admin)
    network_api.detach_interface(rq.db, rq.ctx, inst, rq.path_params["port_id"])
    return 202, None


def action(rq: ApiRequest) -> Any:
    inst = _get(rq, for_update=True)
    data = rq.json()
    if not isinstance(data, dict) or len(data) != 1:
        raise BadRequest("There is no such action: None")
    name = next(iter(data))
    if name in servers.ACTIONS:
        authorize(rq, f"servers:{servers.ACTIONS[name][3]}", _target(inst))
        if name == "reboot":
            kind = (data["reboot"] or {}).get("type") if isinstance(data["reboot"], dict) else None
            if kind not in ("SOFT", "HARD", "soft", "hard"):
                raise BadRequest("Invalid input for field/attribute type. Value: "
                                 f"{kind}. {kind!r} is not one of ['HARD', 'Hard', 'hard', "
                                 "'SOFT', 'Soft', 'soft']")
        hard = name == "reboot" and str(data["reboot"].get("type")).upper() == "HARD"
        servers.run_action(rq.db, rq.ctx, inst, name, hard=hard)
        return 202, None
    if name in ("lock", "unlock") and version(rq).matches("2.1"):
        authorize(rq, f"os-lock-server:{name}", _target(inst))
        reason = None
        if name == "lock" and version(rq).matches("2.73"):  # lock: null | {locked_reason}
            reason = (validation.validate(schemas.LOCK_2_73, data)["lock"] or {}).get(
                "locked_reason")
        servers.set_locked(rq.db, rq.ctx, inst, name == "lock", reason)
        return 202, None
    if name in server_actions.ACTIONS:
        return server_actions.dispatch(rq, inst, name, data)
    from stackling.compute.api import proxies

    if name in proxies.SERVER_ACTIONS:
        return proxies.SERVER_ACTIONS[name](rq, inst, data)
    raise BadRequest(f"There is no such action: {name}")


# ------------------------------------------------------------------ os-instance-actions
def _action_view(rq: ApiRequest, row: Any) -> dict[str, Any]:
    view = {"action": row.action, "instance_uuid": row.instance_uuid,
            "request_id": row.request_id, "user_id": row.user_id,
            "project_id": row.project_id, "start_time": views.naive(row.start_time),
            "message": row.message}
    if version(rq).matches("2.58"):
        view["updated_at"] = views.naive(row.updated_at)
    return view


@takes_query("limit", "marker", "changes-since", "changes-before")
def actions_index(rq: ApiRequest) -> Any:
    server_id = rq.path_params["server_id"]
    authorize(rq, "os-instance-actions:list")
    limit = marker = since_ = before = None
    if version(rq).matches("2.58"):
        marker = rq.query.get("marker")
        limit = page_limit(rq)
        if rq.query.get("changes-since"):
            since_ = query_timestamp(rq.query.get("changes-since"), "changes-since")
    if version(rq).matches("2.66"):
        before = changes_before(rq, since_)
    rows = actions.list_actions(rq.db, rq.ctx, server_id,
                                allow_deleted=version(rq).matches("2.21"), limit=limit,
                                marker=marker, changes_since=since_, changes_before=before)
    out: dict[str, Any] = {"instanceActions": [_action_view(rq, r) for r in rows]}
    if limit and len(rows) == limit:
        out["links"] = [{"rel": "next", "href": f"{links(rq).versioned}/servers/{server_id}/"
                         f"os-instance-actions?limit={limit}&marker={rows[-1].request_id}"}]
    return out


def actions_show(rq: ApiRequest) -> Any:
    authorize(rq, "os-instance-actions:show")
    row = actions.get_action(rq.db, rq.ctx, rq.path_params["server_id"],
                             rq.path_params["request_id"],
                             allow_deleted=version(rq).matches("2.21"))
    view = _action_view(rq, row)
    privileged = allowed(rq, "os-instance-actions:events")
    if privileged or version(rq).matches("2.51"):
        details = version(rq).matches("2.84") and allowed(
            rq, "os-instance-actions:events:details", {"project_id": row.project_id})
        view["events"] = [_event_view(rq, e, row.project_id, privileged, details)
                          for e in row.events]
    return {"instanceAction": view}


def _event_view(rq: ApiRequest, e: dict[str, Any], project_id: str,
                privileged: bool, details: bool = False) -> dict[str, Any]:
    import datetime as dt

    def naive(value: str | None) -> str | None:
        return views.naive(dt.datetime.fromisoformat(value)) if value else None

    view = {"event": e["event"], "start_time": naive(e["start_time"]),
            "finish_time": naive(e["finish_time"]), "result": e["result"]}
    if privileged:
        view["traceback"] = e.get("traceback")
    if version(rq).matches("2.62"):
        host = e.get("host")
        view["hostId"] = hashlib.sha224((project_id + host).encode()).hexdigest() if host else ""
        if privileged:
            view["host"] = host or ""
    if details:  # 2.84: a failed event's fault message (recorded as its traceback here)
        view["details"] = e.get("traceback") if e.get("result") == "Error" else None
    return view


# ------------------------------------------------------------------ metadata
_METADATA = {"type": "object", "properties": {"metadata": schemas.METADATA},
             "required": ["metadata"], "additionalProperties": False}
_META_ITEM = {"type": "object", "properties": {"meta": {**schemas.METADATA, "minProperties": 1,
                                                        "maxProperties": 1}},
              "required": ["meta"], "additionalProperties": False}


def _meta(rq: ApiRequest, action: str, *, for_update: bool = False) -> Instance:
    inst = _get(rq, for_update=for_update)
    authorize(rq, f"server-metadata:{action}", _target(inst))
    return inst


def metadata_index(rq: ApiRequest) -> Any:
    return {"metadata": dict(_meta(rq, "index").metadata_ or {})}


def metadata_update(rq: ApiRequest) -> Any:
    """POST merges, PUT replaces."""
    inst = _meta(rq, "update" if rq.method == "POST" else "update_all", for_update=True)
    new = body(rq, _METADATA)["metadata"]
    merged = {**(inst.metadata_ or {}), **new} if rq.method == "POST" else dict(new)
    servers.set_metadata(rq.db, inst, merged)
    return {"metadata": merged}


def metadata_show(rq: ApiRequest) -> Any:
    inst = _meta(rq, "show")
    key = rq.path_params["key"]
    if key not in (inst.metadata_ or {}):
        raise NotFound("Metadata item was not found")
    return {"meta": {key: inst.metadata_[key]}}


def metadata_put_item(rq: ApiRequest) -> Any:
    inst = _meta(rq, "update", for_update=True)
    meta = body(rq, _META_ITEM)["meta"]
    key = rq.path_params["key"]
    if key not in meta:
        raise BadRequest("Request body and URI mismatch")
    servers.set_metadata(rq.db, inst, {**(inst.metadata_ or {}), **meta})
    return {"meta": meta}


def metadata_delete_item(rq: ApiRequest) -> Any:
    inst = _meta(rq, "delete", for_update=True)
    key = rq.path_params["key"]
    if key not in (inst.metadata_ or {}):
        raise NotFound("Metadata item was not found")
    servers.set_metadata(rq.db, inst, {k: v for k, v in inst.metadata_.items() if k != key})
    return None


# ------------------------------------------------------------------ tags (2.26)
_TAGS = {"type": "object", "properties": {"tags": {"type": "array", "maxItems": 50,
                                                   "items": schemas.TAG}},
         "required": ["tags"], "additionalProperties": False}


def _tagged(rq: ApiRequest, action: str, *, for_update: bool = False) -> Instance:
    since(rq, "2.26")
    inst = _get(rq, for_update=for_update)
    authorize(rq, f"os-server-tags:{action}", _target(inst))
    return inst


def tags_index(rq: ApiRequest) -> Any:
    return {"tags": list(_tagged(rq, "index").tags or [])}


def tags_replace(rq: ApiRequest) -> Any:
    inst = _tagged(rq, "update_all", for_update=True)
    tags = body(rq, _TAGS)["tags"]
    servers.set_tags(rq.db, inst, list(dict.fromkeys(tags)))
    return {"tags": list(inst.tags)}


def tags_delete_all(rq: ApiRequest) -> Any:
    servers.set_tags(rq.db, _tagged(rq, "delete_all", for_update=True), [])
    return None


def tag_check(rq: ApiRequest) -> Any:
    inst = _tagged(rq, "show")
    if rq.path_params["tag"] not in (inst.tags or []):
        raise NotFound(f"Tag {rq.path_params['tag']} could not be found.")
    return None


def tag_add(rq: ApiRequest) -> Any:
    inst = _tagged(rq, "update", for_update=True)
    tag = rq.path_params["tag"]
    validation.validate(schemas.TAG, tag)
    if tag in (inst.tags or []):
        return None
    if len(inst.tags or []) >= 50:
        raise BadRequest("The number of tags exceeded the per-server limit 50")
    servers.set_tags(rq.db, inst, [*(inst.tags or []), tag])
    url = f"{links(rq).versioned}/servers/{inst.uuid}/tags/{tag}"
    return 201, None, {"Location": url}


def tag_delete(rq: ApiRequest) -> Any:
    inst = _tagged(rq, "delete", for_update=True)
    tag = rq.path_params["tag"]
    if tag not in (inst.tags or []):
        raise NotFound(f"Tag {tag} could not be found.")
    servers.set_tags(rq.db, inst, [t for t in inst.tags if t != tag])
    return None


def add_routes(s: Any) -> None:
    s.add("/v2.1/servers", get=index, post=create)
    s.add("/v2.1/servers/detail", get=detail)
    s.add("/v2.1/servers/{server_id}", get=show, put=update, delete=delete)
    s.add("/v2.1/servers/{server_id}/action", post=action)
    s.add("/v2.1/servers/{server_id}/os-instance-actions", get=actions_index)
    s.add("/v2.1/servers/{server_id}/os-instance-actions/{request_id}", get=actions_show)
    s.add("/v2.1/servers/{server_id}/metadata", get=metadata_index, post=metadata_update,
          put=metadata_update)
    s.add("/v2.1/servers/{server_id}/metadata/{key}", get=metadata_show, put=metadata_put_item,
          delete=metadata_delete_item)
    s.add("/v2.1/servers/{server_id}/tags", get=tags_index, put=tags_replace,
          delete=tags_delete_all)
    s.add("/v2.1/servers/{server_id}/tags/{tag}", get=tag_check, put=tag_add, delete=tag_delete)
    s.add("/v2.1/servers/{server_id}/ips", get=ips_index)
    s.add("/v2.1/servers/{server_id}/ips/{network_label}", get=ips_show)
    s.add("/v2.1/servers/{server_id}/os-interface", get=interfaces_index, post=interfaces_create)
    s.add("/v2.1/servers/{server_id}/os-interface/{port_id}", get=interfaces_show,
          delete=interfaces_delete)
