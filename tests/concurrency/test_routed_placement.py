"""Routed-network placement under many processes (4 workers on PostgreSQL and MariaDB):
racing bindings of deferred ports on a segment with 10 free IPv4 addresses give exactly
10 addresses and 10 port allocations, the rest clean 409s; racing subnet creates and
service ports on one segment leave its inventory exactly what the tables say; and the
audit finds nothing afterwards."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

N = "/networking/v2.0"
PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}


def _parallel(server, token: str, calls: list[tuple[str, str, dict]], threads: int = 16
              ) -> list[httpx.Response]:
    local = threading.local()

    def run(call: tuple[str, str, dict]) -> httpx.Response:
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                                      timeout=120)
        method, url, body = call
        return local.http.request(method, url, json=body)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, calls))


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_racing_bindings_and_subnets_keep_placement_exact(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    admin = server.sdk()
    token = server.token()
    net = admin.network.create_network(name="race", provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    seg = next(iter(admin.network.segments(network_id=net.id)))
    # 11 pool addresses + gateway = 12 total, 2 reserved (gateway, DHCP): 10 for servers
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.70.0.0/24",
                                segment_id=seg.id, allocation_pools=[
                                    {"start": "10.70.0.10", "end": "10.70.0.20"}])
    ports = [admin.network.create_port(network_id=net.id, device_owner="compute:nova")
             for _ in range(16)]
    assert all(p.ip_allocation == "deferred" for p in ports)
    hosts = ["compute-r1-1", "compute-r1-2"]
    results = _parallel(server, token, [
        ("PUT", f"{N}/ports/{p.id}", {"port": {"binding:host_id": hosts[i % 2]}})
        for i, p in enumerate(ports)])
    codes = sorted(r.status_code for r in results)
    assert codes == [200] * 10 + [409] * 6, [r.text for r in results
                                             if r.status_code not in (200, 409)][:3]
    assert {r.json()["NeutronError"]["type"] for r in results if r.status_code == 409} == {
        "IpAddressGenerationFailure"}
    with server.http(token) as http:
        usage = http.get(f"/placement/resource_providers/{seg.id}/usages",
                         headers=PLACEMENT).json()["usages"]
        assert usage == {"IPV4_ADDRESS": 10}
        allocations = http.get(f"/placement/resource_providers/{seg.id}/allocations",
                               headers=PLACEMENT).json()["allocations"]
    bound = {p.id for p in admin.network.ports(network_id=net.id) if p.fixed_ips}
    assert set(allocations) == bound and len(bound) == 10
    unbound = [p for p in admin.network.ports(network_id=net.id) if not p.fixed_ips]
    assert all(p.binding_host_id == "" for p in unbound)

    # racing subnet creates and service ports on the same segment
    calls = [("POST", f"{N}/subnets", {"subnet": {
        "network_id": net.id, "ip_version": 4, "cidr": f"10.71.{i}.0/28",
        "segment_id": seg.id}}) for i in range(8)]
    calls += [("POST", f"{N}/ports", {"port": {"network_id": net.id, "fixed_ips": [
        {"subnet_id": next(iter(admin.network.subnets(network_id=net.id))).id}]}})
        for _ in range(1)]
    results = _parallel(server, token, calls)
    assert all(r.status_code == 201 for r in results), [r.text for r in results
                                                        if r.status_code != 201][:3]
    with server.http(token) as http:
        inv = http.get(f"/placement/resource_providers/{seg.id}/inventories",
                       headers=PLACEMENT).json()["inventories"]["IPV4_ADDRESS"]
        # 12 + 8 x (13 pool + 1 gateway); reserved 2 + 8 x 2 + the service port
        assert (inv["total"], inv["reserved"]) == (12 + 8 * 14, 2 + 8 * 2 + 1)
        r = http.get("/audit")
        assert r.status_code == 200 and r.json() == {"findings": []}, r.text
