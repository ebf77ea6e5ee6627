"""os-server-password: the encrypted admin password a guest posts to the metadata
service (Nova keeps it in the instance's system metadata).

No guest here posts one (cloud-init's Windows password step is what does upstream), so
a server's password is always Nova's answer for a guest that has not: an empty string;
clearing it is the 204 Nova answers either way.
"""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, no_content
from stackling.compute import servers
from stackling.compute.api.common import authorize
from stackling.compute.api.server_views import target

POLICIES = {
    "os_compute_api:os-server-password:show": "rule:context_is_admin or rule:project_reader_api",
    "os_compute_api:os-server-password:clear": "rule:context_is_admin or rule:project_member_api",
}


def show(rq: ApiRequest) -> Any:
    inst = servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"])
    authorize(rq, "os-server-password:show", target(inst))
    return {"password": ""}


def clear(rq: ApiRequest) -> Any:
    inst = servers.get_instance(rq.db, rq.ctx, rq.path_params["server_id"])
    authorize(rq, "os-server-password:clear", target(inst))
    return no_content()


def add_routes(s: Any) -> None:
    s.add("/v2.1/servers/{server_id}/os-server-password", get=show, delete=clear)
