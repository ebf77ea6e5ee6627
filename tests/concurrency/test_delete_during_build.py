"""Deleting a server while it builds (issue 9, item 5): twenty create-then-delete races on
two processes sharing one database. Whatever the build got to make (ports holding IPs, a
placement allocation) is released by the delete: nothing of the twenty servers remains."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}
PLACEMENT = {"OpenStack-API-Version": "placement 1.39"}


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_delete_during_build_leaks_nothing(cloud_factory, backend):
    server = cloud_factory(backend, workers=1 if backend == "sqlite" else 2)
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    # twenty servers may be alive at once: above Nova's default quota of 10
    server.sdk().set_compute_quotas(project_id, instances=-1, cores=-1, ram=-1)
    with httpx.Client(base_url=server.url, timeout=120,
                      headers={"X-Auth-Token": token}) as http:
        net = http.post("/networking/v2.0/networks", json={"network": {"name": "n"}})
        assert net.status_code == 201, net.text
        net_id = net.json()["network"]["id"]
        sub = http.post("/networking/v2.0/subnets", json={"subnet": {
            "network_id": net_id, "ip_version": 4, "cidr": "10.9.0.0/24"}})
        assert sub.status_code == 201, sub.text
    n = 20
    barrier = threading.Barrier(n)

    def create_then_delete(i: int) -> tuple[int, int]:
        with httpx.Client(base_url=server.url, timeout=120,
                          headers={"X-Auth-Token": token, **MV}) as http:
            barrier.wait()
            made = http.post("/compute/v2.1/servers", json={"server": {
                "name": f"race-{i}", "flavorRef": "1", "imageRef": CIRROS,
                "networks": [{"uuid": net_id}]}})
            if made.status_code != 202:
                return made.status_code, 0
            gone = http.delete(f"/compute/v2.1/servers/{made.json()['server']['id']}")
            return made.status_code, gone.status_code

    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(create_then_delete, range(n)))
    assert results == [(202, 204)] * n, results

    with server.http(server.token()) as admin:
        servers = admin.get(f"/compute/v2.1/servers?all_tenants=1&project_id={project_id}",
                            headers=MV).json()["servers"]
        assert servers == []
        ports = admin.get(f"/networking/v2.0/ports?network_id={net_id}").json()["ports"]
        assert [p for p in ports if p["device_owner"].startswith("compute:")] == []
        avail = admin.get(f"/networking/v2.0/network-ip-availabilities/{net_id}").json()
        used = avail["network_ip_availability"]["used_ips"]
        assert used == len([p for p in ports for _ in p["fixed_ips"]])  # only DHCP/router
        rps = admin.get("/placement/resource_providers", headers=PLACEMENT).json()
        for rp in rps["resource_providers"]:
            usages = admin.get(f"/placement/resource_providers/{rp['uuid']}/usages",
                               headers=PLACEMENT).json()["usages"]
            assert set(usages.values()) <= {0}, (rp["name"], usages)
