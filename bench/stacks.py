"""Orchestration: time from `POST /stacks` (or PUT, DELETE) to the stack's *_COMPLETE
(polled), beside the no-op floor measured in the same run. SQLite, one process.

- the CLI story's template (network, subnet, router, interface, security group, floating
  IP, two servers with rich networks): create, in-place update (resize), replacing update
  (image under image_update_policy REPLACE, keeping the fixed IP), delete;
- a 100-server OS::Heat::ResourceGroup (each server with a port on one subnet): create.

    python -m bench.stacks [samples] [group-size]
"""

from __future__ import annotations

import copy
import sys
import time
from typing import Any

import httpx

from bench.boot import new_project
from bench.common import median_ms, noop_floor, report, server, table
from tests.api.test_orchestration_servers import STORY

POLL = 0.01  # the first polling interval; then 2% of the time waited so far, at most
POLL_MAX = 0.05  # this: a poll costs the server about a no-op request, and polling a
# 15-second group every 10 ms would take a good share of its one process's CPU


def pause(started: float) -> None:
    time.sleep(min(POLL_MAX, max(POLL, (time.perf_counter() - started) * 0.02)))


def wait(client: httpx.Client, url: str, timeout: float = 300,
         started: float | None = None) -> dict[str, Any]:
    started = time.perf_counter() if started is None else started
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        stack = client.get(url, params={"resolve_outputs": "false"}).json()["stack"]
        status = stack["stack_status"]
        if status.endswith("_COMPLETE"):
            return stack
        if status.endswith("_FAILED"):
            raise RuntimeError(f"{url}: {status} {stack['stack_status_reason']}")
        pause(started)
    raise RuntimeError(f"{url} not complete in {timeout}s")


def story(i: int) -> dict[str, Any]:
    t = copy.deepcopy(STORY)
    t["resources"]["subnet"]["properties"]["cidr"] = f"10.{100 + i}.0.0/24"
    t["resources"]["subnet"]["properties"]["allocation_pools"] = [
        {"start": f"10.{100 + i}.0.20", "end": f"10.{100 + i}.0.254"}]
    t["resources"]["web"]["properties"]["networks"][0]["fixed_ip"] = f"10.{100 + i}.0.10"
    return t


def group(count: int) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.200.0.0/22"}},
        "servers": {"type": "OS::Heat::ResourceGroup", "depends_on": "subnet",
                    "properties": {"count": count, "resource_def": {
                        "type": "OS::Nova::Server", "properties": {
                            "image": "cirros", "flavor": "m1.tiny",
                            "networks": [{"subnet": {"get_resource": "subnet"}}]}}}}}}


def timed(client: httpx.Client, method: str, url: str, wait_url: str | None = None,
          **kw: Any) -> tuple[float, httpx.Response]:
    t0 = time.perf_counter()
    r = client.request(method, url, **kw)
    r.raise_for_status()
    if method == "POST":
        wait_url = r.headers["location"]
    assert wait_url is not None
    wait(client, wait_url, started=t0)
    return time.perf_counter() - t0, r


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    with server() as srv:
        admin = srv.client()
        floor = noop_floor(admin)
        project_id, client = new_project(admin, srv.url)
        # a nested stack's action is one transaction: on SQLite a poll may wait for it
        client.timeout = httpx.Timeout(600)
        base = f"/orchestration/v1/{project_id}"
        # One story first, not sampled: the first stack of a fresh server pays one-off
        # costs (first use of code paths, SQLAlchemy's statement caches, the project's
        # default security group) that `bench.startup` covers, not this steady state.
        _, r = timed(client, "POST", f"{base}/stacks", json={"stack_name": "warm-up",
                                                            "template": story(99)})
        client.delete(r.headers["location"]).raise_for_status()
        wait(client, r.headers["location"])
        created, updated, replaced, deleted = [], [], [], []
        for i in range(samples):
            t = story(i)
            secs, r = timed(client, "POST", f"{base}/stacks",
                            json={"stack_name": f"story{i}", "template": t})
            created.append(secs)
            url = r.headers["location"]
            t["resources"]["web"]["properties"]["flavor"] = "m1.small"
            updated.append(timed(client, "PUT", url, url, json={"template": t})[0])
            t["resources"]["web"]["properties"].update(image_update_policy="REPLACE",
                                                       user_data="v2")
            replaced.append(timed(client, "PUT", url, url, json={"template": t})[0])
            t0 = time.perf_counter()
            client.delete(url).raise_for_status()
            assert wait(client, url, started=t0)["stack_status"] == "DELETE_COMPLETE"
            deleted.append(time.perf_counter() - t0)
        secs, r = timed(client, "POST", f"{base}/stacks",
                        json={"stack_name": "group", "template": group(count)})
        servers = client.get("/compute/v2.1/servers", params={"limit": 1000}).json()["servers"]
        assert len(servers) == count, len(servers)
        grp_ms = secs * 1000
        t0 = time.perf_counter()
        client.delete(r.headers["location"]).raise_for_status()
        wait(client, r.headers["location"], started=t0)
        grp_del_ms = (time.perf_counter() - t0) * 1000
    rows = [
        ["no-op floor (GET identity domain)", floor, 1.0],
        ["CLI story template: create → CREATE_COMPLETE", median_ms(created),
         median_ms(created) / floor],
        ["  in-place update (resize) → UPDATE_COMPLETE", median_ms(updated),
         median_ms(updated) / floor],
        ["  replacing update (new server, same fixed IP) → UPDATE_COMPLETE",
         median_ms(replaced), median_ms(replaced) / floor],
        ["  delete → DELETE_COMPLETE", median_ms(deleted), median_ms(deleted) / floor],
        [f"{count}-server ResourceGroup: create → CREATE_COMPLETE", grp_ms, grp_ms / floor],
        [f"{count}-server ResourceGroup: delete → DELETE_COMPLETE", grp_del_ms,
         grp_del_ms / floor],
    ]
    text = table(["measure (median)", "ms", "× floor"], rows)
    text += (f"\n\nSamples: {samples} story stacks after one unsampled warm-up story "
             f"(8 resources: 2 servers, 2 ports they "
             f"own, a floating IP, a router and its interface, a security group); one "
             f"{count}-server group. Stack status polled every {POLL * 1000:.0f} ms, "
             f"then every 2% of the time waited so far, at most every {POLL_MAX * 1000:.0f} "
             f"ms (a completion is seen at most that late), with `resolve_outputs=false`.")
    report("stacks", text)


if __name__ == "__main__":
    main()
