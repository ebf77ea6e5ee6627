"""What every network handler shares: list parameters, `fields`, paging links, bulk
POST bodies and the If-Match header."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stackling.common.http import ApiRequest
from stackling.common.listing import ListParams, Page, select_fields
from stackling.network import errors, policy, quotas, standard
from stackling.network.api.paging import page_links
from stackling.network.attributes import Attr, items_of, parse_create, parse_update
from stackling.network.querying import Listing


def list_params(rq: ApiRequest, listing: Listing) -> ListParams:
    params = listing.parse(rq.query, rq.settings.network.pagination_max_limit,
                           rq.settings.http.max_filter_values)
    if listing.readable is not None:
        policy.ignore_unreadable(rq.db, rq.ctx, *listing.readable, params)
    return params


def fields_of(rq: ApiRequest) -> list[str]:
    return [f for value in rq.query.getlist("fields") for f in value.split(",") if f]


def list_body(rq: ApiRequest, collection: str, items: Sequence[dict[str, Any]],
              params: ListParams, page: Page) -> dict[str, Any]:
    url = rq.url_for_request()
    body: dict[str, Any] = {collection: [select_fields(i, params.fields) for i in items]}
    body.update(page_links(url, rq.query, collection, items, params))
    return body


def show_body(rq: ApiRequest, resource: str, item: dict[str, Any]) -> dict[str, Any]:
    return {resource: select_fields(item, fields_of(rq))}


def if_match(rq: ApiRequest) -> int | None:
    return standard.parse_if_match(rq.headers.get("if-match"))


def create(rq: ApiRequest, resource: str, collection: str, attrs: Mapping[str, Attr],
           create_one: Callable[[dict[str, Any]], Any],
           render: Callable[[list[Any]], list[dict[str, Any]]], *,
           allow_empty: bool = False) -> Any:
    """POST of one resource or a bulk list (atomic: the request is one transaction)."""
    body = rq.json(bad_request=errors.BadRequest, malformed=_MALFORMED,
                   required=not allow_empty)
    if body is None and rq.raw_body.strip():
        raise errors.BadRequest("Body contains invalid data")  # a JSON `null`
    items, bulk = items_of(body, resource, collection, allow_empty=allow_empty)
    if bulk:
        quotas.check_bulk_size(rq.db, collection, len(items))
    parsed = [parse_create(rq.ctx, item, attrs) for item in items]
    with quotas.reserved(rq.db, resource, [p.get("project_id") for p in parsed] if bulk else []):
        objs = [create_one(attrs_) for attrs_ in parsed]
    views = render(objs)
    if bulk:
        return 201, {collection: views}
    return 201, {resource: views[0]}


def update_attrs(rq: ApiRequest, resource: str, attrs: Mapping[str, Attr]) -> dict[str, Any]:
    body = rq.json(bad_request=errors.BadRequest, malformed=_MALFORMED, required=False)
    return parse_update(rq.ctx, body, resource, attrs)


_MALFORMED = "Malformed request body"
