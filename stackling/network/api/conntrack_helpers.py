"""`/v2.0/routers/{router_id}/conntrack_helpers[/{conntrack_helper_id}]`
(`l3-conntrack-helper`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.conntrack import helpers


def list_helpers(rq: ApiRequest) -> Any:
    params = common.list_params(rq, helpers.LISTING)
    page = helpers.list_helpers(rq.db, rq.ctx, rq.path_params["router_id"], params)
    return common.list_body(rq, "conntrack_helpers", [helpers.view(h) for h in page.rows],
                            params, page)


def show_helper(rq: ApiRequest) -> Any:
    helper = helpers.get_helper(rq.db, rq.ctx, rq.path_params["router_id"],
                                rq.path_params["conntrack_helper_id"])
    return common.show_body(rq, "conntrack_helper", helpers.view(helper))


def create_helper(rq: ApiRequest) -> Any:
    router_id = rq.path_params["router_id"]
    return common.create(rq, "conntrack_helper", "conntrack_helpers", helpers.ATTRS,
                         lambda attrs: helpers.create_helper(rq.db, rq.ctx, router_id, attrs),
                         lambda objs: [helpers.view(h) for h in objs])


def update_helper(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "conntrack_helper", helpers.ATTRS)
    helper = helpers.update_helper(rq.db, rq.ctx, rq.path_params["router_id"],
                                   rq.path_params["conntrack_helper_id"], attrs)
    return {"conntrack_helper": helpers.view(helper)}


def delete_helper(rq: ApiRequest) -> Any:
    helpers.delete_helper(rq.db, rq.ctx, rq.path_params["router_id"],
                          rq.path_params["conntrack_helper_id"])


def register(s: Service) -> None:
    s.add("/v2.0/routers/{router_id}/conntrack_helpers", get=list_helpers, post=create_helper)
    s.add("/v2.0/routers/{router_id}/conntrack_helpers/{conntrack_helper_id}",
          get=show_helper, put=update_helper, delete=delete_helper)
