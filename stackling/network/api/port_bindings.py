"""`/v2.0/ports/{port_id}/bindings[/{host}[/activate]]` (`binding-extended`; the port
placeholder is named apart from `/ports/{port_id}`, as the policy matrix fills it with a
compute port)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network import errors
from stackling.network.api import common
from stackling.network.attributes import items_of, parse_create
from stackling.network.port_bindings import bindings


def list_bindings(rq: ApiRequest) -> Any:
    filters: dict[str, list[str]] = {}
    for key in rq.query.keys():
        if key == "fields":
            continue
        if key not in bindings.FILTERS:
            raise errors.BadRequest(f"{key} is invalid attribute for filtering")
        filters[key] = rq.query.getlist(key)
    items = bindings.list_bindings(rq.db, rq.ctx, rq.path_params["binding_port_id"], filters)
    return {"bindings": [select_fields(i, common.fields_of(rq)) for i in items]}


def show_binding(rq: ApiRequest) -> Any:
    _, view = bindings.get_binding(rq.db, rq.ctx, rq.path_params["binding_port_id"],
                                   rq.path_params["host"])
    return common.show_body(rq, "binding", view)


def create_binding(rq: ApiRequest) -> Any:
    body = rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")
    items, _ = items_of(body, "binding", "bindings", allow_bulk=False)
    attrs = parse_create(rq.ctx, items[0], bindings.ATTRS)
    return 201, {"binding": bindings.create_binding(rq.db, rq.ctx, rq.path_params["binding_port_id"],
                                                    attrs)}


def activate_binding(rq: ApiRequest) -> Any:
    return {"binding": bindings.activate(rq.db, rq.ctx, rq.path_params["binding_port_id"],
                                         rq.path_params["host"])}


def delete_binding(rq: ApiRequest) -> Any:
    bindings.delete_binding(rq.db, rq.ctx, rq.path_params["binding_port_id"], rq.path_params["host"])


def register(s: Service) -> None:
    s.add("/v2.0/ports/{binding_port_id}/bindings", get=list_bindings, post=create_binding)
    s.add("/v2.0/ports/{binding_port_id}/bindings/{host}", get=show_binding, delete=delete_binding)
    s.add("/v2.0/ports/{binding_port_id}/bindings/{host}/activate", put=activate_binding)
