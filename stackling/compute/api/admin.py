"""os-services, os-hypervisors, os-aggregates, os-availability-zone, limits."""

from __future__ import annotations

import json
from typing import Any

from stackling.common.errors import BadRequest, Forbidden, NotFound
from stackling.common.http import ApiRequest
from stackling.common.listing import to_bool
from stackling.compute import aggregates as agg_logic
from stackling.compute import hosts, quotas, schemas, servers, validation, views
from stackling.compute.api.common import (
    authorize,
    body,
    known_query,
    links,
    page_limit,
    since,
    takes_query,
    version,
)
from stackling.compute.models import Aggregate, ComputeNode, ComputeService


# ------------------------------------------------------------------ os-services
def _service_view(rq: ApiRequest, s: ComputeService, zones: dict[str, str]) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": s.uuid if version(rq).matches("2.53") else s.id, "binary": s.binary,
        "host": s.host,
        "zone": zones.get(s.host, hosts.DEFAULT_AZ) if s.binary == "nova-compute" else "internal",
        "status": "disabled" if s.disabled else "enabled",
        "state": "up" if hosts.is_up(s) else "down",
        "updated_at": views.naive(s.updated_at or s.created_at),
        "disabled_reason": s.disabled_reason}
    if version(rq).matches("2.11"):
        view["forced_down"] = s.forced_down
    return view


@takes_query("host", "binary")
def services_index(rq: ApiRequest) -> Any:
    known_query(rq, {"host", "binary"})
    authorize(rq, "os-services:list")
    rows = hosts.list_services(rq.db, rq.query.get("host"), rq.query.get("binary"))
    zones = agg_logic.host_zones(rq.db)
    return {"services": [_service_view(rq, s, zones) for s in rows]}


def services_put(rq: ApiRequest) -> Any:
    """From 2.53 `PUT /os-services/{uuid}` with a status body; before, the action URLs."""
    if version(rq).matches("2.53"):
        return _service_update(rq)
    return _services_action(rq)


def _service_update(rq: ApiRequest) -> Any:
    authorize(rq, "os-services:update")
    service = hosts.get_service_by_uuid(rq.db, rq.path_params["action"])
    data = body(rq, schemas.SERVICE_UPDATE)
    status = data.get("status")
    if "disabled_reason" in data and status != "disabled":
        raise BadRequest("Specifying 'disabled_reason' with status 'enabled' is invalid."
                         if status == "enabled" else
                         "'disabled_reason' is only allowed with status 'disabled'.")
    if service.binary != "nova-compute":
        raise BadRequest(f"Updating a {service.binary} service is not supported. Only nova-compute services "
                         "can be updated.")
    hosts.set_service_status(
        rq.db, service.host, service.binary,
        disabled=None if status is None else status == "disabled",
        reason=data.get("disabled_reason"),
        forced_down=to_bool(data["forced_down"]) if "forced_down" in data else None)
    return {"service": _service_view(rq, service, agg_logic.host_zones(rq.db))}


def services_delete(rq: ApiRequest) -> Any:
    authorize(rq, "os-services:delete")
    ident = rq.path_params["action"]
    if version(rq).matches("2.53"):
        service = hosts.get_service_by_uuid(rq.db, ident)
    else:
        service = hosts.get_service_by_id(rq.db, ident)
    hosts.delete_service(rq.db, service)
    return None


def _services_action(rq: ApiRequest) -> Any:
    authorize(rq, "os-services:update")
    action = rq.path_params["action"]
    if action == "force-down" and not version(rq).matches("2.11"):
        raise NotFound("The resource could not be found.")
    if action not in ("enable", "disable", "disable-log-reason", "force-down"):
        raise NotFound(f"Unknown action {action}")
    data = body(rq, schemas.SERVICE_ACTION)
    host, binary = data["host"], data["binary"]
    if action == "force-down":
        if "forced_down" not in data:
            raise BadRequest("Missing forced_down field")
        forced = to_bool(data["forced_down"])
        hosts.set_service_status(rq.db, host, binary, forced_down=forced)
        return {"service": {"host": host, "binary": binary, "forced_down": forced}}
    if action == "disable-log-reason" and not data.get("disabled_reason"):
        raise BadRequest("Missing disabled reason field")
    disabled = action != "enable"
    s = hosts.set_service_status(rq.db, host, binary, disabled=disabled,
                                 reason=data.get("disabled_reason"))
    view: dict[str, Any] = {"host": host, "binary": binary,
                            "status": "disabled" if disabled else "enabled"}
    if action == "disable-log-reason":
        view["disabled_reason"] = s.disabled_reason
    return {"service": view}


# ------------------------------------------------------------------ os-hypervisors
def _hypervisor(rq: ApiRequest, node: ComputeNode, svc: ComputeService,
                usage: dict[str, dict[str, int]] | None) -> dict[str, Any]:
    new = version(rq).matches("2.53")
    view: dict[str, Any] = {"id": node.uuid if new else node.id,
                            "hypervisor_hostname": node.hypervisor_hostname,
                            "state": "up" if hosts.is_up(svc) else "down",
                            "status": "disabled" if svc.disabled else "enabled"}
    if usage is None:
        return view
    u = usage.get(node.host, {"vcpus": 0, "ram": 0, "disk": 0, "vms": 0})
    cpu_info: Any = {"arch": "x86_64", "model": "host-model", "vendor": "stackling",
                     "topology": {"cores": node.vcpus, "threads": 1, "sockets": 1},
                     "features": []}
    if not version(rq).matches("2.28"):
        cpu_info = json.dumps(cpu_info)
    ram_used = u["ram"] + hosts.RESERVED_HOST_MEMORY_MB
    view.update({
        "vcpus": node.vcpus, "memory_mb": node.memory_mb, "local_gb": node.local_gb,
        "vcpus_used": u["vcpus"], "memory_mb_used": ram_used, "local_gb_used": u["disk"],
        "hypervisor_type": "QEMU", "hypervisor_version": 8002000,
        "free_ram_mb": node.memory_mb - ram_used, "free_disk_gb": node.local_gb - u["disk"],
        "current_workload": 0, "running_vms": u["vms"], "cpu_info": cpu_info,
        "disk_available_least": node.local_gb - u["disk"], "host_ip": node.host_ip or "127.0.0.1",
        "service": {"host": svc.host, "id": svc.uuid if new else svc.id,
                    "disabled_reason": svc.disabled_reason}})
    if version(rq).matches("2.88"):  # the statistics fields go; uptime comes in
        for key in _HYPERVISOR_STATS + ("cpu_info",):
            del view[key]
        view["uptime"] = hosts.uptime_line(rq.db, node.host)
    return view


# dropped from hypervisor bodies at 2.88 (and with them /os-hypervisors/statistics)
_HYPERVISOR_STATS = ("vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used",
                     "local_gb_used", "free_ram_mb", "free_disk_gb", "current_workload",
                     "running_vms", "disk_available_least")


def _hypervisor_list(rq: ApiRequest, detailed: bool) -> Any:
    authorize(rq, "os-hypervisors:list-detail" if detailed else "os-hypervisors:list")
    rows = hosts.list_nodes(rq.db)
    new = version(rq).matches("2.53")
    pattern = rq.query.get("hypervisor_hostname_pattern") if new else None
    if pattern is not None:
        rows = [(n, s) for n, s in rows if pattern in n.hypervisor_hostname]
        if not rows:
            raise NotFound(f"No hypervisor matching '{pattern}' could be found.")
    limit = page_limit(rq) if version(rq).matches("2.33") else None
    marker = rq.query.get("marker") if version(rq).matches("2.33") else None
    if marker is not None:
        try:
            start = next(i for i, (n, _) in enumerate(rows)
                         if (n.uuid if new else str(n.id)) == marker) + 1
        except StopIteration:
            raise BadRequest(f"marker [{marker}] not found") from None
        rows = rows[start:]
    if limit is not None:
        rows = rows[:limit]
    usage = hosts.node_usage(rq.db, [n.host for n, _ in rows]) if detailed else None
    items = [_hypervisor(rq, n, s, usage) for n, s in rows]
    if new and _with_servers(rq):
        _add_servers(rq, items, [n for n, _ in rows])
    out: dict[str, Any] = {"hypervisors": items}
    if limit is not None and items and len(items) == limit:
        suffix = "/detail" if detailed else ""
        out["hypervisors_links"] = [{"rel": "next", "href": f"{links(rq).versioned}/"
                                     f"os-hypervisors{suffix}?limit={limit}&marker={items[-1]['id']}"}]
    return out


@takes_query("limit", "marker", "hypervisor_hostname_pattern", "with_servers")
def hypervisors_index(rq: ApiRequest) -> Any:
    return _hypervisor_list(rq, False)


@takes_query("limit", "marker", "hypervisor_hostname_pattern", "with_servers")
def hypervisors_detail(rq: ApiRequest) -> Any:
    return _hypervisor_list(rq, True)


def _node(rq: ApiRequest) -> tuple[ComputeNode, ComputeService]:
    """The hypervisor of the path: by integer id before 2.53, by uuid from 2.53."""
    ident = rq.path_params["hypervisor_id"]
    if version(rq).matches("2.53"):
        return hosts.get_node_by_uuid(rq.db, ident)
    return hosts.get_node(rq.db, ident)


@takes_query("with_servers")
def hypervisors_show(rq: ApiRequest) -> Any:
    authorize(rq, "os-hypervisors:show")
    node, svc = _node(rq)
    view = _hypervisor(rq, node, svc, hosts.node_usage(rq.db, [node.host]))
    if version(rq).matches("2.53") and _with_servers(rq):
        _add_servers(rq, [view], [node])
    return {"hypervisor": view}


@takes_query("*")
def hypervisors_uptime(rq: ApiRequest) -> Any:
    if version(rq).matches("2.88"):  # uptime is in the hypervisor's own body from 2.88
        raise NotFound("The resource could not be found.")
    authorize(rq, "os-hypervisors:uptime")
    node, svc = _node(rq)
    view = _hypervisor(rq, node, svc, None)
    view["uptime"] = hosts.uptime_line(rq.db, node.host)
    return {"hypervisor": view}


def _with_servers(rq: ApiRequest) -> bool:
    value = rq.query.get("with_servers")
    if value is None:
        return False
    try:
        return to_bool(value)
    except ValueError:
        raise BadRequest(f"Invalid input for query parameters with_servers. Value: {value}."
                         ) from None


def _add_servers(rq: ApiRequest, items: list[dict[str, Any]], nodes: list[ComputeNode]) -> None:
    """`servers: [{name, uuid}]` per hypervisor: only when it hosts some before 2.75,
    always (maybe empty) from 2.75 (Nova's shape)."""
    by_host = servers.names_on_hosts(rq.db, [n.host for n in nodes])
    always = version(rq).matches("2.75")
    for item, node in zip(items, nodes, strict=True):
        if by_host.get(node.host) or always:
            item["servers"] = by_host.get(node.host) or []


@takes_query("*")
def hypervisors_statistics(rq: ApiRequest) -> Any:
    if version(rq).matches("2.88"):
        raise NotFound("The resource could not be found.")
    authorize(rq, "os-hypervisors:statistics")
    rows = hosts.list_nodes(rq.db)
    usage = hosts.node_usage(rq.db)
    views_ = [_hypervisor(rq, n, s, usage) for n, s in rows]
    keys = ("vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used", "local_gb_used",
            "free_ram_mb", "free_disk_gb", "current_workload", "running_vms",
            "disk_available_least")
    stats = {k: sum(v[k] for v in views_) for k in keys}
    stats["count"] = len(views_)
    return {"hypervisor_statistics": stats}


# ------------------------------------------------------------------ os-aggregates
def _aggregate_view(rq: ApiRequest, agg: Aggregate, details: dict[str, Any] | None
                    ) -> dict[str, Any]:
    meta = dict(details["metadata"]) if details else {}
    view: dict[str, Any] = {
        "id": agg.id, "name": agg.name, "availability_zone": meta.get("availability_zone"),
        "created_at": views.naive(agg.created_at), "updated_at": views.naive(agg.updated_at),
        "deleted": False, "deleted_at": None}
    if details is not None:
        view["hosts"] = list(details["hosts"])
        view["metadata"] = meta
    if version(rq).matches("2.41"):
        view["uuid"] = agg.uuid
    return view


def _one(rq: ApiRequest, agg: Aggregate) -> dict[str, Any]:
    return {"aggregate": _aggregate_view(rq, agg, agg_logic.aggregate_details(rq.db, [agg])[agg.id])}


def aggregates_index(rq: ApiRequest) -> Any:
    authorize(rq, "os-aggregates:index")
    aggs = agg_logic.list_aggregates(rq.db)
    details = agg_logic.aggregate_details(rq.db, aggs)
    return {"aggregates": [_aggregate_view(rq, a, details[a.id]) for a in aggs]}


def aggregates_create(rq: ApiRequest) -> Any:
    authorize(rq, "os-aggregates:create")
    data = body(rq, schemas.AGGREGATE_CREATE)["aggregate"]
    agg = agg_logic.create_aggregate(rq.db, data["name"], data.get("availability_zone"))
    view = _aggregate_view(rq, agg, agg_logic.aggregate_details(rq.db, [agg])[agg.id])
    view.pop("hosts"), view.pop("metadata")
    return {"aggregate": view}


def aggregates_show(rq: ApiRequest) -> Any:
    authorize(rq, "os-aggregates:show")
    return _one(rq, agg_logic.get_aggregate(rq.db, rq.path_params["aggregate_id"]))


def aggregates_update(rq: ApiRequest) -> Any:
    authorize(rq, "os-aggregates:update")
    data = body(rq, schemas.AGGREGATE_UPDATE)["aggregate"]
    return _one(rq, agg_logic.update_aggregate(rq.db, rq.path_params["aggregate_id"], data))


def aggregates_delete(rq: ApiRequest) -> Any:
    authorize(rq, "os-aggregates:delete")
    agg_logic.delete_aggregate(rq.db, rq.path_params["aggregate_id"])
    return 200, None


def aggregates_action(rq: ApiRequest) -> Any:
    data = rq.json()
    agg_id = rq.path_params["aggregate_id"]
    if isinstance(data, dict) and "add_host" in data:
        authorize(rq, "os-aggregates:add_host")
        validation.validate(schemas.AGGREGATE_ADD_HOST, data)
        return _one(rq, agg_logic.add_host(rq.db, agg_id, data["add_host"]["host"]))
    if isinstance(data, dict) and "remove_host" in data:
        authorize(rq, "os-aggregates:remove_host")
        validation.validate(schemas.AGGREGATE_REMOVE_HOST, data)
        return _one(rq, agg_logic.remove_host(rq.db, agg_id, data["remove_host"]["host"]))
    if isinstance(data, dict) and "set_metadata" in data:
        authorize(rq, "os-aggregates:set_metadata")
        validation.validate(schemas.AGGREGATE_SET_METADATA, data)
        return _one(rq, agg_logic.set_metadata(rq.db, agg_id,
                                               data["set_metadata"]["metadata"]))
    raise BadRequest("Invalid request body")


AGGREGATE_IMAGES_POLICY = "compute:aggregates:images"  # Nova's name (no prefix), admin
_AGGREGATE_IMAGES = {"type": "object", "properties": {"cache": {
    "type": "array", "minItems": 1,
    "items": {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}},
              "required": ["id"], "additionalProperties": False}}},
    "required": ["cache"], "additionalProperties": False}


def aggregates_images(rq: ApiRequest) -> Any:
    """2.81 image pre-caching on an aggregate's hosts: there is no disk to cache images on,
    so once the request checks out there is nothing to do (Nova's 202 either way)."""
    since(rq, "2.81")
    rq.authorize(AGGREGATE_IMAGES_POLICY, {}, exc=Forbidden(
        f"Policy doesn't allow {AGGREGATE_IMAGES_POLICY} to be performed."))
    data = body(rq, _AGGREGATE_IMAGES)
    ids = [item["id"] for item in data["cache"]]
    if len(ids) != len(set(ids)):
        raise BadRequest("Duplicate images in request")
    agg_logic.get_aggregate(rq.db, rq.path_params["aggregate_id"])
    return 202, None


# ------------------------------------------------------------------ availability zones
def _zones(rq: ApiRequest) -> dict[str, list[tuple[ComputeService, ComputeNode]]]:
    zones = agg_logic.host_zones(rq.db)
    out: dict[str, list[tuple[ComputeService, ComputeNode]]] = {}
    for node, svc in hosts.list_nodes(rq.db):
        out.setdefault(zones.get(node.host, hosts.DEFAULT_AZ), []).append((svc, node))
    return out


def az_index(rq: ApiRequest) -> Any:
    authorize(rq, "os-availability-zone:list")
    info = []
    for name, members in sorted(_zones(rq).items()):
        available = any(not s.disabled and hosts.is_up(s) for s, _ in members)
        info.append({"zoneName": name, "zoneState": {"available": available}, "hosts": None})
    return {"availabilityZoneInfo": info}


def az_detail(rq: ApiRequest) -> Any:
    """Every service by zone, as Nova's verbose view: computes in their host's zone, the
    control services in `internal`; a zone whose services are all disabled is unavailable
    and lists no hosts."""
    authorize(rq, "os-availability-zone:detail")
    zones = agg_logic.host_zones(rq.db)
    by_zone: dict[str, dict[str, dict[str, Any]]] = {}
    enabled: set[str] = set()
    for s in hosts.list_services(rq.db):
        zone = zones.get(s.host, hosts.DEFAULT_AZ) if s.binary == "nova-compute" else "internal"
        by_zone.setdefault(zone, {}).setdefault(s.host, {})[s.binary] = {
            "available": hosts.is_up(s), "active": not s.disabled,
            "updated_at": views.naive(s.updated_at or s.created_at)}
        if not s.disabled:
            enabled.add(zone)
    info = [{"zoneName": name, "zoneState": {"available": name in enabled},
             "hosts": by_zone[name] if name in enabled else None}
            for name in sorted(by_zone, key=lambda z: (z not in enabled, z))]
    return {"availabilityZoneInfo": info}


# ------------------------------------------------------------------ limits
@takes_query("tenant_id")
def limits(rq: ApiRequest) -> Any:
    known_query(rq, {"tenant_id"})
    authorize(rq, "limits")
    project_id = rq.ctx.project_id or ""
    if "tenant_id" in rq.query:
        project_id = rq.query.get("tenant_id") or ""
        authorize(rq, "limits:other_project", {"project_id": project_id})
    limit = quotas.limits(rq.db, project_id)
    used = quotas.usage(rq.db, project_id)
    absolute: dict[str, Any] = {
        "maxImageMeta": limit["metadata_items"], "maxPersonality": limit["injected_files"],
        "maxPersonalitySize": limit["injected_file_content_bytes"],
        "maxSecurityGroupRules": -1, "maxSecurityGroups": -1,
        "maxServerMeta": limit["metadata_items"], "maxServerGroupMembers": limit["server_group_members"],
        "maxServerGroups": limit["server_groups"], "maxTotalCores": limit["cores"], "maxTotalFloatingIps": -1,
        "maxTotalInstances": limit["instances"], "maxTotalKeypairs": limit["key_pairs"],
        "maxTotalRAMSize": limit["ram"], "totalCoresUsed": used["cores"],
        "totalFloatingIpsUsed": 0, "totalInstancesUsed": used["instances"],
        "totalRAMUsed": used["ram"], "totalSecurityGroupsUsed": 0,
        "totalServerGroupsUsed": used["server_groups"]}
    if version(rq).matches("2.36"):
        for key in ("maxSecurityGroupRules", "maxSecurityGroups", "maxTotalFloatingIps",
                    "totalFloatingIpsUsed", "totalSecurityGroupsUsed"):
            absolute.pop(key)
    if version(rq).matches("2.39"):
        absolute.pop("maxImageMeta")
    if version(rq).matches("2.57"):
        absolute.pop("maxPersonality")
        absolute.pop("maxPersonalitySize")
    return {"limits": {"absolute": absolute, "rate": []}}


def images_proxy(rq: ApiRequest) -> Any:
    """Nova's /images proxy is gone from 2.36; stackling never served it."""
    raise NotFound("The resource could not be found.")


def add_routes(s: Any) -> None:
    s.add("/v2.1/os-services", get=services_index)
    s.add("/v2.1/os-services/{action}", put=services_put, delete=services_delete)
    s.add("/v2.1/os-hypervisors", get=hypervisors_index)
    s.add("/v2.1/os-hypervisors/detail", get=hypervisors_detail)
    s.add("/v2.1/os-hypervisors/statistics", get=hypervisors_statistics)
    s.add("/v2.1/os-hypervisors/{hypervisor_id}", get=hypervisors_show)
    s.add("/v2.1/os-hypervisors/{hypervisor_id}/uptime", get=hypervisors_uptime)
    s.add("/v2.1/os-aggregates", get=aggregates_index, post=aggregates_create)
    s.add("/v2.1/os-aggregates/{aggregate_id}", get=aggregates_show, put=aggregates_update,
          delete=aggregates_delete)
    s.add("/v2.1/os-aggregates/{aggregate_id}/action", post=aggregates_action)
    s.add("/v2.1/os-aggregates/{aggregate_id}/images", post=aggregates_images)
    s.add("/v2.1/os-availability-zone", get=az_index)
    s.add("/v2.1/os-availability-zone/detail", get=az_detail)
    s.add("/v2.1/limits", get=limits)
