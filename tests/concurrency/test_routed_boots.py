"""Routed-network boots racing on four processes sharing PostgreSQL or MariaDB.

Segment A (physnet1, rack 1) has 5 free addresses, segment B (physnet2, rack 2) 20: of 40
parallel boots exactly 25 go ACTIVE (5 on rack 1 with A's addresses, 20 on rack 2 with
B's), 15 end in ERROR with NoValidHost, no address is given twice and placement's
IPV4_ADDRESS usage of each segment equals the ports holding its addresses. Then a kill -9
in the middle of a burst of boots: after a restart every server is ACTIVE or ERROR and the
audit finds nothing to report."""

from __future__ import annotations

import ipaddress
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import BIN

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.62"}
PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}
RACK1 = {"compute-r1-1", "compute-r1-2"}
RACK2 = {"compute-r2-1", "compute-r2-2"}


def _routed_network(admin: httpx.Client, project_id: str) -> tuple[str, dict[str, dict]]:
    """Segment A on physnet1 with 5 free addresses, segment B on physnet2 with 20 (no
    DHCP: the pool is exactly what placement offers)."""
    net = admin.post("/networking/v2.0/networks", json={"network": {
        "name": "racing", "project_id": project_id, "provider:network_type": "vlan",
        "provider:physical_network": "physnet1"}}).json()["network"]
    seg_a = admin.get(f"/networking/v2.0/segments?network_id={net['id']}").json()["segments"][0]
    seg_b = admin.post("/networking/v2.0/segments", json={"segment": {
        "network_id": net["id"], "network_type": "vlan", "physical_network": "physnet2"}}
    ).json()["segment"]
    subnets = {}
    for name, seg, cidr, last in (("A", seg_a, "10.97.1.0/24", "10.97.1.14"),
                                  ("B", seg_b, "10.97.2.0/24", "10.97.2.29")):
        r = admin.post("/networking/v2.0/subnets", json={"subnet": {
            "network_id": net["id"], "project_id": project_id, "segment_id": seg["id"],
            "cidr": cidr, "ip_version": 4, "enable_dhcp": False,
            "allocation_pools": [{"start": cidr.replace("0/24", "10"), "end": last}]}})
        assert r.status_code == 201, r.text
        subnets[name] = r.json()["subnet"]
    return net["id"], subnets


def _wait_settled(admin: httpx.Client, expected: int | None = None,
                  timeout: float = 180) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        servers = admin.get("/compute/v2.1/servers/detail?all_tenants=1").json()["servers"]
        if (expected is None or len(servers) == expected) and all(
                s["status"] in ("ACTIVE", "ERROR") for s in servers):
            return servers
        assert time.monotonic() < deadline, [s["status"] for s in servers]
        time.sleep(0.2)


def _check_invariants(admin: httpx.Client, net_id: str, subnets: dict[str, dict],
                      servers: list[dict]) -> None:
    ports = admin.get(f"/networking/v2.0/ports?network_id={net_id}").json()["ports"]
    addresses = [ip["ip_address"] for p in ports for ip in p["fixed_ips"]]
    assert len(addresses) == len(set(addresses)), "an address was given twice"
    active = {s["id"] for s in servers if s["status"] == "ACTIVE"}
    compute_ports = [p for p in ports if p["device_owner"].startswith("compute:")]
    assert sorted(p["device_id"] for p in compute_ports) == sorted(active)
    for subnet in subnets.values():
        held = sum(1 for p in compute_ports for ip in p["fixed_ips"]
                   if ip["subnet_id"] == subnet["id"])
        usages = admin.get(f"/placement/resource_providers/{subnet['segment_id']}/usages",
                           headers=PLACEMENT).json()["usages"]
        assert usages.get("IPV4_ADDRESS", 0) == held, (subnet["cidr"], usages, held)
    for s in servers:
        allocations = admin.get(f"/placement/allocations/{s['id']}",
                                headers=PLACEMENT).json()["allocations"]
        assert bool(allocations) == (s["status"] == "ACTIVE"), s
        assert all("IPV4_ADDRESS" not in a["resources"] for a in allocations.values())


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_routed_boots(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    member = server.new_project_member()
    project_id = member["project"].id
    token = member["sdk"].session.get_token()
    admin = server.http(server.token())
    admin.headers.update(MV)
    admin.put(f"/compute/v2.1/os-quota-sets/{project_id}", json={"quota_set": {
        "instances": -1, "cores": -1, "ram": -1}}).raise_for_status()
    net_id, subnets = _routed_network(admin, project_id)
    n = 40
    barrier = threading.Barrier(n)

    def boot(i: int) -> httpx.Response:
        with httpx.Client(base_url=server.url, timeout=120,
                          headers={"X-Auth-Token": token, **MV}) as http:
            barrier.wait()
            return http.post("/compute/v2.1/servers", json={"server": {
                "name": f"race-{i}", "flavorRef": "1", "imageRef": CIRROS,
                "networks": [{"uuid": net_id}]}})

    with ThreadPoolExecutor(n) as pool:
        responses = list(pool.map(boot, range(n)))
    assert [r.status_code for r in responses] == [202] * n, [r.text for r in responses]
    servers = _wait_settled(admin, n)
    active = [s for s in servers if s["status"] == "ACTIVE"]
    errors = [s for s in servers if s["status"] == "ERROR"]
    assert (len(active), len(errors)) == (25, 15), [s.get("fault") for s in errors]
    assert all(s["fault"]["message"].startswith("No valid host was found.") for s in errors)
    racks = {"A": [], "B": []}
    for s in active:
        (address,) = [a["addr"] for a in s["addresses"]["racing"]]
        rack = next(k for k, sub in subnets.items()
                    if ipaddress.ip_address(address) in ipaddress.ip_network(sub["cidr"]))
        racks[rack].append(s["OS-EXT-SRV-ATTR:host"])
    assert len(racks["A"]) == 5 and set(racks["A"]) <= RACK1
    assert len(racks["B"]) == 20 and set(racks["B"]) <= RACK2
    _check_invariants(admin, net_id, subnets, servers)

    # kill -9 during a burst of boots; after a restart nothing is half done
    for s in servers:
        admin.delete(f"/compute/v2.1/servers/{s['id']}").raise_for_status()

    def burst(i: int) -> None:
        with httpx.Client(base_url=server.url, timeout=60,
                          headers={"X-Auth-Token": token, **MV}) as http:
            http.post("/compute/v2.1/servers", json={"server": {
                "name": f"burst-{i}", "flavorRef": "1", "imageRef": CIRROS,
                "networks": [{"uuid": net_id}], "min_count": 5, "max_count": 5}})

    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(burst, i) for i in range(6)]
        time.sleep(0.3)
        server.stop(kill=True)
        for f in futures:
            try:
                f.result()
            except httpx.HTTPError:
                pass  # the server died under this request
    admin.close()
    server.start(timeout=180)  # a loaded machine can be slow to bring four workers up
    admin = server.http(server.token())
    admin.headers.update(MV)
    servers = _wait_settled(admin)
    _check_invariants(admin, net_id, subnets, servers)
    audit = subprocess.run([str(BIN / "stackling"), "audit", "--database-url",
                            server.database_url], capture_output=True, text=True, timeout=120)
    assert audit.returncode == 0 and audit.stdout.strip() == "", audit.stdout + audit.stderr
    admin.close()
