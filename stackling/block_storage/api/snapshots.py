"""/v3/snapshots: CRUD, detail, metadata and the snapshot actions."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import errors, snapshots, volumes, work
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
from stackling.block_storage.models import Snapshot
from stackling.common.http import ApiRequest, Service, json_response, no_content


def view(rq: ApiRequest, snap: Snapshot, detail: bool = True) -> dict[str, Any]:
    v: dict[str, Any] = {"id": snap.id, "created_at": time(snap.created_at),
                         "updated_at": time(snap.updated_at), "name": snap.name,
                         "description": snap.description, "volume_id": snap.volume_id,
                         "status": snap.status, "size": snap.size,
                         "metadata": dict(snap.metadata_ or {})}
    if allowed(rq, "volume_extension:extended_snapshot_attributes", snap.project_id):
        v["os-extended-snapshot-attributes:progress"] = snap.progress
        v["os-extended-snapshot-attributes:project_id"] = snap.project_id
    if version(rq, "3.14"):
        v["group_snapshot_id"] = None
    if version(rq, "3.41"):
        v["user_id"] = snap.user_id
    if version(rq, "3.65"):
        v["consumes_quota"] = True
    return v


def _snap(rq: ApiRequest, action: str) -> Snapshot:
    snap = snapshots.get_snapshot(rq.db, rq.ctx, rq.path_params["snapshot_id"])
    authorize(rq, action, snap.project_id)
    return snap


def _wake(rq: ApiRequest) -> None:
    rq.after_commit(lambda: work.wake(rq.runtime))


def _list(rq: ApiRequest) -> tuple[list[Snapshot], int, int | None]:
    authorize(rq, "volume:get_all_snapshots")
    sorts, limit, marker, offset = paging(rq, snapshots.SORT_KEYS + ("display_name",))
    filters: dict[str, Any] = {k: v for k, v in rq.query.items()}
    if "metadata" in filters:
        import ast

        try:
            filters["metadata"] = ast.literal_eval(filters["metadata"])
        except (ValueError, SyntaxError):
            raise errors.InvalidInput(reason="Invalid metadata filter") from None
    if "display_name" in filters:
        filters["name"] = filters.pop("display_name")
    rows, total = snapshots.list_snapshots(rq.db, rq.ctx, filters, all_tenants=all_tenants(rq),
                                           sorts=sorts, limit=limit, marker=marker,
                                           offset=offset)
    return rows, total, limit


def _listing(rq: ApiRequest, detail: bool) -> Any:
    rows, total, limit = _list(rq)
    out: dict[str, Any] = {"snapshots": [view(rq, s) for s in rows]}
    links = next_link(rq, "snapshots", rows, limit)
    if links:
        out["snapshots_links"] = links
    if version(rq, "3.45") and (rq.query.get("with_count") or "").lower() in ("true", "1"):
        out["count"] = total
    return out


def list_snapshots(rq: ApiRequest) -> Any:
    return _listing(rq, False)


def list_detail(rq: ApiRequest) -> Any:
    return _listing(rq, True)


def create(rq: ApiRequest) -> Any:
    data = body(rq, "snapshot")
    authorize(rq, "volume:create_snapshot")
    volume_id = data.get("volume_id")
    if not volume_id:
        raise errors.InvalidInput(reason="'volume_id' must be specified")
    volume = volumes.get_volume(rq.db, rq.ctx, str(volume_id))
    force = data.get("force", False)
    try:
        from stackling.common.listing import to_bool

        force = to_bool(force)
    except ValueError:
        raise errors.InvalidInput(reason=f"Invalid value '{force}' for force.") from None
    if version(rq, "3.66"):
        force = True  # snapshots of in-use volumes need no force from 3.66
    snap = snapshots.create_snapshot(rq.db, rq.ctx, rq.settings, volume,
                                     name=data.get("name", data.get("display_name")),
                                     description=data.get("description",
                                                          data.get("display_description")),
                                     force=force, metadata=data.get("metadata"))
    _wake(rq)
    return json_response({"snapshot": view(rq, snap)}, 202)


def show(rq: ApiRequest) -> Any:
    return {"snapshot": view(rq, _snap(rq, "volume:get_snapshot"))}


def update(rq: ApiRequest) -> Any:
    data = body(rq, "snapshot")
    snap = _snap(rq, "volume:update_snapshot")
    fields = {}
    for key, alias in (("name", "display_name"), ("description", "display_description")):
        if key in data or alias in data:
            fields[key] = data.get(key, data.get(alias))
    if not fields:
        raise errors.InvalidInput(reason="Must specify name or description")
    snapshots.update_snapshot(rq.db, snap, fields)
    return {"snapshot": view(rq, snap)}


def delete(rq: ApiRequest) -> Any:
    snapshots.delete_snapshot(rq.db, _snap(rq, "volume:delete_snapshot"))
    _wake(rq)
    return no_content(202)


def get_metadata(rq: ApiRequest) -> Any:
    return {"metadata": dict(_snap(rq, "volume:get_snapshot_metadata").metadata_ or {})}


def create_metadata(rq: ApiRequest) -> Any:
    data = body(rq)
    snap = _snap(rq, "volume:update_snapshot_metadata")
    return {"metadata": snapshots.set_metadata(rq.db, snap, (data or {}).get("metadata"),
                                               replace=False)}


def replace_metadata(rq: ApiRequest) -> Any:
    data = body(rq)
    snap = _snap(rq, "volume:update_snapshot_metadata")
    return {"metadata": snapshots.set_metadata(rq.db, snap, (data or {}).get("metadata"),
                                               replace=True)}


def get_metadata_key(rq: ApiRequest) -> Any:
    snap = _snap(rq, "volume:get_snapshot_metadata")
    key = rq.path_params["key"]
    if key not in (snap.metadata_ or {}):
        raise errors.SnapshotMetadataNotFound(snapshot_id=snap.id, metadata_key=key)
    return {"meta": {key: snap.metadata_[key]}}


def set_metadata_key(rq: ApiRequest) -> Any:
    data = body(rq)
    snap = _snap(rq, "volume:update_snapshot_metadata")
    meta = (data or {}).get("meta")
    if not isinstance(meta, dict) or list(meta) != [rq.path_params["key"]]:
        raise errors.InvalidInput(reason="Request body and URI mismatch")
    snapshots.set_metadata(rq.db, snap, meta, replace=False)
    return {"meta": meta}


def delete_metadata_key(rq: ApiRequest) -> Any:
    snap = _snap(rq, "volume:delete_snapshot_metadata")
    snapshots.delete_metadata_key(rq.db, snap, rq.path_params["key"])
    return json_response({}, 200)


def action(rq: ApiRequest) -> Any:
    data = body(rq)
    if not isinstance(data, dict) or len(data) != 1:
        raise errors.InvalidInput(reason="There is no such action")
    name, args = next(iter(data.items()))
    args = args if isinstance(args, dict) else {}
    if name == "os-reset_status":
        snap = _snap(rq, "volume_extension:snapshot_admin_actions:reset_status")
        snapshots.reset_status(rq.db, snap, args.get("status"))
    elif name == "os-force_delete":
        snap = _snap(rq, "volume_extension:snapshot_admin_actions:force_delete")
        snapshots.delete_snapshot(rq.db, snap, force=True)
        _wake(rq)
    elif name == "os-update_snapshot_status":
        snap = _snap(rq, "snapshot_extension:snapshot_actions:update_snapshot_status")
        snapshots.update_status(rq.db, snap, args.get("status"), args.get("progress"))
    else:
        raise errors.InvalidInput(reason=f"There is no such action: {name}")
    return no_content(202)


def register(service: Service) -> None:
    add(service, "/snapshots", get=list_snapshots, post=create)
    add(service, "/snapshots/detail", get=list_detail)
    add(service, "/snapshots/{snapshot_id}", get=show, put=update, delete=delete)
    add(service, "/snapshots/{snapshot_id}/action", post=action)
    add(service, "/snapshots/{snapshot_id}/metadata", get=get_metadata, post=create_metadata,
        put=replace_metadata)
    add(service, "/snapshots/{snapshot_id}/metadata/{key}", get=get_metadata_key,
        put=set_metadata_key, delete=delete_metadata_key)
