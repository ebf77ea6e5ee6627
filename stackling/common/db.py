"""Database engine, sessions and the one retry helper.

Every table derives from `Base`, whose naming convention gives Alembic stable constraint
names on SQLite, PostgreSQL and MariaDB. One request is one transaction: `transaction()`
commits on success and rolls back on any exception.
"""

from __future__ import annotations

import datetime as dt
import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import JSON, DateTime, MetaData, String, create_engine, event, exc
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator):
    """Naive UTC in the database, aware UTC in Python (MariaDB and SQLite drop zones)."""

    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> Any:
        if dialect.name in ("mysql", "mariadb"):
            # MariaDB's DATETIME drops fractions unless asked: keep microseconds.
            from sqlalchemy.dialects.mysql import DATETIME

            return dialect.type_descriptor(DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime())

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value


# JSON columns: one type for all backends (MariaDB stores it as LONGTEXT).
JSONType = JSON()


def uuid_str() -> str:
    return str(uuid.uuid4())


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def utcnow_precise() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def Id(length: int = 36) -> String:  # noqa: N802 - reads like a type
    return String(length)


class Database:
    """An engine plus a session factory, one per process."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        self.engine = make_engine(url, echo=echo)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False, autoflush=True)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Session]:
        """One transaction: commit on success, roll back on raise.

        On SQLite a writing transaction starts with BEGIN IMMEDIATE so that two writers
        never deadlock upgrading read locks; readers use a deferred BEGIN.
        """
        session = self.sessions()
        try:
            if self.dialect == "sqlite":
                session.connection(execution_options={"sqlite_begin": "IMMEDIATE" if write else "DEFERRED"})
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def dispose(self) -> None:
        self.engine.dispose()


def make_engine(url: str, *, echo: bool = False) -> Engine:
    kwargs: dict[str, Any] = {"echo": echo, "future": True}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        engine = create_engine(url, **kwargs)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # Let SQLAlchemy, not pysqlite, emit BEGIN so IMMEDIATE is honoured.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")

        return engine
    if url.startswith("mysql"):
        kwargs.update(pool_pre_ping=True, pool_recycle=3600, isolation_level="READ COMMITTED")
        if "charset=" not in url:
            url += ("&" if "?" in url else "?") + "charset=utf8mb4"
    else:
        kwargs.update(pool_pre_ping=True, isolation_level="READ COMMITTED")
    kwargs.update(pool_size=10, max_overflow=20)
    return create_engine(url, **kwargs)


def in_int_range(value: int) -> bool:
    """Whether an integer path id fits a database integer: bigger ones match no row (SQLite
    would refuse to bind them, a 500)."""
    return -(2**63) <= value < 2**63


def insert_absent(db: Session, model: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` into an association table, skipping rows whose key is already there.

    Where upstream is idempotent (setting the same tags, security groups, address pairs,
    aggregate hosts or metadata twice), two identical concurrent requests both succeed:
    the loser's duplicate is a no-op in the database (ON CONFLICT DO NOTHING; MariaDB's
    ON DUPLICATE KEY UPDATE of the key to itself), never a unique violation and a 500.
    The second writer waits for the first to commit, so the outcome is the same row.
    (No count is returned: MariaDB's FOUND_ROWS makes a skipped row count as one.)
    """
    if not rows:
        return
    table = getattr(model, "__table__", model)
    dialect = db.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt: Any = pg_insert(table).on_conflict_do_nothing()
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(table).on_conflict_do_nothing()
    else:
        from sqlalchemy.dialects.mysql import insert as mysql_insert

        key = next(iter(table.primary_key.columns))
        stmt = mysql_insert(table).on_duplicate_key_update({key.name: key})
    if len(rows) == 1:
        db.execute(stmt.values(**rows[0]))
    else:
        db.execute(stmt, [dict(r) for r in rows])


@contextmanager
def unique_or(db: Session, error: Callable[[], BaseException]) -> Iterator[None]:
    """Run an insert in a savepoint; a unique violation (a concurrent request made the
    same row first) becomes `error()` (the upstream 409) instead of a 500."""
    try:
        with db.begin_nested():
            yield
    except exc.IntegrityError as err:
        if not is_unique_violation(err):
            raise
        raise error() from None


def is_unique_violation(err: BaseException) -> bool:
    text = str(getattr(err, "orig", err)).lower()
    return any(s in text for s in ("unique", "duplicate", "1062"))


T = TypeVar("T")

# Errors that mean "another transaction won a race": retried by `retry_on_conflict`.
RETRYABLE = (exc.IntegrityError, exc.OperationalError)


def is_deadlock(err: BaseException) -> bool:
    """True for a lost lock race. The exception chain is searched too: when InnoDB picks
    a deadlock victim it rolls back the whole transaction, so leaving a savepoint
    (`begin_nested`) then fails with "SAVEPOINT ... does not exist" (1305), which hides
    the deadlock behind it."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        text = str(getattr(err, "orig", err)).lower()
        if any(s in text for s in ("deadlock", "could not serialize", "database is locked",
                                   "lock wait timeout")):
            return True
        if "savepoint" in text and "does not exist" in text:
            return True
        err = err.__cause__ or err.__context__  # type: ignore[assignment]
    return False


def retry_on_conflict(
    fn: Callable[[], T],
    *,
    attempts: int = 8,
    retry_if: Callable[[BaseException], bool] = is_deadlock,
) -> T:
    """Run `fn` (one whole transaction) again, with jittered backoff, after a lost race."""
    for attempt in range(attempts):
        try:
            return fn()
        except RETRYABLE as err:
            if attempt == attempts - 1 or not retry_if(err):
                raise
            time.sleep(random.uniform(0, 0.01 * (2**attempt)))
    raise AssertionError("unreachable")
