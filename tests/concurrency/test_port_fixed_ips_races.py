"""Concurrent identical `fixed_ips` updates of one port (issue 19, item 8).

Setting a port's addresses to what it holds, or to what a concurrent identical request has
just given it, always succeeds: never 409 IpAddressAlreadyAllocated for the port's own
address, and a request by subnet alone never leaves the port with two addresses there.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

N = "/networking/v2.0"
RACERS = 10
ROUNDS = 4


def _race(server: Any, token: str, url: str, body: dict[str, Any]) -> list[httpx.Response]:
    barrier = threading.Barrier(RACERS)

    def one(_: int) -> httpx.Response:
        with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                          timeout=120) as http:
            barrier.wait()
            return http.put(url, json=body)

    with ThreadPoolExecutor(RACERS) as pool:
        return list(pool.map(one, range(RACERS)))


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_identical_fixed_ips_updates_all_succeed(cloud_factory, backend):
    server = cloud_factory(backend, workers=4)
    token = server.token()
    with server.http(token) as http:
        net = http.post(f"{N}/networks", json={"network": {"name": "fixed"}}).json()["network"]
        subnet = http.post(f"{N}/subnets", json={"subnet": {
            "network_id": net["id"], "cidr": "10.78.0.0/24", "ip_version": 4}}
        ).json()["subnet"]
        port = http.post(f"{N}/ports", json={"port": {"network_id": net["id"], "fixed_ips": [
            {"subnet_id": subnet["id"], "ip_address": "10.78.0.10"}]}}).json()["port"]
    url = f"{N}/ports/{port['id']}"
    # Each round moves the port to a new address (every racer asks the same), then sets it
    # to the address it already holds.
    for n in range(ROUNDS):
        for ip in (f"10.78.0.{20 + n}", f"10.78.0.{20 + n}"):
            wanted = [{"subnet_id": subnet["id"], "ip_address": ip}]
            results = _race(server, token, url, {"port": {"fixed_ips": wanted}})
            assert [r.status_code for r in results] == [200] * RACERS, \
                [r.text for r in results if r.status_code != 200]
            for r in results:
                assert r.json()["port"]["fixed_ips"] == wanted
            with server.http(token) as http:
                held = http.get(url).json()["port"]["fixed_ips"]
                assert held == wanted
                ips = http.get(f"{N}/ports", params={"network_id": net["id"]}).json()["ports"]
                taken = [f["ip_address"] for p in ips for f in p["fixed_ips"]]
                assert taken.count(ip) == 1
    # By subnet only, moving between two subnets: the first racer picks the address, the
    # others find the port already holding one there; it never ends with two.
    with server.http(token) as http:
        other = http.post(f"{N}/subnets", json={"subnet": {
            "network_id": net["id"], "cidr": "10.79.0.0/24", "ip_version": 4}}
        ).json()["subnet"]
    for n in range(ROUNDS):
        target = (other, subnet)[n % 2]
        results = _race(server, token, url, {"port": {"fixed_ips": [
            {"subnet_id": target["id"]}]}})
        assert [r.status_code for r in results] == [200] * RACERS, \
            [r.text for r in results if r.status_code != 200]
        with server.http(token) as http:
            held = http.get(url).json()["port"]["fixed_ips"]
        assert [f["subnet_id"] for f in held] == [target["id"]], held
        assert {r.json()["port"]["fixed_ips"][0]["ip_address"] for r in results} == \
            {held[0]["ip_address"]}
