"""Parallel boots into one server group on four processes sharing PostgreSQL or MariaDB.
Anti-affinity: never two members on one host (four hosts, eight boots: four ACTIVE on four
hosts, four NoValidHost); what stops two builds from taking one host is the group's unique
(group, host) row, not a lock inside one process. Affinity: every member on one host, the
group's host pinned by a guarded UPDATE."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}


def _race(cloud_factory, backend: str, policy: str, n: int | None = None
          ) -> tuple[list[dict], set[str]]:
    """`n` (default: twice the hosts) parallel boots into one new group of `policy` on
    four processes; the servers once all settled, and the cloud's hosts."""
    server = cloud_factory(backend, workers=4)
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    server.sdk().set_compute_quotas(project_id, instances=-1, cores=-1, ram=-1,
                                    server_group_members=-1)
    with server.http(token) as http:
        group = http.post("/compute/v2.1/os-server-groups", headers=MV, json={
            "server_group": {"name": "race", "policies": [policy]}})
        assert group.status_code == 200, group.text
    group_id = group.json()["server_group"]["id"]
    with server.http(server.token()) as admin:
        hosts = {h["hypervisor_hostname"] for h in admin.get(
            "/compute/v2.1/os-hypervisors").json()["hypervisors"]}
    n = n or 2 * len(hosts)
    barrier = threading.Barrier(n)

    def boot(i: int) -> httpx.Response:
        with httpx.Client(base_url=server.url, timeout=120,
                          headers={"X-Auth-Token": token, **MV}) as http:
            barrier.wait()
            return http.post("/compute/v2.1/servers", json={
                "server": {"name": f"g-{i}", "flavorRef": "1", "imageRef": CIRROS,
                           "networks": "none"},
                "os:scheduler_hints": {"group": group_id}})

    with ThreadPoolExecutor(n) as pool:
        responses = list(pool.map(boot, range(n)))
    assert [r.status_code for r in responses] == [202] * n, [r.text for r in responses]
    with server.http(server.token()) as admin:
        deadline = time.monotonic() + 120
        while True:
            servers = admin.get(f"/compute/v2.1/servers/detail?all_tenants=1"
                                f"&project_id={project_id}", headers=MV).json()["servers"]
            if len(servers) == n and all(s["status"] in ("ACTIVE", "ERROR") for s in servers):
                return servers, hosts
            assert time.monotonic() < deadline, [s["status"] for s in servers]
            time.sleep(0.2)


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_boots_in_an_anti_affinity_group_never_share_a_host(cloud_factory, backend):
    servers, hosts = _race(cloud_factory, backend, "anti-affinity")
    active = [s for s in servers if s["status"] == "ACTIVE"]
    placed = [s["OS-EXT-SRV-ATTR:host"] for s in active]
    assert len(placed) == len(set(placed)), placed  # the invariant: no shared host
    assert len(active) == len(hosts)
    for s in servers:
        if s["status"] == "ERROR":
            assert "No valid host was found" in s["fault"]["message"], s["fault"]


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_boots_in_an_affinity_group_land_on_one_host(cloud_factory, backend):
    servers, _hosts = _race(cloud_factory, backend, "affinity", n=6)
    assert [s["status"] for s in servers] == ["ACTIVE"] * 6, [s.get("fault") for s in servers]
    assert len({s["OS-EXT-SRV-ATTR:host"] for s in servers}) == 1
