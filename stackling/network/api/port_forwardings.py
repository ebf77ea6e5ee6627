"""`/v2.0/floatingips/{floatingip_id}/port_forwardings[/{port_forwarding_id}]`
(`floating-ip-port-forwarding`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.port_forwarding import forwardings as pfs

_FIP = "pf_floatingip_id"  # the floating IP's id in these routes


def list_forwardings(rq: ApiRequest) -> Any:
    params = common.list_params(rq, pfs.LISTING)
    page = pfs.list_forwardings(rq.db, rq.ctx, rq.path_params[_FIP], params)
    return common.list_body(rq, "port_forwardings", pfs.render(page.rows), params, page)


def show_forwarding(rq: ApiRequest) -> Any:
    pf = pfs.get_forwarding(rq.db, rq.ctx, rq.path_params[_FIP],
                            rq.path_params["port_forwarding_id"])
    return common.show_body(rq, "port_forwarding", pfs.view(pf))


def create_forwarding(rq: ApiRequest) -> Any:
    fip_id = rq.path_params[_FIP]
    return common.create(rq, "port_forwarding", "port_forwardings", pfs.ATTRS,
                         lambda attrs: pfs.create_forwarding(rq.db, rq.ctx, fip_id, attrs),
                         pfs.render)


def update_forwarding(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "port_forwarding", pfs.ATTRS)
    pf = pfs.update_forwarding(rq.db, rq.ctx, rq.path_params[_FIP],
                               rq.path_params["port_forwarding_id"], attrs)
    return {"port_forwarding": pfs.view(pf)}


def delete_forwarding(rq: ApiRequest) -> Any:
    pfs.delete_forwarding(rq.db, rq.ctx, rq.path_params[_FIP],
                          rq.path_params["port_forwarding_id"])


def register(s: Service) -> None:
    base = f"/v2.0/floatingips/{{{_FIP}}}/port_forwardings"
    s.add(base, get=list_forwardings, post=create_forwarding)
    s.add(f"{base}/{{port_forwarding_id}}", get=show_forwarding, put=update_forwarding,
          delete=delete_forwarding)
