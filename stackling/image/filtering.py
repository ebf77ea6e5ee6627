"""Glance's list filters with operators: `created_at`/`updated_at` compared with
`lt|lte|gt|gte|eq|neq:<ISO 8601 time>`, and `size_min`/`size_max` (bytes, inclusive).
(`in:` on name, id, status, owner and the formats is read by `logic.list_images`.)"""

from __future__ import annotations

import datetime as dt
import operator
from typing import Any

from stackling.common.errors import BadRequest
from stackling.image.models import Image

OPERATORS = {"lt": operator.lt, "lte": operator.le, "gt": operator.gt, "gte": operator.ge,
             "eq": operator.eq, "neq": operator.ne}


def _time(value: str) -> dt.datetime:
    text = value.strip().replace("Z", "+00:00")
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"Unable to parse datetime '{value}'.") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC)


def _size(key: str, value: str) -> int:
    try:
        size = int(value)
    except ValueError:
        raise BadRequest(f"Invalid value for {key}: {value}. It must be an integer.") from None
    if size < 0:
        raise BadRequest(f"Invalid value for {key}: {value}. It must be positive.")
    return size


def _split(value: str) -> tuple[str, dt.datetime]:
    """As Glance: no operator means `eq`, and a bare time's own colons are no operator."""
    op, sep, rest = value.partition(":")
    if not sep:
        return "eq", _time(value)
    try:
        return "eq", _time(value)
    except BadRequest:
        pass
    if op not in OPERATORS:
        raise BadRequest("Unable to filter on a unknown operator.")
    return op, _time(rest)


def apply_operators(stmt: Any, filters: dict[str, str]) -> Any:
    """Add the operator filters present in `filters` to `stmt` (and take them out)."""
    for key in ("created_at", "updated_at"):
        if key not in filters:
            continue
        op, when = _split(filters.pop(key))
        stmt = stmt.where(OPERATORS[op](getattr(Image, key), when))
    if "size_min" in filters:
        stmt = stmt.where(Image.size >= _size("size_min", filters.pop("size_min")))
    if "size_max" in filters:
        stmt = stmt.where(Image.size <= _size("size_max", filters.pop("size_max")))
    return stmt
