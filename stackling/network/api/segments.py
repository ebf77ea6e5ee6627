"""`/v2.0/segments[/{segment_id}]` (admin-only)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.segments import segments

RESOURCES.append(("segment", "segments"))


def list_segments(rq: ApiRequest) -> Any:
    params = common.list_params(rq, segments.LISTING)
    page = segments.list_segments(rq.db, rq.ctx, params)
    return common.list_body(rq, "segments", segments.render(rq.db, page.rows), params, page)


def show_segment(rq: ApiRequest) -> Any:
    seg = segments.get_segment(rq.db, rq.ctx, rq.path_params["segment_id"])
    return common.show_body(rq, "segment", segments.render(rq.db, [seg])[0])


def create_segment(rq: ApiRequest) -> Any:
    return common.create(rq, "segment", "segments", segments.ATTRS,
                         lambda attrs: segments.create_segment(rq.db, rq.ctx, attrs),
                         lambda objs: segments.render(rq.db, objs))


def update_segment(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "segment", segments.ATTRS)
    seg = segments.update_segment(rq.db, rq.ctx, rq.path_params["segment_id"], attrs,
                                  common.if_match(rq))
    return {"segment": segments.render(rq.db, [seg])[0]}


def delete_segment(rq: ApiRequest) -> Any:
    segments.delete_segment(rq.db, rq.ctx, rq.path_params["segment_id"], common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/segments", get=list_segments, post=create_segment)
    s.add("/v2.0/segments/{segment_id}", get=show_segment, put=update_segment,
          delete=delete_segment)
