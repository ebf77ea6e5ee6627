"""/v3/attachments (3.27+): create (reserve, or connect with a connector), show, list,
update (connect), delete (detach), and os-complete (3.44)."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import attachments, backend, errors, volumes
from stackling.block_storage.api.common import add, all_tenants, authorize, body, time, version
from stackling.block_storage.models import Attachment
from stackling.common.http import ApiRequest, Service, json_response, no_content


def view(att: Attachment, detail: bool = True) -> dict[str, Any]:
    v: dict[str, Any] = {"id": att.id, "status": att.attach_status,
                         "instance": att.instance_uuid, "volume_id": att.volume_id}
    if detail:
        v.update(attached_at=time(att.attach_time) or "", detached_at=time(att.detach_time) or "",
                 attach_mode=att.attach_mode, connection_info=att.connection_info)
    return v


def _since(rq: ApiRequest, at_least: str = "3.27") -> None:
    if not version(rq, at_least):
        raise errors.NotFound("The resource could not be found.")


def _attachment(rq: ApiRequest, action: str) -> tuple[Attachment, Any]:
    att = attachments.get_attachment(rq.db, rq.ctx, rq.path_params["attachment_id"])
    volume = volumes.get_volume(rq.db, rq.ctx, att.volume_id)
    authorize(rq, action, volume.project_id)
    return att, volume


def _listing(rq: ApiRequest, detail: bool) -> Any:
    _since(rq)
    authorize(rq, "volume:get_all")
    rows = attachments.list_attachments(rq.db, rq.ctx, dict(rq.query.items()),
                                        all_tenants=all_tenants(rq))
    return {"attachments": [view(a, detail) for a in rows]}


def list_attachments(rq: ApiRequest) -> Any:
    return _listing(rq, False)


def list_detail(rq: ApiRequest) -> Any:
    return _listing(rq, True)


def show(rq: ApiRequest) -> Any:
    _since(rq)
    att, _ = _attachment(rq, "volume:get")
    return {"attachment": view(att)}


def create(rq: ApiRequest) -> Any:
    _since(rq)
    data = body(rq, "attachment")
    authorize(rq, "volume:attachment_create")
    volume_id = data.get("volume_uuid")
    if not volume_id:
        raise errors.InvalidInput(reason="Must specify 'volume_uuid'")
    volume = volumes.get_volume(rq.db, rq.ctx, str(volume_id))
    authorize(rq, "volume:attachment_create", volume.project_id)
    mode = data.get("mode") if version(rq, "3.54") else None
    if mode not in (None, "rw", "ro"):
        raise errors.InvalidInput(reason=f"Invalid attach mode {mode}")
    if volume.multiattach and volume.status == "in-use" and volume.bootable:
        authorize(rq, "volume:multiattach_bootable_volume", volume.project_id)
    att = attachments.reserve(rq.db, volume, data.get("instance_uuid"), mode=mode or "null")
    connector = data.get("connector")
    if connector:
        attachments.connect(rq.db, backend.driver_for(rq.settings), volume, att, connector)
    return json_response({"attachment": view(att)}, 200)


def update(rq: ApiRequest) -> Any:
    _since(rq)
    data = body(rq, "attachment")
    att, volume = _attachment(rq, "volume:attachment_update")
    connector = data.get("connector")
    if not isinstance(connector, dict):
        raise errors.InvalidInput(reason="Must specify 'connector'")
    attachments.connect(rq.db, backend.driver_for(rq.settings), volume, att, connector)
    return {"attachment": view(att)}


def delete(rq: ApiRequest) -> Any:
    _since(rq)
    att, volume = _attachment(rq, "volume:attachment_delete")
    attachments.delete(rq.db, backend.driver_for(rq.settings), volume, att)
    return {"attachments": []}


def action(rq: ApiRequest) -> Any:
    _since(rq, "3.44")
    data = body(rq)
    if not isinstance(data, dict) or "os-complete" not in data:
        raise errors.InvalidInput(reason="There is no such action")
    att, volume = _attachment(rq, "volume:attachment_complete")
    attachments.complete(rq.db, volume, att)
    return no_content(204)


def register(service: Service) -> None:
    add(service, "/attachments", get=list_attachments, post=create)
    add(service, "/attachments/detail", get=list_detail)
    add(service, "/attachments/{attachment_id}", get=show, put=update, delete=delete)
    add(service, "/attachments/{attachment_id}/action", post=action)
