"""One helper for list queries: filters, `fields`, `sort_key`/`sort_dir`, and
`limit`/`marker`/`page_reverse` paging with upstream-style `<collection>_links`.

Paging is keyset-based in SQL (the marker row's sort values bound the next page), so a
page costs the same at the start and the end of a long list. The final sort key is
always the id, ascending, as upstream's pagination implies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import Select, and_, or_
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from stackling.common.errors import ApiError, BadRequest

RESERVED = frozenset({"fields", "sort_key", "sort_dir", "limit", "marker", "page_reverse"})
TRUE_STRINGS = frozenset({"true", "1", "yes", "on", "t", "y"})
FALSE_STRINGS = frozenset({"false", "0", "no", "off", "f", "n"})


def to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_STRINGS:
        return True
    if text in FALSE_STRINGS:
        return False
    raise ValueError(f"'{value}' cannot be converted to boolean")


# Past this no page can hold more rows, and LIMIT 10**20 overflows every database's
# BIGINT (a 500): larger limits mean "all", as they did.
SQL_MAX_LIMIT = 2**31 - 2


def clamp_limit(value: int) -> int:
    return min(value, SQL_MAX_LIMIT)


def parse_limit(raw: str | None, *, invalid: Callable[[], Exception],
                negative: Callable[[], Exception] | None = None,
                max_limit: int | None = None) -> int | None:
    """A `limit` query value: an integer (else `invalid()`) 0 or greater (else `negative()`,
    default `invalid()`), at most `max_limit` (the service's own cap, e.g. Nova's [api]
    max_limit), then clamped to what a database LIMIT holds. Every list's limit goes
    through here or `parse_list_params`."""
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise invalid() from None
    if value < 0:
        raise (negative or invalid)()
    if max_limit is not None and max_limit > 0:
        value = min(value, max_limit)
    return clamp_limit(value)


# Filters whose values are comma-separated lists (Neutron's and Nova's tag filters).
COMMA_FILTERS = frozenset({"tags", "tags-any", "not-tags", "not-tags-any"})
# The most values one filter may carry after de-duplication (settings.http).
DEFAULT_MAX_FILTER_VALUES = 1000


def filter_values(key: str, values: Iterable[str], *, max_values: int = DEFAULT_MAX_FILTER_VALUES,
                  error: type[ApiError] = BadRequest) -> list[str]:
    """One filter's values: tag lists split on commas (empty items dropped), duplicates
    dropped in order, and more than `max_values` refused with the family's 400 (each value
    is a bound parameter: an unbounded list was unbounded work for the database)."""
    if key in COMMA_FILTERS:
        values = [item for value in values for item in value.split(",") if item]
    out = list(dict.fromkeys(values))
    if max_values > 0 and len(out) > max_values:
        raise error(f"Too many values for filter '{key}': {len(out)} given, at most "
                    f"{max_values} allowed")
    return out


def bool_from_string(value: Any, default: bool = False) -> bool:
    """oslo.utils' bool_from_string: an unrecognised string is `default`, never an error
    (Keystone reads `enabled=maybe` as true this way)."""
    try:
        return to_bool(value)
    except ValueError:
        return default


@dataclass
class ListParams:
    filters: dict[str, list[str]] = field(default_factory=dict)
    fields: list[str] = field(default_factory=list)
    sorts: list[tuple[str, bool]] = field(default_factory=list)  # (key, ascending)
    limit: int | None = None
    marker: str | None = None
    page_reverse: bool = False


def parse_list_params(
    query: Any,
    *,
    filterable: Iterable[str] | None = None,
    sortable: Iterable[str] = (),
    error: type[ApiError] = BadRequest,
    ignored: Iterable[str] = (),
    max_limit: int | None = None,
    max_values: int = DEFAULT_MAX_FILTER_VALUES,
) -> ListParams:
    """Split a QueryParams into filters and paging; unknown filter keys are a 400.

    `filterable=None` accepts any key as a filter (the caller validates).
    """
    params = ListParams()
    allowed = None if filterable is None else set(filterable)
    skip = set(ignored)
    unknown: list[str] = []
    for key, value in query.multi_items():
        if key in RESERVED:
            continue
        if key in skip:
            continue
        if allowed is not None and key not in allowed:
            if key not in unknown:
                unknown.append(key)
            continue
        params.filters.setdefault(key, []).append(value)
    if unknown:
        raise error(f"{unknown} is invalid attribute for filtering")
    params.filters = {key: filter_values(key, values, max_values=max_values, error=error)
                      for key, values in params.filters.items()}
    params.fields = [f for f in query.getlist("fields") for f in f.split(",") if f]

    keys, dirs = query.getlist("sort_key"), query.getlist("sort_dir")
    if keys or dirs:
        if dirs and len(keys) != len(dirs):
            raise error("The number of sort_keys and sort_dirs must be same")
        sortable_set = set(sortable)
        bad = [k for k in keys if k not in sortable_set]
        if bad:
            raise error(f"{bad} is invalid attribute for sort_keys")
        for key, direction in zip(keys, dirs or ["asc"] * len(keys), strict=True):
            if direction not in ("asc", "desc"):
                raise error(f"{direction} is invalid value for sort_dirs, valid sort dir "
                            "values are 'asc' and 'desc'")
            params.sorts.append((key, direction == "asc"))

    limit = query.get("limit")
    if limit is not None:
        try:
            value = int(limit)
        except ValueError:
            raise error(f"Limit must be an integer 0 or greater and not '{limit}'") from None
        if value < 0:
            raise error(f"Limit must be an integer 0 or greater and not '{limit}'")
        if max_limit and max_limit > 0:
            value = min(value, max_limit) if value else max_limit
        params.limit = clamp_limit(value) or None
    params.marker = query.get("marker") or None
    page_reverse = query.get("page_reverse")
    if page_reverse is not None:
        try:
            params.page_reverse = to_bool(page_reverse)
        except ValueError as exc:
            raise error(str(exc)) from None
    return params


@dataclass
class Page:
    rows: list[Any]
    has_more: bool


def paginate(
    db: Session,
    stmt: Select[Any],
    *,
    columns: Mapping[str, ColumnElement[Any]],
    id_column: ColumnElement[Any],
    params: ListParams,
    marker_lookup: Callable[[Session, str], Any] | None = None,
    marker_scope: Select[Any] | None = None,
    marker_missing: Callable[[str], Exception] | None = None,
) -> Page:
    """Sort and page `stmt` (a select of one entity) by `params`.

    `columns` maps sort keys to columns. The marker is resolved within `marker_scope`
    (default: `stmt` itself), which must carry the caller's visibility filter: a row the
    caller cannot see never positions a page (its sort values would leak by bisection).
    A marker not found there raises `marker_missing(marker)`, or without it restarts
    from the first page.
    """
    sorts = [(columns[k], asc) for k, asc in params.sorts]
    sorts.append((id_column, True))
    reverse = params.page_reverse
    if params.marker and params.limit:
        scope = stmt if marker_scope is None else marker_scope
        values = _marker_values(db, scope, sorts, id_column, params.marker)
        if values is not None:
            stmt = stmt.where(_after(sorts, values, reverse))
        elif marker_missing is not None:
            raise marker_missing(params.marker)
    order = []
    for col, asc in sorts:
        forward = asc != reverse
        order.append(col.asc() if forward else col.desc())
    stmt = stmt.order_by(*order)
    if params.limit:
        stmt = stmt.limit(params.limit + 1)
    rows = list(db.scalars(stmt).unique()) if _is_entity(stmt) else list(db.execute(stmt))
    has_more = bool(params.limit) and len(rows) > params.limit
    if has_more:
        rows = rows[: params.limit]
    if reverse:
        rows.reverse()
    return Page(rows, has_more)


def _is_entity(stmt: Select[Any]) -> bool:
    return len(stmt.column_descriptions) == 1 and stmt.column_descriptions[0].get("entity") is not None


def _marker_values(db: Session, stmt: Select[Any], sorts: Sequence[tuple[Any, bool]],
                   id_column: ColumnElement[Any], marker: str) -> tuple[Any, ...] | None:
    # The list's own statement (its WHERE is the visibility filter), only the sort values.
    q = stmt.with_only_columns(*[c for c, _ in sorts]).where(id_column == marker).limit(1)
    row = db.execute(q.order_by(None)).first()
    return tuple(row) if row is not None else None


def _after(sorts: Sequence[tuple[Any, bool]], values: Sequence[Any], reverse: bool) -> Any:
    """Rows strictly after the marker in the (possibly reversed) sort order."""
    clauses = []
    for i, (col, asc) in enumerate(sorts):
        forward = asc != reverse
        eq = [sorts[j][0] == values[j] for j in range(i)]
        cmp = col > values[i] if forward else col < values[i]
        clauses.append(and_(*eq, cmp) if eq else cmp)
    return or_(*clauses)


def page_links(url: str, query: Any, collection: str, items: Sequence[Mapping[str, Any]],
               params: ListParams, has_more: bool) -> dict[str, list[dict[str, str]]]:
    """`{"<collection>_links": [...]}` when paging is in use, else `{}`."""
    if not params.limit:
        return {}
    base = [(k, v) for k, v in query.multi_items() if k not in ("marker", "page_reverse")]
    links: list[dict[str, str]] = []
    if items:
        first, last = items[0]["id"], items[-1]["id"]
        more_forward = has_more if not params.page_reverse else bool(params.marker)
        more_backward = bool(params.marker) if not params.page_reverse else has_more
        if more_forward:
            links.append({"rel": "next", "href": f"{url}?{urlencode([*base, ('marker', last)])}"})
        if more_backward:
            q = [*base, ("marker", first), ("page_reverse", "True")]
            links.append({"rel": "previous", "href": f"{url}?{urlencode(q)}"})
    return {f"{collection}_links": links} if links else {}


def select_fields(item: dict[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    if not fields:
        return item
    return {k: item[k] for k in fields if k in item}
