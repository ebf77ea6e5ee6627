"""Nova's smaller admin APIs: os-hosts update and power actions (below 2.43),
os-hypervisors/{pattern}/search and /servers (below 2.53), os-instance_usage_audit_log,
and the legacy /extensions list.

Hosts are simulated: enabling or disabling a host's compute service takes effect (the
scheduler skips a disabled host), while maintenance mode and host power actions answer
501 as Nova's libvirt driver does (it implements neither).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from stackling.common.errors import ApiError, BadRequest, NotFound
from stackling.common.http import ApiRequest
from stackling.compute import hosts, servers, validation
from stackling.compute.api.admin import _hypervisor
from stackling.compute.api.common import authorize, takes_query, version
from stackling.compute.errors import ComputeHostNotFound

ADMIN = "rule:context_is_admin"
POLICIES = {
    "os_compute_api:os-hosts:update": ADMIN,
    "os_compute_api:os-hosts:start": ADMIN,
    "os_compute_api:os-hosts:shutdown": ADMIN,
    "os_compute_api:os-hosts:reboot": ADMIN,
    "os_compute_api:os-instance-usage-audit-log:list": ADMIN,
    "os_compute_api:os-instance-usage-audit-log:show": ADMIN,
    "os_compute_api:extensions": "@",
}
HOSTS_REMOVED = "2.43"
HYPERVISOR_SEARCH_REMOVED = "2.53"


class NotImplementedFeature(ApiError):
    status = 501
    message = "The requested functionality is not supported."


_ENABLE = {"type": "string", "enum": ["enable", "disable", "Enable", "Disable", "ENABLE",
                                      "DISABLE"]}
HOST_UPDATE = {"type": "object",
               "properties": {"status": _ENABLE, "maintenance_mode": _ENABLE},
               "additionalProperties": False}


# ------------------------------------------------------------------ os-hosts
def _host_guard(rq: ApiRequest, action: str) -> str:
    if version(rq).matches(HOSTS_REMOVED):
        raise NotFound("The resource could not be found.")
    authorize(rq, f"os-hosts:{action}")
    return rq.path_params["host_name"]


def _compute_host(rq: ApiRequest, host: str) -> None:
    if not any(s.host == host for s in hosts.list_services(rq.db, host, "nova-compute")):
        raise ComputeHostNotFound(host=host)


def hosts_update(rq: ApiRequest) -> Any:
    host = _host_guard(rq, "update")
    data = validation.validate(HOST_UPDATE, rq.json(malformed="Malformed request body"))
    status, maintenance = data.get("status"), data.get("maintenance_mode")
    if status is None and maintenance is None:
        raise BadRequest("'status' or 'maintenance_mode' needed for host update")
    _compute_host(rq, host)
    result: dict[str, Any] = {"host": host}
    if maintenance is not None:
        raise NotImplementedFeature()
    if status is not None:
        enabled = status.lower() == "enable"
        hosts.set_service_status(rq.db, host, "nova-compute", disabled=not enabled)
        result["status"] = "enabled" if enabled else "disabled"
    return result


def _power_action(rq: ApiRequest, action: str) -> Any:
    host = _host_guard(rq, action)
    _compute_host(rq, host)
    raise NotImplementedFeature()


@takes_query("*")
def hosts_startup(rq: ApiRequest) -> Any:
    return _power_action(rq, "start")


@takes_query("*")
def hosts_shutdown(rq: ApiRequest) -> Any:
    return _power_action(rq, "shutdown")


@takes_query("*")
def hosts_reboot(rq: ApiRequest) -> Any:
    return _power_action(rq, "reboot")


# ------------------------------------------------------------------ os-hypervisors (< 2.53)
def _matching(rq: ApiRequest, action: str) -> list[Any]:
    if version(rq).matches(HYPERVISOR_SEARCH_REMOVED):
        raise NotFound("The resource could not be found.")
    authorize(rq, f"os-hypervisors:{action}")
    pattern = rq.path_params["hypervisor_id"]
    rows = [(n, s) for n, s in hosts.list_nodes(rq.db) if pattern in n.hypervisor_hostname]
    if not rows:
        raise NotFound(f"No hypervisor matching '{pattern}' could be found.")
    return rows


@takes_query("*")
def hypervisors_search(rq: ApiRequest) -> Any:
    return {"hypervisors": [_hypervisor(rq, n, s, None) for n, s in _matching(rq, "search")]}


@takes_query("*")
def hypervisors_servers(rq: ApiRequest) -> Any:
    rows = _matching(rq, "servers")
    by_host = servers.names_on_hosts(rq.db, [n.host for n, _ in rows])
    out = []
    for node, svc in rows:
        view = _hypervisor(rq, node, svc, None)
        if by_host.get(node.host):
            view["servers"] = by_host[node.host]
        out.append(view)
    return {"hypervisors": out}


# ------------------------------------------------------------------ os-instance_usage_audit_log
def _audit_period(before: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """Nova's last completed audit period with its default unit, a month."""
    end = before.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    begin = (end - dt.timedelta(days=1)).replace(day=1)
    return begin, end


def _audit_log(rq: ApiRequest, before: dt.datetime) -> dict[str, Any]:
    """No audit task runs here: every compute host is one that has not run for the period."""
    begin, end = _audit_period(before)
    names = sorted({s.host for s in hosts.list_services(rq.db, None, "nova-compute")})
    return {"hosts_not_run": names, "log": {}, "num_hosts": len(names), "num_hosts_done": 0,
            "num_hosts_not_run": len(names), "num_hosts_running": 0,
            "overall_status": f"0 of {len(names)} hosts done. 0 errors."
            if names else "ALL hosts done. 0 errors.",
            "period_beginning": begin.strftime("%Y-%m-%d %H:%M:%S"),
            "period_ending": end.strftime("%Y-%m-%d %H:%M:%S"),
            "total_errors": 0, "total_instances": 0}


def audit_index(rq: ApiRequest) -> Any:
    authorize(rq, "os-instance-usage-audit-log:list")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    return {"instance_usage_audit_logs": _audit_log(rq, now)}


def audit_show(rq: ApiRequest) -> Any:
    authorize(rq, "os-instance-usage-audit-log:show")
    value = rq.path_params["before_timestamp"]
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            before = dt.datetime.strptime(value, fmt)
            break
        except ValueError:
            continue
    else:
        raise BadRequest(f"Invalid timestamp for date {value}")
    return {"instance_usage_audit_log": _audit_log(rq, before)}


# ------------------------------------------------------------------ extensions
# Nova's legacy extension list (v2.1 keeps it for old clients): (name, alias), for what is
# served here.
_EXTENSIONS = (
    ("AdminActions", "os-admin-actions"), ("AdminPassword", "os-admin-password"),
    ("Aggregates", "os-aggregates"), ("AttachInterfaces", "os-attach-interfaces"),
    ("AvailabilityZone", "os-availability-zone"), ("ConsoleOutput", "os-console-output"),
    ("Consoles", "os-remote-consoles"), ("CreateBackup", "os-create-backup"),
    ("DeferredDelete", "os-deferred-delete"), ("DiskConfig", "OS-DCF"),
    ("Evacuate", "os-evacuate"), ("ExtendedAvailabilityZone", "OS-EXT-AZ"),
    ("ExtendedServerAttributes", "OS-EXT-SRV-ATTR"), ("ExtendedStatus", "OS-EXT-STS"),
    ("ExtendedVolumes", "os-extended-volumes"), ("FlavorAccess", "os-flavor-access"),
    ("FlavorExtraData", "OS-FLV-EXT-DATA"), ("FlavorExtraSpecs", "os-flavor-extra-specs"),
    ("FlavorManage", "os-flavor-manage"), ("FlavorRxtx", "os-flavor-rxtx"),
    ("Flavors", "flavors"), ("FloatingIpPools", "os-floating-ip-pools"),
    ("FloatingIps", "os-floating-ips"), ("Hosts", "os-hosts"),
    ("Hypervisors", "os-hypervisors"), ("ImageMetadata", "image-metadata"),
    ("ImageSize", "OS-EXT-IMG-SIZE"), ("Images", "images"),
    ("InstanceActions", "os-instance-actions"),
    ("InstanceUsageAuditLog", "os-instance-usage-audit-log"), ("Keypairs", "os-keypairs"),
    ("Limits", "limits"), ("LockServer", "os-lock-server"), ("MigrateServer", "os-migrate-server"),
    ("Migrations", "os-migrations"), ("MultipleCreate", "os-multiple-create"),
    ("Networks", "os-networks"), ("PauseServer", "os-pause-server"),
    ("QuotaClasses", "os-quota-class-sets"), ("Quotas", "os-quota-sets"),
    ("Rescue", "os-rescue"), ("SecurityGroups", "os-security-groups"),
    ("ServerDiagnostics", "os-server-diagnostics"), ("ServerGroups", "os-server-groups"),
    ("ServerMetadata", "server-metadata"), ("ServerUsage", "OS-SRV-USG"),
    ("Servers", "servers"), ("ServerTags", "os-server-tags"), ("Services", "os-services"),
    ("Shelve", "os-shelve"), ("SimpleTenantUsage", "os-simple-tenant-usage"),
    ("SuspendServer", "os-suspend-server"), ("TenantNetworks", "os-tenant-networks"),
    ("UserData", "os-user-data"), ("Versions", "versions"),
)


def _extension(name: str, alias: str) -> dict[str, Any]:
    return {"name": name, "alias": alias, "description": f"{name} support.", "links": [],
            "namespace": "http://docs.openstack.org/compute/ext/fake_xml",
            "updated": "2014-12-03T00:00:00Z"}


def extensions_index(rq: ApiRequest) -> Any:
    authorize(rq, "extensions")
    return {"extensions": [_extension(n, a) for n, a in _EXTENSIONS]}


def extensions_show(rq: ApiRequest) -> Any:
    authorize(rq, "extensions")
    alias = rq.path_params["alias"]
    for name, known in _EXTENSIONS:
        if known == alias:
            return {"extension": _extension(name, known)}
    raise NotFound("The resource could not be found.")


def add_routes(s: Any) -> None:
    s.add("/v2.1/os-hosts/{host_name}", put=hosts_update)
    s.add("/v2.1/os-hosts/{host_name}/startup", get=hosts_startup)
    s.add("/v2.1/os-hosts/{host_name}/shutdown", get=hosts_shutdown)
    s.add("/v2.1/os-hosts/{host_name}/reboot", get=hosts_reboot)
    s.add("/v2.1/os-hypervisors/{hypervisor_id}/search", get=hypervisors_search)
    s.add("/v2.1/os-hypervisors/{hypervisor_id}/servers", get=hypervisors_servers)
    s.add("/v2.1/os-instance_usage_audit_log", get=audit_index)
    s.add("/v2.1/os-instance_usage_audit_log/{before_timestamp}", get=audit_show)
    s.add("/v2.1/extensions", get=extensions_index)
    s.add("/v2.1/extensions/{alias}", get=extensions_show)
