"""`/v2.0/subnets[/{subnet_id}]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.core import subnets


def list_subnets(rq: ApiRequest) -> Any:
    params = common.list_params(rq, subnets.LISTING)
    page = subnets.list_subnets(rq.db, rq.ctx, params)
    return common.list_body(rq, "subnets", subnets.render(rq.db, rq.ctx, page.rows),
                            params, page)


def show_subnet(rq: ApiRequest) -> Any:
    subnet = subnets.get_visible(rq.db, rq.ctx, rq.path_params["subnet_id"])
    return common.show_body(rq, "subnet", subnets.render(rq.db, rq.ctx, [subnet])[0])


def create_subnet(rq: ApiRequest) -> Any:
    return common.create(rq, "subnet", "subnets", subnets.ATTRS,
                         lambda attrs: subnets.create_subnet(rq.db, rq.ctx, attrs),
                         lambda objs: subnets.render(rq.db, rq.ctx, objs))


def update_subnet(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "subnet", subnets.ATTRS)
    subnet = subnets.update_subnet(rq.db, rq.ctx, rq.path_params["subnet_id"], attrs,
                                   common.if_match(rq))
    return {"subnet": subnets.render(rq.db, rq.ctx, [subnet])[0]}


def delete_subnet(rq: ApiRequest) -> Any:
    subnets.delete_subnet(rq.db, rq.ctx, rq.path_params["subnet_id"], common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/subnets", get=list_subnets, post=create_subnet)
    s.add("/v2.0/subnets/{subnet_id}", get=show_subnet, put=update_subnet,
          delete=delete_subnet)
