"""`/v2.0/ports[/{port_id}]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.core import ports


def list_ports(rq: ApiRequest) -> Any:
    params = common.list_params(rq, ports.LISTING)
    page = ports.list_ports(rq.db, rq.ctx, params)
    return common.list_body(rq, "ports", ports.render(rq.db, rq.ctx, page.rows), params, page)


def show_port(rq: ApiRequest) -> Any:
    port = ports.get_visible(rq.db, rq.ctx, rq.path_params["port_id"])
    return common.show_body(rq, "port", ports.render(rq.db, rq.ctx, [port])[0])


def create_port(rq: ApiRequest) -> Any:
    return common.create(rq, "port", "ports", ports.ATTRS,
                         lambda attrs: ports.create_port(rq.db, rq.ctx, attrs),
                         lambda objs: ports.render(rq.db, rq.ctx, objs))


def update_port(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "port", ports.ATTRS)
    port = ports.update_port(rq.db, rq.ctx, rq.path_params["port_id"], attrs,
                             common.if_match(rq))
    return {"port": ports.render(rq.db, rq.ctx, [port])[0]}


def delete_port(rq: ApiRequest) -> Any:
    ports.delete_port(rq.db, rq.ctx, rq.path_params["port_id"], common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/ports", get=list_ports, post=create_port)
    s.add("/v2.0/ports/{port_id}", get=show_port, put=update_port, delete=delete_port)
