"""Keystone's list filters: `attr__contains`, `__startswith`, `__endswith` and their
case-insensitive `__i…` forms, and project tag filters (`tags`, `tags-any`, `not-tags`,
`not-tags-any`).

The database narrows with a case-insensitive LIKE (its collation may ignore case: MariaDB's
does), then each row is checked exactly, so every backend answers the same."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import func, literal

OPERATORS = ("contains", "startswith", "endswith")


def _like_pattern(op: str, value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return {"contains": f"%{escaped}%", "startswith": f"{escaped}%",
            "endswith": f"%{escaped}"}[op]


def inexact(query: Mapping[str, str], columns: Mapping[str, Any]) -> list[tuple[str, str, bool, str]]:
    """The query's inexact filters on `columns`: (attribute, operator, case-sensitive, value)."""
    found = []
    for key, value in query.items():
        attr, sep, op = key.partition("__")
        if not sep or attr not in columns:
            continue
        sensitive = not op.startswith("i")
        op = op if sensitive else op[1:]
        if op in OPERATORS:
            found.append((attr, op, sensitive, value))
    return found


def apply_inexact(stmt: Any, query: Mapping[str, str], columns: Mapping[str, Any]) -> Any:
    """`stmt` narrowed by the query's inexact filters (case-insensitively: see `matches`)."""
    for attr, op, _, value in inexact(query, columns):
        stmt = stmt.where(func.lower(columns[attr]).like(
            func.lower(literal(_like_pattern(op, value))), escape="\\"))
    return stmt


def _test(op: str, have: str, want: str) -> bool:
    return {"contains": want in have, "startswith": have.startswith(want),
            "endswith": have.endswith(want)}[op]


def matches(row: Any, query: Mapping[str, str], columns: Mapping[str, Any]) -> bool:
    """Whether `row` passes the query's inexact filters exactly (case as asked)."""
    for attr, op, sensitive, value in inexact(query, columns):
        have = str(getattr(row, attr) or "")
        if not (_test(op, have, value) if sensitive else
                _test(op, have.casefold(), value.casefold())):
            return False
    return True


def filter_rows(rows: Iterable[Any], query: Mapping[str, str],
                columns: Mapping[str, Any]) -> list[Any]:
    return [r for r in rows if matches(r, query, columns)]


def _tag_list(value: str) -> set[str]:
    return {t for t in value.split(",") if t}


def tags_match(tags: Iterable[str], query: Mapping[str, str]) -> bool:
    """Keystone's project tag filters: `tags` all of them, `tags-any` at least one,
    `not-tags` not all of them, `not-tags-any` none of them."""
    have = set(tags or [])
    if "tags" in query and not _tag_list(query["tags"]) <= have:
        return False
    if "tags-any" in query and not _tag_list(query["tags-any"]) & have:
        return False
    if "not-tags" in query and _tag_list(query["not-tags"]) <= have:
        return False
    return not ("not-tags-any" in query and _tag_list(query["not-tags-any"]) & have)
