"""Version discovery, limits, os-availability-zone, os-services, os-quota-sets,
os-quota-class-sets and volume transfers (os-volume-transfer, volume-transfers 3.55)."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import errors, microversions, quotas, transfers, volumes
from stackling.block_storage.api.common import add, all_tenants, authorize, body, time, version
from stackling.block_storage.models import Transfer
from stackling.common.db import utcnow
from stackling.common.http import ApiRequest, Service, json_response, no_content

UPDATED = "2023-03-28T00:00:00Z"


def _version(rq: ApiRequest) -> dict[str, Any]:
    return {"id": "v3.0", "status": "CURRENT", "version": microversions.MAX,
            "min_version": microversions.MIN, "updated": UPDATED,
            "links": [{"rel": "describedby", "type": "text/html",
                       "href": "https://docs.openstack.org/"},
                      {"rel": "self", "href": f"{rq.service_url}/v3/"}],
            "media-types": [{"base": "application/json",
                             "type": "application/vnd.openstack.volume+json;version=3"}]}


def versions(rq: ApiRequest) -> Any:
    return json_response({"versions": [_version(rq)]}, 300)


def version_v3(rq: ApiRequest) -> Any:
    return {"versions": [_version(rq)]}


# ------------------------------------------------------------------ limits
def limits(rq: ApiRequest) -> Any:
    project = rq.ctx.project_id or ""
    if version(rq, "3.39") and rq.query.get("project_id") and rq.ctx.is_admin:
        project = rq.query["project_id"]
    authorize(rq, "limits_extension:used_limits", project)
    hard = quotas.limits(rq.db, rq.settings, project)
    used = quotas.usage(rq.db, project)
    absolute = {"totalSnapshotsUsed": used["snapshots"], "maxTotalBackups": hard["backups"],
                "maxTotalVolumeGigabytes": hard["gigabytes"],
                "maxTotalSnapshots": hard["snapshots"],
                "maxTotalBackupGigabytes": hard["backup_gigabytes"],
                "totalBackupGigabytesUsed": used["backup_gigabytes"],
                "maxTotalVolumes": hard["volumes"], "totalVolumesUsed": used["volumes"],
                "totalBackupsUsed": used["backups"], "totalGigabytesUsed": used["gigabytes"]}
    return {"limits": {"rate": [], "absolute": absolute}}


# ------------------------------------------------------------------ availability zones
def availability_zones(rq: ApiRequest) -> Any:
    return {"availabilityZoneInfo": [{"zoneName": volumes.AZ,
                                      "zoneState": {"available": True}}]}


# ------------------------------------------------------------------ services
SERVICES = (("cinder-scheduler", "stackling"), ("cinder-volume", "stackling@file"),
            ("cinder-backup", "stackling"))


def services(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:services:index")
    now = time(utcnow())
    rows = []
    for binary, host in SERVICES:
        if rq.query.get("binary") and rq.query["binary"] != binary:
            continue
        if rq.query.get("host") and rq.query["host"] != host:
            continue
        row = {"binary": binary, "host": host, "zone": volumes.AZ, "status": "enabled",
               "state": "up", "updated_at": now, "disabled_reason": None}
        if version(rq, "3.7"):
            row["cluster"] = None
        if version(rq, "3.49") and binary == "cinder-volume":
            row["backend_state"] = "up"
        if binary == "cinder-volume":
            row.update(replication_status="disabled", active_backend_id=None, frozen=False)
        rows.append(row)
    return {"services": rows}


# ------------------------------------------------------------------ quotas
def _quota_body(rq: ApiRequest, project: str, usage: bool) -> dict[str, Any]:
    hard = quotas.limits(rq.db, rq.settings, project)
    if not usage:
        return {"id": project, **hard}
    used = quotas.usage(rq.db, project)
    return {"id": project, **{k: {"limit": v, "in_use": used.get(k, 0), "reserved": 0,
                                  "allocated": 0} for k, v in hard.items()}}


def show_quotas(rq: ApiRequest) -> Any:
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:quotas:show", project)
    usage = (rq.query.get("usage") or "").lower() in ("true", "1", "t")
    return {"quota_set": _quota_body(rq, project, usage)}


def default_quotas(rq: ApiRequest) -> Any:
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:quotas:show", project)
    return {"quota_set": {"id": project, **quotas.class_limits(rq.db, rq.settings)}}


def update_quotas(rq: ApiRequest) -> Any:
    data = body(rq, "quota_set")
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:quotas:update", project)
    values = {k: v for k, v in data.items() if k not in ("tenant_id", "id")}
    skip = values.pop("skip_validation", True)
    hard = quotas.update(rq.db, rq.settings, project, values,
                         skip_validation=str(skip).lower() not in ("false", "0"))
    return {"quota_set": hard}


def delete_quotas(rq: ApiRequest) -> Any:
    project = rq.path_params["target_project"]
    authorize(rq, "volume_extension:quotas:delete", project)
    quotas.delete(rq.db, project)
    return no_content(200)


def show_quota_class(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:quota_classes")
    name = rq.path_params["class_name"]
    return {"quota_class_set": {"id": name, **quotas.class_limits(rq.db, rq.settings, name)}}


def update_quota_class(rq: ApiRequest) -> Any:
    data = body(rq, "quota_class_set")
    authorize(rq, "volume_extension:quota_classes:update")
    name = rq.path_params["class_name"]
    return {"quota_class_set": quotas.update_class(rq.db, rq.settings, name, data)}


# ------------------------------------------------------------------ transfers
def _transfer_links(rq: ApiRequest, kind: str, item_id: str) -> list[dict[str, str]]:
    base, project = rq.service_url, rq.ctx.project_id
    return [{"href": f"{base}/v3/{project}/{kind}/{item_id}", "rel": "self"},
            {"href": f"{base}/{project}/{kind}/{item_id}", "rel": "bookmark"}]


def _transfer_view(rq: ApiRequest, row: Transfer, kind: str, detail: bool) -> dict[str, Any]:
    v: dict[str, Any] = {"id": row.id, "name": row.name, "volume_id": row.volume_id,
                         "links": _transfer_links(rq, kind, row.id)}
    if detail:
        v["created_at"] = time(row.created_at)
    if version(rq, "3.57") and detail:
        v.update(source_project_id=row.source_project_id,
                 destination_project_id=row.destination_project_id, accepted=row.accepted)
    if version(rq, "3.55") and detail:
        v["no_snapshots"] = row.no_snapshots
    return v


def _kind(rq: ApiRequest) -> str:
    return "volume-transfers" if "/volume-transfers" in rq.request.url.path else \
        "os-volume-transfer"


def _transfer_routes_check(rq: ApiRequest) -> None:
    if _kind(rq) == "volume-transfers" and not version(rq, "3.55"):
        raise errors.NotFound("The resource could not be found.")


def list_transfers(rq: ApiRequest, detail: bool = False) -> Any:
    _transfer_routes_check(rq)
    authorize(rq, "volume:get_all_transfers")
    rows = transfers.list_transfers(rq.db, rq.ctx, all_tenants(rq))
    return {"transfers": [_transfer_view(rq, r, _kind(rq), detail) for r in rows]}


def list_transfers_detail(rq: ApiRequest) -> Any:
    return list_transfers(rq, detail=True)


def create_transfer(rq: ApiRequest) -> Any:
    _transfer_routes_check(rq)
    data = body(rq, "transfer")
    authorize(rq, "volume:create_transfer")
    volume_id = data.get("volume_id")
    if not volume_id:
        raise errors.InvalidInput(reason="Incorrect request body format")
    no_snapshots = bool(data.get("no_snapshots", False)) and version(rq, "3.55")
    row, key = transfers.create_transfer(rq.db, rq.ctx, str(volume_id), data.get("name"),
                                         no_snapshots)
    view = _transfer_view(rq, row, _kind(rq), True)
    view["auth_key"] = key
    return json_response({"transfer": view}, 202)


def show_transfer(rq: ApiRequest) -> Any:
    _transfer_routes_check(rq)
    row = transfers.get_transfer(rq.db, rq.ctx, rq.path_params["transfer_id"])
    authorize(rq, "volume:get_transfer", row.source_project_id)
    return {"transfer": _transfer_view(rq, row, _kind(rq), True)}


def delete_transfer(rq: ApiRequest) -> Any:
    _transfer_routes_check(rq)
    row = transfers.get_transfer(rq.db, rq.ctx, rq.path_params["transfer_id"])
    authorize(rq, "volume:delete_transfer", row.source_project_id)
    transfers.delete_transfer(rq.db, rq.ctx, row)
    return no_content(202)


def accept_transfer(rq: ApiRequest) -> Any:
    _transfer_routes_check(rq)
    data = body(rq, "accept")
    authorize(rq, "volume:accept_transfer")
    row = transfers.accept(rq.db, rq.ctx, rq.settings, rq.path_params["transfer_id"],
                           data.get("auth_key"))
    volume = rq.db.get(transfers.Volume, row.volume_id)
    return json_response({"transfer": {"id": row.id, "name": row.name,
                                       "volume_id": row.volume_id,
                                       "links": _transfer_links(rq, _kind(rq), row.id),
                                       "volume_name": volume.name if volume else None}}, 202)


# ------------------------------------------------------------------ backend facts
BACKEND = "file"


def capabilities(rq: ApiRequest) -> Any:
    authorize(rq, "volume_extension:capabilities")
    host = rq.path_params["host"]
    if host.split("#")[0] != "stackling@file":
        raise errors.NotFound(f"No Capabilities found for {host}")
    return {"namespace": "OS::Storage::Capabilities::stackling@file",
            "vendor_name": "stackling", "volume_backend_name": BACKEND, "pool_name": None,
            "driver_version": "1.0", "storage_protocol": "file", "display_name": None,
            "description": None, "visibility": None, "replication_targets": [],
            "properties": {"thin_provisioning": {
                "title": "Thin Provisioning", "type": "boolean",
                "description": "Sparse files: a volume costs no disk until written."}}}


def pools(rq: ApiRequest) -> Any:
    authorize(rq, "scheduler_extension:scheduler_stats:get_pools")
    import shutil

    from stackling.block_storage import backend

    root = backend.driver_for(rq.settings).root
    root.mkdir(parents=True, exist_ok=True)
    usage = shutil.disk_usage(root)
    pool: dict[str, Any] = {"name": f"stackling@file#{BACKEND}"}
    if (rq.query.get("detail") or "").lower() in ("true", "1"):
        pool["capabilities"] = {
            "volume_backend_name": BACKEND, "vendor_name": "stackling",
            "driver_version": "1.0", "storage_protocol": "file",
            "total_capacity_gb": usage.total // backend.GiB,
            "free_capacity_gb": usage.free // backend.GiB,
            "allocated_capacity_gb": 0, "thin_provisioning_support": True,
            "thick_provisioning_support": False, "multiattach": True,
            "reserved_percentage": 0, "pool_name": BACKEND,
            "timestamp": time(utcnow())}
    return {"pools": [pool]}


EXTENSIONS = (
    ("AdminActions", "os-admin-actions", "Enable admin actions."),
    ("AvailabilityZones", "os-availability-zone", "Describe Availability Zones."),
    ("Backups", "backups", "Backups support."),
    ("Capabilities", "capabilities", "Capabilities support."),
    ("ExtendedServices", "os-extended-services", "Extended services support."),
    ("ExtendedSnapshotAttributes", "os-extended-snapshot-attributes",
     "Extended SnapshotAttributes support."),
    ("Qos_specs_manage", "qos-specs", "QoS specs support."),
    ("QuotaClasses", "os-quota-class-sets", "Quota classes management support."),
    ("Quotas", "os-quota-sets", "Quota management support."),
    ("Scheduler_stats", "scheduler-stats", "Scheduler stats support."),
    ("Services", "os-services", "Services support."),
    ("SnapshotActions", "os-snapshot-actions", "Enable snapshot manager actions."),
    ("TypesExtraSpecs", "os-types-extra-specs", "Type extra specs support."),
    ("TypesManage", "os-types-manage", "Types manage support."),
    ("UsedLimits", "os-used-limits", "Provide data on limited resources that are being used."),
    ("VolumeActions", "os-volume-actions", "Enable volume actions."),
    ("VolumeHostAttribute", "os-vol-host-attr", "Expose host as an attribute of a volume."),
    ("VolumeImageMetadata", "os-vol-image-meta",
     "Show image metadata associated with the volume."),
    ("VolumeMigStatusAttribute", "os-vol-mig-status-attr",
     "Expose migration_status as an attribute of a volume."),
    ("VolumeTenantAttribute", "os-vol-tenant-attr",
     "Expose the internal project_id as an attribute of a volume."),
    ("VolumeTransfer", "os-volume-transfer", "Volume transfer management support."),
    ("VolumeTypeAccess", "os-volume-type-access", "Volume type access support."),
)


def extensions(rq: ApiRequest) -> Any:
    return {"extensions": [{"name": name, "alias": alias, "description": text,
                            "updated": "2013-10-03T00:00:00+00:00", "links": []}
                           for name, alias, text in EXTENSIONS]}


RESOURCE_FILTERS = {
    "volume": ["name", "status", "metadata", "bootable", "migration_status",
               "availability_zone", "group_id", "size", "created_at", "updated_at",
               "consumes_quota"],
    "backup": ["name", "status", "volume_id"],
    "snapshot": ["name", "status", "volume_id", "metadata", "availability_zone",
                 "consumes_quota"],
    "group": ["name"], "group_snapshot": ["name", "status", "group_id"],
    "attachment": ["volume_id", "status", "instance_id", "attach_status"],
    "message": ["resource_uuid", "resource_type", "event_id", "request_id", "message_level"],
    "pool": ["name", "volume_type"], "volume_type": ["is_public", "extra_specs"],
}


def resource_filters(rq: ApiRequest) -> Any:
    if not version(rq, "3.33"):
        raise errors.NotFound("The resource could not be found.")
    wanted = rq.query.get("resource")
    return {"resource_filters": [{"resource": k, "filters": v}
                                 for k, v in RESOURCE_FILTERS.items()
                                 if wanted in (None, k)]}


# ------------------------------------------------------------------ empty collections
def empty(key: str) -> Any:
    def handler(rq: ApiRequest) -> Any:
        return {key: []}
    return handler


def register(service: Service) -> None:
    service.add("/", public=True, get=versions)
    service.add("/v3/", public=True, get=version_v3)
    service.add("/v3", public=True, get=version_v3)
    add(service, "/limits", get=limits)
    add(service, "/os-availability-zone", get=availability_zones)
    add(service, "/os-services", get=services)
    add(service, "/os-quota-sets/{target_project}", get=show_quotas, put=update_quotas,
        delete=delete_quotas)
    add(service, "/os-quota-sets/{target_project}/defaults", get=default_quotas)
    add(service, "/os-quota-class-sets/{class_name}", get=show_quota_class,
        put=update_quota_class)
    for kind in ("os-volume-transfer", "volume-transfers"):
        add(service, f"/{kind}", get=list_transfers, post=create_transfer)
        add(service, f"/{kind}/detail", get=list_transfers_detail)
        add(service, f"/{kind}/{{transfer_id}}", get=show_transfer, delete=delete_transfer)
        add(service, f"/{kind}/{{transfer_id}}/accept", post=accept_transfer)
    add(service, "/messages", get=empty("messages"))
    add(service, "/capabilities/{host}", get=capabilities)
    add(service, "/scheduler-stats/get_pools", get=pools)
    add(service, "/extensions", get=extensions)
    add(service, "/resource_filters", get=resource_filters)
