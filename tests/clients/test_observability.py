"""Metrics, request logs and start-up errors, as an operator meets them."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import BIN, ROOT, Cloud


def _counter(text: str, route: str, method: str, status: str) -> float:
    pattern = re.compile(
        r'^stackling_http_requests_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$', re.M)
    for m in pattern.finditer(text):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group("labels")))
        if (labels.get("route"), labels.get("method"), labels.get("status")) == (route, method, status):
            return float(m.group("value"))
    return 0.0


def test_metrics_count_requests_and_logs_carry_the_request_id(cloud_factory: Any,
                                                              tmp_path: Path) -> None:
    config = tmp_path / "obs.yaml"
    config.write_text("observability:\n  log_level: info\n")
    cloud: Cloud = cloud_factory("sqlite", config=config)
    token = cloud.token()
    with cloud.http(token) as http:
        before = _counter(http.get("/metrics").text, "/v2.0/networks", "GET", "200")
        r = http.get("/networking/v2.0/networks")
        request_id = r.headers["x-openstack-request-id"]
        text = http.get("/metrics").text
        assert _counter(text, "/v2.0/networks", "GET", "200") == before + 1
        assert "stackling_http_request_duration_seconds_bucket" in text
        assert 'stackling_pending_work{kind="server_builds"}' in text
        assert "stackling_db_pool_connections" in text

        # A server build is background work: its log line carries the id of the request
        # that asked for it.
        image = http.get("/image/v2/images?name=cirros").json()["images"][0]["id"]
        r = http.post("/compute/v2.1/servers", json={"server": {
            "name": "logged", "flavorRef": "1", "imageRef": image, "networks": "none"}},
            headers={"OpenStack-API-Version": "compute 2.37"})
        assert r.status_code == 202, r.text
        create_id, server_id = r.headers["x-openstack-request-id"], r.json()["server"]["id"]
        deadline = time.monotonic() + 30
        while http.get(f"/compute/v2.1/servers/{server_id}").json()["server"]["status"] == "BUILD":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        text = http.get("/metrics").text
        assert re.search(r'^stackling_builds_total\{outcome="active"\} [1-9]', text, re.M)

        # A stack action is background work too.
        project = http.get("/identity/v3/auth/tokens", headers={
            "X-Subject-Token": token}).json()["token"]["project"]["id"]
        r = http.post(f"/orchestration/v1/{project}/stacks", json={
            "stack_name": "logged", "template": {"heat_template_version": "2018-08-31",
                                                 "resources": {"v": {"type": "OS::Heat::Value",
                                                                     "properties": {"value": 1}}}}})
        assert r.status_code == 201, r.text
        stack_request = r.headers["x-openstack-request-id"]
        stack_id = r.json()["stack"]["id"]
        deadline = time.monotonic() + 30
        while http.get(f"/orchestration/v1/{project}/stacks/logged/{stack_id}").json()[
                "stack"]["stack_status"] != "CREATE_COMPLETE":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        # the action's end is counted right after it is committed: look until it is there
        pattern = re.compile(r'^stackling_stack_actions_total\{action="CREATE",'
                             r'outcome="complete"\} [1-9]', re.M)
        text = _until(lambda: http.get("/metrics").text, pattern.search)
        assert pattern.search(text), text[-3000:]
    # the server writes its log lines after answering: look until the stack's is there
    log = _until(lambda: cloud.log_tail(200_000),
                 lambda log: all(t in log for t in (f"stack {stack_id}: CREATE_COMPLETE",
                                                    f"server {server_id} built", request_id)))
    access = [line for line in log.splitlines() if request_id in line]
    assert access, log[-2000:]
    assert any("GET /networking/v2.0/networks 200" in line for line in access)
    user_id = httpx.get(f"{cloud.url}/identity/v3/auth/tokens", headers={
        "X-Auth-Token": token, "X-Subject-Token": token}).json()["token"]["user"]["id"]
    assert all(f"user={user_id}" in line for line in access if "stackling.access" in line)
    build_lines = [line for line in log.splitlines() if f"server {server_id} built" in line]
    assert build_lines and all(create_id in line for line in build_lines), build_lines
    stack_lines = [line for line in log.splitlines() if f"stack {stack_id}: CREATE_COMPLETE" in line]
    assert stack_lines and all(stack_request in line for line in stack_lines), stack_lines


def _until(read: Any, done: Any, timeout: float = 60) -> Any:
    """read() until done(value) holds (or the time is up: the caller's assert says what)."""
    deadline = time.monotonic() + timeout
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def test_json_log_format(cloud_factory: Any, tmp_path: Path) -> None:
    config = tmp_path / "json.yaml"
    config.write_text("observability:\n  log_format: json\n")
    cloud: Cloud = cloud_factory("sqlite", config=config)
    r = httpx.get(f"{cloud.url}/networking/v2.0/networks")  # 401, still logged
    request_id = r.headers["x-openstack-request-id"]
    log = _until(lambda: cloud.log_tail(100_000), lambda log: request_id in log)
    records = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    mine = [rec for rec in records if rec.get("request_id") == request_id]
    assert mine and mine[0]["status"] == 401 and mine[0]["route"] == "/v2.0/networks"
    assert mine[0]["method"] == "GET" and mine[0]["service"] == "network"
    assert isinstance(mine[0]["latency_ms"], float)


def test_metrics_need_a_token_off_loopback(cloud_factory: Any) -> None:
    from starlette.testclient import TestClient

    from stackling.app import create_app, create_runtime
    from stackling.config import load_settings

    del cloud_factory
    runtime = create_runtime(load_settings(data_dir="/nonexistent-unused",
                                           database_url="sqlite://"))
    app = create_app(runtime)
    client = TestClient(app, client=("203.0.113.9", 5000))
    assert client.get("/metrics").status_code == 403
    local = TestClient(app, client=("127.0.0.1", 5000))
    assert local.get("/metrics").status_code == 200


def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "stackling"), "serve", "--data-dir", str(tmp_path / "d"),
                           "--quiet", *args], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env=env)


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_startup_errors_are_one_line(tmp_path: Path) -> None:
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("network:\n  ml2: [unclosed\n")
    line = _one_line(_serve(tmp_path, "--config", str(bad_yaml)))
    assert "not valid YAML" in line and str(bad_yaml) in line

    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("network:\n  no_such_thing: 1\n")
    line = _one_line(_serve(tmp_path, "--config", str(unknown)))
    assert "network.no_such_thing: unknown setting" in line

    wrong_type = tmp_path / "type.yaml"
    wrong_type.write_text("compute:\n  build_workers: lots\n")
    assert "compute.build_workers: expected int" in _one_line(
        _serve(tmp_path, "--config", str(wrong_type)))

    line = _one_line(_serve(tmp_path, "--database-url",
                            "postgresql+psycopg://nobody@127.0.0.1:1/none"))
    assert line.startswith("stackling: database_url: cannot connect")

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = _one_line(_serve(tmp_path, "--port", str(port)))
    assert f"port: cannot listen on 127.0.0.1:{port}" in line
