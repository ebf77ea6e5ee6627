"""/servers/{id}/shares (2.97): Manila shares attached to a server through virtiofs.

There is no Manila here and the simulated hosts have no virtiofs (no
COMPUTE_STORAGE_VIRTIO_FS trait), so no share is ever attached: the list is empty, a
share is not found, and an attach to a stopped server gets the 409 Nova answers when the
host or the instance is not configured for shares. Policies and state checks are Nova's.
"""

from __future__ import annotations

from typing import Any

from stackling.common.errors import Conflict, NotFound
from stackling.common.http import ApiRequest
from stackling.compute import servers
from stackling.compute.api.common import authorize, body, known_query, since
from stackling.compute.errors import InstanceInvalidState
from stackling.compute.models import Instance

READER = "rule:context_is_admin or rule:project_reader_api"
MEMBER = "rule:context_is_admin or rule:project_member_api"
POLICIES = {
    "os_compute_api:os-server-shares:index": READER,
    "os_compute_api:os-server-shares:create": MEMBER,
    "os_compute_api:os-server-shares:show": READER,
    "os_compute_api:os-server-shares:delete": MEMBER,
}

CREATE = {"type": "object", "properties": {"share": {
    "type": "object",
    "properties": {"share_id": {"type": "string", "format": "uuid"},
                   "tag": {"type": "string", "minLength": 1, "maxLength": 255,
                           "pattern": "^[a-zA-Z0-9-]*$"}},
    "required": ["share_id"], "additionalProperties": False}},
    "required": ["share"], "additionalProperties": False}


class ShareNotFound(NotFound):
    message = "Share %(share_id)s could not be found."


class SharesNotConfigured(Conflict):
    message = ("Feature not supported because either compute or instance are not configured "
               "correctly.")


def _server(rq: ApiRequest, action: str) -> Instance:
    since(rq, "2.97")
    inst = servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"])
    authorize(rq, f"os-server-shares:{action}", {"project_id": inst.project_id})
    return inst


def _check_state(inst: Instance, method: str, allowed: tuple[str, ...]) -> None:
    if inst.vm_state not in allowed:
        raise InstanceInvalidState(method=method, instance_uuid=inst.uuid, attr="vm_state",
                                   state=inst.vm_state)


def index(rq: ApiRequest) -> Any:
    _server(rq, "index")
    known_query(rq, set())
    return {"shares": []}


def create(rq: ApiRequest) -> Any:
    inst = _server(rq, "create")
    body(rq, CREATE)
    _check_state(inst, "create share", ("stopped",))
    raise SharesNotConfigured()


def show(rq: ApiRequest) -> Any:
    _server(rq, "show")
    known_query(rq, set())
    raise ShareNotFound(share_id=rq.path_params["share_id"])


def delete(rq: ApiRequest) -> Any:
    inst = _server(rq, "delete")
    _check_state(inst, "delete share", ("stopped", "error"))
    raise ShareNotFound(share_id=rq.path_params["share_id"])


def add_routes(s: Any) -> None:
    s.add("/v2.1/servers/{server_id}/shares", get=index, post=create)
    s.add("/v2.1/servers/{server_id}/shares/{share_id}", get=show, delete=delete)
