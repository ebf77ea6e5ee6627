"""Server boot: time from `POST /servers` to ACTIVE (polled) for the first `networks: auto`
boot in a project (it builds the auto-allocated topology), for later ones, and for
`networks: none`; create throughput; the first auto-allocated-topology call alone;
all beside the no-op floor measured in the same run. SQLite, one process.

    python -m bench.boot [projects] [boots-per-project]
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from typing import Any

import httpx

from bench.common import median_ms, noop_floor, report, server, table

MV = {"OpenStack-API-Version": "compute 2.62"}
CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
POLL = 0.005  # seconds between status polls (each poll is a GET the server must serve)


def new_project(admin: httpx.Client, url: str) -> tuple[str, httpx.Client]:
    """A fresh project with a member user; returns (project id, that user's client)."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    project = admin.post("/identity/v3/projects", json={"project": {
        "name": name, "domain_id": "default"}}).json()["project"]
    user = admin.post("/identity/v3/users", json={"user": {
        "name": f"u-{name}", "domain_id": "default", "password": "pw"}}).json()["user"]
    roles = admin.get("/identity/v3/roles?name=member").json()["roles"]
    admin.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{roles[0]['id']}")
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "id": user["id"], "password": "pw"}}}, "scope": {"project": {"id": project["id"]}}}}
    token = httpx.post(f"{url}/identity/v3/auth/tokens", json=body).headers["X-Subject-Token"]
    return project["id"], httpx.Client(base_url=url, headers={"X-Auth-Token": token, **MV},
                                       timeout=60)


def boot(client: httpx.Client, networks: Any) -> str:
    r = client.post("/compute/v2.1/servers", json={"server": {
        "name": "b", "flavorRef": "1", "imageRef": CIRROS, "networks": networks}})
    r.raise_for_status()
    return r.json()["server"]["id"]


def wait_active(client: httpx.Client, server_id: str, timeout: float = 30) -> None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        status = client.get(f"/compute/v2.1/servers/{server_id}").json()["server"]["status"]
        if status == "ACTIVE":
            return
        if status == "ERROR":
            fault = client.get(f"/compute/v2.1/servers/{server_id}").json()["server"]["fault"]
            raise RuntimeError(f"server {server_id} went to ERROR: {fault}")
        time.sleep(POLL)
    raise RuntimeError(f"server {server_id} not ACTIVE in {timeout}s")


def boot_to_active(client: httpx.Client, networks: Any) -> float:
    t0 = time.perf_counter()
    wait_active(client, boot(client, networks))
    return time.perf_counter() - t0


def delete_all(client: httpx.Client) -> None:
    """Free the hosts for the next measurement (4 hosts hold ~120 m1.tiny)."""
    for s in client.get("/compute/v2.1/servers").json()["servers"]:
        client.delete(f"/compute/v2.1/servers/{s['id']}").raise_for_status()


def main() -> None:
    projects = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    per_project = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with server() as srv:
        admin = srv.client()
        floor = noop_floor(admin)
        flavor_floor = median_ms([_timed_get(admin, "/compute/v2.1/flavors/1")
                                  for _ in range(200)])
        first, later, topo, none = [], [], [], []
        for _ in range(projects):
            project_id, client = new_project(admin, srv.url)
            t0 = time.perf_counter()
            client.get(f"/networking/v2.0/auto-allocated-topology/{project_id}").raise_for_status()
            topo.append(time.perf_counter() - t0)
            project_id, client = new_project(admin, srv.url)
            first.append(boot_to_active(client, "auto"))
            later += [boot_to_active(client, "auto") for _ in range(per_project)]
            none += [boot_to_active(client, "none") for _ in range(per_project)]
            delete_all(client)
        # Throughput: a burst of creates, then wait until every server is ACTIVE.
        _, client = new_project(admin, srv.url)
        boot_to_active(client, "auto")
        n = 50
        t0 = time.perf_counter()
        ids = [boot(client, "auto") for _ in range(n)]
        accepted = time.perf_counter() - t0
        for sid in ids:
            wait_active(client, sid)
        finished = time.perf_counter() - t0
    rows = [
        ["no-op floor (GET identity domain)", floor, 1.0],
        ["GET /compute/v2.1/flavors/1", flavor_floor, flavor_floor / floor],
        ["auto-allocated topology, first call", median_ms(topo), median_ms(topo) / floor],
        ["first `auto` boot in a project → ACTIVE", median_ms(first), median_ms(first) / floor],
        ["later `auto` boot → ACTIVE", median_ms(later), median_ms(later) / floor],
        ["`none` boot → ACTIVE", median_ms(none), median_ms(none) / floor],
    ]
    text = table(["measure (median)", "ms", "× floor"], rows)
    text += (f"\n\nThroughput: {n} `auto` creates accepted in {accepted:.2f} s "
             f"({n / accepted:.0f}/s); all ACTIVE after {finished:.2f} s "
             f"({n / finished:.0f} servers/s). Samples: {projects} projects × {per_project} "
             f"boots; p90 later auto boot {_p90(later):.1f} ms; status polled every "
             f"{POLL * 1000:.0f} ms.")
    report("boot", text)


def _timed_get(client: httpx.Client, path: str) -> float:
    t0 = time.perf_counter()
    client.get(path, headers=MV).raise_for_status()
    return time.perf_counter() - t0


def _p90(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=10)[-1] * 1000 if len(samples) > 1 else 0.0


if __name__ == "__main__":
    main()
