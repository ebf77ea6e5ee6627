"""`/v2.0/address-scopes[/{address_scope_id}]` (`address-scope`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.rbac import address_scopes as scopes

RESOURCES.append(("address_scope", "address_scopes"))


def list_scopes(rq: ApiRequest) -> Any:
    params = common.list_params(rq, scopes.LISTING)
    page = scopes.list_scopes(rq.db, rq.ctx, params)
    return common.list_body(rq, "address_scopes", scopes.render(rq.db, rq.ctx, page.rows),
                            params, page)


def show_scope(rq: ApiRequest) -> Any:
    scope = scopes.get_visible(rq.db, rq.ctx, rq.path_params["address_scope_id"])
    return common.show_body(rq, "address_scope", scopes.render(rq.db, rq.ctx, [scope])[0])


def create_scope(rq: ApiRequest) -> Any:
    return common.create(rq, "address_scope", "address_scopes", scopes.ATTRS,
                         lambda attrs: scopes.create_scope(rq.db, rq.ctx, attrs),
                         lambda objs: scopes.render(rq.db, rq.ctx, objs))


def update_scope(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "address_scope", scopes.ATTRS)
    scope = scopes.update_scope(rq.db, rq.ctx, rq.path_params["address_scope_id"], attrs)
    return {"address_scope": scopes.render(rq.db, rq.ctx, [scope])[0]}


def delete_scope(rq: ApiRequest) -> Any:
    scopes.delete_scope(rq.db, rq.ctx, rq.path_params["address_scope_id"])


def register(s: Service) -> None:
    s.add("/v2.0/address_scopes", get=list_scopes, post=create_scope)
    s.add("/v2.0/address_scopes/{address_scope_id}", get=show_scope, put=update_scope,
          delete=delete_scope)
