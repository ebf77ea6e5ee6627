"""Get Me a Network under many processes: one topology per project, whatever the race,
and a failed build leaves nothing behind."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

N = "/networking/v2.0"


def _owned(http: httpx.Client, project: str) -> dict[str, list[dict]]:
    return {c: http.get(f"{N}/{c}?project_id={project}").json()[c]
            for c in ("networks", "subnets", "routers")}


def _parallel_gets(server, token: str, project: str, n: int) -> list[httpx.Response]:
    barrier = threading.Barrier(n)

    def call(_: int) -> httpx.Response:
        with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                          timeout=120) as http:
            barrier.wait()
            return http.get(f"{N}/auto-allocated-topology/{project}")

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(call, range(n)))


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_first_calls_build_one_topology_or_fail_cleanly(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    token = server.token()
    _one_topology_for_twenty_racers(server, token)
    _exhausted_pool_leaves_nothing(server, token)


def _one_topology_for_twenty_racers(server, token: str) -> None:
    project = uuid.uuid4().hex
    results = _parallel_gets(server, token, project, 20)
    assert [r.status_code for r in results] == [200] * 20, [r.text for r in results]
    ids = {r.json()["auto_allocated_topology"]["id"] for r in results}
    assert len(ids) == 1
    with server.http(token) as http:
        owned = _owned(http, project)
        assert [n["id"] for n in owned["networks"]] == list(ids)
        assert owned["networks"][0]["admin_state_up"] is True
        assert sorted(s["ip_version"] for s in owned["subnets"]) == [4, 6]
        [router] = owned["routers"]
        ports = http.get(f"{N}/ports?device_id={router['id']}").json()["ports"]
        assert sorted(p["device_owner"] for p in ports) == [
            "network:router_gateway", "network:router_interface", "network:router_interface"]
        # nothing leaked anywhere else either: no second network or router for anyone
        names = [n["name"] for n in http.get(f"{N}/networks").json()["networks"]]
        assert names.count("auto_allocated_network") == 1
        routers = http.get(f"{N}/routers?name=auto_allocated_router").json()["routers"]
        assert len(routers) == 1


def _exhausted_pool_leaves_nothing(server, token: str) -> None:
    project = uuid.uuid4().hex
    with server.http(token) as http:
        pools = http.get(f"{N}/subnetpools?is_default=true").json()["subnetpools"]
        v4 = next(p for p in pools if p["ip_version"] == 4)
        # a tiny default pool whose only block is already taken: exhausted
        r = http.put(f"{N}/subnetpools/{v4['id']}", json={"subnetpool": {"is_default": False}})
        assert r.status_code == 200, r.text
        tiny = http.post(f"{N}/subnetpools", json={"subnetpool": {
            "name": "tiny", "prefixes": ["10.252.0.0/26"], "default_prefixlen": 26,
            "is_default": True, "shared": True}}).json()["subnetpool"]
        net = http.post(f"{N}/networks", json={"network": {"name": "filler"}}).json()["network"]
        r = http.post(f"{N}/subnets", json={"subnet": {
            "network_id": net["id"], "ip_version": 4, "subnetpool_id": tiny["id"]}})
        assert r.status_code == 201, r.text
        networks_before = len(http.get(f"{N}/networks").json()["networks"])
    results = _parallel_gets(server, token, project, 8)
    for r in results:
        assert r.status_code == 409, r.text
        err = r.json()["NeutronError"]
        assert err["type"] == "AutoAllocationFailure"
        assert "IPv4 default subnet pool" in err["message"]
        assert "Insufficient prefix space" in err["message"]
    with server.http(token) as http:
        assert not any(_owned(http, project).values())
        assert len(http.get(f"{N}/networks").json()["networks"]) == networks_before
        assert len(http.get(f"{N}/routers?name=auto_allocated_router").json()["routers"]) == 1
