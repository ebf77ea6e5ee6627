"""/servers/{id}/os-volume_attachments: list, show, attach, update/swap, detach."""

from __future__ import annotations

import copy
from typing import Any

from stackling.block_storage import interface as cinder
from stackling.common.http import ApiRequest
from stackling.compute import servers, volume_attachments
from stackling.compute.api.common import authorize, body, known_query, page_limit, version
from stackling.compute.errors import InstanceInvalidState
from stackling.compute.models import BlockDeviceMapping, Instance
from stackling.compute.schemas import BOOLEAN, TAG

READER = "rule:context_is_admin or rule:project_reader_api"
MEMBER = "rule:context_is_admin or rule:project_member_api"
ROOT = "os_compute_api:os-volumes-attachments:"
POLICIES = {
    ROOT + "index": READER,
    ROOT + "create": MEMBER,
    ROOT + "show": READER,
    ROOT + "update": MEMBER,
    ROOT + "swap": "rule:context_is_admin or rule:service_api",
    ROOT + "delete": MEMBER,
}

_DEVICE = {"type": ["string", "null"],
           "pattern": "(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$"}
_VOLUME_ID = {"type": "string", "format": "uuid"}
CREATE: dict[str, Any] = {
    "type": "object",
    "properties": {"volumeAttachment": {
        "type": "object",
        "properties": {"volumeId": _VOLUME_ID, "device": _DEVICE},
        "required": ["volumeId"], "additionalProperties": False}},
    "required": ["volumeAttachment"], "additionalProperties": False}
CREATE_2_49 = copy.deepcopy(CREATE)
CREATE_2_49["properties"]["volumeAttachment"]["properties"]["tag"] = TAG
CREATE_2_79 = copy.deepcopy(CREATE_2_49)
CREATE_2_79["properties"]["volumeAttachment"]["properties"]["delete_on_termination"] = BOOLEAN
UPDATE = copy.deepcopy(CREATE)
del UPDATE["properties"]["volumeAttachment"]["properties"]["device"]
UPDATE_2_85 = copy.deepcopy(CREATE_2_79)
UPDATE_2_85["properties"]["volumeAttachment"]["properties"].update(
    serverId={"type": "string", "format": "uuid"}, id={"type": "string", "format": "uuid"})


def _server(rq: ApiRequest, action: str, *, lock: bool = False) -> Instance:
    inst = servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"], for_update=lock)
    authorize(rq, f"os-volumes-attachments:{action}", {"project_id": inst.project_id})
    return inst


def _view(rq: ApiRequest, row: BlockDeviceMapping) -> dict[str, Any]:
    mv = version(rq)
    out: dict[str, Any] = {} if mv.matches("2.89") else {"id": row.volume_id}
    out["volumeId"], out["serverId"] = row.volume_id, row.instance_uuid
    if row.device_name:
        out["device"] = row.device_name
    if mv.matches("2.70"):
        out["tag"] = row.tag
    if mv.matches("2.79"):
        out["delete_on_termination"] = row.delete_on_termination
    if mv.matches("2.89"):
        out["attachment_id"], out["bdm_uuid"] = row.attachment_id, row.uuid
    return out


def _shelved_before_2_20(rq: ApiRequest, inst: Instance, method: str) -> None:
    if inst.vm_state in ("shelved", "shelved_offloaded") and not version(rq).matches("2.20"):
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr="vm_state",
                                   state=inst.vm_state)


def index(rq: ApiRequest) -> Any:
    inst = _server(rq, "index")
    known_query(rq, {"limit", "offset"})
    rows = volume_attachments.list_attachments(rq.db, inst)
    if version(rq).matches("2.89"):
        rows = [r for r in rows if r.attachment_id is not None]
    offset = int(rq.query.get("offset") or 0)
    limit = page_limit(rq)
    rows = rows[offset:] if limit is None else rows[offset:offset + limit]
    return {"volumeAttachments": [_view(rq, r) for r in rows]}


index.query_params = frozenset({"limit", "offset"})  # type: ignore[attr-defined]


def show(rq: ApiRequest) -> Any:
    inst = _server(rq, "show")
    row = volume_attachments.mapping(rq.db, inst, rq.path_params["volume_id"])
    return {"volumeAttachment": _view(rq, row)}


def create(rq: ApiRequest) -> Any:
    inst = _server(rq, "create", lock=True)
    data = body(rq, {"2.1": CREATE, "2.49": CREATE_2_49, "2.79": CREATE_2_79},
                versioned=True)["volumeAttachment"]
    _shelved_before_2_20(rq, inst, "attach_volume")
    row = volume_attachments.attach(
        rq.db, rq.ctx, inst, data["volumeId"], tag=data.get("tag"),
        delete_on_termination=bool(data.get("delete_on_termination", False)))
    rq.after_commit(lambda: cinder.wake(rq.runtime))
    if version(rq).matches("2.101"):
        return 202, None
    out: dict[str, Any] = {"id": row.volume_id, "serverId": inst.uuid,
                           "volumeId": row.volume_id, "device": row.device_name}
    if version(rq).matches("2.70"):
        out["tag"] = row.tag
    if version(rq).matches("2.79"):
        out["delete_on_termination"] = row.delete_on_termination
    return {"volumeAttachment": out}


def update(rq: ApiRequest) -> Any:
    inst = servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"], for_update=True)
    data = body(rq, {"2.1": UPDATE, "2.85": UPDATE_2_85}, versioned=True)["volumeAttachment"]
    old_id, new_id = rq.path_params["volume_id"], data["volumeId"]
    only_swap = not version(rq).matches("2.85")
    if only_swap or old_id != new_id:
        authorize(rq, "os-volumes-attachments:swap", {})
    else:
        authorize(rq, "os-volumes-attachments:update", {"project_id": inst.project_id})
    if not only_swap:
        volume_attachments.update(rq.db, rq.ctx, inst, old_id, data)
    if only_swap or old_id != new_id:
        volume_attachments.swap(rq.db, rq.ctx, inst, old_id, new_id)
    return 202, None


def delete(rq: ApiRequest) -> Any:
    inst = _server(rq, "delete", lock=True)
    _shelved_before_2_20(rq, inst, "detach_volume")
    volume_attachments.detach(rq.db, rq.ctx, inst, rq.path_params["volume_id"])
    return 202, None


def add_routes(s: Any) -> None:
    s.add("/v2.1/servers/{server_id}/os-volume_attachments", get=index, post=create)
    s.add("/v2.1/servers/{server_id}/os-volume_attachments/{volume_id}", get=show,
          put=update, delete=delete)
