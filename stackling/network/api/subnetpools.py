"""`/v2.0/subnetpools[/{subnetpool_id}]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.api import common
from stackling.network.core import subnetpools


def list_pools(rq: ApiRequest) -> Any:
    params = common.list_params(rq, subnetpools.LISTING)
    page = subnetpools.list_pools(rq.db, rq.ctx, params)
    return common.list_body(rq, "subnetpools", subnetpools.render(rq.db, page.rows, ctx=rq.ctx),
                            params, page)


def show_pool(rq: ApiRequest) -> Any:
    pool = subnetpools.get_visible(rq.db, rq.ctx, rq.path_params["subnetpool_id"])
    return common.show_body(rq, "subnetpool", subnetpools.render(rq.db, [pool], ctx=rq.ctx)[0])


def create_pool(rq: ApiRequest) -> Any:
    return common.create(rq, "subnetpool", "subnetpools", subnetpools.ATTRS,
                         lambda attrs: subnetpools.create_pool(rq.db, rq.ctx, attrs),
                         lambda objs: subnetpools.render(rq.db, objs))


def update_pool(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "subnetpool", subnetpools.ATTRS)
    pool = subnetpools.update_pool(rq.db, rq.ctx, rq.path_params["subnetpool_id"], attrs,
                                   common.if_match(rq))
    return {"subnetpool": subnetpools.render(rq.db, [pool], ints=True)[0]}


def delete_pool(rq: ApiRequest) -> Any:
    subnetpools.delete_pool(rq.db, rq.ctx, rq.path_params["subnetpool_id"],
                            common.if_match(rq))


def add_prefixes(rq: ApiRequest) -> Any:
    prefixes = subnetpools.operation_prefixes(rq.json(bad_request=errors.BadRequest,
                                                      malformed="Malformed request body"))
    return {"prefixes": subnetpools.add_prefixes(rq.db, rq.ctx,
                                                 rq.path_params["subnetpool_id"], prefixes)}


def remove_prefixes(rq: ApiRequest) -> Any:
    prefixes = subnetpools.operation_prefixes(rq.json(bad_request=errors.BadRequest,
                                                      malformed="Malformed request body"))
    return {"prefixes": subnetpools.remove_prefixes(rq.db, rq.ctx,
                                                    rq.path_params["subnetpool_id"], prefixes)}


def register(s: Service) -> None:
    s.add("/v2.0/subnetpools", get=list_pools, post=create_pool)
    s.add("/v2.0/subnetpools/{subnetpool_id}", get=show_pool, put=update_pool,
          delete=delete_pool)
    s.add("/v2.0/subnetpools/{subnetpool_id}/add_prefixes", put=add_prefixes)
    s.add("/v2.0/subnetpools/{subnetpool_id}/remove_prefixes", put=remove_prefixes)
