"""`/v2.0/local_ips[/{id}]` and `/v2.0/local_ips/{id}/port_associations[/{fixed_port_id}]`
(`local_ip`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network.api import common
from stackling.network.api.paging import page_links
from stackling.network.local_ips import local_ips


def list_local_ips(rq: ApiRequest) -> Any:
    params = common.list_params(rq, local_ips.LISTING)
    page = local_ips.list_local_ips(rq.db, rq.ctx, params)
    return common.list_body(rq, "local_ips", [local_ips.view(x) for x in page.rows], params,
                            page)


def show_local_ip(rq: ApiRequest) -> Any:
    lip = local_ips.get_local_ip(rq.db, rq.ctx, rq.path_params["local_ip_id"])
    return common.show_body(rq, "local_ip", local_ips.view(lip))


def create_local_ip(rq: ApiRequest) -> Any:
    return common.create(rq, "local_ip", "local_ips", local_ips.ATTRS,
                         lambda attrs: local_ips.create_local_ip(rq.db, rq.ctx, attrs),
                         lambda objs: [local_ips.view(x) for x in objs])


def update_local_ip(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "local_ip", local_ips.ATTRS)
    lip = local_ips.update_local_ip(rq.db, rq.ctx, rq.path_params["local_ip_id"], attrs)
    return {"local_ip": local_ips.view(lip)}


def delete_local_ip(rq: ApiRequest) -> Any:
    local_ips.delete_local_ip(rq.db, rq.ctx, rq.path_params["local_ip_id"])


def list_associations(rq: ApiRequest) -> Any:
    params = common.list_params(rq, local_ips.ASSOC_LISTING)
    lip, page = local_ips.list_associations(rq.db, rq.ctx, rq.path_params["local_ip_id"],
                                            params)
    views = local_ips.assoc_views(rq.db, lip, list(page.rows))
    body: dict[str, Any] = {"port_associations": [select_fields(v, params.fields)
                                                  for v in views]}
    # an association has no id: its port is its key, and the paging marker
    body.update(page_links(rq.url_for_request(), rq.query, "port_associations",
                           [{"id": v["fixed_port_id"]} for v in views], params))
    return body


def create_association(rq: ApiRequest) -> Any:
    lip_id = rq.path_params["local_ip_id"]
    made: list[Any] = []

    def create_one(attrs: dict[str, Any]) -> Any:
        lip, assoc = local_ips.create_association(rq.db, rq.ctx, lip_id, attrs)
        made.append(lip)
        return assoc

    return common.create(rq, "port_association", "port_associations", local_ips.ASSOC_ATTRS,
                         create_one,
                         lambda objs: local_ips.assoc_views(rq.db, made[0], objs))


def delete_association(rq: ApiRequest) -> Any:
    local_ips.delete_association(rq.db, rq.ctx, rq.path_params["local_ip_id"],
                                 rq.path_params["fixed_port_id"])


def register(s: Service) -> None:
    s.add("/v2.0/local_ips", get=list_local_ips, post=create_local_ip)
    s.add("/v2.0/local_ips/{local_ip_id}", get=show_local_ip, put=update_local_ip,
          delete=delete_local_ip)
    s.add("/v2.0/local_ips/{local_ip_id}/port_associations", get=list_associations,
          post=create_association)
    s.add("/v2.0/local_ips/{local_ip_id}/port_associations/{fixed_port_id}",
          delete=delete_association)
