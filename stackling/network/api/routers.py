"""`/v2.0/routers[/{router_id}]` and the member actions `add_router_interface`,
`remove_router_interface`, `add_extraroutes`, `remove_extraroutes`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import routers as l3


def list_routers(rq: ApiRequest) -> Any:
    params = common.list_params(rq, l3.LISTING)
    page = l3.list_routers(rq.db, rq.ctx, params)
    return common.list_body(rq, "routers", l3.render(rq.db, rq.ctx, page.rows), params, page)


def show_router(rq: ApiRequest) -> Any:
    router = l3.get_visible(rq.db, rq.ctx, rq.path_params["router_id"])
    return common.show_body(rq, "router", l3.render(rq.db, rq.ctx, [router])[0])


def create_router(rq: ApiRequest) -> Any:
    return common.create(rq, "router", "routers", l3.ATTRS,
                         lambda attrs: l3.create_router(rq.db, rq.ctx, attrs),
                         lambda objs: l3.render(rq.db, rq.ctx, objs))


def update_router(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "router", l3.ATTRS)
    router = l3.update_router(rq.db, rq.ctx, rq.path_params["router_id"], attrs,
                              common.if_match(rq))
    return {"router": l3.render(rq.db, rq.ctx, [router])[0]}


def delete_router(rq: ApiRequest) -> Any:
    l3.delete_router(rq.db, rq.ctx, rq.path_params["router_id"], common.if_match(rq))


def _body(rq: ApiRequest) -> Any:
    return rq.json(bad_request=errors.BadRequest, malformed="Malformed request body",
                   required=False)


def add_router_interface(rq: ApiRequest) -> Any:
    info = l3.parse_interface_info(_body(rq))
    return l3.add_router_interface(rq.db, rq.ctx, rq.path_params["router_id"], info)


def remove_router_interface(rq: ApiRequest) -> Any:
    info = l3.parse_interface_info(_body(rq), for_removal=True)
    return l3.remove_router_interface(rq.db, rq.ctx, rq.path_params["router_id"], info)


def _change_routes(rq: ApiRequest, add: bool) -> Any:
    routes = l3.parse_routes_body(_body(rq))
    router = l3.change_routes(rq.db, rq.ctx, rq.path_params["router_id"], routes, add=add)
    return {"router": l3.render(rq.db, rq.ctx, [router])[0]}


def add_extraroutes(rq: ApiRequest) -> Any:
    return _change_routes(rq, True)


def remove_extraroutes(rq: ApiRequest) -> Any:
    return _change_routes(rq, False)


def register(s: Service) -> None:
    s.add("/v2.0/routers", get=list_routers, post=create_router)
    s.add("/v2.0/routers/{router_id}", get=show_router, put=update_router,
          delete=delete_router)
    s.add("/v2.0/routers/{router_id}/add_router_interface", put=add_router_interface)
    s.add("/v2.0/routers/{router_id}/remove_router_interface", put=remove_router_interface)
    s.add("/v2.0/routers/{router_id}/add_extraroutes", put=add_extraroutes)
    s.add("/v2.0/routers/{router_id}/remove_extraroutes", put=remove_extraroutes)


RESOURCES.append(("router", "routers"))
EXTENSIONS.extend([
    Extension("router", "Neutron L3 Router",
              "Router abstraction for basic L3 forwarding between L2 Neutron networks and "
              "access to external networks via a NAT gateway.", "2012-07-20T10:00:00-00:00"),
    Extension("ext-gw-mode", "Neutron L3 Configurable external gateway mode",
              "Extension of the router abstraction for specifying whether SNAT should "
              "occur on the external gateway", "2013-03-28T10:00:00-00:00"),
    Extension("extraroute", "Neutron Extra Route", "Extra routes configuration for L3 "
              "router", "2013-02-01T10:00:00-00:00"),
    Extension("router_availability_zone", "Router Availability Zone",
              "Availability zone support for router.", "2015-01-01T10:00:00-00:00"),
    Extension("extraroute-atomic", "Atomically add/remove extra routes",
              "Edit extra routes of a router on server side by atomically adding/removing "
              "extra routes", "2019-07-10T10:00:00-00:00"),
    # stored and shown to admins; no agents, so no HA network or DVR ports (README)
    Extension("l3-ha", "HA Router extension", "Adds HA capability to routers.",
              "2014-04-26T00:00:00-00:00"),
    Extension("dvr", "Distributed Virtual Router",
              "Enables configuration of Distributed Virtual Routers.",
              "2014-06-1T10:00:00-00:00"),
    Extension("router-admin-state-down-before-update",
              "Enforce Router's Admin State Down Before Update Extension",
              "Ensure that the admin state of a router is DOWN (admin_state_up=False) "
              "before updating the distributed attribute", "2019-07-02T15:56:00"),
])
