"""An overloaded database is never a 500 (issue 19, item 14).

Placement claims answered 500 under load: `--workers 4` on PostgreSQL, each worker's pool
free to open 30 connections, met the server's connection limit. The load is reproduced
by the limit, not by loading the machine: the cloud's database user may hold only a few
connections (a role's CONNECTION LIMIT on PostgreSQL, an account's MAX_USER_CONNECTIONS on
MariaDB).

- Every worker's pool is sized at start from that limit, so `--workers N` together never
  exceed it, and the log says what it allows: 100 parallel claims then all answer as
  upstream (204, or 409 when the hosts are full), none 500.
- When something else takes the connections the database allows (another client), a
  request that cannot connect is retried, then answered 503 with Retry-After, never 500.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.concurrency.test_placement_claims import V, _provider
from tests.conftest import Cloud, free_port

LIMIT = 16


def _limited_database(backend: str, limit: int) -> tuple[str, Any]:
    """A fresh database owned by a user allowed `limit` connections; its URL and a
    function dropping both."""
    suffix = uuid.uuid4().hex[:10]
    name, user = f"stackling_test_{suffix}", f"stackling_lim_{suffix}"
    if backend == "postgresql":
        import psycopg

        admin = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{user}" LOGIN CONNECTION LIMIT {limit}')
            conn.execute(f'CREATE DATABASE "{name}" OWNER "{user}"')

        def drop() -> None:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                conn.execute(f'DROP ROLE IF EXISTS "{user}"')

        return f"postgresql+psycopg://{user}@127.0.0.1:5432/{name}", drop
    import pymysql

    def root() -> Any:
        return pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                               autocommit=True)

    conn = root()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        cur.execute(f"CREATE USER '{user}'@'%' WITH MAX_USER_CONNECTIONS {limit}")
        cur.execute(f"GRANT ALL ON `{name}`.* TO '{user}'@'%'")
    conn.close()

    def drop_my() -> None:
        c = root()
        with c.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
            cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        c.close()

    return f"mysql+pymysql://{user}@127.0.0.1:3306/{name}", drop_my


@pytest.fixture
def limited_cloud(tmp_path: Path) -> Iterator[Any]:
    started: list[tuple[Cloud, Any]] = []

    def factory(backend: str, workers: int) -> Cloud:
        url, drop = _limited_database(backend, LIMIT)
        base = tmp_path / f"cloud-{len(started)}"
        server = Cloud(backend, url, base / "data", free_port(), workers=workers)
        started.append((server, drop))
        return server.start()

    yield factory
    for server, drop in started:
        server.stop()
        drop()


def _hold_all_connections(server: Cloud) -> list[Any]:
    """Connections of the cloud's own user until the database refuses one more."""
    from sqlalchemy.engine import make_url

    url = make_url(server.database_url)
    held: list[Any] = []
    for _ in range(LIMIT + 1):
        try:
            if server.backend == "postgresql":
                import psycopg

                held.append(psycopg.connect(host="127.0.0.1", port=5432, user=url.username,
                                            dbname=url.database))
            else:
                import pymysql

                held.append(pymysql.connect(host="127.0.0.1", port=3306, user=url.username,
                                            password="", database=url.database))
        except Exception:  # noqa: BLE001 - the database's refusal: all are taken
            return held
    raise AssertionError("the database never refused a connection")


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_claims_within_the_connection_limit(limited_cloud, backend):
    server = limited_cloud(backend, workers=4)
    token = server.token()
    project = str(uuid.uuid4())
    with server.http(token) as http:
        a = _provider(http, "lim-a", {"VCPU": {"total": 30}})
        b = _provider(http, "lim-b", {"VCPU": {"total": 30}})
    claims = 100
    barrier = threading.Barrier(claims)

    def claim(i: int) -> httpx.Response:
        body = {"allocations": {(a, b)[i % 2]: {"resources": {"VCPU": 1}}},
                "project_id": project, "user_id": "u", "consumer_generation": None,
                "consumer_type": "INSTANCE"}
        with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token, **V},
                          timeout=120) as http:
            barrier.wait()
            return http.put(f"/placement/allocations/{uuid.uuid4()}", json=body)

    with ThreadPoolExecutor(claims) as pool:
        results = list(pool.map(claim, range(claims)))
    statuses = sorted(r.status_code for r in results)
    assert statuses == [204] * 60 + [409] * 40, [r.text for r in results
                                                 if r.status_code not in (204, 409)][:3]
    with server.http(token) as http:
        usages = http.get(f"/placement/usages?project_id={project}", headers={
            "OpenStack-API-Version": "placement 1.37"}).json()
        assert usages["usages"]["VCPU"] == 60
    # each worker's start said what the limit allows it
    assert f"database connection limit {LIMIT} " in server.log_tail(10**6)


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_no_connection_left_is_503_with_retry_after(limited_cloud, backend):
    server = limited_cloud(backend, workers=2)
    token = server.token()
    for _ in range(4):  # every service started in both workers (their start hooks ran)
        with server.http(token) as http:
            for url in ("/compute/v2.1/flavors", "/image/v2/images", "/placement/",
                        "/networking/v2.0/networks", "/orchestration/"):
                assert http.get(url).status_code < 500
    held = _hold_all_connections(server)
    try:
        n = 40
        barrier = threading.Barrier(n)

        def call(i: int) -> httpx.Response:
            with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token, **V},
                              timeout=120) as http:
                barrier.wait()
                if i % 2:
                    return http.get("/placement/resource_providers")
                return http.get("/networking/v2.0/networks")

        with ThreadPoolExecutor(n) as pool:
            results = list(pool.map(call, range(n)))
    finally:
        for conn in held:
            conn.close()
    assert {r.status_code for r in results} <= {200, 503}, \
        [r.text for r in results if r.status_code not in (200, 503)][:3]
    for r in results:
        if r.status_code == 503:
            assert int(r.headers["Retry-After"]) >= 1
            if r.url.path.startswith("/placement"):
                assert r.json()["errors"][0]["status"] == 503
            else:
                assert r.json()["NeutronError"]["type"]
    # the connections given back, everything answers again
    with server.http(token) as http:
        assert http.get("/placement/resource_providers", headers=V).status_code == 200
        assert http.get("/networking/v2.0/networks").status_code == 200
