"""Placement under many processes: claims never over-allocate, whatever the contention."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

V = {"OpenStack-API-Version": "placement 1.39"}


def _provider(http: httpx.Client, name: str, inventories: dict) -> str:
    r = http.post("/placement/resource_providers", json={"name": name}, headers=V)
    assert r.status_code == 200, r.text
    rp = r.json()["uuid"]
    r = http.put(f"/placement/resource_providers/{rp}/inventories", headers=V,
                 json={"resource_provider_generation": 0, "inventories": inventories})
    assert r.status_code == 200, r.text
    return rp


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_parallel_claims_fill_exactly_the_capacity(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    token = server.token()
    project = str(uuid.uuid4())
    with server.http(token) as http:
        # 30 + 30 VCPU fit exactly 60 one-VCPU claims; the second host's ratio makes 15 x 2.
        a = _provider(http, "race-a", {"VCPU": {"total": 30}, "MEMORY_MB": {"total": 1000}})
        b = _provider(http, "race-b", {"VCPU": {"total": 15, "allocation_ratio": 2.0}})
    claims = 100
    barrier = threading.Barrier(claims)

    def claim(i: int) -> tuple[int, str]:
        target = a if i % 2 == 0 else b
        resources = {"VCPU": 1}
        if target == a and i % 4 == 0:
            resources["MEMORY_MB"] = 10  # some claims span two classes
        body = {"allocations": {target: {"resources": resources}}, "project_id": project,
                "user_id": f"user-{i % 3}", "consumer_generation": None,
                "consumer_type": "INSTANCE"}
        with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token, **V},
                          timeout=120) as http:
            barrier.wait()
            r = http.put(f"/placement/allocations/{uuid.uuid4()}", json=body)
        code = r.json()["errors"][0]["code"] if r.status_code == 409 else ""
        return r.status_code, code

    with ThreadPoolExecutor(claims) as pool:
        results = list(pool.map(claim, range(claims)))
    statuses = [s for s, _ in results]
    assert statuses.count(204) == 60, results
    assert statuses.count(409) == 40, results
    with server.http(token) as http:
        for rp, full in ((a, 30), (b, 30)):
            usages = http.get(f"/placement/resource_providers/{rp}/usages", headers=V).json()
            allocs = http.get(f"/placement/resource_providers/{rp}/allocations", headers=V).json()
            summed = sum(c["resources"]["VCPU"] for c in allocs["allocations"].values())
            assert usages["usages"]["VCPU"] == summed == full
        total = http.get(f"/placement/usages?project_id={project}", headers={
            "OpenStack-API-Version": "placement 1.37"}).json()["usages"]
        assert total["VCPU"] == 60
        # Every successful claim bumped its provider's generation exactly once.
        generations = {rp: http.get(f"/placement/resource_providers/{rp}", headers=V
                                    ).json()["generation"] for rp in (a, b)}
        assert generations == {a: 1 + 30, b: 1 + 30}
        # The hosts are full: no candidate is offered for one more VCPU.
        cands = http.get("/placement/allocation_candidates?resources=VCPU:1&in_tree=" + a,
                         headers=V).json()
        assert cands["allocation_requests"] == []
