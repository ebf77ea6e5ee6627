"""A request's SQL is bounded (issue 19, item 1) on live servers over PostgreSQL and MariaDB:
a statement past `http.statement_timeout` answers 503 with Retry-After, a read whose client
disconnects stops running in the database, and a stop (SIGTERM) of `serve` (one or two workers)
ends within its bound while such a read is in flight.

A statement is made to run as long as a test wants by holding a lock on the table it reads
(PostgreSQL: LOCK TABLE in a transaction; MariaDB: LOCK TABLES ... WRITE), so nothing
here depends on timing: every wait is for a condition, with a generous bound only to fail
instead of hanging."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

DB_BACKENDS = ["postgresql", "mariadb"]
LIST = "/networking/v2.0/networks"


def _wait_for(condition: Callable[[], bool], what: str, bound: float = 120) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.2)


def _admin_conn(cloud: Any) -> Any:
    name = cloud.database_url.rsplit("/", 1)[1].split("?")[0]
    if cloud.backend == "postgresql":
        import psycopg

        return psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={name}",
                               autocommit=True)
    import pymysql

    return pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                           database=name, autocommit=True)


@contextmanager
def table_locked(cloud: Any, table: str = "network_network") -> Iterator[None]:
    """Every read of `table` by the server waits until the block ends."""
    conn = _admin_conn(cloud)
    try:
        if cloud.backend == "postgresql":
            conn.execute("BEGIN")
            conn.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        else:
            with conn.cursor() as cur:
                cur.execute(f"LOCK TABLES {table} WRITE")
        yield
    finally:
        if cloud.backend == "postgresql":
            conn.execute("ROLLBACK")
        else:
            with conn.cursor() as cur:
                cur.execute("UNLOCK TABLES")
        conn.close()


def waiting_reads(cloud: Any, table: str = "network_network") -> int:
    """How many of the server's statements reading `table` are running now."""
    conn = _admin_conn(cloud)
    try:
        if cloud.backend == "postgresql":
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state = 'active' AND query ILIKE %s "
                "AND query NOT ILIKE '%%LOCK TABLE%%'", (f"%FROM {table}%",)).fetchone()
            return int(row[0])
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM information_schema.processlist WHERE db = DATABASE() "
                        "AND id <> CONNECTION_ID() AND command = 'Query' AND info LIKE %s",
                        (f"%FROM {table}%",))
            return int(cur.fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("backend", DB_BACKENDS)
def test_a_statement_past_the_deadline_is_a_503_with_retry_after(cloud_factory, backend):
    cloud = cloud_factory(backend, extra_env={"STACKLING_HTTP__STATEMENT_TIMEOUT": "1"})
    token = cloud.token()
    with table_locked(cloud), cloud.http(token) as http:
        r = http.get(LIST)
    assert r.status_code == 503, r.text
    assert r.headers["Retry-After"] == "2"
    assert r.json()["NeutronError"]["type"] == "ServiceUnavailable"
    with cloud.http(token) as http:  # the connection is usable again, deadline intact
        assert http.get(LIST).status_code == 200
        with table_locked(cloud):
            assert http.get(LIST).status_code == 503


def _raw_get(cloud: Any, token: str, path: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", cloud.port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Auth-Token: {token}\r\n\r\n"
                 .encode())
    return sock


@pytest.mark.parametrize("backend", DB_BACKENDS)
def test_a_read_whose_client_left_stops_running_in_the_database(cloud_factory, backend):
    cloud = cloud_factory(backend, extra_env={"STACKLING_HTTP__STATEMENT_TIMEOUT": "600"})
    token = cloud.token()
    with table_locked(cloud):
        socks = [_raw_get(cloud, token, LIST) for _ in range(3)]
        _wait_for(lambda: waiting_reads(cloud) == 3, "three lists waiting on the lock")
        for sock in socks:
            sock.close()
        _wait_for(lambda: waiting_reads(cloud) == 0, "the abandoned lists cancelled")
    with cloud.http(token) as http:
        assert http.get(LIST).status_code == 200


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_stops_serve_within_its_bound_while_a_list_runs(cloud_factory, workers):
    cloud = cloud_factory("postgresql", workers=workers, extra_env={
        "STACKLING_HTTP__STATEMENT_TIMEOUT": "600", "STACKLING_HTTP__SHUTDOWN_TIMEOUT": "2"})
    token = cloud.token()
    answers: list[Any] = []

    def slow_list() -> None:
        try:
            answers.append(httpx.get(f"{cloud.url}{LIST}", headers={"X-Auth-Token": token},
                                     timeout=600).status_code)
        except httpx.HTTPError as err:
            answers.append(type(err).__name__)

    with table_locked(cloud):
        client = threading.Thread(target=slow_list, daemon=True)
        client.start()
        _wait_for(lambda: waiting_reads(cloud) == 1, "the list waiting on the lock")
        assert cloud.proc is not None
        cloud.proc.terminate()
        try:
            # The lock is still held: only cancelling the statement lets the server stop.
            code = cloud.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError("serve did not stop while a list was in flight: "
                                 + cloud.log_tail(2000)) from None
        assert waiting_reads(cloud) == 0
    client.join(timeout=120)
    # uvicorn re-raises the SIGTERM it handled once a lone process has shut down.
    assert code in (0, -signal.SIGTERM), cloud.log_tail(2000)
    assert answers and answers[0] != 200, answers
