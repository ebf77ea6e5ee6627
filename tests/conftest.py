"""Shared fixtures.

- `database_url` / `backend`: a fresh database per backend (SQLite, PostgreSQL, MariaDB),
  created and dropped by the test run. With CI=true an unreachable server is a failure,
  never a skip.
- `cloud`: a real `stackling serve` process per backend (session-scoped) with helpers
  to drive it through openstacksdk (`cloud.sdk()`) and the `openstack` CLI (`cloud.cli()`).
- `cloud_factory`: start extra servers (e.g. `--workers 4` for concurrency tests).
- `api`: an in-process client over the ASGI app on SQLite, for fast API tests.

`make test` runs the tests on pytest-xdist workers: "session" means one worker's session,
and each worker has its own databases (uuid names), data directories (tmp_path) and ports
(`free_port`); how tests are grouped onto workers is at the end of this file. The
`openstack` CLI runs forked from a warm process (tests/openstack_cli.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.openstack_cli import Zygote, shorten_sdk_polls

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
IN_CI = os.environ.get("CI", "").lower() == "true"
ADMIN_PASSWORD = "admin-secret"
DEMO_PASSWORD = "demo-secret"
PG_ADMIN_URL = os.environ.get("STACKLING_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432")
MY_ADMIN_URL = os.environ.get("STACKLING_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306")
BACKENDS = ["sqlite", "postgresql", "mariadb"]
# `make test-quick` sets STACKLING_TEST_BACKENDS=sqlite: the others' tests are deselected.
ONLY_BACKENDS = [b for b in os.environ.get("STACKLING_TEST_BACKENDS", "").split(",") if b] or BACKENDS
# Each PostgreSQL test database carries a CONNECTION LIMIT: superusers (the tests connect
# as postgres) are exempt, but the cloud sizes its pools from it (common/db.py, PoolPlan),
# so the clouds of parallel test workers share the server's max_connections (100).
PG_CONNECTION_LIMIT = 40
# The `openstack` CLI: forked per command from one warm process per worker (tests/openstack_cli.py).
OPENSTACK_CLI = Zygote(ROOT)
shorten_sdk_polls()
SERVER_ENV = {
    "STACKLING_ADMIN_PASSWORD": ADMIN_PASSWORD,
    "STACKLING_DEMO_PASSWORD": DEMO_PASSWORD,
    # Tests log in thousands of times: the cheapest bcrypt cost Keystone accepts.
    "STACKLING_IDENTITY__PASSWORD_HASH_ROUNDS": "4",
    # Reboots and rebuilds complete within their request (the test of the transitional
    # states sets its own minimum duration).
    "STACKLING_COMPUTE__ACTION_MIN_DURATION": "0",
}
# Live servers only (the in-process tests of web-download test its defaults): the clients'
# web-download tests fetch from a server of theirs on loopback (a local mirror, as
# README.md says to allow one), any port of 127.0.0.1.
LIVE_SERVER_ENV = {
    "STACKLING_IMAGE__WEB_DOWNLOAD_ALLOWED_NETWORKS": "127.0.0.1/32",
    "STACKLING_IMAGE__WEB_DOWNLOAD_ALLOWED_PORTS": "[]",
}


# ------------------------------------------------------------------ databases
def _server_reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def create_database(backend: str, tmp: Path) -> str:
    name = f"stackling_test_{uuid.uuid4().hex[:10]}"
    if backend not in ONLY_BACKENDS:
        pytest.skip(f"{backend} is not in STACKLING_TEST_BACKENDS")
    if backend == "sqlite":
        tmp.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{tmp / 'stackling.db'}"
    port = 5432 if backend == "postgresql" else 3306
    if not _server_reachable(port):
        if IN_CI:
            pytest.fail(f"{backend} is not reachable on 127.0.0.1:{port} in CI")
        pytest.skip(f"{backend} not reachable")
    if backend == "postgresql":
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" CONNECTION LIMIT {PG_CONNECTION_LIMIT}')
        return f"{PG_ADMIN_URL}/{name}"
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    conn.close()
    return f"{MY_ADMIN_URL}/{name}"


def drop_database(url: str) -> None:
    if url.startswith("sqlite"):
        return
    name = url.rsplit("/", 1)[1].split("?")[0]
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    conn.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    url = create_database(backend, tmp_path / "db")
    yield url
    drop_database(url)


# ------------------------------------------------------------------ live servers
# Servers listen below the kernel's ephemeral range (32768-60999 by default), each test
# worker in its own slice: a port the kernel hands a client socket, or another worker's
# server, is not given out between our check and the server's bind. Cloud.start retries
# on another port if one was taken all the same (another run on the machine).
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
_PORTS = iter(range(20000 + (_WORKER % 12) * 1000 + (os.getpid() % 500),
                    20000 + (_WORKER % 12 + 1) * 1000))


def free_port() -> int:
    global _PORTS
    for port in _PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    _PORTS = iter(range(20000 + (_WORKER % 12) * 1000, 20000 + (_WORKER % 12 + 1) * 1000))
    return free_port()


class PortTaken(Exception):
    """`stackling serve` found its port in use (it exits before writing anything)."""


class Cloud:
    """A running `stackling serve` and the ways a user drives it."""

    def __init__(self, backend: str, database_url: str, data_dir: Path, port: int,
                 workers: int = 1, extra_env: dict[str, str] | None = None,
                 config: Path | None = None) -> None:
        self.backend = backend
        self.database_url = database_url
        self.data_dir = data_dir
        self.port = port
        self.workers = workers
        self.url = f"http://127.0.0.1:{port}"
        self.clouds_yaml = data_dir / "clouds.yaml"
        self.env = {**os.environ, **SERVER_ENV, **LIVE_SERVER_ENV, **(extra_env or {})}
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self._sdk: dict[str, Any] = {}

    # -- process
    def start(self, timeout: float = 180) -> Cloud:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            try:
                return self._start(timeout)
            except PortTaken:
                self.port = free_port()
                self.url = f"http://127.0.0.1:{self.port}"
        return self._start(timeout)

    def _start(self, timeout: float) -> Cloud:
        cmd = [str(BIN / "stackling"), "serve", "--data-dir", str(self.data_dir), "--port",
               str(self.port), "--database-url", self.database_url, "--quiet",
               "--workers", str(self.workers)]
        if self.config:
            cmd += ["--config", str(self.config)]
        log = open(self.data_dir.parent / f"server-{self.port}.log", "ab")  # noqa: SIM115
        # Its own process group: a kill -9 of the service takes its worker processes with
        # it (killing only the master left them serving, holding database connections).
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=log, cwd=ROOT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if "port: cannot listen" in self.log_tail():
                    raise PortTaken(self.port)
                raise RuntimeError(f"stackling serve exited: {self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/identity/v3", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"stackling serve did not answer: {self.log_tail()}")

    def stop(self, kill: bool = False) -> None:
        if self.proc and self.proc.poll() is None:
            if kill:
                self._kill_group()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self._kill_group()  # any worker a dead master left behind
        self._sdk.clear()

    def _kill_group(self) -> None:
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def log_tail(self, n: int = 4000) -> str:
        path = self.data_dir.parent / f"server-{self.port}.log"
        return path.read_text(errors="replace")[-n:] if path.exists() else ""

    # -- clients
    def sdk(self, cloud: str = "stackling-admin") -> Any:
        """An openstacksdk Connection for a cloud in this server's clouds.yaml (cached)."""
        if cloud not in self._sdk:
            self._sdk[cloud] = sdk_connection(self.clouds_yaml, cloud)
        return self._sdk[cloud]

    def token(self, user: str = "admin", project: str | None = None,
              password: str | None = None) -> str:
        password = password or {"admin": ADMIN_PASSWORD, "demo": DEMO_PASSWORD}.get(user, "")
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"id": "default"}, "password": password}}},
            "scope": {"project": {"name": project or user, "domain": {"id": "default"}}}}}
        r = httpx.post(f"{self.url}/identity/v3/auth/tokens", json=body, timeout=30)
        assert r.status_code == 201, r.text
        return r.headers["X-Subject-Token"]

    def http(self, token: str | None = None) -> httpx.Client:
        headers = {"X-Auth-Token": token} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def cli(self, *args: str, cloud: str = "stackling-admin", check: bool = True,
            env: dict[str, str] | None = None, parse: bool = True) -> Any:
        """Run the real `openstack` CLI; `-f json` output is parsed."""
        full_env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml), **(env or {})}
        argv = ["--os-cloud", cloud] if cloud else []
        argv += list(args)
        cmd = ["openstack", *argv]
        proc = OPENSTACK_CLI.run(argv, full_env, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}\n{self.log_tail(2000)}")
        if not check:
            return proc
        if parse and "json" in args:
            return json.loads(proc.stdout) if proc.stdout.strip() else None
        return proc.stdout

    def new_project_member(self, name: str | None = None, role: str = "member") -> dict[str, Any]:
        """A fresh project with one user holding `role` there; returns names and an sdk."""
        admin = self.sdk()
        name = name or f"p-{uuid.uuid4().hex[:8]}"
        project = admin.identity.create_project(name=name, domain_id="default")
        user = admin.identity.create_user(name=f"u-{name}", password="pw-secret",
                                          domain_id="default")
        role_obj = admin.identity.find_role(role)
        admin.identity.assign_project_role_to_user(project, user, role_obj)
        conn = sdk_connection(None, None, auth={
            "auth_url": f"{self.url}/identity", "username": user.name, "password": "pw-secret",
            "project_name": name, "user_domain_id": "default", "project_domain_id": "default"})
        return {"project": project, "user": user, "sdk": conn, "password": "pw-secret"}


def pytest_sessionfinish(session: pytest.Session) -> None:
    OPENSTACK_CLI.stop()


def sdk_connection(clouds_yaml: Path | None, cloud: str | None,
                   auth: dict[str, Any] | None = None) -> Any:
    import openstack
    from openstack.config import loader

    if auth is not None:
        return openstack.connect(auth=auth, region_name="RegionOne", identity_api_version="3",
                                 interface="public", load_yaml_config=False,
                                 load_envvars=False)
    config = loader.OpenStackConfig(config_files=[str(clouds_yaml)], load_envvars=False)
    return openstack.connection.Connection(config=config.get_one(cloud=cloud))


def sqlite_only(test: Any) -> Any:
    """Tests that drive the `openstack` CLI run once, against the embedded default: the
    sqlite instance of the session `cloud` fixture (no skips), marked `cli`."""
    return pytest.mark.cli(pytest.mark.parametrize("cloud", ["sqlite"], indirect=True)(test))


@pytest.fixture(scope="session", params=BACKENDS)
def cloud(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Cloud]:
    """One real server per backend for the whole session."""
    backend = request.param
    base = tmp_path_factory.mktemp(f"cloud-{backend}")
    url = create_database(backend, base / "db")
    server = Cloud(backend, url, base / "data", free_port()).start()
    # Hundreds of tests share this cloud, and every external network an admin makes owns
    # an access_as_external RBAC policy: the admin project's rbac_policy quota (10) is
    # lifted so one test never fails on the others' leftovers (quota tests use projects of
    # their own).
    admin = server.sdk()
    admin.network.update_quota(admin.current_project_id, rbac_policies=-1)
    yield server
    server.stop()
    drop_database(url)


@pytest.fixture
def cloud_factory(tmp_path: Path) -> Iterator[Any]:
    """Start servers on demand: cloud_factory(backend, workers=4, extra_env=..., config=...)."""
    started: list[tuple[Cloud, str]] = []

    def factory(backend: str, **kwargs: Any) -> Cloud:
        base = tmp_path / f"cloud-{len(started)}"
        url = create_database(backend, base / "db")
        server = Cloud(backend, url, base / "data", free_port(), **kwargs)
        started.append((server, url))
        return server.start()

    yield factory
    for server, url in started:
        server.stop()
        drop_database(url)


# ------------------------------------------------------------------ in-process API
class ApiClient:
    """The ASGI app in-process (Starlette's TestClient) plus token helpers."""

    def __init__(self, client: Any, runtime: Any) -> None:
        self.client = client
        self.runtime = runtime
        self._tokens: dict[tuple[str, str], str] = {}

    def token(self, user: str = "admin", project: str | None = None,
              password: str | None = None) -> str:
        key = (user, project or user)
        if key not in self._tokens:
            password = password or {"admin": ADMIN_PASSWORD, "demo": DEMO_PASSWORD}.get(user, "")
            body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
                "name": user, "domain": {"id": "default"}, "password": password}}},
                "scope": {"project": {"name": project or user, "domain": {"id": "default"}}}}}
            r = self.client.post("/identity/v3/auth/tokens", json=body)
            assert r.status_code == 201, r.text
            self._tokens[key] = r.headers["X-Subject-Token"]
        return self._tokens[key]

    def request(self, method: str, url: str, *, user: str | None = "admin",
                token: str | None = None, **kwargs: Any) -> Any:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token is None and user is not None:
            token = self.token(user)
        if token is not None:
            headers["X-Auth-Token"] = token
        return self.client.request(method, url, headers=headers, **kwargs)

    def get(self, url: str, **kw: Any) -> Any:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw: Any) -> Any:
        return self.request("POST", url, **kw)

    def put(self, url: str, **kw: Any) -> Any:
        return self.request("PUT", url, **kw)

    def patch(self, url: str, **kw: Any) -> Any:
        return self.request("PATCH", url, **kw)

    def delete(self, url: str, **kw: Any) -> Any:
        return self.request("DELETE", url, **kw)


def make_api(data_dir: Path, **settings: Any) -> Iterator[ApiClient]:
    from starlette.testclient import TestClient

    from stackling.app import create_app, create_runtime
    from stackling.config import load_settings
    from stackling.migrations.schema import upgrade

    for key, value in SERVER_ENV.items():
        os.environ.setdefault(key, value)
    data_dir.mkdir(parents=True, exist_ok=True)
    runtime = create_runtime(load_settings(data_dir=str(data_dir), **settings))
    upgrade(runtime.db.engine)
    runtime.run_bootstrap()
    with TestClient(create_app(runtime), base_url="http://stackling.test") as client:
        yield ApiClient(client, runtime)


def backend_api(backend: str, tmp_path_factory: pytest.TempPathFactory, name: str,
                **settings: Any) -> Iterator[ApiClient]:
    """An in-process cloud on `backend` (a module fixture's body over BACKENDS): its own
    database and data dir, both gone afterwards."""
    base: Path = tmp_path_factory.mktemp(f"{name}-{backend}")
    url = create_database(backend, base / "db")
    try:
        yield from make_api(base / "data", **settings,
                            **({} if backend == "sqlite" else {"database_url": url}))
    finally:
        drop_database(url)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiClient]:
    """A fresh in-process cloud per test module."""
    data_dir = tmp_path_factory.mktemp("api")
    yield from make_api(data_dir)
    shutil.rmtree(data_dir, ignore_errors=True)


# ------------------------------------------------------------------ selection and scheduling
# `make test` runs pytest-xdist workers with `--dist loadgroup --no-loadscope-reorder`, and
# the groups are ours (`_group`, from the test id alone; xdist 3.8's own loadgroup reads the
# `item._nodeid` that pytest 9.2 no longer has). A group runs on one worker, in order:
# - the multi-process races (tests/concurrency) on one database server: one at a time, so
#   their connection pools and processes never meet another race's;
# - the client tests (tests/clients) on PostgreSQL, and those on MariaDB: the session
#   `cloud` of that backend starts once for the run, not once per worker (SQLite's is cheap);
# - the dataplane tests (tests/dataplane), one at a time: each checks that the machine's own
#   network namespace ends as it began, which another's guests would disturb;
# - otherwise the test's module: its module-scoped fixtures are built once.
# Groups start longest first, so that no long group starts last and keeps one worker busy
# alone at the end: the two dataplane streams and the PostgreSQL and MariaDB client stories
# (one worker each from the start), the races, then the SQLite stories, browser, in-process
# tests. Ranks sort the tests before xdist hands out groups in order of first appearance: the
# streams had rank 1 with every SQLite client and concurrency module, which come first by
# path, so they started 20 minutes into a loaded run (64 groups ahead of them).
_RANKS = {"concurrency": 3, "clients": 3, "browser": 4, "api": 5}
# About half of the dataplane tests' time (IPv6 is the longest module)
_DATAPLANE_A = {"test_ipv6.py", "test_routed.py", "test_wire.py", "test_routers.py",
                "test_dhcp_names.py", "test_lease.py", "test_power.py", "test_walkthrough.py"}


# Long modules whose fixtures are per test: one group per backend, so that their minute
# or more of work is spread over the workers instead of ending the run on one
_BY_BACKEND = {"tests/api/test_fuzz.py"}


def _id_backend(nodeid: str) -> str | None:
    """The backend a test id names as one of its parameters, if any."""
    params = nodeid.partition("[")[2].rpartition("]")[0]
    return next((b for b in BACKENDS if b in params.split("-")), None)


def _group(nodeid: str) -> tuple[int, str]:
    """(start rank, group name) of a test id."""
    path = nodeid.split("::")[0]
    folder = path.split("/")[1] if path.count("/") > 1 else ""
    backend = _id_backend(nodeid)
    if folder == "concurrency" and backend in ("postgresql", "mariadb"):
        return 2, f"races-{backend}"
    if folder == "clients" and backend in ("postgresql", "mariadb"):
        return 1, f"clients-{backend}"
    if folder == "dataplane":  # live guests: two streams, each a fixed set of modules
        # (every cloud has its own prefix and the machine's namespace is untouched, so two
        # clouds at once never meet; more would crowd the 2 cores the guests boot on)
        stream = "a" if path.rsplit("/", 1)[-1] in _DATAPLANE_A else "b"
        return 0, f"dataplane-{stream}"
    if path in _BY_BACKEND and backend:
        return _RANKS.get(folder, 6), f"{path}-{backend}"
    return _RANKS.get(folder, 6), path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)[1]

    return GroupScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ONLY_BACKENDS != BACKENDS:
        kept, dropped = [], []
        for item in items:
            backend = _id_backend(item.nodeid)
            (dropped if backend and backend not in ONLY_BACKENDS else kept).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    for item in items:
        if item.nodeid.startswith("tests/browser/"):
            item.add_marker(pytest.mark.browser)
    items.sort(key=lambda item: _group(item.nodeid)[0])
