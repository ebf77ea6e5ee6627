"""`/v2.0/ndp_proxies[/{id}]` (`l3-ndp-proxy`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.ndp_proxies import ndp_proxies


def list_ndp_proxies(rq: ApiRequest) -> Any:
    params = common.list_params(rq, ndp_proxies.LISTING)
    page = ndp_proxies.list_ndp_proxies(rq.db, rq.ctx, params)
    return common.list_body(rq, "ndp_proxies", [ndp_proxies.view(x) for x in page.rows],
                            params, page)


def show_ndp_proxy(rq: ApiRequest) -> Any:
    proxy = ndp_proxies.get_ndp_proxy(rq.db, rq.ctx, rq.path_params["ndp_proxy_id"])
    return common.show_body(rq, "ndp_proxy", ndp_proxies.view(proxy))


def create_ndp_proxy(rq: ApiRequest) -> Any:
    return common.create(rq, "ndp_proxy", "ndp_proxies", ndp_proxies.ATTRS,
                         lambda attrs: ndp_proxies.create_ndp_proxy(rq.db, rq.ctx, attrs),
                         lambda objs: [ndp_proxies.view(x) for x in objs])


def update_ndp_proxy(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "ndp_proxy", ndp_proxies.ATTRS)
    proxy = ndp_proxies.update_ndp_proxy(rq.db, rq.ctx, rq.path_params["ndp_proxy_id"], attrs)
    return {"ndp_proxy": ndp_proxies.view(proxy)}


def delete_ndp_proxy(rq: ApiRequest) -> Any:
    ndp_proxies.delete_ndp_proxy(rq.db, rq.ctx, rq.path_params["ndp_proxy_id"])


def register(s: Service) -> None:
    s.add("/v2.0/ndp_proxies", get=list_ndp_proxies, post=create_ndp_proxy)
    s.add("/v2.0/ndp_proxies/{ndp_proxy_id}", get=show_ndp_proxy, put=update_ndp_proxy,
          delete=delete_ndp_proxy)
