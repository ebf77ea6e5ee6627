"""`/v2.0/address-groups[/{address_group_id}]` and its address actions (`address-group`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.address_groups import address_groups as groups
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES

RESOURCES.append(("address_group", "address_groups"))


def list_groups(rq: ApiRequest) -> Any:
    params = common.list_params(rq, groups.LISTING)
    page = groups.list_groups(rq.db, rq.ctx, params)
    return common.list_body(rq, "address_groups", groups.render(rq.db, page.rows), params, page)


def show_group(rq: ApiRequest) -> Any:
    group = groups.get_visible(rq.db, rq.ctx, rq.path_params["address_group_id"])
    return common.show_body(rq, "address_group", groups.render(rq.db, [group])[0])


def create_group(rq: ApiRequest) -> Any:
    return common.create(rq, "address_group", "address_groups", groups.ATTRS,
                         lambda attrs: groups.create_group(rq.db, rq.ctx, attrs),
                         lambda objs: groups.render(rq.db, objs))


def update_group(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "address_group", groups.ATTRS)
    group = groups.update_group(rq.db, rq.ctx, rq.path_params["address_group_id"], attrs)
    return {"address_group": groups.render(rq.db, [group])[0]}


def delete_group(rq: ApiRequest) -> Any:
    groups.delete_group(rq.db, rq.ctx, rq.path_params["address_group_id"])


def _body(rq: ApiRequest) -> Any:
    return rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")


def add_addresses(rq: ApiRequest) -> Any:
    group = groups.add_addresses(rq.db, rq.ctx, rq.path_params["address_group_id"], _body(rq))
    return {"address_group": groups.render(rq.db, [group])[0]}


def remove_addresses(rq: ApiRequest) -> Any:
    group = groups.remove_addresses(rq.db, rq.ctx, rq.path_params["address_group_id"],
                                    _body(rq))
    return {"address_group": groups.render(rq.db, [group])[0]}


def register(s: Service) -> None:
    s.add("/v2.0/address_groups", get=list_groups, post=create_group)
    s.add("/v2.0/address_groups/{address_group_id}", get=show_group, put=update_group,
          delete=delete_group)
    s.add("/v2.0/address_groups/{address_group_id}/add_addresses", put=add_addresses)
    s.add("/v2.0/address_groups/{address_group_id}/remove_addresses", put=remove_addresses)
