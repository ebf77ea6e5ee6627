"""Networking: latency and throughput of network/subnet/port create, show and list, beside
the server's authenticated no-op floors measured in the same run; and port create as one
subnet fills up (10, 1,000 and 50,000 existing ports) and across subnet sizes (/24, /8,
IPv6 /64).

    python -m bench.network [samples]
    python -m bench.network hot [samples] [--before DIR]   # the hot paths (below)

One `stackling serve` on SQLite (one process), driven over HTTP with a pre-issued admin
token by one client (latency = median per call; throughput = calls per second of that
sequential client; each operation's ratio is against floor calls interleaved with its
own samples, so both see the same machine load). The 50,000 ports are seeded straight into the database in one
transaction (the same rows IPAM writes), then port create is measured over HTTP.
"""

from __future__ import annotations

import random
import sys
import time
import uuid
from typing import Any

import httpx
import netaddr
from sqlalchemy import insert, select

from bench.common import ROOT, median_ms, noop_floor, report, server, table, timed
from stackling.common.db import Database, utcnow
from stackling.network.core.ipam import key
from stackling.network.core.models import IPAllocation, Port, Subnet

N = "/networking/v2.0"


def _ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    if r.status_code != status:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text}")
    return r.json() if r.content else {}


def seed_ports(db: Database, subnet_id: str, count: int) -> None:
    """`count` more ports with one random free address each, in one transaction."""
    with db.transaction() as s:
        subnet = s.get_one(Subnet, subnet_id)
        pool = subnet.allocation_pools[0]
        lo, hi = int(netaddr.IPAddress(pool["start"])), int(netaddr.IPAddress(pool["end"]))
        taken = {int(k, 16) for k in s.scalars(select(IPAllocation.ip_key)
                                               .where(IPAllocation.subnet_id == subnet_id))}
        values: set[int] = set()
        while len(values) < count:
            v = random.randint(lo, hi)
            if v not in taken:
                values.add(v)
        now = utcnow()
        ports, ips = [], []
        for v in values:
            pid = str(uuid.uuid4())
            # another OUI than base_mac, so seeded MACs never meet generated ones; the
            # pool offset keeps them unique (pools up to 2^24 addresses)
            o = (v - lo) & 0xFFFFFF
            mac = f"fa:16:3f:{o >> 16:02x}:{o >> 8 & 255:02x}:{o & 255:02x}"
            ports.append({"id": pid, "project_id": subnet.project_id, "network_id":
                          subnet.network_id, "name": "", "mac_address": mac,
                          "admin_state_up": True, "status": "DOWN", "device_id": "",
                          "device_owner": "", "port_security_enabled": False,
                          "ip_allocation": "immediate", "binding_host_id": "",
                          "binding_vnic_type": "normal", "binding_vif_type": "unbound",
                          "binding_profile": {}, "binding_vif_details": {}, "description": "",
                          "created_at": now, "updated_at": now, "revision_number": 1})
            ips.append({"subnet_id": subnet_id, "ip_address": str(netaddr.IPAddress(v)),
                        "port_id": pid, "network_id": subnet.network_id, "ip_key": key(v),
                        "next_key": key(v + 1), "ordinal": 0})
        for i in range(0, len(ports), 5000):
            s.execute(insert(Port), ports[i:i + 5000])
            s.execute(insert(IPAllocation), ips[i:i + 5000])


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100
    rows: list[list[Any]] = []
    with server() as srv:
        c = srv.client()
        db = Database(f"sqlite:///{srv.data_dir / 'stackling.db'}")
        floor_identity = noop_floor(c)

        def extensions() -> None:
            _ok(c.get(f"{N}/extensions"))

        floor = median_ms(timed(extensions, 200))

        def measure(label: str, fn: Any, n: int = samples) -> None:
            """Each sample is followed by one floor call, so the ratio compares the two
            under the same machine load (the host is shared and noisy)."""
            fn()
            times, floors = [], []
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                extensions()
                floors.append(time.perf_counter() - t0)
            ms = median_ms(times)
            rows.append([label, ms, 1000 / ms, median_ms(floors), ms / median_ms(floors)])

        rows.append(["no-op floor: GET /networking/v2.0/extensions", floor, 1000 / floor,
                     floor, 1.0])
        rows.append(["no-op floor: GET /identity/v3/domains/default", floor_identity,
                     1000 / floor_identity, floor, floor_identity / floor])

        nets: list[str] = []

        def net_create() -> None:
            nets.append(_ok(c.post(f"{N}/networks", json={"network": {"name": "b"}}),
                            201)["network"]["id"])

        measure("network create", net_create, 198)
        measure("list 200 networks", lambda: _ok(c.get(f"{N}/networks")), 50)
        measure("network show", lambda: _ok(c.get(f"{N}/networks/{nets[0]}")))

        counter = iter(range(1, 100000))

        def subnet_create() -> None:
            i = next(counter)
            _ok(c.post(f"{N}/subnets", json={"subnet": {
                "network_id": nets[i], "ip_version": 4,
                "cidr": f"10.{i // 250}.{i % 250}.0/24"}}), 201)

        measure("subnet create (/24, given CIDR)", subnet_create, min(samples, 150))

        def make_subnet(cidr: str, **extra: Any) -> tuple[str, str]:
            net = _ok(c.post(f"{N}/networks", json={"network": {}}), 201)["network"]["id"]
            sub = _ok(c.post(f"{N}/subnets", json={"subnet": {
                "network_id": net, "ip_version": 6 if ":" in cidr else 4, "cidr": cidr,
                **extra}}), 201)["subnet"]["id"]
            return net, sub

        def port_create(net: str) -> Any:
            ports: list[str] = []

            def call() -> None:
                ports.append(_ok(c.post(f"{N}/ports", json={"port": {"network_id": net}}),
                                 201)["port"]["id"])
            call.ports = ports  # type: ignore[attr-defined]
            return call

        net24, _ = make_subnet("172.16.5.0/24")
        measure("port create on a /24", port_create(net24), min(samples, 200))
        net8, _ = make_subnet("11.0.0.0/8")
        create8 = port_create(net8)
        measure("port create on a /8", create8, samples)
        net64, _ = make_subnet("fd99::/64", ipv6_ra_mode="dhcpv6-stateful",
                               ipv6_address_mode="dhcpv6-stateful")
        measure("port create on an IPv6 /64 (DHCPv6-stateful)", port_create(net64), samples)
        while len(create8.ports) < 1000:  # type: ignore[attr-defined]
            create8()
        measure("port show", lambda: _ok(c.get(f"{N}/ports/{create8.ports[0]}")))  # type: ignore[attr-defined]
        measure("list 1,000 ports (one network)",
                lambda: _ok(c.get(f"{N}/ports?network_id={net8}")), 20)

        # port create as one subnet fills: a /16 holding 10, 1,000 and 50,000 ports
        net16, sub16 = make_subnet("100.64.0.0/16")
        fill = 0
        for target in (10, 1000, 50000):
            seed_ports(db, sub16, target - fill)
            fill = target
            measure(f"port create, /16 holding {target:,} ports", port_create(net16),
                    min(samples, 100))
            fill += min(samples, 100) + 2
        db.dispose()
    text = ("Networking latency on SQLite, one process, one sequential client "
            f"({samples} samples unless fewer noted by the operation).\n\n" +
            table(["operation", "median ms", "ops/s (1 client)", "floor ms (interleaved)",
                   "x floor"], rows))
    report("network", text)


# ------------------------------------------------------------------ hot paths
# The writes of issue 35, each beside the floors measured in the same run: the server's
# authenticated no-op (GET extensions) and a hello-world Starlette app under the same
# uvicorn (bench/floor.py). `--before DIR` runs a second tree (`git archive` of an older
# commit's stackling/, with this bench/ copied in) beside this one, alternating rounds, so
# before and after share the machine.
HOT = ("version document", "list 1 network", "create network", "delete network",
       "create subnet", "delete subnet", "create port", "delete port",
       "segment range create", "segment range delete", "list 200 networks")
PG = "postgresql+psycopg://postgres@127.0.0.1:5432"


def _pg_database() -> str:
    import psycopg

    name = f"stackling_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{PG}/{name}"


def _drop_pg(url: str) -> None:
    import psycopg

    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')


def hot_calls(c: httpx.Client) -> dict[str, Any]:
    """One call per hot operation (each creating what the next deletes), keyed by HOT."""
    made: dict[str, list[str]] = {k: [] for k in ("net", "sub", "port", "range")}
    counter = iter(range(1, 10**6))
    net = _ok(c.post(f"{N}/networks", json={"network": {"name": "ports"}}), 201)["network"]
    _ok(c.post(f"{N}/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 4,
                                                "cidr": "10.255.0.0/16"}}), 201)

    def create_network() -> None:
        made["net"].append(_ok(c.post(f"{N}/networks", json={"network": {"name": "b"}}),
                               201)["network"]["id"])

    def create_subnet() -> None:
        i = next(counter)
        made["sub"].append(_ok(c.post(f"{N}/subnets", json={"subnet": {
            "network_id": made["net"][-1], "ip_version": 4,
            "cidr": f"10.{i // 250 % 250}.{i % 250}.0/24"}}), 201)["subnet"]["id"])

    def create_port() -> None:
        made["port"].append(_ok(c.post(f"{N}/ports", json={"port": {
            "network_id": net["id"]}}), 201)["port"]["id"])

    def create_range() -> None:
        i = next(counter)
        made["range"].append(_ok(c.post(f"{N}/network_segment_ranges", json={
            "network_segment_range": {"name": "b", "network_type": "vxlan", "shared": True,
                                      "minimum": 100000 + 10 * i,
                                      "maximum": 100000 + 10 * i + 9}}),
            201)["network_segment_range"]["id"])

    def delete(kind: str, path: str) -> Any:
        return lambda: _ok(c.delete(f"{N}/{path}/{made[kind].pop()}"), 204)

    return {
        "version document": lambda: _ok(c.get(f"{N}/", headers={"X-Auth-Token": ""})),
        "list 1 network": lambda: _ok(c.get(f"{N}/networks?limit=1")),
        "create network": create_network, "create subnet": create_subnet,
        "delete subnet": delete("sub", "subnets"), "delete network": delete("net", "networks"),
        "create port": create_port, "delete port": delete("port", "ports"),
        "segment range create": create_range,
        "segment range delete": delete("range", "network_segment_ranges"),
        "list 200 networks": lambda: _ok(c.get(f"{N}/networks")),
    }


def count_statements(database_url: str | None) -> dict[str, int]:
    """Statements per request of each hot operation, in process (this interpreter's
    stackling tree), on a fresh database: every cursor execute, BEGIN included."""
    import os
    import tempfile
    from pathlib import Path

    from sqlalchemy import event
    from starlette.testclient import TestClient

    from bench.common import SERVER_ENV
    from stackling.app import create_app, create_runtime
    from stackling.config import load_settings
    from stackling.migrations.schema import upgrade

    os.environ.update(SERVER_ENV)
    data = Path(tempfile.mkdtemp(prefix="stackling-count-"))
    extra = {"database_url": database_url} if database_url else {}
    runtime = create_runtime(load_settings(data_dir=str(data), **extra))
    upgrade(runtime.db.engine)
    runtime.run_bootstrap()
    seen: list[str] = []
    with TestClient(create_app(runtime), base_url="http://stackling.test") as client:
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": SERVER_ENV[
                "STACKLING_ADMIN_PASSWORD"]}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
        token = client.post("/identity/v3/auth/tokens", json=body).headers["X-Subject-Token"]
        client.headers["X-Auth-Token"] = token
        calls = hot_calls(client)  # type: ignore[arg-type]
        for _ in range(200):
            calls["create network"]()
        for _ in range(3):  # warm: the first of each compiles its statements
            for name in ("create network", "create subnet", "create port", "delete port",
                         "delete subnet", "delete network", "segment range create",
                         "segment range delete"):
                calls[name]()
        def listener(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if conn.info.get("statements") is not None:  # a request's, not a loop's
                seen.append(statement)

        event.listen(runtime.db.engine, "before_cursor_execute", listener)
        counts = {}
        for name in HOT:
            seen.clear()
            calls[name]()
            counts[name] = len(seen)
    runtime.db.dispose()
    return counts


def _tree_env(tree: str | None) -> dict[str, str]:
    import os

    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree
    return env


def _counts(tree: str | None, database_url: str | None) -> dict[str, int]:
    import json
    import subprocess

    # in the tree's directory: its stackling (and a copy of this bench) come first
    out = subprocess.run([sys.executable, "-m", "bench.network", "count", database_url or ""],
                         env=_tree_env(tree), cwd=tree or ROOT, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


class _TreeServer:
    """`stackling serve` of one tree on one backend, its hello-world twin beside it."""

    def __init__(self, tree: str | None, backend: str) -> None:
        import tempfile
        from pathlib import Path

        from bench.common import Server, free_port
        from bench.floor import H11, Hello

        self.tree, self.backend = tree, backend
        self.url = _pg_database() if backend == "postgresql" else None
        args = ["--workers", "1"] + (["--database-url", self.url] if self.url else [])
        env = _tree_env(tree)
        self.srv = Server(Path(tempfile.mkdtemp(prefix="stackling-hot-")) / "data",
                          free_port(), args, env)
        # the tree's stackling first on the path (the current directory's would win with -m)
        run = (f"import sys; sys.path.insert(0, {tree or str(ROOT)!r}); "
               "from stackling.cli import main; sys.exit(main())")
        self.srv.command = lambda: [sys.executable, "-c", run, "serve",  # type: ignore[method-assign]
                                    "--data-dir", str(self.srv.data_dir), "--port",
                                    str(self.srv.port), "--quiet", *self.srv.extra_args]
        self.srv.start()
        import subprocess

        proto = subprocess.run([sys.executable, "-c", "from stackling.common import server as s;"
                                "print(getattr(s, 'HTTP', ''), getattr(s, 'LOOP', ''))"],
                               env=env, cwd=tree or ROOT, capture_output=True,
                               text=True).stdout.split()
        self.proto = tuple(proto) if len(proto) == 2 else H11
        self.hello = Hello(*self.proto, tree=tree)
        self.c = self.srv.client()
        self.h = self.hello.client()
        self.calls = hot_calls(self.c)
        for _ in range(200):
            self.calls["create network"]()

    def round(self, samples: int) -> dict[str, tuple[float, float, float]]:
        """{operation: (median ms, hello ms, no-op floor ms)}, each sample of the
        operation followed by one hello-world GET and one authenticated no-op."""
        out = {}
        for name in HOT:
            fn = self.calls[name]
            n = 20 if name == "list 200 networks" else samples
            times, hello, floor = [], [], []
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                self.h.get("/")
                hello.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                self.c.get(f"{N}/extensions")
                floor.append(time.perf_counter() - t0)
            out[name] = (median_ms(times), median_ms(hello), median_ms(floor))
        return out

    def stop(self) -> None:
        self.c.close()
        self.h.close()
        self.hello.stop()
        self.srv.stop()
        if self.url:
            _drop_pg(self.url)


def hot(samples: int, before: str | None) -> None:
    import statistics

    trees = [("before", before), ("after", None)] if before else [("now", None)]
    configs = [(label, tree, backend) for backend in ("sqlite", "postgresql")
               for label, tree in trees]
    counts = {(label, backend): _counts(tree, _pg_database() if backend == "postgresql"
                                        else None)
              for label, tree, backend in configs}
    servers = {(label, backend): _TreeServer(tree, backend) for label, tree, backend in configs}
    results: dict[tuple[str, str], list[dict[str, tuple[float, float, float]]]] = {
        k: [] for k in servers}
    try:
        for r in range(3):  # alternating rounds: each config first once
            keys = list(servers) if r % 2 == 0 else list(reversed(servers))
            for key in keys:
                results[key].append(servers[key].round(samples))
    finally:
        for s in servers.values():
            s.stop()
    sections = []
    for (label, backend), rounds in results.items():
        rows = []
        for name in HOT:
            ms = statistics.median(x[name][0] for x in rounds)
            hello = statistics.median(x[name][0] / x[name][1] for x in rounds)
            floor = statistics.median(x[name][0] / x[name][2] for x in rounds)
            rows.append([name, counts[(label, backend)][name], ms, floor, hello])
        proto = servers[(label, backend)].proto
        sections.append(f"### {label}, {backend} `--workers 1` ({proto[0].rsplit(':', 1)[-1]}, "
                        f"{proto[1]})\n\n" + table(
                            ["operation", "statements", "median ms", "x no-op floor",
                             "x hello-world"], rows))
    text = (f"Hot paths: {samples} samples per operation per round, 3 alternating rounds, "
            "medians of the rounds' ratios; each sample followed by a hello-world GET and "
            "an authenticated no-op (GET extensions). Statements counted in process on a "
            "fresh database (SQLite counts BEGIN; PostgreSQL's is implicit).\n\n"
            + "\n\n".join(sections))
    report("network_hot", text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["count"]:
        import json

        print(json.dumps(count_statements(sys.argv[2] if len(sys.argv) > 2 and sys.argv[2]
                                          else None)))
    elif sys.argv[1:2] == ["hot"]:
        args = sys.argv[2:]
        before = args[args.index("--before") + 1] if "--before" in args else None
        n = next((int(a) for a in args if a.isdigit()), 100)
        hot(n, before)
    else:
        main()
