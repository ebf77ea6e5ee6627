"""Alembic environment: target metadata is every stackling model."""

from __future__ import annotations

from alembic import context

from stackling.migrations.schema import all_metadata

config = context.config
target_metadata = all_metadata()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        from stackling.common.db import make_engine

        engine = make_engine(config.get_main_option("sqlalchemy.url"))
        with engine.connect() as connection:
            _run(connection)
        engine.dispose()
    else:
        _run(connection)


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
