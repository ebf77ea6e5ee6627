"""Quotas counted under concurrency (issue 9, item 1): parallel creates on several
processes sharing one database never pass the last free slot together. With a quota of
N and 3N parallel requests, exactly N succeed and the rest get the over-quota answer."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}
BACKENDS = ["sqlite", "postgresql", "mariadb"]


def parallel(server, token: str, requests: list[tuple[str, str, dict]]) -> list[httpx.Response]:
    barrier = threading.Barrier(len(requests))

    def one(req: tuple[str, str, dict]) -> httpx.Response:
        method, path, body = req
        with httpx.Client(base_url=server.url, timeout=120,
                          headers={"X-Auth-Token": token, **MV}) as http:
            barrier.wait()
            return http.request(method, path, json=body)

    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(one, requests))


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_server_creates_stop_at_the_instance_quota(cloud_factory, backend):
    server = cloud_factory(backend, workers=1 if backend == "sqlite" else 3)
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    n = 4
    with server.http(server.token()) as admin:
        r = admin.put(f"/compute/v2.1/os-quota-sets/{project_id}",
                      json={"quota_set": {"instances": n}})
        assert r.status_code == 200, r.text
    boot = ("POST", "/compute/v2.1/servers", {"server": {
        "name": "q", "flavorRef": "1", "imageRef": CIRROS, "networks": "none"}})
    responses = parallel(server, token, [boot] * (3 * n))
    codes = sorted(r.status_code for r in responses)
    assert codes == [202] * n + [403] * (2 * n), [r.text for r in responses]
    for r in responses:
        if r.status_code == 403:
            assert r.json()["forbidden"]["message"] == (
                f"Quota exceeded for instances: Requested 1, but already used {n} of {n} "
                "instances")
    with server.http(token) as http:
        servers = http.get("/compute/v2.1/servers", headers=MV).json()["servers"]
        assert len(servers) == n


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_network_creates_stop_at_the_network_quota(cloud_factory, backend):
    server = cloud_factory(backend, workers=1 if backend == "sqlite" else 3)
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    n = 5
    with server.http(server.token()) as admin:
        r = admin.put(f"/networking/v2.0/quotas/{project_id}", json={"quota": {"network": n}})
        assert r.status_code == 200, r.text
    # single creates and bulk creates of two race for the same five slots
    single = ("POST", "/networking/v2.0/networks", {"network": {"name": "s"}})
    bulk = ("POST", "/networking/v2.0/networks", {"networks": [{"name": "b1"},
                                                               {"name": "b2"}]})
    responses = parallel(server, token, [single] * (2 * n) + [bulk] * n)
    made = 0
    for r in responses:
        assert r.status_code in (201, 409), r.text
        if r.status_code == 201:
            made += len(r.json().get("networks", [None]))
        else:
            assert r.json()["NeutronError"]["type"] == "OverQuota"
    with server.http(token) as http:
        nets = http.get(f"/networking/v2.0/networks?project_id={project_id}").json()["networks"]
    # a single create is refused only once all n are taken: so exactly n, never more
    assert len(nets) == made == n


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_stack_creates_stop_at_the_stack_limit(cloud_factory, backend):
    n = 3
    server = cloud_factory(backend, workers=1 if backend == "sqlite" else 3,
                           extra_env={"STACKLING_ORCHESTRATION__MAX_STACKS_PER_TENANT": str(n)})
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    template = {"heat_template_version": "2018-08-31", "resources": {}}
    creates = [("POST", f"/orchestration/v1/{project_id}/stacks",
                {"stack_name": f"s{i}", "template": template}) for i in range(3 * n)]
    responses = parallel(server, token, creates)
    assert sorted(r.status_code for r in responses) == [201] * n + [400] * (2 * n), \
        [r.text for r in responses]
    for r in responses:
        if r.status_code == 400:
            assert r.json()["error"]["type"] == "RequestLimitExceeded"
    with server.http(token) as http:
        stacks = http.get(f"/orchestration/v1/{project_id}/stacks").json()["stacks"]
    assert len(stacks) == n
