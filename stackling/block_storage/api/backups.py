"""/v3/backups: create, list, detail, show, update (3.9), delete, restore, export/import
of the record, and the backup admin actions."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import backups, errors, volumes, work
from stackling.block_storage.api.common import (
    add,
    all_tenants,
    allowed,
    authorize,
    body,
    next_link,
    paging,
    time,
    version,
)
from stackling.block_storage.models import Backup
from stackling.common.http import ApiRequest, Service, json_response, no_content
from stackling.common.listing import to_bool


def _links(rq: ApiRequest, item_id: str) -> list[dict[str, str]]:
    base, project = rq.service_url, rq.ctx.project_id
    return [{"href": f"{base}/v3/{project}/backups/{item_id}", "rel": "self"},
            {"href": f"{base}/{project}/backups/{item_id}", "rel": "bookmark"}]


def view(rq: ApiRequest, backup: Backup) -> dict[str, Any]:
    v: dict[str, Any] = {
        "id": backup.id, "status": backup.status, "size": backup.size,
        "object_count": backup.object_count, "availability_zone": backup.availability_zone,
        "container": backup.container, "created_at": time(backup.created_at),
        "updated_at": time(backup.updated_at), "name": backup.name,
        "description": backup.description, "fail_reason": backup.fail_reason,
        "volume_id": backup.volume_id, "links": _links(rq, backup.id),
        "is_incremental": backup.is_incremental,
        "has_dependent_backups": backups.has_dependents(rq.db, backup),
        "snapshot_id": backup.snapshot_id, "data_timestamp": time(backup.data_timestamp)}
    if version(rq, "3.18") and allowed(rq, "backup:backup_project_attribute"):
        v["os-backup-project-attr:project_id"] = backup.project_id
    if version(rq, "3.43"):
        v["metadata"] = dict(backup.metadata_ or {})
    if version(rq, "3.56"):
        v["user_id"] = backup.user_id
    return v


def _backup(rq: ApiRequest, action: str) -> Backup:
    backup = backups.get_backup(rq.db, rq.ctx, rq.path_params["backup_id"])
    authorize(rq, action, backup.project_id)
    return backup


def _wake(rq: ApiRequest) -> None:
    rq.after_commit(lambda: work.wake(rq.runtime))


def _listing(rq: ApiRequest, detail: bool) -> Any:
    authorize(rq, "backup:get_all")
    sorts, limit, marker, offset = paging(rq, backups.SORT_KEYS + ("display_name",))
    filters = dict(rq.query.items())
    if "display_name" in filters:
        filters["name"] = filters.pop("display_name")
    rows, total = backups.list_backups(rq.db, rq.ctx, filters, all_tenants=all_tenants(rq),
                                       sorts=sorts, limit=limit, marker=marker, offset=offset)
    items = [view(rq, b) if detail else {"id": b.id, "name": b.name,
                                          "links": _links(rq, b.id)} for b in rows]
    out: dict[str, Any] = {"backups": items}
    links = next_link(rq, "backups", rows, limit)
    if links:
        out["backups_links"] = links
    if version(rq, "3.45") and (rq.query.get("with_count") or "").lower() in ("true", "1"):
        out["count"] = total
    return out


def list_backups(rq: ApiRequest) -> Any:
    return _listing(rq, False)


def list_detail(rq: ApiRequest) -> Any:
    return _listing(rq, True)


def _flag(data: dict[str, Any], key: str) -> bool:
    try:
        return to_bool(data.get(key, False))
    except ValueError:
        raise errors.InvalidInput(reason=f"Invalid value for {key}") from None


def create(rq: ApiRequest) -> Any:
    data = body(rq, "backup")
    authorize(rq, "backup:create")
    volume_id = data.get("volume_id")
    if not volume_id:
        raise errors.InvalidInput(reason="Incorrect request body format")
    volume = volumes.get_volume(rq.db, rq.ctx, str(volume_id))
    backup = backups.create_backup(
        rq.db, rq.ctx, rq.settings, volume, name=data.get("name"),
        description=data.get("description"), incremental=_flag(data, "incremental"),
        force=_flag(data, "force"), snapshot_id=data.get("snapshot_id"),
        container=data.get("container"), metadata=data.get("metadata"),
        availability_zone=data.get("availability_zone"))
    _wake(rq)
    return json_response({"backup": {"id": backup.id, "name": backup.name,
                                     "links": _links(rq, backup.id)}}, 202)


def show(rq: ApiRequest) -> Any:
    return {"backup": view(rq, _backup(rq, "backup:get"))}


def update(rq: ApiRequest) -> Any:
    if not version(rq, "3.9"):
        raise errors.NotFound("The resource could not be found.")
    data = body(rq, "backup")
    backup = _backup(rq, "backup:update")
    fields = {k: data[k] for k in ("name", "description") if k in data}
    if "metadata" in data and version(rq, "3.43"):
        fields["metadata"] = data["metadata"]
    backups.update_backup(rq.db, backup, fields)
    return {"backup": view(rq, backup)}


def delete(rq: ApiRequest) -> Any:
    backups.delete_backup(rq.db, _backup(rq, "backup:delete"))
    _wake(rq)
    return no_content(202)


def restore(rq: ApiRequest) -> Any:
    data = body(rq, "restore") if rq.raw_body.strip() else {}
    backup = _backup(rq, "backup:restore")
    volume = backups.restore(rq.db, rq.ctx, rq.settings, backup, data.get("volume_id"),
                             data.get("name"))
    _wake(rq)
    return json_response({"restore": {"backup_id": backup.id, "volume_id": volume.id,
                                      "volume_name": volume.name}}, 202)


def export_record(rq: ApiRequest) -> Any:
    backup = _backup(rq, "backup:export-import")
    return {"backup-record": backups.export_record(backup)}


def import_record(rq: ApiRequest) -> Any:
    data = body(rq, "backup-record")
    authorize(rq, "backup:backup-import")
    backup = backups.import_record(rq.db, rq.ctx, data.get("backup_service"),
                                   data.get("backup_url"))
    return json_response({"backup": {"id": backup.id, "name": backup.name,
                                     "links": _links(rq, backup.id)}}, 201)


def action(rq: ApiRequest) -> Any:
    data = body(rq)
    if not isinstance(data, dict) or len(data) != 1:
        raise errors.InvalidInput(reason="There is no such action")
    name, args = next(iter(data.items()))
    if name == "os-reset_status":
        backup = _backup(rq, "volume_extension:backup_admin_actions:reset_status")
        backups.reset_status(rq.db, backup, (args or {}).get("status"))
    elif name == "os-force_delete":
        backup = _backup(rq, "volume_extension:backup_admin_actions:force_delete")
        backups.delete_backup(rq.db, backup, force=True)
        _wake(rq)
    else:
        raise errors.InvalidInput(reason=f"There is no such action: {name}")
    return no_content(202)


def register(service: Service) -> None:
    add(service, "/backups", get=list_backups, post=create)
    add(service, "/backups/detail", get=list_detail)
    add(service, "/backups/import_record", post=import_record)
    add(service, "/backups/{backup_id}", get=show, put=update, delete=delete)
    add(service, "/backups/{backup_id}/restore", post=restore)
    add(service, "/backups/{backup_id}/export_record", get=export_record)
    add(service, "/backups/{backup_id}/action", post=action)
