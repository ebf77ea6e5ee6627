"""POST /reshaper (from 1.30)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import errors, reshaper, schemas
from stackling.placement.api.allocations import to_write
from stackling.placement.api.util import empty, extract_json, handler
from stackling.placement.providers import normalize_uuid


@handler("placement:reshaper:reshape", since="1.30", body=True)
def reshape(rq: ApiRequest) -> Any:
    schema = schemas.POST_RESHAPER_1_30
    if rq.version.matches("1.38"):
        schema = schemas.POST_RESHAPER_1_38
    elif rq.version.matches("1.34"):
        schema = schemas.POST_RESHAPER_1_34
    data = extract_json(rq, schema)
    writes = [to_write(rq, normalize_uuid(c) or c, body) for c, body in data["allocations"].items()]
    try:
        reshaper.reshape(rq.db, data["inventories"], writes)
    except errors.ResourceClassNotFound as exc:
        raise errors.BadRequest(f"Unknown resource class in inventory: {exc.text}") from None
    return empty()
