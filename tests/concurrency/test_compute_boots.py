"""Twenty parallel `networks: auto` boots in a fresh project, on four processes sharing
PostgreSQL or MariaDB: one network, one subnet per default pool and one router for the
project, and every server ACTIVE on that network."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_auto_boots_share_one_topology(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    n = 20
    # more servers than Nova's default quota of 10: lift it for this project
    server.sdk().set_compute_quotas(project_id, instances=-1, cores=-1, ram=-1)
    barrier = threading.Barrier(n)

    def boot(i: int) -> httpx.Response:
        with httpx.Client(base_url=server.url, timeout=120,
                          headers={"X-Auth-Token": token, **MV}) as http:
            barrier.wait()
            return http.post("/compute/v2.1/servers", json={"server": {
                "name": f"par-{i}", "flavorRef": "1", "imageRef": CIRROS, "networks": "auto"}})

    with ThreadPoolExecutor(n) as pool:
        responses = list(pool.map(boot, range(n)))
    assert [r.status_code for r in responses] == [202] * n, [r.text for r in responses]
    ids = {r.json()["server"]["id"] for r in responses}
    with httpx.Client(base_url=server.url, timeout=60,
                      headers={"X-Auth-Token": token, **MV}) as http:
        deadline = time.monotonic() + 120
        while True:
            servers = http.get("/compute/v2.1/servers/detail").json()["servers"]
            if len(servers) == n and all(s["status"] in ("ACTIVE", "ERROR") for s in servers):
                break
            assert time.monotonic() < deadline, [s["status"] for s in servers]
            time.sleep(0.2)
        assert {s["id"] for s in servers} == ids
        assert [s["status"] for s in servers] == ["ACTIVE"] * n, [s.get("fault") for s in servers]
        labels = {label for s in servers for label in s["addresses"]}
    with server.http(server.token()) as admin:
        nets = admin.get(f"/networking/v2.0/networks?project_id={project_id}").json()["networks"]
        assert len(nets) == 1 and labels == {nets[0]["name"]}
        pools = admin.get("/networking/v2.0/subnetpools?is_default=true").json()["subnetpools"]
        subnets = admin.get(f"/networking/v2.0/subnets?project_id={project_id}").json()["subnets"]
        assert len(subnets) == len(pools) and {s["network_id"] for s in subnets} == {nets[0]["id"]}
        routers = admin.get(f"/networking/v2.0/routers?project_id={project_id}").json()["routers"]
        assert len(routers) == 1
        ports = admin.get(f"/networking/v2.0/ports?network_id={nets[0]['id']}"
                          "&device_owner=compute:nova").json()["ports"]
        assert sorted(p["device_id"] for p in ports) == sorted(ids)
