"""A request's SQL: under a deadline, and cancelled once nobody waits for its answer.

- Deadline: every connection of PostgreSQL (`statement_timeout`) and MariaDB
  (`max_statement_time`) runs each statement for at most `http.statement_timeout` seconds;
  past it the request answers the family's 503 with `Retry-After` (upstream has no such
  limit: oslo.db surfaces the database's timeout as a 500; a 503 says "try later" as for an
  overloaded database). SQLite has no statement deadline.
- Cancelled: the connections a request checks out are tracked (pool events, keyed by the
  request's context variable). When the client of a read (GET/HEAD) disconnects, or a stop
  (SIGTERM) has waited `http.shutdown_timeout` seconds for the request, its running
  statement is cancelled: PostgreSQL's cancel request, MariaDB's `KILL QUERY`, SQLite's
  interrupt. A connection is released from tracking before it returns to the pool, so a
  cancel never reaches another request's statement.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy import event, exc
from sqlalchemy.engine import Connection, Engine

from stackling.common import errors

LOG = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_AFTER = "2"
TIMED_OUT = ("The request took too long in the database and was cancelled; retry it later "
             "or narrow it.")


class Cancelled(Exception):
    """A statement refused because its request's work was cancelled."""


class Statements:
    """The database connections one request holds, and whether its work was cancelled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, tuple[Any, Engine]] = {}  # id(dbapi connection) -> (conn, engine)
        self.cancelled: str | None = None  # why, once cancelled

    def hold(self, dbapi_conn: Any, engine: Engine) -> None:
        with self._lock:
            self._held[id(dbapi_conn)] = (dbapi_conn, engine)

    def release(self, dbapi_conn: Any) -> None:
        with self._lock:  # waits for a cancel being sent on this connection
            self._held.pop(id(dbapi_conn), None)

    def cancel(self, why: str) -> None:
        """Cancel what runs on the request's connections (under the lock: a connection
        cannot go back to the pool while its cancel is sent)."""
        with self._lock:
            if self.cancelled is None:
                self.cancelled = why
            for dbapi_conn, engine in list(self._held.values()):
                try:
                    _cancel(engine, dbapi_conn)
                except Exception:  # noqa: BLE001 - best effort: the deadline still holds
                    LOG.warning("cancelling a statement (%s) failed", why, exc_info=True)


CURRENT: contextvars.ContextVar[Statements | None] = contextvars.ContextVar(
    "stackling_statements", default=None)


def _cancel(engine: Engine, dbapi_conn: Any) -> None:
    dialect = engine.dialect.name
    if dialect == "postgresql":
        dbapi_conn.cancel()  # libpq's cancel request for this backend's current statement
    elif dialect in ("mysql", "mariadb"):
        thread_id = int(dbapi_conn.thread_id())
        cargs, cparams = engine.dialect.create_connect_args(engine.url)
        killer = engine.dialect.loaded_dbapi.connect(*cargs, **cparams)
        try:
            with killer.cursor() as cur:
                cur.execute(f"KILL QUERY {thread_id}")
        finally:
            killer.close()
    elif dialect == "sqlite":
        dbapi_conn.interrupt()


# ------------------------------------------------------------------ engine set-up
def install(engine: Engine, statement_timeout: float) -> None:
    """Give every new connection the deadline, and track checkouts made by requests."""
    dialect = engine.dialect.name

    def set_deadline(dbapi_conn: Any, seconds: float) -> None:
        cur = dbapi_conn.cursor()
        try:
            if dialect == "postgresql":
                cur.execute(f"SET statement_timeout = {int(seconds * 1000)}")
            else:
                cur.execute(f"SET SESSION max_statement_time = {float(seconds)}")
        finally:
            cur.close()
        dbapi_conn.commit()

    if dialect in ("postgresql", "mysql", "mariadb") and statement_timeout > 0:
        @event.listens_for(engine, "connect")
        def _deadline(dbapi_conn: Any, record: Any) -> None:
            set_deadline(dbapi_conn, statement_timeout)

        @event.listens_for(engine, "checkin")
        def _restore(dbapi_conn: Any, record: Any) -> None:
            if dbapi_conn is not None and record.info.pop("deadline_lifted", False):
                set_deadline(dbapi_conn, statement_timeout)

    @event.listens_for(engine, "checkout")
    def _hold(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        statements = CURRENT.get()
        if statements is not None:
            record.info["statements"] = statements
            statements.hold(dbapi_conn, engine)

    @event.listens_for(engine, "checkin")
    def _release(dbapi_conn: Any, record: Any) -> None:
        statements = record.info.pop("statements", None)
        if statements is not None and dbapi_conn is not None:
            statements.release(dbapi_conn)

    @event.listens_for(engine, "before_cursor_execute")
    def _refuse(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                executemany: bool) -> None:
        # A cancel reaches only the statement running then: none starts after it.
        statements = conn.info.get("statements")
        if statements is not None and statements.cancelled is not None:
            raise Cancelled(statements.cancelled)


def lift_deadline(conn: Connection) -> None:
    """No deadline for this connection's work (schema migrations); MariaDB's session
    setting is put back when the connection returns to the pool."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
    elif dialect in ("mysql", "mariadb"):
        conn.exec_driver_sql("SET SESSION max_statement_time = 0")
        conn.connection.info["deadline_lifted"] = True


# ------------------------------------------------------------------ requests
def is_cancelled(err: BaseException | None) -> bool:
    """A statement ended by its deadline or a cancel (PostgreSQL 57014, MariaDB 1969/1317,
    SQLite's interrupt)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        orig = err.orig if isinstance(err, exc.DBAPIError) else err
        if getattr(orig, "sqlstate", None) == "57014":
            return True
        if getattr(orig, "args", None) and orig.args[0] in (1969, 1317, 3024):
            return True
        text = str(orig).lower()
        if "interrupted" in text or "canceling statement" in text:
            return True
        err = err.__cause__ or err.__context__
    return False


async def guarded(receive: Callable[[], Awaitable[Any]] | None,
                  work: Callable[[], Awaitable[T]]) -> T:
    """Run `work()` (a handler in a worker thread) with its SQL tracked: cancelled when
    `receive` reports the client gone (None: not watched), or when this task is cancelled
    (a stop's graceful period is over). A statement ended by its deadline or a cancel is
    the family's 503 with Retry-After."""
    statements = Statements()
    token = CURRENT.set(statements)
    try:
        task = asyncio.ensure_future(work())  # copies the context: the thread sees it
    finally:
        CURRENT.reset(token)
    watcher = asyncio.ensure_future(_disconnected(receive)) if receive is not None else None
    try:
        if watcher is not None:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                statements.cancel("the client disconnected")
        return await task
    except asyncio.CancelledError:
        statements.cancel("the server is stopping")
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(task), timeout=5)
        raise
    except Exception as err:
        if statements.cancelled is not None or is_cancelled(err):
            LOG.warning("statement cancelled (%s): %s", statements.cancelled or "deadline",
                        str(getattr(err, "orig", err)).splitlines()[0][:200])
            raise errors.ServiceUnavailable(TIMED_OUT, headers={"Retry-After": RETRY_AFTER}
                                            ) from None
        raise
    finally:
        if watcher is not None:
            watcher.cancel()


async def _disconnected(receive: Callable[[], Awaitable[Any]]) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
