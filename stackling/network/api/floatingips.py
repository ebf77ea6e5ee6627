"""`/v2.0/floatingips[/{floatingip_id}]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import floatingips


def list_floatingips(rq: ApiRequest) -> Any:
    params = common.list_params(rq, floatingips.LISTING)
    page = floatingips.list_floatingips(rq.db, rq.ctx, params)
    return common.list_body(rq, "floatingips", floatingips.render(rq.db, page.rows), params,
                            page)


def show_floatingip(rq: ApiRequest) -> Any:
    fip = floatingips.get_visible(rq.db, rq.ctx, rq.path_params["floatingip_id"])
    return common.show_body(rq, "floatingip", floatingips.render(rq.db, [fip])[0])


def create_floatingip(rq: ApiRequest) -> Any:
    return common.create(rq, "floatingip", "floatingips", floatingips.ATTRS,
                         lambda attrs: floatingips.create_floatingip(rq.db, rq.ctx, attrs),
                         lambda objs: floatingips.render(rq.db, objs))


def update_floatingip(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "floatingip", floatingips.ATTRS)
    fip = floatingips.update_floatingip(rq.db, rq.ctx, rq.path_params["floatingip_id"],
                                        attrs, common.if_match(rq))
    return {"floatingip": floatingips.render(rq.db, [fip])[0]}


def delete_floatingip(rq: ApiRequest) -> Any:
    floatingips.delete_floatingip(rq.db, rq.ctx, rq.path_params["floatingip_id"],
                                  common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/floatingips", get=list_floatingips, post=create_floatingip)
    s.add("/v2.0/floatingips/{floatingip_id}", get=show_floatingip, put=update_floatingip,
          delete=delete_floatingip)


RESOURCES.append(("floatingip", "floatingips"))
EXTENSIONS.append(
    Extension("fip-port-details", "Floating IP Port Details Extension",
              "Add port_details attribute to Floating IP resource",
              "2018-04-09T10:00:00-00:00"))
