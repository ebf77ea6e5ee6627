"""Networking under many processes: distinct addresses, clean exhaustion, distinct VNIs."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

N = "/networking/v2.0"


def _parallel(server, token: str, calls: list, threads: int = 32) -> list[httpx.Response]:
    local = threading.local()

    def run(call):
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                                      timeout=120)
        method, path, body = call
        return local.http.request(method, path, json=body)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, calls))


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_ports_and_networks(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    token = server.token()
    with server.http(token) as http:
        def make(coll, res, body):
            r = http.post(f"{N}/{coll}", json={res: body})
            assert r.status_code == 201, r.text
            return r.json()[res]

        big = make("networks", "network", {"name": "race-24"})
        make("subnets", "subnet", {"network_id": big["id"], "ip_version": 4,
                                   "cidr": "10.30.0.0/24"})
        small = make("networks", "network", {"name": "race-28"})
        make("subnets", "subnet", {"network_id": small["id"], "ip_version": 4,
                                   "cidr": "10.31.0.0/28"})

    # 200 ports on one /24 at once: every one gets its own address and MAC
    results = _parallel(server, token, [("POST", f"{N}/ports", {"port": {
        "network_id": big["id"]}})] * 200)
    assert [r.status_code for r in results] == [201] * 200, [
        r.text for r in results if r.status_code != 201][:3]
    ports = [r.json()["port"] for r in results]
    ips = [p["fixed_ips"][0]["ip_address"] for p in ports]
    assert len(set(ips)) == 200 and all(len(p["fixed_ips"]) == 1 for p in ports)
    assert len({p["mac_address"] for p in ports}) == 200

    # a /28 has 13 pool addresses: 30 racing requests give 13 ports and 17 clean 409s
    results = _parallel(server, token, [("POST", f"{N}/ports", {"port": {
        "network_id": small["id"]}})] * 30)
    codes = sorted(r.status_code for r in results)
    assert codes == [201] * 13 + [409] * 17, [r.text for r in results if r.status_code >= 500]
    assert {r.json()["NeutronError"]["type"] for r in results if r.status_code == 409} == {
        "IpAddressGenerationFailure"}
    with server.http(token) as http:
        listed = http.get(f"{N}/ports?network_id={small['id']}").json()["ports"]
        assert len(listed) == 13 and all(len(p["fixed_ips"]) == 1 for p in listed)
        assert len({p["fixed_ips"][0]["ip_address"] for p in listed}) == 13

    # 100 project networks at once: 100 distinct VNIs (above the default quota of 100
    # with the networks made so far: lifted for the admin project)
    admin_project = server.sdk().current_project_id
    with server.http(token) as http:
        http.put(f"{N}/quotas/{admin_project}", json={"quota": {"network": -1}})
    results = _parallel(server, token, [("POST", f"{N}/networks", {"network": {
        "name": f"vni-{i}"}}) for i in range(100)])
    assert [r.status_code for r in results] == [201] * 100
    vnis = [r.json()["network"]["provider:segmentation_id"] for r in results]
    assert len(set(vnis)) == 100
    assert all(r.json()["network"]["provider:network_type"] == "vxlan" for r in results)

    # a new project's first 20 requests race to create its default security group: one wins
    with server.http(token) as http:
        project = http.post("/identity/v3/projects", json={"project": {
            "name": f"sg-race-{backend}", "domain_id": "default"}}).json()["project"]
        user = http.post("/identity/v3/users", json={"user": {
            "name": f"sg-racer-{backend}", "password": "pw-secret",
            "domain_id": "default"}}).json()["user"]
        role = http.get("/identity/v3/roles?name=member").json()["roles"][0]
        assert http.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/"
                        f"{role['id']}").status_code == 204
    member = server.token(user=user["name"], project=project["name"], password="pw-secret")
    results = _parallel(server, member, [("POST", f"{N}/networks", {"network": {}}),
                                         ("GET", f"{N}/security-groups", None)] * 10)
    assert all(r.status_code in (200, 201) for r in results), [
        (r.status_code, r.text[:300]) for r in results if r.status_code not in (200, 201)]
    with server.http(member) as http:
        groups = http.get(f"{N}/security-groups").json()["security_groups"]
    assert [g["name"] for g in groups] == ["default"]
