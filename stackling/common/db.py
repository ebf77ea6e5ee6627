"""Database engine, sessions and the one retry helper.

Every table derives from `Base`, whose naming convention gives Alembic stable constraint
names on SQLite, PostgreSQL and MariaDB. One request is one transaction: `transaction()`
commits on success and rolls back on any exception.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import JSON, DateTime, MetaData, String, create_engine, event, exc
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import NullPool
from sqlalchemy.types import TypeDecorator

LOG = logging.getLogger(__name__)
LOG.setLevel(logging.INFO)  # the pool sizing said at start is always logged

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class IdentityBase(DeclarativeBase):
    """Identity's models: Base's tables (one MetaData, one schema) in a registry of their
    own. SQLAlchemy configures a registry as a whole before a query, so while the other
    services' models are still being mapped in the background at start, identity's
    requests (a token) configure and query only these, never a half-imported module."""

    metadata = Base.metadata


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


# ------------------------------------------------------------------ connection pools
POOL_SIZE, POOL_MAX = 10, 30  # connections a process keeps, and the most it may open
POOL_TIMEOUT = 30  # seconds a request waits for a pooled connection, then 503
# Left free by the cloud's own processes for others (an operator's psql, a migration).
RESERVE_SHARE, RESERVE_MIN = 10, 2  # per cent, at least


@dataclass
class PoolPlan:
    """How many connections each of `processes` processes may hold, from the limit the
    database allows the cloud (None: unknown, SQLAlchemy's defaults above)."""

    limit: int | None
    source: str
    processes: int
    size: int = POOL_SIZE
    overflow: int = POOL_MAX - POOL_SIZE

    @classmethod
    def for_limit(cls, limit: int | None, source: str, processes: int) -> PoolPlan:
        processes = max(1, processes)
        if limit is None:
            return cls(None, source, processes)
        usable = limit - max(RESERVE_MIN, limit * RESERVE_SHARE // 100)
        # At least two a process: a request may need a second session (after-commit work).
        per_process = max(2, min(POOL_MAX, usable // processes))
        size = min(POOL_SIZE, per_process)
        return cls(limit, source, processes, size, per_process - size)

    def describe(self) -> str:
        per = self.size + self.overflow
        workers = f"{self.processes} worker{'s' if self.processes > 1 else ''}"
        if self.limit is None:
            return (f"database connection limit unknown ({self.source}); {workers} x at most "
                    f"{per} connections (pool {self.size} + overflow {self.overflow})")
        line = (f"database connection limit {self.limit} ({self.source}); {workers} x at most "
                f"{per} connections (pool {self.size} + overflow {self.overflow}), "
                f"{self.limit - per * self.processes} left for other clients")
        if per * self.processes > self.limit:
            line += ": too many workers for this limit, requests may get 503"
        return line

    def engine_args(self) -> dict[str, int]:
        return {"pool_size": self.size, "max_overflow": self.overflow,
                "pool_timeout": POOL_TIMEOUT}


def connection_limit(engine: Engine) -> tuple[int | None, str]:
    """The connections the database allows this user here, and where that comes from:
    the server's max_connections (less PostgreSQL's superuser-reserved slots), or lower, a
    role's or database's CONNECTION LIMIT (PostgreSQL) or the account's
    MAX_USER_CONNECTIONS (MariaDB)."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            row = conn.exec_driver_sql(
                "SELECT current_setting('max_connections')::int, "
                "current_setting('superuser_reserved_connections')::int, "
                "(SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user), "
                "(SELECT datconnlimit FROM pg_database WHERE datname = current_database())"
            ).one()
            limits = [(row[0] - row[1], f"max_connections {row[0]} less {row[1]} reserved")]
            if row[2] is not None and row[2] >= 0:
                limits.append((row[2], "the role's CONNECTION LIMIT"))
            if row[3] is not None and row[3] >= 0:
                limits.append((row[3], "the database's CONNECTION LIMIT"))
        else:
            row = conn.exec_driver_sql("SELECT @@max_connections, @@max_user_connections").one()
            limits = [(int(row[0]), "max_connections")]
            if int(row[1] or 0) > 0:  # the account's limit, or the server-wide one
                limits.append((int(row[1]), "max_user_connections"))
    return min(limits)


def plan_pool(url: str, processes: int) -> PoolPlan:
    """Read the limit once at start (one short-lived connection) and share it out."""
    probe = create_engine(_server_url(url), poolclass=NullPool)
    try:
        limit, source = connection_limit(probe)
    except exc.SQLAlchemyError as err:
        return PoolPlan.for_limit(None, f"not read: {type(err).__name__}", processes)
    finally:
        probe.dispose()
    return PoolPlan.for_limit(limit, source, processes)


def _server_url(url: str) -> str:
    if url.startswith("mysql") and "charset=" not in url:
        url += ("&" if "?" in url else "?") + "charset=utf8mb4"
    return url


OVERLOAD_TEXTS = ("too many connections", "too many clients", "remaining connection slots",
                  "max_user_connections", "(1040,", "(1203,", "(1226,")


def is_overloaded(err: BaseException | None) -> bool:
    """True when the database could not give the request a connection: the pool stayed
    exhausted for POOL_TIMEOUT, or the server refused one more (its, a role's or an
    account's connection limit). Upstream answers these 503, never 500."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, exc.TimeoutError):  # QueuePool limit reached, timed out
            return True
        text = str(getattr(err, "orig", err)).lower()
        if any(s in text for s in OVERLOAD_TEXTS):
            return True
        err = err.__cause__ or err.__context__
    return False


def is_refused_connection(err: BaseException) -> bool:
    """The server refused a new connection (no pool wait behind it): worth a retry."""
    return is_overloaded(err) and not isinstance(err, exc.TimeoutError)


class Database:
    """An engine plus a session factory, one per process."""

    def __init__(self, url: str, *, echo: bool = False, processes: int = 1) -> None:
        self.url = url
        # PostgreSQL and MariaDB: each of the `processes` (serve --workers N) may hold a
        # share of the connections the database allows, so together they never exceed it.
        self.pool = None if url.startswith("sqlite") else plan_pool(url, processes)
        self.engine = make_engine(url, echo=echo, pool=self.pool)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False, autoflush=True)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def log_pool(self) -> None:
        """Say what the database's connection limit allows this process (at start)."""
        if self.pool is not None:
            LOG.info("%s", self.pool.describe())

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


def make_engine(url: str, *, echo: bool = False, pool: PoolPlan | None = None) -> Engine:
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
    kwargs.update((pool or PoolPlan(None, "default", 1)).engine_args())
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


def lost_race_or_refused(err: BaseException) -> bool:
    return is_deadlock(err) or is_refused_connection(err)


def retry_on_conflict(
    fn: Callable[[], T],
    *,
    attempts: int = 8,
    retry_if: Callable[[BaseException], bool] = lost_race_or_refused,
) -> T:
    """Run `fn` (one whole transaction) again, with jittered backoff, after a lost race
    or a connection the database refused (nothing was done: a start hook or a background
    step then outlasts a moment of overload)."""
    for attempt in range(attempts):
        try:
            return fn()
        except RETRYABLE as err:
            if attempt == attempts - 1 or not retry_if(err):
                raise
            time.sleep(random.uniform(0, 0.01 * (2**attempt)))
    raise AssertionError("unreachable")
