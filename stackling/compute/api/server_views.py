"""A server's view for /servers and its actions, with the field policies applied."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.compute import block_devices, network_proxy, server_groups, views
from stackling.compute.api.common import allowed, links, version
from stackling.compute.models import Instance


def target(inst: Instance) -> dict[str, Any]:
    return {"project_id": inst.project_id, "user_id": inst.user_id}


def detail(rq: ApiRequest, inst: Instance, *, full: bool = True,
           floating: dict[str, list[tuple[str, str]]] | None = None,
           shown: dict[tuple[str, str], tuple[bool, bool, bool]] | None = None,
           with_groups: bool = False,
           volumes: dict[str, list[tuple[str, bool]]] | None = None) -> dict[str, Any]:
    """The server as the caller may see it (the field policies checked once per owner
    when `shown` is shared across a list); `with_groups`: show, update and rebuild carry
    the server's group (2.71)."""
    if floating is None:
        floating = network_proxy.floating_by_port(rq.db, [inst])
    if volumes is None:
        volumes = attached(rq, [inst])
    # The three field policies depend only on the server's project and user: a list
    # checks them once per owner, not once per server.
    key = (inst.project_id, inst.user_id)
    flags = None if shown is None else shown.get(key)
    if flags is None:
        target_ = target(inst)
        flags = (allowed(rq, "os-extended-server-attributes", target_),
                 allowed(rq, "servers:show:host_status", target_),
                 allowed(rq, "servers:show:flavor-extra-specs", target_))
        if shown is not None:
            shown[key] = flags
    return views.server_detail(
        links(rq), inst, version(rq), is_admin=rq.ctx.is_admin,
        show_extended_attrs=flags[0], show_host_status=flags[1], full=full,
        show_flavor_extra_specs=flags[2], floating=floating,
        server_groups=_groups(rq, inst) if with_groups else None,
        volumes=volumes.get(inst.uuid, []))


def attached(rq: ApiRequest, insts: list[Instance]) -> dict[str, list[tuple[str, bool]]]:
    """os-extended-volumes:volumes_attached for a page of servers (one query)."""
    rows = block_devices.volume_mappings(rq.db, [i.uuid for i in insts])
    return {u: [(r.volume_id or "", r.delete_on_termination) for r in rs]
            for u, rs in rows.items()}


def _groups(rq: ApiRequest, inst: Instance) -> list[str] | None:
    if not version(rq).matches("2.71"):
        return None
    group = server_groups.group_of(rq.db, inst.uuid)
    return [group] if group else []
