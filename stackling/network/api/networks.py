"""`/v2.0/networks[/{network_id}]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.core import networks


def list_networks(rq: ApiRequest) -> Any:
    params = common.list_params(rq, networks.LISTING)
    page = networks.list_networks(rq.db, rq.ctx, params)
    return common.list_body(rq, "networks", networks.render(rq.db, rq.ctx, page.rows),
                            params, page)


def show_network(rq: ApiRequest) -> Any:
    net = networks.get_visible(rq.db, rq.ctx, rq.path_params["network_id"])
    return common.show_body(rq, "network", networks.render(rq.db, rq.ctx, [net])[0])


def create_network(rq: ApiRequest) -> Any:
    return common.create(rq, "network", "networks", networks.ATTRS,
                         lambda attrs: networks.create_network(rq.db, rq.ctx, attrs),
                         lambda objs: networks.render(rq.db, rq.ctx, objs), allow_empty=True)


def update_network(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "network", networks.ATTRS)
    net = networks.update_network(rq.db, rq.ctx, rq.path_params["network_id"], attrs,
                                  common.if_match(rq))
    return {"network": networks.render(rq.db, rq.ctx, [net])[0]}


def delete_network(rq: ApiRequest) -> Any:
    networks.delete_network(rq.db, rq.ctx, rq.path_params["network_id"], common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/networks", get=list_networks, post=create_network)
    s.add("/v2.0/networks/{network_id}", get=show_network, put=update_network,
          delete=delete_network)
