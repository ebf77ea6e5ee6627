"""What every Cinder route module shares: the two URL forms, policy, list parameters,
the JSON body, and the time format."""

from __future__ import annotations

import datetime as dt
from typing import Any

from stackling.block_storage import errors
from stackling.common.errors import Forbidden
from stackling.common.http import ApiRequest, Handler, Service


def add(service: Service, path: str, **methods: Handler) -> None:
    """`/v3/{project_id}<path>` and, as Cinder also routes it, `/v3<path>`."""
    service.add(f"/v3{path}", **methods)
    service.add(f"/v3/{{project_id}}{path}", **methods)


def authorize(rq: ApiRequest, action: str, project_id: str | None = None) -> None:
    """Cinder's check: the target is the resource's project (the caller's by default)."""
    target = {"project_id": project_id if project_id is not None else rq.ctx.project_id,
              "domain_id": rq.ctx.domain_id}
    rq.authorize(action, target, exc=Forbidden(f"Policy doesn't allow {action} to be performed."))


def allowed(rq: ApiRequest, action: str, project_id: str | None = None) -> bool:
    return rq.allowed(action, {"project_id": project_id if project_id is not None
                               else rq.ctx.project_id})


def body(rq: ApiRequest, key: str | None = None) -> Any:
    """The JSON body (or its `key` member, a dict): Cinder's 400s when absent."""
    data = rq.json(bad_request=errors.InvalidInput, malformed="Malformed request body")
    if key is None:
        return data
    if not isinstance(data, dict) or not isinstance(data.get(key), dict):
        raise errors.InvalidInput(reason=f"Missing required element '{key}' in request body.")
    return data[key]


def version(rq: ApiRequest, at_least: str) -> bool:
    return rq.version is not None and rq.version.matches(at_least)


def time(value: dt.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f") if value is not None else None


def all_tenants(rq: ApiRequest) -> bool:
    value = rq.query.get("all_tenants")
    return value is not None and value.lower() not in ("0", "false", "f", "no", "n", "off")


def paging(rq: ApiRequest, sortable: tuple[str, ...]) -> tuple[list[tuple[str, bool]],
                                                               int | None, str | None, int]:
    """`sort=key:dir,...` or `sort_key`/`sort_dir`, `limit`, `marker`, `offset`."""
    sorts: list[tuple[str, bool]] = []
    if rq.query.get("sort"):
        for item in rq.query["sort"].split(","):
            key, _, direction = item.strip().partition(":")
            sorts.append((key, (direction or "desc").lower() == "asc"))
    elif rq.query.get("sort_key"):
        direction = (rq.query.get("sort_dir") or "desc").lower()
        sorts = [(k, direction == "asc") for k in rq.query["sort_key"].split(",")]
    for key, _ in sorts:
        if key not in sortable:
            raise errors.InvalidInput(reason=f"Invalid sort key {key}")
    sorts = [("name" if k == "display_name" else k, a) for k, a in sorts]

    def number(name: str) -> int | None:
        raw = rq.query.get(name)
        if raw is None:
            return None
        try:
            value = int(raw)
        except ValueError:
            raise errors.InvalidInput(reason=f"{name} param must be an integer") from None
        if value < 0:
            raise errors.InvalidInput(reason=f"{name} param must be positive")
        return value

    return sorts, number("limit"), rq.query.get("marker") or None, number("offset") or 0


def next_link(rq: ApiRequest, collection: str, rows: list[Any], limit: int | None
              ) -> list[dict[str, str]] | None:
    if limit is None or len(rows) < limit or not rows:
        return None
    query = [(k, v) for k, v in rq.query.multi_items() if k != "marker"]
    query.append(("marker", rows[-1].id))
    from urllib.parse import urlencode

    base = rq.url_for_request()
    return [{"href": f"{base}?{urlencode(query)}", "rel": "next"}]
