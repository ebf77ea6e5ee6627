"""`/v2.0/network_segment_ranges[/{range_id}]` (also `network-segment-ranges`), admin-only."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors, quotas
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.attributes import items_of, parse_create
from stackling.network.segments import ranges

RESOURCES.append(("network_segment_range", "network_segment_ranges"))


def list_ranges(rq: ApiRequest) -> Any:
    params = common.list_params(rq, ranges.LISTING)
    page = ranges.list_ranges(rq.db, rq.ctx, params)
    return common.list_body(rq, "network_segment_ranges",
                            ranges.render(rq.db, page.rows, params.fields), params, page)


def show_range(rq: ApiRequest) -> Any:
    rng = ranges.get_range(rq.db, rq.ctx, rq.path_params["range_id"])
    return common.show_body(rq, "network_segment_range",
                            ranges.render(rq.db, [rng], common.fields_of(rq))[0])


def create_range(rq: ApiRequest) -> Any:
    body = rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")
    items, bulk = items_of(body, "network_segment_range", "network_segment_ranges")
    if bulk:
        quotas.check_bulk_size(rq.db, "network_segment_ranges", len(items))
    # Whether a project was named matters (a shared range takes none), so parse here.
    parsed = [(parse_create(rq.ctx, item, ranges.ATTRS),
               "project_id" in item or "tenant_id" in item) for item in items]
    objs = [ranges.create_range(rq.db, rq.ctx, attrs, project_given=given)
            for attrs, given in parsed]
    views = ranges.render(rq.db, objs)
    if bulk:
        return 201, {"network_segment_ranges": views}
    return 201, {"network_segment_range": views[0]}


def update_range(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "network_segment_range", ranges.ATTRS)
    rng = ranges.update_range(rq.db, rq.ctx, rq.path_params["range_id"], attrs,
                              common.if_match(rq))
    return {"network_segment_range": ranges.render(rq.db, [rng])[0]}


def delete_range(rq: ApiRequest) -> Any:
    ranges.delete_range(rq.db, rq.ctx, rq.path_params["range_id"], common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/network_segment_ranges", get=list_ranges, post=create_range)
    s.add("/v2.0/network_segment_ranges/{range_id}", get=show_range, put=update_range,
          delete=delete_range)
