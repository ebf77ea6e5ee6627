"""`stackling serve` as an operator runs it: workers, restarts, configuration, policy files."""

from __future__ import annotations

import os
import socket
import subprocess

import httpx
import pytest
import yaml

from tests.conftest import BIN, IN_CI, Cloud, create_database, drop_database, free_port


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_workers_share_tokens_and_revocations(cloud_factory, backend):
    server = cloud_factory(backend, workers=3)
    token = server.token()
    other = server.token("demo")
    with server.http(token) as http:
        # Many requests land on every worker: each accepts a token another worker issued.
        for _ in range(30):
            assert http.get("/identity/v3/domains/default").status_code == 200
        r = http.delete("/identity/v3/auth/tokens", headers={"X-Subject-Token": other})
        assert r.status_code == 204
    with server.http(other) as http:
        statuses = {http.get("/identity/v3/auth/projects").status_code for _ in range(30)}
    assert statuses == {401}


def test_restart_keeps_data_and_does_not_rebootstrap(tmp_path):
    url = create_database("sqlite", tmp_path / "db")
    server = Cloud("sqlite", url, tmp_path / "data", free_port()).start()
    try:
        token = server.token()
        with server.http(token) as http:
            r = http.post("/identity/v3/projects", json={"project": {"name": "kept"}})
            assert r.status_code == 201
        before = server.clouds_yaml.read_text()
        assert oct(server.clouds_yaml.stat().st_mode & 0o777) == "0o600"
        server.stop()
        server.port = free_port()
        server.url = f"http://127.0.0.1:{server.port}"
        server.start()
        with server.http(token) as http:  # a token from before the restart still works
            names = [p["name"] for p in http.get("/identity/v3/projects").json()["projects"]]
        assert names.count("kept") == 1 and names.count("admin") == 1
        after = yaml.safe_load(server.clouds_yaml.read_text())
        assert yaml.safe_load(before)["clouds"]["stackling"]["auth"]["password"] == \
            after["clouds"]["stackling"]["auth"]["password"]
        assert after["clouds"]["stackling"]["auth"]["auth_url"] == f"{server.url}/identity"
    finally:
        server.stop()
        drop_database(url)


def test_policy_file_overrides_a_rule(cloud_factory, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text('"identity:create_project": "role:member"\n')
    config = tmp_path / "stackling.yaml"
    config.write_text(yaml.safe_dump({"policy_file": str(policy)}))
    server = cloud_factory("sqlite", config=config)
    with server.http(server.token("demo")) as http:
        r = http.post("/identity/v3/projects", json={"project": {"name": "by-member"}})
    assert r.status_code == 201, r.text


def test_settings_from_environment(cloud_factory):
    server = cloud_factory("sqlite", extra_env={"STACKLING_IDENTITY__TOKEN_EXPIRATION": "120"})
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": "admin-secret"}}}}}
    r = httpx.post(f"{server.url}/identity/v3/auth/tokens", json=body)
    token = r.json()["token"]
    import datetime as dt

    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    life = dt.datetime.strptime(token["expires_at"], fmt) - dt.datetime.strptime(
        token["issued_at"], fmt)
    assert life == dt.timedelta(seconds=120)


def test_db_upgrade_command_on_each_backend(tmp_path):
    for backend in ("sqlite", "postgresql", "mariadb"):
        if backend != "sqlite" and not IN_CI and not _reachable(backend):
            continue
        url = create_database(backend, tmp_path / backend)
        try:
            env = dict(os.environ)
            out = subprocess.run([str(BIN / "stackling"), "db", "upgrade", "--database-url", url],
                                 capture_output=True, text=True, env=env, check=True).stdout
            assert "upgraded" in out
            out = subprocess.run([str(BIN / "stackling"), "db", "upgrade", "--database-url", url],
                                 capture_output=True, text=True, env=env, check=True).stdout
            assert "already at head" in out
        finally:
            drop_database(url)


def _reachable(backend: str) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", 5432 if backend == "postgresql" else 3306), 1).close()
        return True
    except OSError:
        return False


def test_a_port_in_use_is_refused_before_anything_is_written(tmp_path):
    """Without --quiet, as a newcomer runs it: no "serving" banner, no data dir, no
    database, no clouds.yaml pointing at the other process's port; one line, exit 2."""
    data = tmp_path / "data"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([str(BIN / "stackling"), "serve", "--data-dir", str(data),
                               "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"stackling: port: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(choose another with --port N, or `make run PORT=N`)"]
    assert not data.exists()
