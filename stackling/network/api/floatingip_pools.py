"""`GET /v2.0/floatingip_pools` (`floatingip-pools`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network.api import common
from stackling.network.api.paging import page_links
from stackling.network.l3 import fip_pools


def list_floatingip_pools(rq: ApiRequest) -> Any:
    params = common.list_params(rq, fip_pools.LISTING)
    pools = fip_pools.list_pools(rq.db, rq.ctx, params)
    body: dict[str, Any] = {"floatingip_pools": [select_fields(p, params.fields)
                                                 for p in pools]}
    # a pool has no id of its own: its subnet's id is the marker
    body.update(page_links(rq.url_for_request(), rq.query, "floatingip_pools",
                           [{"id": p["subnet_id"]} for p in pools], params))
    return body


def register(s: Service) -> None:
    s.add("/v2.0/floatingip_pools", get=list_floatingip_pools)
