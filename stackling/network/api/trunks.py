"""`/v2.0/trunks[/{trunk_id}]` and the sub-port actions (`trunk`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.trunks import trunks

RESOURCES.append(("trunk", "trunks"))


def list_trunks(rq: ApiRequest) -> Any:
    params = common.list_params(rq, trunks.LISTING)
    page = trunks.list_trunks(rq.db, rq.ctx, params)
    return common.list_body(rq, "trunks", trunks.render(rq.db, page.rows), params, page)


def show_trunk(rq: ApiRequest) -> Any:
    trunk = trunks.get_visible(rq.db, rq.ctx, rq.path_params["trunk_id"])
    return common.show_body(rq, "trunk", trunks.render(rq.db, [trunk])[0])


def create_trunk(rq: ApiRequest) -> Any:
    return common.create(rq, "trunk", "trunks", trunks.ATTRS,
                         lambda attrs: trunks.create_trunk(rq.db, rq.ctx, attrs),
                         lambda objs: trunks.render(rq.db, objs))


def update_trunk(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "trunk", trunks.ATTRS)
    trunk = trunks.update_trunk(rq.db, rq.ctx, rq.path_params["trunk_id"], attrs,
                                common.if_match(rq))
    return {"trunk": trunks.render(rq.db, [trunk])[0]}


def delete_trunk(rq: ApiRequest) -> Any:
    trunks.delete_trunk(rq.db, rq.ctx, rq.path_params["trunk_id"], common.if_match(rq))


def _action_body(rq: ApiRequest) -> Any:
    return rq.json(bad_request=errors.BadRequest, malformed="Malformed request body",
                   required=True)


def add_subports(rq: ApiRequest) -> Any:
    """The answer is the trunk itself, unwrapped (neutron's member action)."""
    trunk = trunks.add_sub_ports(rq.db, rq.ctx, rq.path_params["trunk_id"], _action_body(rq))
    return trunks.render(rq.db, [trunk])[0]


def remove_subports(rq: ApiRequest) -> Any:
    trunk = trunks.remove_sub_ports(rq.db, rq.ctx, rq.path_params["trunk_id"],
                                    _action_body(rq))
    return trunks.render(rq.db, [trunk])[0]


def get_subports(rq: ApiRequest) -> Any:
    return {"sub_ports": trunks.get_sub_ports(rq.db, rq.ctx, rq.path_params["trunk_id"])}


def register(s: Service) -> None:
    s.add("/v2.0/trunks", get=list_trunks, post=create_trunk)
    s.add("/v2.0/trunks/{trunk_id}", get=show_trunk, put=update_trunk, delete=delete_trunk)
    s.add("/v2.0/trunks/{trunk_id}/add_subports", put=add_subports)
    s.add("/v2.0/trunks/{trunk_id}/remove_subports", put=remove_subports)
    s.add("/v2.0/trunks/{trunk_id}/get_subports", get=get_subports)
