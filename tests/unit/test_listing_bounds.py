"""The shared list helpers that bound what a query string can ask of the database (issue 19,
items 1 and 5), and the recognition of a statement ended by its deadline or a cancel."""

from __future__ import annotations

import pytest

from stackling.common.errors import BadRequest
from stackling.common.listing import SQL_MAX_LIMIT, filter_values, parse_limit
from stackling.common.statements import is_cancelled


def test_tag_lists_are_split_deduplicated_and_bounded():
    assert filter_values("tags", ["a,b,,a", "b,c"]) == ["a", "b", "c"]
    assert filter_values("name", ["x", "", "x"]) == ["x", ""]  # an empty name is a value
    assert filter_values("tags", ["t"] * 5000) == ["t"]
    assert filter_values("id", [str(i) for i in range(3)], max_values=3) == ["0", "1", "2"]
    with pytest.raises(BadRequest, match="at most 3 allowed"):
        filter_values("tags-any", ["0,1,2,3"], max_values=3)
    assert len(filter_values("tags", [",".join(map(str, range(5000)))], max_values=0)) == 5000


def test_a_limit_is_an_integer_clamped_once():
    def invalid() -> Exception:
        return BadRequest("bad")

    assert parse_limit(None, invalid=invalid) is None
    assert parse_limit("9" * 30, invalid=invalid) == SQL_MAX_LIMIT
    assert parse_limit("9" * 30, invalid=invalid, max_limit=1000) == 1000
    assert parse_limit("0", invalid=invalid, max_limit=1000) == 0
    for bad in ("-1", "abc", "1.5", ""):
        with pytest.raises(BadRequest):
            parse_limit(bad, invalid=invalid)


class _PgCancel(Exception):
    sqlstate = "57014"


def test_deadline_and_cancel_errors_are_recognised():
    assert is_cancelled(_PgCancel("canceling statement due to statement timeout"))
    assert is_cancelled(Exception(1969, "Query execution was interrupted (max_statement_time "
                                        "exceeded)"))
    assert is_cancelled(Exception(1317, "Query execution was interrupted"))
    assert is_cancelled(Exception("interrupted"))  # SQLite
    wrapped = RuntimeError("outer")
    wrapped.__cause__ = _PgCancel("x")
    assert is_cancelled(wrapped)
    assert not is_cancelled(Exception(1062, "Duplicate entry"))
    assert not is_cancelled(ValueError("deadlock detected"))
