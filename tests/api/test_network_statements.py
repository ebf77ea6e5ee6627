"""Statements per request of the networking hot paths (issue 35), pinned: a regression
(a hook that queries with nothing to do, a read-back of what was just written) shows here.
Counted on SQLite, every cursor execute of the request's connection (its BEGIN
included; the background loops' statements on other connections are not), after each
operation ran once (the first of each compiles and caches its statements). The bounds
marked `goal` are the issue's; the others are today's count."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event

N = "/networking/v2.0"

# operation -> statements
COUNTS = {
    "list 1 network": 6,
    "create network": 8,  # goal: <= 8
    "create subnet": 9,  # goal: <= 6 (not met)
    "create port": 11,  # goal: <= 8 (not met)
    "delete port": 14,  # goal: <= 7 (not met)
    "delete subnet": 8,
    "delete network": 16,  # goal: <= 8 (not met)
    "segment range create": 7,  # goal: <= 4 (not met)
    "segment range delete": 7,
}


@pytest.fixture(scope="module")
def counted(api: Any) -> dict[str, int]:
    seen: list[str] = []
    net = api.post(f"{N}/networks", json={"network": {"name": "ports"}}).json()["network"]
    assert api.post(f"{N}/subnets", json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.255.0.0/16"}}).status_code == 201
    made: dict[str, list[str]] = {"net": [], "sub": [], "port": [], "range": []}
    serial = iter(range(1, 1000))

    def call(method: str, url: str, status: int, kind: str | None = None,
             **body: Any) -> None:
        r = api.request(method, url, json=body or None)
        assert r.status_code == status, r.text
        if kind is not None:
            made[kind].append(next(iter(r.json().values()))["id"])

    def create_subnet() -> None:
        i = next(serial)
        call("POST", f"{N}/subnets", 201, "sub", subnet={
            "network_id": made["net"][-1], "ip_version": 4, "cidr": f"10.0.{i}.0/24"})

    def create_range() -> None:
        i = next(serial)
        call("POST", f"{N}/network_segment_ranges", 201, "range", network_segment_range={
            "name": "r", "network_type": "vxlan", "shared": True,
            "minimum": 100000 + 10 * i, "maximum": 100000 + 10 * i + 9})

    ops = {
        "list 1 network": lambda: call("GET", f"{N}/networks?limit=1", 200),
        "create network": lambda: call("POST", f"{N}/networks", 201, "net",
                                       network={"name": "n"}),
        "create subnet": create_subnet,
        "create port": lambda: call("POST", f"{N}/ports", 201, "port",
                                    port={"network_id": net["id"]}),
        "delete port": lambda: call("DELETE", f"{N}/ports/{made['port'].pop()}", 204),
        "delete subnet": lambda: call("DELETE", f"{N}/subnets/{made['sub'].pop()}", 204),
        "delete network": lambda: call("DELETE", f"{N}/networks/{made['net'].pop()}", 204),
        "segment range create": create_range,
        "segment range delete": lambda: call(
            "DELETE", f"{N}/network_segment_ranges/{made['range'].pop()}", 204),
    }
    for fn in ops.values():  # warm: the token cached, each statement compiled
        fn()
    engine = api.runtime.db.engine
    def listener(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if conn.info.get("statements") is not None:  # a request's, not a background loop's
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", listener)
    counts = {}
    try:
        for name, fn in ops.items():
            seen.clear()
            fn()
            counts[name] = len(seen)
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    return counts


@pytest.mark.parametrize("operation", list(COUNTS))
def test_statements_per_request(counted: dict[str, int], operation: str) -> None:
    # exact: fewer is progress to pin here, more a regression
    assert counted[operation] == COUNTS[operation], (operation, counted[operation])
