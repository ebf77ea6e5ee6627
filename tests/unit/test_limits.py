"""The common layer's input limits, schema helper and insert-if-absent helper."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import Column, MetaData, String, Table, create_engine, select
from sqlalchemy.orm import Session

from stackling.common import limits, schema
from stackling.common.db import in_int_range, insert_absent


def test_strict_json():
    assert limits.loads(b'{"a": [1, {"b": "c"}]}', 8) == {"a": [1, {"b": "c"}]}
    for raw in (b"[NaN]", b'{"x": Infinity}', b"-Infinity"):
        with pytest.raises(ValueError):
            limits.loads(raw, 8)
    with pytest.raises(ValueError):
        limits.loads(b"{", 8)


@pytest.mark.parametrize("raw", [b"[" * 10000 + b"]" * 10000, b"[" * 9 + b"]" * 9,
                                 b'{"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {}}}}}}}}}'])
def test_nesting_past_the_limit_is_invalid_input(raw):
    with pytest.raises(limits.InvalidInput):
        limits.loads(raw, 8)
    assert limits.InvalidInput("x").status == 400


@pytest.mark.parametrize("raw", [b'"a\\u0000"', b'{"k\\u0000": 1}', b'[["\\u0000"]]'])
def test_nul_characters_in_keys_and_strings_are_invalid_input(raw):
    with pytest.raises(limits.InvalidInput):
        limits.loads(raw, 8)


def test_first_error_is_jsonschemas_first_or_best_match():
    s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                          "c": {}},
         "required": ["c"], "additionalProperties": False}
    err = schema.first_error(s, {"a": "x", "b": 1})
    assert err is not None and err.message == "'x' is not of type 'integer'" and err.path == ["a"]
    assert schema.first_error(s, {"a": 1, "b": "x", "c": 0, "d": 0}).message == (
        "Additional properties are not allowed ('d' was unexpected)")
    assert schema.first_error(s, {"a": 1, "c": 0}) is None
    fmt = {"type": "string", "format": "even"}
    checks = {"even": lambda v: len(v) % 2 == 0}
    assert schema.first_error(fmt, "ab", formats=checks) is None
    assert schema.first_error(fmt, "abc", formats=checks).message == "'abc' is not a 'even'"
    assert schema.first_error(fmt, "abc") is None  # formats are opt-in, as upstream's


def test_jsonschema_is_imported_on_first_use_not_at_start():
    code = ("import sys; from stackling.app import create_app; from stackling.common.http "
            "import build_router; print('jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_insert_absent_skips_rows_already_there():
    metadata = MetaData()
    table = Table("pairs", metadata, Column("a", String(8), primary_key=True),
                  Column("b", String(8), primary_key=True))
    engine = create_engine("sqlite://")
    metadata.create_all(engine)
    with Session(engine) as db:
        insert_absent(db, table, [{"a": "1", "b": "x"}, {"a": "1", "b": "y"}])
        insert_absent(db, table, [{"a": "1", "b": "x"}])  # already there: no error
        insert_absent(db, table, [{"a": "1", "b": "x"}, {"a": "2", "b": "x"}, {"a": "2", "b": "x"}])
        insert_absent(db, table, [])
        assert sorted(db.execute(select(table.c.a, table.c.b))) == [
            ("1", "x"), ("1", "y"), ("2", "x")]


def test_in_int_range():
    assert in_int_range(2**63 - 1) and in_int_range(-(2**63))
    assert not in_int_range(2**63) and not in_int_range(10**25)


def test_user_patterns_are_bounded():
    import time

    from stackling.common.patterns import PatternError, PatternTooCostly, UserPattern

    assert UserPattern("^web").search("webserver")
    assert UserPattern("(?=.*[A-Z])(?=.*[0-9]).{8,}").fullmatch("Abcdefg1")
    assert not UserPattern("a|ab").fullmatch("abc")
    started = time.monotonic()
    with pytest.raises(PatternTooCostly, match="takes too long"):
        UserPattern("(a|aa)+c", budget=0.1).search("a" * 100)  # 2^50 paths
    with pytest.raises(PatternTooCostly, match="takes too long"):
        UserPattern("(a|aa)+c", budget=0.1).fullmatch("a" * 100)
    assert time.monotonic() - started < 5  # bounded, not centuries
    for costly in ("((a{1000}){1000}){1000}", "(" * 5000 + ")" * 5000):
        with pytest.raises(PatternTooCostly):
            UserPattern(costly)
    with pytest.raises(PatternError):
        UserPattern("(")
