"""List queries for network resources: neutron's filters (repeated keys OR, different
keys AND, empty string matches empty), tag filters, then `common.listing` for sorting and
keyset paging."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sqlalchemy import Select, String, any_, bindparam, cast, func, select, true
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from stackling.common.listing import (
    DEFAULT_MAX_FILTER_VALUES,
    ListParams,
    Page,
    filter_values,
    paginate,
    parse_list_params,
)
from stackling.network import errors
from stackling.network.attributes import Attr, filter_keys, query_value, sort_keys
from stackling.network.core.models import Tag

Clause = Callable[[list[Any]], ColumnElement[Any]]


@dataclass
class Listing:
    attrs: Mapping[str, Attr]
    columns: Mapping[str, ColumnElement[Any]]  # attribute -> column (filters and sorts)
    id_column: ColumnElement[Any]
    special: Mapping[str, Clause] = field(default_factory=dict)  # custom filters
    extra_filters: tuple[str, ...] = ()  # filter-only keys outside the attribute map
    # (policy action, admin-only attributes): filters and sorts on those the caller cannot
    # read are ignored (policy.ignore_unreadable), never a side channel.
    readable: tuple[str, tuple[str, ...]] | None = None

    def parse(self, query: Any, max_limit: int | None = None,
              max_values: int = DEFAULT_MAX_FILTER_VALUES) -> ListParams:
        return parse_list_params(
            query, filterable=filter_keys(self.attrs, (*self.special, *self.extra_filters)),
            sortable=sort_keys(self.attrs) & set(self.columns), error=errors.BadRequest,
            max_limit=max_limit, max_values=max_values)

    def where(self, stmt: Select[Any], filters: Mapping[str, list[str]],
              dialect: str = "") -> Select[Any]:
        for key, raw in filters.items():
            if key in ("tags", "tags-any", "not-tags", "not-tags-any"):
                stmt = stmt.where(_tag_clause(key, raw, self.id_column, dialect))
                continue
            values = [query_value(key, self.attrs.get(key), v) for v in raw]
            if key in self.special:
                stmt = stmt.where(self.special[key](values))
            elif key in self.columns:
                col = self.columns[key]
                stmt = stmt.where(col == values[0] if len(values) == 1 else col.in_(values))
        return stmt

    def page(self, db: Session, stmt: Select[Any], params: ListParams) -> Page:
        """`stmt` selects what the caller may see; the marker must be one of those rows
        (filters aside), else the resource's 404 as neutron's `_get_marker_obj`."""
        visible = stmt
        stmt = self.where(stmt, params.filters, db.get_bind().dialect.name)
        return paginate(db, stmt, columns=self.columns, id_column=self.id_column,
                        params=params, marker_scope=visible,
                        marker_missing=partial(marker_not_found, self.id_column))


# The NotFound neutron raises for a marker, by table (its `_get_<resource>`).
_MARKER_NOT_FOUND = {
    "network_network": ("NetworkNotFound", "Network %s could not be found."),
    "network_subnet": ("SubnetNotFound", "Subnet %s could not be found."),
    "network_subnet_pool": ("SubnetPoolNotFound", "Subnet pool %s could not be found."),
    "network_port": ("PortNotFound", "Port %s could not be found."),
    "network_security_group": ("SecurityGroupNotFound", "Security group %s does not exist"),
    "network_security_group_rule": ("SecurityGroupRuleNotFound",
                                    "Security group rule %s does not exist"),
    "network_router": ("RouterNotFound", "Router %s could not be found"),
    "network_floatingip": ("FloatingIPNotFound", "Floating IP %s could not be found"),
    "network_segment_range": ("NetworkSegmentRangeNotFound",
                              "Network Segment Range %s could not be found."),
}


class MarkerNotFound(errors.NotFound):
    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.error_type = type_name  # type: ignore[misc]


def marker_not_found(id_column: ColumnElement[Any], marker: str) -> MarkerNotFound:
    table = getattr(getattr(id_column, "table", None), "name", "")
    type_name, message = _MARKER_NOT_FOUND.get(table, ("NotFound", "Marker %s not found."))
    return MarkerNotFound(type_name, message % marker)


def _tag_clause(key: str, raw: list[str], id_column: ColumnElement[Any],
                dialect: str = "") -> ColumnElement[Any]:
    """One subquery over the (tag, resource_id) index whatever the number of tags: the
    resources holding any of them, or (`tags`, `not-tags`) all of them, counted per
    resource. (One EXISTS per tag made PostgreSQL's planning grow with the count: 100 tags
    took 27 s, and SQLite refused 1,000 as too deep an expression.)"""
    tags = filter_values(key, raw, max_values=0)  # split and de-duplicated; bounded earlier
    if not tags:
        return true() if key in ("tags", "not-tags", "not-tags-any") else ~true()
    # PostgreSQL: one array parameter, so the statement's text (and psycopg's parse of
    # it) is the same at any count; elsewhere one parameter per tag.
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import ARRAY  # ~25 ms: not on SQLite's start

        named = Tag.tag == any_(bindparam(None, tags, type_=ARRAY(String)))
    else:
        named = Tag.tag.in_(tags)
    # Grouped, the subquery is one set computed once and probed by hash, whatever the
    # count (ungrouped, PostgreSQL's estimate of 1,000 absent tags chose a merge join at
    # 30 ms, and NOT EXISTS a per-row probe at 300 ms when every row matched).
    holders = select(Tag.resource_id).where(named).group_by(Tag.resource_id)
    if key in ("tags", "not-tags"):
        # (resource_id, tag) is the primary key: a resource's count is its distinct tags.
        holders = holders.having(func.count() == len(tags))
    if key in ("not-tags", "not-tags-any"):
        return id_column.not_in(holders)  # a hashed subplan, computed once
    if dialect == "postgresql":
        # The holders as one array computed first (an InitPlan), then looked up by id:
        # as a semi-join, the planner's guess for many tags (10 rows each) picked a merge
        # join walking the whole id index for 10 rows.
        found = select(func.array_agg(holders.subquery().c.resource_id)).scalar_subquery()
        return id_column == any_(cast(found, ARRAY(String)))
    return id_column.in_(holders)


def params_from(filters: Mapping[str, Any], listing: Listing) -> ListParams:
    """ListParams from keyword filters (the in-process interface's `**filters`)."""
    params = ListParams()
    allowed = filter_keys(listing.attrs, (*listing.special, *listing.extra_filters))
    for key, value in filters.items():
        if key == "fields":
            params.fields = list(value) if isinstance(value, list | tuple) else [value]
            continue
        if key not in allowed:
            raise errors.BadRequest(f"['{key}'] is invalid attribute for filtering")
        values = value if isinstance(value, list | tuple | set) else [value]
        params.filters[key] = [_as_query(v) for v in values]
    return params


def _as_query(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
