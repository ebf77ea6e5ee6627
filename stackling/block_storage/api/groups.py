"""/v3/group_types (3.11), /v3/groups (3.13) and /v3/group_snapshots (3.14)."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import errors, groups, work
from stackling.block_storage.api.common import add, all_tenants, authorize, body, time, version
from stackling.block_storage.models import Group, GroupSnapshot, GroupType
from stackling.common.http import ApiRequest, Service, json_response, no_content
from stackling.common.listing import to_bool


def _since(rq: ApiRequest, at_least: str) -> None:
    if not version(rq, at_least):
        raise errors.NotFound("The resource could not be found.")


def _wake(rq: ApiRequest) -> None:
    rq.after_commit(lambda: work.wake(rq.runtime))


# ------------------------------------------------------------------ group types
def type_view(rq: ApiRequest, row: GroupType) -> dict[str, Any]:
    v: dict[str, Any] = {"id": row.id, "name": row.name, "description": row.description,
                         "is_public": row.is_public}
    if rq.ctx.is_admin:
        v["group_specs"] = dict(row.group_specs or {})
    return v


def list_types(rq: ApiRequest) -> Any:
    _since(rq, "3.11")
    return {"group_types": [type_view(rq, t) for t in groups.list_types(rq.db, rq.ctx)]}


def show_type(rq: ApiRequest) -> Any:
    _since(rq, "3.11")
    return {"group_type": type_view(rq, groups.get_type(rq.db, rq.ctx,
                                                       rq.path_params["group_type_id"]))}


def create_type(rq: ApiRequest) -> Any:
    _since(rq, "3.11")
    data = body(rq, "group_type")
    authorize(rq, "group:group_types:create")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise errors.InvalidInput(reason="Group type name can not be empty.")
    try:
        is_public = to_bool(data.get("is_public", True))
    except ValueError:
        raise errors.InvalidInput(reason="Invalid value for is_public") from None
    row = groups.create_type(rq.db, name.strip(), data.get("description"), is_public,
                             data.get("group_specs") or {})
    return {"group_type": type_view(rq, row)}


def update_type(rq: ApiRequest) -> Any:
    _since(rq, "3.11")
    data = body(rq, "group_type")
    authorize(rq, "group:group_types:update")
    row = groups.get_type(rq.db, rq.ctx, rq.path_params["group_type_id"])
    return {"group_type": type_view(rq, groups.update_type(rq.db, row, data))}


def delete_type(rq: ApiRequest) -> Any:
    _since(rq, "3.11")
    authorize(rq, "group:group_types:delete")
    groups.delete_type(rq.db, groups.get_type(rq.db, rq.ctx, rq.path_params["group_type_id"]))
    return no_content(202)


def _gtype(rq: ApiRequest, action: str) -> GroupType:
    _since(rq, "3.11")
    authorize(rq, action)
    return groups.get_type(rq.db, rq.ctx, rq.path_params["group_type_id"])


def list_specs(rq: ApiRequest) -> Any:
    return {"group_specs": dict(_gtype(rq, "group:group_types_specs").group_specs or {})}


def create_specs(rq: ApiRequest) -> Any:
    data = body(rq, "group_specs")
    row = _gtype(rq, "group:group_types_specs")
    groups.set_specs(rq.db, row, data)
    return {"group_specs": {k: str(v) for k, v in data.items()}}


def show_spec(rq: ApiRequest) -> Any:
    row = _gtype(rq, "group:group_types_specs")
    key = rq.path_params["key"]
    if key not in (row.group_specs or {}):
        raise groups.GroupTypeSpecsNotFound(group_type_id=row.id, group_specs_key=key)
    return {key: row.group_specs[key]}


def update_spec(rq: ApiRequest) -> Any:
    data = body(rq)
    row = _gtype(rq, "group:group_types_specs")
    key = rq.path_params["key"]
    if not isinstance(data, dict) or list(data) != [key]:
        raise errors.InvalidInput(reason="Request body and URI mismatch")
    groups.set_specs(rq.db, row, data)
    return {key: str(data[key])}


def delete_spec(rq: ApiRequest) -> Any:
    groups.delete_spec(rq.db, _gtype(rq, "group:group_types_specs"), rq.path_params["key"])
    return no_content(202)


# ------------------------------------------------------------------ groups
def group_view(rq: ApiRequest, row: Group) -> dict[str, Any]:
    v: dict[str, Any] = {"id": row.id, "status": row.status,
                         "availability_zone": row.availability_zone,
                         "created_at": time(row.created_at), "name": row.name,
                         "description": row.description, "group_type": row.group_type_id,
                         "volume_types": list(row.volume_type_ids or [])}
    if version(rq, "3.14"):
        v["group_snapshot_id"] = row.group_snapshot_id
        v["source_group_id"] = row.source_group_id
    if version(rq, "3.25") and (rq.query.get("list_volume") or "").lower() in ("true", "1"):
        v["volumes"] = groups.member_ids(rq.db, row.id)
    if version(rq, "3.38"):
        v["replication_status"] = "disabled"
    if version(rq, "3.58"):
        v["project_id"] = row.project_id
    return v


def _group(rq: ApiRequest, action: str) -> Group:
    _since(rq, "3.13")
    row = groups.get_group(rq.db, rq.ctx, rq.path_params["group_id"])
    authorize(rq, action, row.project_id)
    return row


def _list(rq: ApiRequest, detail: bool) -> Any:
    _since(rq, "3.13")
    authorize(rq, "group:get_all")
    rows = groups.list_groups(rq.db, rq.ctx, all_tenants(rq))
    return {"groups": [group_view(rq, g) if detail else {"id": g.id, "name": g.name}
                       for g in rows]}


def list_groups(rq: ApiRequest) -> Any:
    return _list(rq, False)


def list_detail(rq: ApiRequest) -> Any:
    return _list(rq, True)


def create_group(rq: ApiRequest) -> Any:
    _since(rq, "3.13")
    data = body(rq, "group")
    authorize(rq, "group:create")
    if not data.get("group_type"):
        raise errors.InvalidInput(reason="group_type must be provided to create group")
    vtypes = data.get("volume_types") or []
    if isinstance(vtypes, str):
        vtypes = [t for t in vtypes.split(",") if t]
    row = groups.create_group(rq.db, rq.ctx, name=data.get("name"),
                              description=data.get("description"),
                              group_type=str(data["group_type"]), volume_types=list(vtypes),
                              availability_zone=data.get("availability_zone"))
    return json_response({"group": {"id": row.id, "name": row.name}}, 202)


def show_group(rq: ApiRequest) -> Any:
    return {"group": group_view(rq, _group(rq, "group:get"))}


def update_group(rq: ApiRequest) -> Any:
    data = body(rq, "group")
    row = _group(rq, "group:update")
    groups.update_group(rq.db, rq.ctx, row, data)
    return no_content(202)


def group_action(rq: ApiRequest) -> Any:
    data = body(rq)
    if not isinstance(data, dict) or len(data) != 1:
        raise errors.InvalidInput(reason="There is no such action")
    name, args = next(iter(data.items()))
    args = args if isinstance(args, dict) else {}
    if name == "delete":
        row = _group(rq, "group:delete")
        groups.delete_group(rq.db, rq.ctx, row, str(args.get("delete-volumes", False)).lower()
                            in ("true", "1"))
        _wake(rq)
    elif name == "reset_status":
        row = _group(rq, "group:reset_status")
        row.status = str(args.get("status") or row.status)
    elif name in ("enable_replication", "disable_replication", "failover_replication",
                  "list_replication_targets"):
        _group(rq, f"group:{name}")
        raise errors.InvalidInput(reason="Group replication is not supported here.")
    else:
        raise errors.InvalidInput(reason=f"There is no such action: {name}")
    return no_content(202)


# ------------------------------------------------------------------ group snapshots
def gs_view(rq: ApiRequest, row: GroupSnapshot, detail: bool = True) -> dict[str, Any]:
    v: dict[str, Any] = {"id": row.id, "name": row.name}
    if detail:
        v.update(group_id=row.group_id, group_type_id=row.group_type_id,
                 status=groups.status_of(rq.db, row), created_at=time(row.created_at),
                 description=row.description)
        if version(rq, "3.58"):
            v["project_id"] = row.project_id
    return v


def _gs(rq: ApiRequest, action: str) -> GroupSnapshot:
    _since(rq, "3.14")
    row = groups.get_group_snapshot(rq.db, rq.ctx, rq.path_params["group_snapshot_id"])
    authorize(rq, action, row.project_id)
    return row


def _gs_list(rq: ApiRequest, detail: bool) -> Any:
    _since(rq, "3.14")
    authorize(rq, "group:get_all_group_snapshots")
    rows = groups.list_group_snapshots(rq.db, rq.ctx, all_tenants(rq))
    return {"group_snapshots": [gs_view(rq, g, detail) for g in rows]}


def list_group_snapshots(rq: ApiRequest) -> Any:
    return _gs_list(rq, False)


def list_group_snapshots_detail(rq: ApiRequest) -> Any:
    return _gs_list(rq, True)


def create_group_snapshot(rq: ApiRequest) -> Any:
    _since(rq, "3.14")
    data = body(rq, "group_snapshot")
    authorize(rq, "group:create_group_snapshot")
    group = groups.get_group(rq.db, rq.ctx, str(data.get("group_id") or ""))
    row = groups.create_group_snapshot(rq.db, rq.ctx, rq.settings, group, data.get("name"),
                                       data.get("description"))
    _wake(rq)
    return json_response({"group_snapshot": gs_view(rq, row)}, 202)


def show_group_snapshot(rq: ApiRequest) -> Any:
    return {"group_snapshot": gs_view(rq, _gs(rq, "group:get_group_snapshot"))}


def delete_group_snapshot(rq: ApiRequest) -> Any:
    groups.delete_group_snapshot(rq.db, _gs(rq, "group:delete_group_snapshot"))
    _wake(rq)
    return no_content(202)


def group_snapshot_action(rq: ApiRequest) -> Any:
    data = body(rq)
    if not isinstance(data, dict) or "reset_status" not in data:
        raise errors.InvalidInput(reason="There is no such action")
    row = _gs(rq, "group:reset_group_snapshot_status")
    row.status = str((data["reset_status"] or {}).get("status") or row.status)
    return no_content(202)


def register(service: Service) -> None:
    add(service, "/group_types", get=list_types, post=create_type)
    add(service, "/group_types/{group_type_id}", get=show_type, put=update_type,
        delete=delete_type)
    add(service, "/group_types/{group_type_id}/group_specs", get=list_specs, post=create_specs)
    add(service, "/group_types/{group_type_id}/group_specs/{key}", get=show_spec,
        put=update_spec, delete=delete_spec)
    add(service, "/groups", get=list_groups, post=create_group)
    add(service, "/groups/detail", get=list_detail)
    add(service, "/groups/{group_id}", get=show_group, put=update_group)
    add(service, "/groups/{group_id}/action", post=group_action)
    add(service, "/group_snapshots", get=list_group_snapshots, post=create_group_snapshot)
    add(service, "/group_snapshots/detail", get=list_group_snapshots_detail)
    add(service, "/group_snapshots/{group_snapshot_id}", get=show_group_snapshot,
        delete=delete_group_snapshot)
    add(service, "/group_snapshots/{group_snapshot_id}/action", post=group_snapshot_action)
