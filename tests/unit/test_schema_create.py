"""A first start creates the schema from the models and stamps Alembic's heads instead of
replaying every migration: the result must be the migrated schema, on every backend, so
that later migrations apply to both alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from stackling.common.db import make_engine
from stackling.migrations.schema import db_heads, migrate, script_heads, upgrade
from tests.conftest import create_database, drop_database


def describe(engine: Engine) -> dict[str, Any]:
    """Every table's columns, keys, indexes and constraints as the database reports them."""
    out: dict[str, Any] = {}
    with engine.connect() as conn:
        insp = inspect(conn)
        for table in sorted(insp.get_table_names()):
            columns = [(c["name"], c["type"].compile(dialect=engine.dialect), c["nullable"],
                        str(c.get("default")), c.get("autoincrement"))
                       for c in insp.get_columns(table)]
            pk = insp.get_pk_constraint(table)
            fks = sorted((tuple(fk["constrained_columns"]), fk["referred_table"],
                          tuple(fk["referred_columns"]), tuple(sorted(fk["options"].items())))
                         for fk in insp.get_foreign_keys(table))
            indexes = sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                             for i in insp.get_indexes(table))
            uniques = sorted((u["name"], tuple(u["column_names"]))
                             for u in insp.get_unique_constraints(table))
            checks = sorted((c["name"], c["sqltext"]) for c in insp.get_check_constraints(table))
            out[table] = {"columns": columns, "pk": tuple(pk["constrained_columns"]),
                          "fks": fks, "indexes": indexes, "uniques": uniques, "checks": checks}
    return out


def test_created_schema_equals_the_migrated_one(backend: str, tmp_path: Path) -> None:
    migrated_url = create_database(backend, tmp_path / "migrated")
    created_url = create_database(backend, tmp_path / "created")
    engines = [make_engine(migrated_url), make_engine(created_url)]
    try:
        migrate(engines[0])
        assert upgrade(engines[1]) is True  # an empty database: created, then stamped
        assert db_heads(engines[0]) == db_heads(engines[1]) == script_heads()
        migrated, created = describe(engines[0]), describe(engines[1])
        assert sorted(migrated) == sorted(created)
        for table in migrated:
            assert created[table] == migrated[table], table
        assert upgrade(engines[1]) is False  # at every head: nothing more to do
        with engines[1].connect() as conn:  # and empty: nothing was bootstrapped here
            assert conn.execute(text("SELECT COUNT(*) FROM bootstrap_step")).scalar() == 0
    finally:
        for engine in engines:
            engine.dispose()
        drop_database(migrated_url)
        drop_database(created_url)
