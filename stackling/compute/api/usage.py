"""os-simple-tenant-usage (paged from 2.40) and os-hosts (below 2.43)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from stackling.common.errors import BadRequest, NotFound
from stackling.common.http import ApiRequest
from stackling.compute import aggregates, hosts, usage, views
from stackling.compute.api.common import authorize, known_query, links, takes_query, version
from stackling.compute.errors import ComputeHostNotFound

ADMIN = "rule:context_is_admin"
READER = "rule:context_is_admin or rule:project_reader_api"
POLICIES = {
    "os_compute_api:os-simple-tenant-usage:list": ADMIN,
    "os_compute_api:os-simple-tenant-usage:show": READER,
    "os_compute_api:os-hosts:list": ADMIN,
    "os_compute_api:os-hosts:show": ADMIN,
}
HOSTS_REMOVED = "2.43"
MAX_LIMIT = 1000


# ------------------------------------------------------------------ os-simple-tenant-usage
def _paging(rq: ApiRequest) -> tuple[int | None, str | None]:
    if not version(rq).matches("2.40"):
        return None, None
    limit = rq.query.get("limit")
    if limit is not None:
        try:
            value = int(limit)
        except ValueError:
            raise BadRequest(f"Invalid input for query parameters limit. Value: {limit}. "
                             f"'{limit}' is not a 'positive_integer_with_zero'") from None
        if value < 0:
            raise BadRequest(f"Invalid input for query parameters limit. Value: {limit}. "
                             f"'{limit}' is not a 'positive_integer_with_zero'")
        return min(value, MAX_LIMIT), rq.query.get("marker")
    return MAX_LIMIT, rq.query.get("marker")


def _usage_view(u: usage.TenantUsage, detailed: bool) -> dict[str, Any]:
    view: dict[str, Any] = {
        "tenant_id": u.tenant_id, "total_local_gb_usage": u.total_local_gb_usage,
        "total_vcpus_usage": u.total_vcpus_usage,
        "total_memory_mb_usage": u.total_memory_mb_usage, "total_hours": u.total_hours,
        "start": views.naive(u.start), "stop": views.naive(u.stop)}
    if detailed:
        view["server_usages"] = [{**s, "started_at": views.naive(s["started_at"]),
                                  "ended_at": views.naive(s["ended_at"])}
                                 for s in u.server_usages]
    return view


def _links(rq: ApiRequest, path: str, rows: list[Any], limit: int | None) -> list[Any]:
    if not rows or limit is None or len(rows) != limit:
        return []
    params = [(k, v) for k, v in rq.query.multi_items() if k != "marker"]
    params.append(("marker", rows[-1].uuid))
    return [{"rel": "next", "href": f"{links(rq).versioned}/{path}?{urlencode(params)}"}]


@takes_query("start", "end", "detailed", "limit", "marker")
def usage_index(rq: ApiRequest) -> Any:
    known_query(rq, {"start", "end", "detailed", "limit", "marker"})
    authorize(rq, "os-simple-tenant-usage:list")
    begin, stop = usage.period(rq.query.get("start"), rq.query.get("end"))
    # Nova reads "1"; openstacksdk (the `openstack usage` commands) sends "True".
    detailed = (rq.query.get("detailed") or "").lower() in ("1", "true", "yes", "on")
    limit, marker = _paging(rq)
    rows = usage.instances(rq.db, begin, stop, limit=limit, marker=marker)
    now = dt.datetime.now(dt.UTC)
    body: dict[str, Any] = {"tenant_usages": [_usage_view(u, detailed)
                                              for u in usage.usages(rows, begin, stop, now)]}
    next_links = _links(rq, "os-simple-tenant-usage", rows, limit)
    if next_links:
        body["tenant_usages_links"] = next_links
    return body


@takes_query("start", "end", "limit", "marker")
def usage_show(rq: ApiRequest) -> Any:
    known_query(rq, {"start", "end", "limit", "marker"})
    tenant_id = rq.path_params["tenant_id"]
    authorize(rq, "os-simple-tenant-usage:show", {"project_id": tenant_id})
    begin, stop = usage.period(rq.query.get("start"), rq.query.get("end"))
    limit, marker = _paging(rq)
    rows = usage.instances(rq.db, begin, stop, project_id=tenant_id, limit=limit,
                           marker=marker)
    found = usage.usages(rows, begin, stop, dt.datetime.now(dt.UTC))
    body: dict[str, Any] = {"tenant_usage": _usage_view(found[0], True) if found else {}}
    next_links = _links(rq, f"os-simple-tenant-usage/{tenant_id}", rows, limit)
    if next_links:
        body["tenant_usage_links"] = next_links
    return body


# ------------------------------------------------------------------ os-hosts
def _until_2_43(rq: ApiRequest) -> None:
    if version(rq).matches(HOSTS_REMOVED):
        raise NotFound("The resource could not be found.")


@takes_query("*")
def hosts_index(rq: ApiRequest) -> Any:
    _until_2_43(rq)
    authorize(rq, "os-hosts:list")
    zones = aggregates.host_zones(rq.db)
    zone = rq.query.get("zone")
    out = []
    for s in hosts.list_services(rq.db):
        az = zones.get(s.host, hosts.DEFAULT_AZ) if s.binary == "nova-compute" else "internal"
        if zone and az != zone:
            continue
        out.append({"host_name": s.host, "service": s.binary.removeprefix("nova-"),
                    "zone": az})
    return {"hosts": out}


@takes_query("*")
def hosts_show(rq: ApiRequest) -> Any:
    _until_2_43(rq)
    authorize(rq, "os-hosts:show")
    host = rq.path_params["host_name"]
    node = next((n for n, _ in hosts.list_nodes(rq.db) if n.host == host), None)
    if node is None:
        raise ComputeHostNotFound(host=host)

    def resource(project: str, cpu: int, ram: int, disk: int) -> dict[str, Any]:
        return {"resource": {"host": host, "project": project, "cpu": cpu,
                             "memory_mb": ram, "disk_gb": disk}}

    used = hosts.node_usage(rq.db, [host]).get(host, {"vcpus": 0, "ram": 0, "disk": 0})
    per_project = usage.project_usage_on(rq.db, host)
    resources = [resource("(total)", node.vcpus, node.memory_mb, node.local_gb),
                 resource("(used_now)", used["vcpus"], used["ram"], used["disk"]),
                 resource("(used_max)", used["vcpus"], used["ram"], used["disk"])]
    resources += [resource(p, u["vcpus"], u["ram"], u["disk"])
                  for p, u in sorted(per_project.items())]
    return {"host": resources}


def add_routes(s: Any) -> None:
    s.add("/v2.1/os-simple-tenant-usage", get=usage_index)
    s.add("/v2.1/os-simple-tenant-usage/{tenant_id}", get=usage_show)
    s.add("/v2.1/os-hosts", get=hosts_index)
    s.add("/v2.1/os-hosts/{host_name}", get=hosts_show)
