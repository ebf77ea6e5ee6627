"""Start-up as a user meets it: `stackling serve` exec'd, then a password token, then an
authenticated network list; then a 200 from every service. Cold (a fresh data dir: schema,
bootstrap, clouds.yaml) and warm (the same dir again), and warm on a database holding
10,000 servers, 50,000 ports and 1,000 stacks beside the empty one. Everything as ratios
to `python -c pass` measured in the same rounds (interleaved, so load hits all alike).

    python -m bench.startup [rounds] [--against DIR]

`--against DIR` measures a second tree beside this one in the same rounds (DIR holds its
`stackling` package, e.g. `git archive <commit> stackling | tar -x -C DIR`): before and
after, under the same load.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.common import ADMIN_PASSWORD, BIN, ROOT, SERVER_ENV, Server, free_port, report, table

# A user's start: the default bcrypt cost (the other benchmarks lower it), dataplane off.
ENV = {k: v for k, v in SERVER_ENV.items() if k != "STACKLING_IDENTITY__PASSWORD_HASH_ROUNDS"}
SERVERS, PORTS, STACKS = 10_000, 50_000, 1_000
STACK_TEMPLATE = {"heat_template_version": "2018-08-31",
                  "resources": {"r": {"type": "OS::Heat::RandomString"}}}


def python_pass() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def password_token(client: httpx.Client, url: str) -> tuple[str, str]:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": ADMIN_PASSWORD}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    r = client.post(f"{url}/identity/v3/auth/tokens", json=body)
    r.raise_for_status()
    return r.headers["X-Subject-Token"], r.json()["token"]["project"]["id"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process (all its threads) has used so far: less sensitive to
    other load on the machine than wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def user_start(data_dir: Path, env: dict[str, str] | None = None,
               timeout: float = 60) -> dict[str, float]:
    """Seconds from exec to: the port answering anything, the authenticated network list
    (password token first), a 200 from every other service. The server is stopped after."""
    srv = Server(data_dir, free_port(), env={**ENV, **(env or {})})
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    log = data_dir.parent / "server.log"
    with open(log, "ab") as err:
        t0 = time.perf_counter()
        srv.proc = subprocess.Popen(srv.command(), env=srv.env, stdout=subprocess.DEVNULL,
                                    stderr=err)
    out: dict[str, float] = {}
    try:
        with httpx.Client(timeout=30) as client:
            while True:
                if time.perf_counter() - t0 > timeout or srv.proc.poll() is not None:
                    raise RuntimeError(f"no answer: {log.read_text(errors='replace')[-3000:]}")
                try:
                    client.get(f"{srv.url}/identity/v3")
                    break
                except httpx.HTTPError:
                    time.sleep(0.001)
            out["port"] = time.perf_counter() - t0
            token, project = password_token(client, srv.url)
            headers = {"X-Auth-Token": token, "OpenStack-API-Version": "placement 1.10"}
            client.get(f"{srv.url}/networking/v2.0/networks", headers=headers).raise_for_status()
            out["first"] = time.perf_counter() - t0
            out["first_cpu"] = cpu_seconds(srv.proc.pid)
            for path in ("/compute/v2.1/flavors", "/placement/resource_providers",
                         "/image/v2/images", f"/orchestration/v1/{project}/stacks"):
                client.get(f"{srv.url}{path}", headers=headers).raise_for_status()
            out["every"] = time.perf_counter() - t0
    finally:
        srv.stop()
    return out


def populate(data_dir: Path, env: dict[str, str] | None = None) -> None:
    """A cloud holding SERVERS servers, PORTS ports (one address each) and STACKS stacks:
    one of each made through the API, then copied with bulk inserts."""
    from sqlalchemy import MetaData, create_engine, insert, select

    from stackling.network.core.ipam import key

    srv = Server(data_dir, free_port(), env={**ENV, **(env or {})})
    srv.start()
    try:
        with srv.client() as c:
            c.headers["OpenStack-API-Version"] = "compute 2.62"
            net = c.post("/networking/v2.0/networks", json={"network": {"name": "big"}}).json()
            subnet = c.post("/networking/v2.0/subnets", json={"subnet": {
                "network_id": net["network"]["id"], "ip_version": 4,
                "cidr": "10.128.0.0/16"}}).json()["subnet"]
            flavor = c.get("/compute/v2.1/flavors").json()["flavors"][0]["id"]
            image = c.get("/image/v2/images").json()["images"][0]["id"]
            server = c.post("/compute/v2.1/servers", json={"server": {
                "name": "big", "flavorRef": flavor, "imageRef": image,
                "networks": [{"uuid": net["network"]["id"]}]}}).json()["server"]["id"]
            project = c.get("/identity/v3/auth/tokens", headers={
                "X-Subject-Token": c.headers["X-Auth-Token"]}).json()["token"]["project"]["id"]
            c.post(f"/orchestration/v1/{project}/stacks", json={
                "stack_name": "big", "template": STACK_TEMPLATE}).raise_for_status()
            deadline = time.perf_counter() + 60
            while c.get(f"/compute/v2.1/servers/{server}").json()["server"]["status"] != "ACTIVE":
                if time.perf_counter() > deadline:
                    raise RuntimeError("populate: the server never became ACTIVE")
                time.sleep(0.05)
    finally:
        srv.stop()
    engine = create_engine(f"sqlite:///{data_dir / 'stackling.db'}")
    meta = MetaData()
    meta.reflect(engine, only=["compute_instance", "network_port", "network_ip_allocation",
                               "heat_stack", "heat_resource"])
    t = meta.tables
    with engine.begin() as db:
        instance = dict(db.execute(select(t["compute_instance"])).mappings().one())
        port = dict(db.execute(select(t["network_port"]).where(
            t["network_port"].c.device_id == server)).mappings().one())
        stack = dict(db.execute(select(t["heat_stack"])).mappings().one())
        resource = dict(db.execute(select(t["heat_resource"]).where(
            t["heat_resource"].c.stack_id == stack["id"])).mappings().one())
        uuids = [str(uuid.uuid4()) for _ in range(SERVERS - 1)]
        db.execute(insert(t["compute_instance"]), [
            {**instance, "id": None, "uuid": u, "display_name": f"big-{i}"}
            for i, u in enumerate(uuids)])
        taken = {int.from_bytes(bytes(int(b) for b in ip.split(".")), "big") for ip in db.scalars(
            select(t["network_ip_allocation"].c.ip_address))}
        base = 10 << 24 | 128 << 16
        free = (v for v in range(base + 2, base + 65535) if v not in taken)
        ports, addresses = [], []
        for i in range(PORTS - 1):
            pid = str(uuid.uuid4())
            ports.append({**port, "id": pid, "device_id": uuids[i % len(uuids)],
                          "mac_address": f"fa:16:3e:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:"
                                         f"{i & 255:02x}"})
            value = next(free)
            addresses.append({"subnet_id": subnet["id"], "port_id": pid,
                              "ip_address": ".".join(str(value >> s & 255) for s in (24, 16, 8, 0)),
                              "network_id": subnet["network_id"], "ip_key": key(value),
                              "next_key": key(value + 1), "ordinal": 0})
        db.execute(insert(t["network_port"]), ports)
        db.execute(insert(t["network_ip_allocation"]), addresses)
        stacks, resources = [], []
        for i in range(STACKS - 1):
            sid = str(uuid.uuid4())
            stacks.append({**stack, "id": sid, "name": f"big-{i}", "live_name": f"big-{i}"})
            resources.append({**resource, "id": None, "uuid": str(uuid.uuid4()),
                              "stack_id": sid})
        db.execute(insert(t["heat_stack"]), stacks)
        db.execute(insert(t["heat_resource"]), resources)
    engine.dispose()


def measure(tmp: Path, rounds: int, variants: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Every variant's runs, interleaved round by round, beside `python -c pass`."""
    made = {}
    for name, env in variants.items():
        t0 = time.perf_counter()
        populate(tmp / name / "big", env)
        made[name] = time.perf_counter() - t0
        user_start(tmp / name / "empty", env)  # a first start: the empty one to compare with
    runs: dict[str, dict[str, list[dict[str, float]]]] = {
        name: {"cold": [], "warm": [], "empty": [], "big": []} for name in variants}
    floor: list[float] = []
    for i in range(rounds):
        floor.append(python_pass())
        for name, env in variants.items():
            fresh = tmp / name / f"cold-{i}"
            runs[name]["cold"].append(user_start(fresh, env))
            runs[name]["warm"].append(user_start(fresh, env))
            shutil.rmtree(fresh, ignore_errors=True)
            runs[name]["empty"].append(user_start(tmp / name / "empty", env))
            runs[name]["big"].append(user_start(tmp / name / "big", env))
    return {"runs": runs, "floor": statistics.median(floor), "made": made}


def rows_of(result: dict[str, Any], names: list[str]) -> list[list[Any]]:
    base = result["floor"]
    measures = [
        ("cold (fresh data dir): the port answers", "cold", "port"),
        ("cold: password token + authenticated network list", "cold", "first"),
        ("cold: … + a 200 from every service", "cold", "every"),
        ("cold: CPU (user+sys) the server used until that first answer", "cold", "first_cpu"),
        ("warm (same data dir): the port answers", "warm", "port"),
        ("warm: password token + authenticated network list", "warm", "first"),
        ("warm: … + a 200 from every service", "warm", "every"),
        ("warm: CPU (user+sys) the server used until that first answer", "warm", "first_cpu"),
        (f"warm, {SERVERS:,} servers/{PORTS:,} ports/{STACKS:,} stacks: first answer",
         "big", "first"),
        ("warm, empty database beside it: first answer", "empty", "first"),
    ]
    rows = []
    for label, kind, what in measures:
        row: list[Any] = [label]
        for name in names:
            med = statistics.median(r[what] for r in result["runs"][name][kind])
            row += [med * 1000, med / base]
        rows.append(row)
    row = [" big − empty, paired per round (first answer)"]
    for name in names:
        runs = result["runs"][name]
        extra = statistics.median(b["first"] - e["first"]
                                  for b, e in zip(runs["big"], runs["empty"], strict=True))
        row += [extra * 1000, extra / base]
    rows.append(row)
    rows.append(["python -c pass (floor)"] + [base * 1000, 1.0] * len(names))
    return rows


def main() -> None:
    args = sys.argv[1:]
    against = None
    if "--against" in args:
        at = args.index("--against")
        against = str(Path(args[at + 1]).resolve())
        del args[at:at + 2]
    rounds = int(args[0]) if args else 7
    # Measure an installed cloud: byte-compiled, as `make install` leaves it (an editable
    # checkout under PYTHONDONTWRITEBYTECODE would otherwise recompile every module).
    for tree in filter(None, [str(ROOT), against]):
        subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", "stackling"],
                       check=True, cwd=tree)
    variants = {"before": {"PYTHONPATH": against}} if against else {}
    variants["now"] = {}
    tmp = Path(tempfile.mkdtemp(prefix="stackling-startup-"))
    try:
        result = measure(tmp, rounds, variants)
        import_probe = subprocess.run(
            [str(BIN / "python"), "-c", "import time; t=time.perf_counter(); "
             "import stackling.app, uvicorn; print(time.perf_counter()-t)"],
            capture_output=True, text=True, check=True, env={**os.environ})
        names = list(variants)
        headers = ["measure (median)"]
        for name in names:
            headers += [f"{name}: ms", f"{name}: × python -c pass"]
        rows = rows_of(result, names)
        probe = float(import_probe.stdout)
        rows.insert(-1, ["importing stackling.app + uvicorn (one probe, now)"]
                    + ["", ""] * (len(names) - 1) + [probe * 1000, probe / result["floor"]])
        made = ", ".join(f"{k} {v:.1f} s" for k, v in result["made"].items())
        load = os.getloadavg()[0]
        report("startup", f"## startup ({rounds} rounds, SQLite, dataplane off, default "
               f"bcrypt cost; 1-min load average at the end {load:.1f}; populating the big "
               f"database took {made})\n\n" + table(headers, rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
