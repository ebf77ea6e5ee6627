"""The tags sub-API of every taggable collection (`standard-attr-tag`):
`GET|PUT|DELETE /v2.0/{collection}/{id}/tags` and `GET|PUT|DELETE .../tags/{tag}`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors, standard


def _target(rq: ApiRequest) -> tuple[standard.Taggable, Any]:
    taggable = standard.TAGGABLE.get(rq.path_params["collection"])
    if taggable is None:
        raise errors.HTTPNotFound()
    return taggable, taggable.load(rq.db, rq.ctx, rq.path_params["resource_id"])


def _writable(rq: ApiRequest) -> tuple[standard.Taggable, Any]:
    taggable, obj = _target(rq)
    taggable.authorize_update(rq.db, rq.ctx, obj)
    return taggable, obj


def list_tags(rq: ApiRequest) -> Any:
    _, obj = _target(rq)
    return {"tags": standard.tags_for(rq.db, [obj.id])[obj.id]}


def replace_tags(rq: ApiRequest) -> Any:
    taggable, obj = _writable(rq)
    body = rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")
    if not isinstance(body, dict) or "tags" not in body:
        raise errors.BadRequest("Invalid tags body")
    tags = standard.validate_tags(body["tags"])
    standard.set_tags(rq.db, taggable.resource_type, obj.id, tags)
    standard.touch(obj)
    return {"tags": sorted(tags)}


def clear_tags(rq: ApiRequest) -> Any:
    taggable, obj = _writable(rq)
    standard.set_tags(rq.db, taggable.resource_type, obj.id, [])
    standard.touch(obj)


def check_tag(rq: ApiRequest) -> Any:
    _, obj = _target(rq)
    tag = rq.path_params["tag"]
    if not standard.has_tag(rq.db, obj.id, tag):
        raise errors.TagNotFound(tag=tag)


def add_tag(rq: ApiRequest) -> Any:
    taggable, obj = _writable(rq)
    tag = standard.validate_tag(rq.path_params["tag"])
    if standard.add_tag(rq.db, taggable.resource_type, obj.id, tag):
        standard.touch(obj)
    return 201, None


def remove_tag(rq: ApiRequest) -> Any:
    taggable, obj = _writable(rq)
    standard.remove_tag(rq.db, obj.id, rq.path_params["tag"])
    standard.touch(obj)


def register(s: Service) -> None:
    s.add("/v2.0/{collection}/{resource_id}/tags", get=list_tags, put=replace_tags,
          delete=clear_tags)
    s.add("/v2.0/{collection}/{resource_id}/tags/{tag}", get=check_tag, put=add_tag,
          delete=remove_tag)
