"""Races and slow clients against real servers (issue 9, items 6, 8 and 9).

- Identical concurrent updates of association rows (port security groups and address
  pairs, tags, aggregate metadata and availability zone) all succeed, as upstream is
  idempotent; concurrent creates of one image id give one 201 and 409s, never a 500.
- SQLite: concurrent first GETs of auto-allocated topologies (a read that writes) all
  succeed: no request fails because the database is busy.
- A client that never finishes its headers is disconnected; one whose body stalls gets 408.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

N = "/networking/v2.0"
RACERS = 8


def race(server: Any, token: str, n: int, call: Callable[[httpx.Client, int], httpx.Response]
         ) -> list[httpx.Response]:
    """`n` calls released together, each on its own connection."""
    barrier = threading.Barrier(n)

    def one(i: int) -> httpx.Response:
        with httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                          timeout=120) as http:
            barrier.wait()
            return call(http, i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def statuses(results: list[httpx.Response]) -> list[int]:
    return sorted(r.status_code for r in results)


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_identical_concurrent_updates_all_succeed(cloud_factory, backend):
    server = cloud_factory(backend, workers=2)
    token = server.token()
    with server.http(token) as http:
        net = http.post(f"{N}/networks", json={"network": {"name": "race"}}).json()["network"]
        http.post(f"{N}/subnets", json={"subnet": {
            "network_id": net["id"], "cidr": "10.77.0.0/24", "ip_version": 4}})
        port = http.post(f"{N}/ports", json={"port": {"network_id": net["id"]}}).json()["port"]
        sgs = [http.post(f"{N}/security-groups", json={"security_group": {"name": f"sg{i}"}}
                         ).json()["security_group"]["id"] for i in range(2)]
        agg = http.post("/compute/v2.1/os-aggregates",
                        json={"aggregate": {"name": "race"}}).json()["aggregate"]

    port_url = f"{N}/ports/{port['id']}"
    results = race(server, token, RACERS, lambda h, _: h.put(port_url, json={
        "port": {"security_groups": sgs}}))
    assert statuses(results) == [200] * RACERS, [r.text for r in results]
    pairs = [{"ip_address": "10.77.0.200"}, {"ip_address": "10.77.0.201"}]
    results = race(server, token, RACERS, lambda h, _: h.put(port_url, json={
        "port": {"allowed_address_pairs": pairs}}))
    assert statuses(results) == [200] * RACERS, [r.text for r in results]

    tags_url = f"{N}/networks/{net['id']}/tags"
    results = race(server, token, RACERS, lambda h, _: h.put(tags_url, json={
        "tags": ["red", "blue"]}))
    assert statuses(results) == [200] * RACERS, [r.text for r in results]
    results = race(server, token, RACERS, lambda h, _: h.put(f"{tags_url}/green"))
    assert {r.status_code for r in results} <= {201}, [r.text for r in results]

    agg_url = f"/compute/v2.1/os-aggregates/{agg['id']}"
    results = race(server, token, RACERS, lambda h, _: h.post(f"{agg_url}/action", json={
        "set_metadata": {"metadata": {"ssd": "true", "rack": "r1"}}}))
    assert statuses(results) == [200] * RACERS, [r.text for r in results]
    results = race(server, token, RACERS, lambda h, _: h.put(agg_url, json={
        "aggregate": {"availability_zone": "az-race"}}))
    assert statuses(results) == [200] * RACERS, [r.text for r in results]

    image_id = str(uuid.uuid4())
    results = race(server, token, RACERS, lambda h, _: h.post("/image/v2/images", json={
        "id": image_id, "name": "race"}))
    assert statuses(results) == [201] + [409] * (RACERS - 1), [r.text for r in results]

    with server.http(token) as http:
        shown = http.get(port_url).json()["port"]
        assert sorted(shown["security_groups"]) == sorted(sgs)
        assert sorted(p["ip_address"] for p in shown["allowed_address_pairs"]) == [
            "10.77.0.200", "10.77.0.201"]
        assert sorted(http.get(tags_url).json()["tags"]) == ["blue", "green", "red"]
        aggregate = http.get(agg_url).json()["aggregate"]
        assert aggregate["metadata"] == {"ssd": "true", "rack": "r1",
                                         "availability_zone": "az-race"}
        assert aggregate["availability_zone"] == "az-race"


@pytest.mark.concurrency
def test_sqlite_concurrent_first_topology_calls_never_fail_busy(cloud_factory):
    server = cloud_factory("sqlite", workers=2)
    token = server.token()
    projects = [uuid.uuid4().hex for _ in range(20)]
    results = race(server, token, len(projects), lambda h, i: h.get(
        f"{N}/auto-allocated-topology/{projects[i]}"))
    assert statuses(results) == [200] * len(projects), [r.text for r in results
                                                         if r.status_code != 200]
    assert len({r.json()["auto_allocated_topology"]["id"] for r in results}) == len(projects)


def _recv_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _recv_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data and (chunk := sock.recv(65536)):
        data += chunk
    return data


def test_slow_clients_are_cut_off(cloud_factory):
    server = cloud_factory("sqlite", extra_env={"STACKLING_HTTP__CLIENT_TIMEOUT": "1"})
    # Headers never finished: the server closes the connection without an answer.
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(b"GET /identity/v3 HTTP/1.1\r\nHost: x\r\n")
        assert _recv_all(sock) == b""
    # A body that stops arriving: 408, in the service's error format.
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(b"POST /identity/v3/auth/tokens HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"auth\"")
        answer = _recv_until(sock, b"}}")
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b'"code":408' in answer
    # The server still serves everyone else.
    assert httpx.get(f"{server.url}/identity/v3", timeout=30).status_code == 200
