"""/v3/volumes: CRUD, detail, summary (3.12), metadata, and the volume actions."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import attachments, backend, errors, groups, volumes, work
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
from stackling.block_storage.models import Attachment, Volume, VolumeType
from stackling.common.http import ApiRequest, Service, json_response


def _links(rq: ApiRequest, kind: str, item_id: str) -> list[dict[str, str]]:
    base = rq.service_url
    project = rq.ctx.project_id
    return [{"href": f"{base}/v3/{project}/{kind}/{item_id}", "rel": "self"},
            {"href": f"{base}/{project}/{kind}/{item_id}", "rel": "bookmark"}]


def view(rq: ApiRequest, volume: Volume, atts: list[Attachment],
         type_names: dict[str, str]) -> dict[str, Any]:
    v: dict[str, Any] = {
        "id": volume.id, "status": volume.status, "size": volume.size,
        "availability_zone": volume.availability_zone, "created_at": time(volume.created_at),
        "updated_at": time(volume.updated_at), "name": volume.name,
        "description": volume.description,
        "volume_type": type_names.get(volume.volume_type_id, volume.volume_type_id),
        "snapshot_id": volume.snapshot_id, "source_volid": volume.source_volid,
        "metadata": dict(volume.metadata_ or {}), "links": _links(rq, "volumes", volume.id),
        "user_id": volume.user_id, "bootable": str(bool(volume.bootable)).lower(),
        "encrypted": False, "replication_status": None, "consistencygroup_id": None,
        "multiattach": volume.multiattach,
        "attachments": [{
            "id": a.volume_id, "attachment_id": a.id, "volume_id": a.volume_id,
            "server_id": a.instance_uuid,
            "host_name": a.attached_host if rq.ctx.is_admin else None,
            "device": a.mountpoint, "attached_at": time(a.attach_time)}
            for a in atts if a.attach_status == "attached"],
    }
    if rq.ctx.is_admin:
        v["migration_status"] = volume.migration_status
    if allowed(rq, "volume_extension:volume_tenant_attribute", volume.project_id):
        v["os-vol-tenant-attr:tenant_id"] = volume.project_id
    if allowed(rq, "volume_extension:volume_host_attribute", volume.project_id):
        v["os-vol-host-attr:host"] = volume.host
    if allowed(rq, "volume_extension:volume_mig_status_attribute", volume.project_id):
        v["os-vol-mig-status-attr:migstat"] = volume.migration_status
        v["os-vol-mig-status-attr:name_id"] = None
    if volume.image_metadata:
        v["volume_image_metadata"] = dict(volume.image_metadata)
    if version(rq, "3.13"):
        v["group_id"] = groups.group_of(rq.db, volume.id)
    if version(rq, "3.21") and rq.ctx.is_admin:
        v["provider_id"] = None
    if version(rq, "3.48"):
        v["shared_targets"] = False
        v["service_uuid"] = None
    if version(rq, "3.61") and rq.ctx.is_admin:
        v["cluster_name"] = None
    if version(rq, "3.63"):
        v["volume_type_id"] = volume.volume_type_id
    if version(rq, "3.65"):
        v["consumes_quota"] = True
    return v


def _type_names(rq: ApiRequest) -> dict[str, str]:
    from sqlalchemy import select

    return dict(rq.db.execute(select(VolumeType.id, VolumeType.name)).all())


def _show(rq: ApiRequest, volume: Volume) -> dict[str, Any]:
    atts = volumes.attachments_of(rq.db, [volume.id])[volume.id]
    return view(rq, volume, atts, _type_names(rq))


def _volume(rq: ApiRequest, action: str) -> Volume:
    volume = volumes.get_volume(rq.db, rq.ctx, rq.path_params["volume_id"])
    authorize(rq, action, volume.project_id)
    return volume


def _driver(rq: ApiRequest) -> backend.FileDriver:
    return backend.driver_for(rq.settings)


def _wake(rq: ApiRequest) -> None:
    rq.after_commit(lambda: work.wake(rq.runtime))


# ------------------------------------------------------------------ collection
def _filters(rq: ApiRequest) -> dict[str, Any]:
    import ast

    out: dict[str, Any] = {}
    for key, value in rq.query.items():
        if key in ("all_tenants", "sort", "sort_key", "sort_dir", "limit", "marker", "offset",
                   "with_count", "is_public"):
            continue
        if key == "display_name":
            key = "name"
        if key in ("metadata", "image_metadata", "glance_metadata"):
            try:
                parsed = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                raise errors.InvalidInput(reason=f"Invalid filter {key}={value}") from None
            out["image_metadata" if key == "glance_metadata" else key] = parsed
            continue
        out[key] = value
    return out


def _list(rq: ApiRequest, detail: bool) -> Any:
    authorize(rq, "volume:get_all")
    sorts, limit, marker, offset = paging(rq, volumes.SORT_KEYS + ("display_name",))
    rows, total = volumes.list_volumes(rq.db, rq.ctx, _filters(rq), all_tenants=all_tenants(rq),
                                       sorts=sorts, limit=limit, marker=marker, offset=offset)
    if detail:
        atts = volumes.attachments_of(rq.db, [v.id for v in rows])
        names = _type_names(rq)
        items = [view(rq, v, atts[v.id], names) for v in rows]
    else:
        items = [{"id": v.id, "name": v.name, "links": _links(rq, "volumes", v.id)}
                 for v in rows]
    out: dict[str, Any] = {"volumes": items}
    links = next_link(rq, "volumes", rows, limit)
    if links:
        out["volumes_links"] = links
    if version(rq, "3.45") and (rq.query.get("with_count") or "").lower() in ("true", "1"):
        out["count"] = total
    return out


def list_volumes(rq: ApiRequest) -> Any:
    return _list(rq, detail=False)


def list_detail(rq: ApiRequest) -> Any:
    return _list(rq, detail=True)


def summary(rq: ApiRequest) -> Any:
    if not version(rq, "3.12"):
        raise errors.NotFound("The resource could not be found.")
    authorize(rq, "volume:get_all")
    result = volumes.summary(rq.db, rq.ctx, all_tenants(rq))
    if not version(rq, "3.36"):
        result.pop("metadata")
    return {"volume-summary": result}


def create(rq: ApiRequest) -> Any:
    data = body(rq, "volume")
    authorize(rq, "volume:create")
    size = data.get("size")
    if size is not None:
        try:
            size = int(size)
        except (TypeError, ValueError):
            raise errors.InvalidInput(reason=f"Invalid input for field/attribute size. Value: "
                                      f"{size}. {size!r} is not of type 'integer'") from None
        if size < 1:
            raise errors.InvalidInput(reason=f"Invalid input for field/attribute size. Value: "
                                      f"{size}. {size} is less than the minimum of 1")
    image = None
    image_ref = data.get("imageRef") or data.get("image_id")
    if image_ref:
        authorize(rq, "volume:create_from_image")
        from stackling.image import interface as images

        try:
            image = images.get_image(rq.db, rq.ctx, str(image_ref))
        except images.ImageNotFound:
            ids = images.image_ids_named(rq.db, rq.ctx, str(image_ref), 2)
            if len(ids) != 1:
                raise errors.InvalidInput(reason="Invalid image identifier or unable to "
                                          "access requested image.") from None
            image = images.get_image(rq.db, rq.ctx, ids[0])
        if image.status != "active":
            raise errors.InvalidInput(reason=f"Image {image.id} is not active.")
    if data.get("backup_id") and not version(rq, "3.47"):
        data.pop("backup_id")
    metadata = data.get("metadata") or {}
    volumes._check_metadata(metadata)
    volume = volumes.create_volume(
        rq.db, rq.ctx, rq.settings, size=size,
        name=data.get("name", data.get("display_name")),
        description=data.get("description", data.get("display_description")),
        volume_type=data.get("volume_type"), metadata=metadata,
        availability_zone=data.get("availability_zone"),
        snapshot_id=data.get("snapshot_id"), source_volid=data.get("source_volid"),
        backup_id=data.get("backup_id"), image=image,
        multiattach=bool(data.get("multiattach", False)))
    if data.get("group_id") and version(rq, "3.13"):
        groups.add_volume(rq.db, groups.get_group(rq.db, rq.ctx, str(data["group_id"])), volume)
    _wake(rq)
    return json_response({"volume": _show(rq, volume)}, 202)


# ------------------------------------------------------------------ member
def show(rq: ApiRequest) -> Any:
    return {"volume": _show(rq, _volume(rq, "volume:get"))}


def update(rq: ApiRequest) -> Any:
    data = body(rq, "volume")
    volume = _volume(rq, "volume:update")
    fields = {}
    for key, alias in (("name", "display_name"), ("description", "display_description")):
        if key in data or alias in data:
            fields[key] = data.get(key, data.get(alias))
    if "metadata" in data:
        volumes._check_metadata(data["metadata"])
        fields["metadata"] = data["metadata"]
    if not fields:
        raise errors.InvalidInput(reason="Must specify one of name, description, metadata")
    volumes.update_volume(rq.db, volume, fields)
    return {"volume": _show(rq, volume)}


def delete(rq: ApiRequest) -> Any:
    volume = _volume(rq, "volume:delete")
    force = (rq.query.get("force") or "").lower() in ("true", "1") and version(rq, "3.23")
    cascade = (rq.query.get("cascade") or "").lower() in ("true", "1")
    if force:
        authorize(rq, "volume:force_delete", volume.project_id)
    volumes.delete_volume(rq.db, rq.ctx, volume, cascade=cascade, force=force)
    _wake(rq)
    return _accepted()


def _accepted() -> Any:
    from stackling.common.http import no_content

    return no_content(202)


# ------------------------------------------------------------------ metadata
def get_metadata(rq: ApiRequest) -> Any:
    volume = _volume(rq, "volume:get_volume_metadata")
    return {"metadata": dict(volume.metadata_ or {})}


def create_metadata(rq: ApiRequest) -> Any:
    data = body(rq)
    volume = _volume(rq, "volume:create_volume_metadata")
    meta = data.get("metadata") if isinstance(data, dict) else None
    return {"metadata": volumes.set_metadata(rq.db, volume, meta, replace=False)}


def replace_metadata(rq: ApiRequest) -> Any:
    data = body(rq)
    volume = _volume(rq, "volume:update_volume_metadata")
    meta = data.get("metadata") if isinstance(data, dict) else None
    return {"metadata": volumes.set_metadata(rq.db, volume, meta, replace=True)}


def get_metadata_key(rq: ApiRequest) -> Any:
    volume = _volume(rq, "volume:get_volume_metadata")
    key = rq.path_params["key"]
    if key not in (volume.metadata_ or {}):
        raise errors.VolumeMetadataNotFound(volume_id=volume.id, metadata_key=key)
    return {"meta": {key: volume.metadata_[key]}}


def set_metadata_key(rq: ApiRequest) -> Any:
    data = body(rq)
    volume = _volume(rq, "volume:update_volume_metadata")
    key = rq.path_params["key"]
    meta = data.get("meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict) or list(meta) != [key]:
        raise errors.InvalidInput(reason="Request body and URI mismatch")
    volumes.set_metadata(rq.db, volume, meta, replace=False)
    return {"meta": meta}


def delete_metadata_key(rq: ApiRequest) -> Any:
    volume = _volume(rq, "volume:delete_volume_metadata")
    volumes.delete_metadata_key(rq.db, volume, rq.path_params["key"])
    return json_response({}, 200)


# ------------------------------------------------------------------ actions
def action(rq: ApiRequest) -> Any:
    data = body(rq)
    if not isinstance(data, dict) or len(data) != 1:
        raise errors.InvalidInput(reason="There is no such action")
    name, args = next(iter(data.items()))
    handler = ACTIONS.get(name)
    if handler is None:
        raise errors.InvalidInput(reason=f"There is no such action: {name}")
    return handler(rq, args if isinstance(args, dict) else {})


def _extend(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume:extend")
    attached = volume.status == "in-use"
    if attached:
        if not version(rq, "3.42"):
            raise errors.InvalidVolume(reason="Volume status must be available to extend.")
        authorize(rq, "volume:extend_attached_volume", volume.project_id)
    volumes.extend(rq.db, rq.ctx, rq.settings, volume, args.get("new_size"),
                   attached_ok=version(rq, "3.42"))
    _wake(rq)
    return _accepted()


def _retype(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume:retype")
    new_type = args.get("new_type")
    if not new_type:
        raise errors.InvalidInput(reason="New volume type must be specified.")
    volumes.retype(rq.db, rq.ctx, rq.settings, volume, str(new_type),
                   args.get("migration_policy") or "never")
    return _accepted()


def _bootable(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume:update")
    if "bootable" not in args:
        raise errors.InvalidInput(reason="Must specify bootable in request.")
    volumes.set_bootable(rq.db, volume, args["bootable"])
    return _ok()


def _ok() -> Any:
    from stackling.common.http import no_content

    return no_content(200)


def _readonly(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume:update_readonly_flag")
    if "readonly" not in args:
        raise errors.InvalidInput(reason="Must specify readonly in request.")
    volumes.set_readonly(rq.db, volume, args["readonly"])
    return _accepted()


def _reset_status(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_admin_actions:reset_status")
    if not any(k in args for k in ("status", "attach_status", "migration_status")):
        raise errors.InvalidInput(reason="Must specify 'status', 'attach_status' or "
                                  "'migration_status' for update.")
    volumes.reset_status(rq.db, volume, args)
    return _accepted()


def _force_delete(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_admin_actions:force_delete")
    volumes.delete_volume(rq.db, rq.ctx, volume, cascade=True, force=True)
    _wake(rq)
    return _accepted()


def _force_detach(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_admin_actions:force_detach")
    attachments.legacy_detach(rq.db, _driver(rq), volume, args.get("attachment_id"))
    return _accepted()


def _set_image_metadata(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_image_metadata:set")
    meta = args.get("metadata")
    return {"metadata": volumes.set_image_metadata(rq.db, volume, meta)}


def _unset_image_metadata(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_image_metadata:remove")
    key = args.get("key")
    if not isinstance(key, str):
        raise errors.InvalidInput(reason="Must specify 'key'")
    volumes.unset_image_metadata(rq.db, volume, key)
    return _ok()


def _show_image_metadata(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_image_metadata:show")
    return {"metadata": dict(volume.image_metadata or {})}


def _reserve(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:reserve")
    attachments.legacy_reserve(rq.db, rq.ctx, volume)
    return _accepted()


def _unreserve(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:unreserve")
    attachments.legacy_unreserve(rq.db, volume)
    return _accepted()


def _attach(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:attach")
    attachments.legacy_attach(rq.db, _driver(rq), volume, args)
    return _accepted()


def _begin_detaching(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:begin_detaching")
    attachments.begin_detaching(rq.db, volume)
    return _accepted()


def _roll_detaching(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:roll_detaching")
    attachments.roll_detaching(rq.db, volume)
    return _accepted()


def _detach(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:detach")
    attachments.legacy_detach(rq.db, _driver(rq), volume, args.get("attachment_id"))
    return _accepted()


def _initialize_connection(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:initialize_connection")
    info = attachments.initialize_connection(rq.db, rq.ctx, _driver(rq), volume,
                                             args.get("connector"))
    return {"connection_info": info}


def _terminate_connection(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:terminate_connection")
    attachments.terminate_connection(rq.db, _driver(rq), volume, args.get("connector") or {})
    return _accepted()


def _revert(rq: ApiRequest, args: dict[str, Any]) -> Any:
    if not version(rq, "3.40"):
        raise errors.InvalidInput(reason="There is no such action: revert")
    volume = _volume(rq, "volume:revert_to_snapshot")
    from sqlalchemy import select

    from stackling.block_storage.models import Snapshot

    latest = rq.db.scalar(select(Snapshot).where(Snapshot.volume_id == volume.id)
                          .order_by(Snapshot.created_at.desc()).limit(1))
    if latest is None or latest.id != args.get("snapshot_id"):
        raise errors.InvalidSnapshot(reason="Cinder only supports reverting a volume to its "
                                     "latest snapshot.")
    if volume.status != "available" or latest.status != "available":
        raise errors.InvalidVolume(reason="Volume and snapshot must be available to revert")
    _driver(rq).revert_to_snapshot(volume.id, latest.id, volume.size)
    return _accepted()


def _upload_image(rq: ApiRequest, args: dict[str, Any]) -> Any:
    volume = _volume(rq, "volume_extension:volume_actions:upload_image")
    volumes.upload_check(volume, bool(args.get("force")))
    from stackling.block_storage import uploads

    image = uploads.upload_to_image(rq.db, rq.ctx, _driver(rq), volume, args,
                                    public_allowed=allowed(
                                        rq, "volume_extension:volume_actions:upload_public"),
                                    since_3_1=version(rq, "3.1"))
    _wake(rq)
    return json_response({"os-volume_upload_image": image}, 202)


def _reimage(rq: ApiRequest, args: dict[str, Any]) -> Any:
    if not version(rq, "3.68"):
        raise errors.InvalidInput(reason="There is no such action: os-reimage")
    volume = _volume(rq, "volume:reimage")
    reserved = str(args.get("reimage_reserved", False)).lower() in ("true", "1", "yes")
    if reserved:
        authorize(rq, "volume:reimage_reserved", volume.project_id)
    from stackling.image import interface as images

    try:
        image = images.get_image(rq.db, rq.ctx, str(args.get("image_id") or ""))
    except images.ImageNotFound:
        raise errors.ImageNotFound(image_id=args.get("image_id")) from None
    volumes.reimage(rq.db, volume, image, reserved=reserved)
    _wake(rq)
    return _accepted()


def _extend_completion(rq: ApiRequest, args: dict[str, Any]) -> Any:
    if not version(rq, "3.71"):
        raise errors.InvalidInput(reason="There is no such action: "
                                  "os-extend_volume_completion")
    volume = _volume(rq, "volume:extend_volume_completion")
    if volume.status != "extending":
        raise errors.InvalidVolume(reason=f"Volume {volume.id} is not being extended.")
    # The file backend's extend finishes by itself (work.py): Nova's report changes nothing.
    return _accepted()


ACTIONS = {
    "os-extend": _extend, "os-retype": _retype, "os-set_bootable": _bootable,
    "os-update_readonly_flag": _readonly, "os-reset_status": _reset_status,
    "os-force_delete": _force_delete, "os-force_detach": _force_detach,
    "os-set_image_metadata": _set_image_metadata,
    "os-unset_image_metadata": _unset_image_metadata,
    "os-show_image_metadata": _show_image_metadata, "os-reserve": _reserve,
    "os-unreserve": _unreserve, "os-attach": _attach, "os-begin_detaching": _begin_detaching,
    "os-roll_detaching": _roll_detaching, "os-detach": _detach,
    "os-initialize_connection": _initialize_connection,
    "os-terminate_connection": _terminate_connection, "revert": _revert,
    "os-volume_upload_image": _upload_image, "os-reimage": _reimage,
    "os-extend_volume_completion": _extend_completion,
}


def register(service: Service) -> None:
    add(service, "/volumes", get=list_volumes, post=create)
    add(service, "/volumes/detail", get=list_detail)
    add(service, "/volumes/summary", get=summary)
    add(service, "/volumes/{volume_id}", get=show, put=update, delete=delete)
    add(service, "/volumes/{volume_id}/action", post=action)
    add(service, "/volumes/{volume_id}/metadata", get=get_metadata, post=create_metadata,
        put=replace_metadata)
    add(service, "/volumes/{volume_id}/metadata/{key}", get=get_metadata_key,
        put=set_metadata_key, delete=delete_metadata_key)
