"""Dataplane on the wire (issue 22; driver netns, root, `make dataplane-deps`; SQLite).

    python -m bench.dataplane_racks [moves] [N]      (the default; also `python -m bench`)
    python -m bench.dataplane_racks racks [guests] [sample]
    python -m bench.dataplane moves|racks ...        (the same, from the dataplane bench)

- moves (the demo's 4 hosts, a VXLAN tenant network, a probe guest on compute-r1-1):
  cold migrate -> the server answers again (median of N; its guest boots on the new host),
  and a live migration's interruption: the longest stretch during which new TCP connections
  from the probe to the server failed (a probe every 5 ms), median and max of N.
- racks: a routed network over 4 racks x 4 hosts (16 host namespaces, 4 physnet switches,
  4 ToRs), `guests` servers (200) scheduled onto its segments, then every pair of `sample`
  (20) guests chosen across the racks reach each other (SSH banner, both ways); total memory
  (PSS) of the guests and dnsmasq, and how long the creates took to all answer.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import Server, free_port, report, table
from bench.dataplane import CIRROS, ENV, Cloud, banner, memory_kb, wait

RACKS, HOSTS_PER_RACK = 4, 4


def _tap_on(names: Any, port_id: str, host: str) -> bool:
    from stackling.dataplane import kernel

    path = Path(f"/run/netns/{names.host(host)}")
    if not path.exists():
        return False
    with kernel.Ns(names.host(host)) as ns:
        return ns.index(names.tap(port_id)) is not None


def _admin_boot(cloud: Cloud, network_id: str, name: str, host: str | None = None) -> str:
    body: dict[str, Any] = {"name": name, "flavorRef": "1", "imageRef": CIRROS,
                            "key_name": "bench", "networks": [{"uuid": network_id}]}
    if host:
        body["availability_zone"] = f"nova:{host}"
    return cloud.post("/compute/v2.1/servers", {"server": body})["server"]["id"]


def _host(cloud: Cloud, server_id: str) -> str:
    return cloud.c.get(f"/compute/v2.1/servers/{server_id}").json()["server"][
        "OS-EXT-SRV-ATTR:host"]


def _status(cloud: Cloud, server_id: str) -> str:
    return cloud.c.get(f"/compute/v2.1/servers/{server_id}").json()["server"]["status"]


def _action(cloud: Cloud, server_id: str, body: dict[str, Any]) -> None:
    r = cloud.c.post(f"/compute/v2.1/servers/{server_id}/action", json=body,
                     headers={"OpenStack-API-Version": "compute 2.95"})
    r.raise_for_status()


def _start(env: dict[str, str], config: str | None = None) -> tuple[Server, Path, Path]:
    tmp = Path(tempfile.mkdtemp(prefix="stackling-bench-wire-"))
    key = tmp / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    args = []
    if config:
        (tmp / "config.yaml").write_text(config)
        args = ["--config", str(tmp / "config.yaml")]
    srv = Server(tmp / "data", free_port(), extra_args=args, env=env)
    srv.start()
    return srv, tmp, key


def _stop(srv: Server, tmp: Path) -> None:
    try:
        srv.stop()
    except subprocess.TimeoutExpired:  # a clean stop of hundreds of guests takes its time
        assert srv.proc is not None
        srv.proc.wait(600)
    subprocess.run([sys.executable, "-m", "stackling.cli", "dataplane", "down", "--data-dir",
                    str(srv.data_dir)], capture_output=True)
    subprocess.run(["rm", "-rf", str(tmp)])


def moves(n: int) -> list[list[Any]]:
    srv, tmp, key = _start(ENV)
    rows: list[list[Any]] = []
    try:
        cloud = Cloud(srv)
        cloud.post("/compute/v2.1/os-keypairs", {"keypair": {
            "name": "bench", "public_key": key.with_suffix(".pub").read_text()}})
        net = cloud.post("/networking/v2.0/networks", {"network": {"name": "moves"}})["network"]
        cloud.post("/networking/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "cidr": "10.98.0.0/24", "ip_version": 4}})
        probe = _admin_boot(cloud, net["id"], "probe", "compute-r1-1")
        target = _admin_boot(cloud, net["id"], "target", "compute-r2-1")
        probe_ns = cloud.names.guest(probe)
        ip = cloud.address(target)
        port_id = cloud.c.get("/networking/v2.0/ports", params={"device_id": target}).json()[
            "ports"][0]["id"]
        wait(lambda: Path(f"/run/netns/{probe_ns}").exists() and banner(probe_ns, ip))

        # cold migrate -> answers again (on the new host), then confirm
        samples = []
        for _ in range(n):
            source = _host(cloud, target)
            t0 = time.perf_counter()
            _action(cloud, target, {"migrate": None})
            dest = _host(cloud, target)
            assert dest != source
            wait(lambda dest=dest: _tap_on(cloud.names, port_id, dest)
                 and banner(probe_ns, ip, 0.05))
            samples.append(time.perf_counter() - t0)
            _action(cloud, target, {"confirmResize": None})
            wait(lambda: _status(cloud, target) == "ACTIVE")
            wait(lambda: banner(probe_ns, ip, 0.05))
        cold = statistics.median(samples)
        rows.append([f"cold migrate -> answers again (median of {n})", f"{cold:.3f} s", "-",
                     "-"])

        # live migration: the longest stretch of refused/failed connects
        gaps = []
        for _ in range(n):
            source = _host(cloud, target)
            log: list[tuple[float, bool]] = []
            stop = threading.Event()

            def probe_loop(log: list[tuple[float, bool]] = log,
                           stop: threading.Event = stop) -> None:
                while not stop.is_set():
                    log.append((time.perf_counter(), banner(probe_ns, ip, 0.05)))
                    time.sleep(0.005)

            thread = threading.Thread(target=probe_loop, daemon=True)
            thread.start()
            time.sleep(0.2)
            _action(cloud, target, {"os-migrateLive": {"host": None,
                                                       "block_migration": "auto"}})
            dest = _host(cloud, target)
            assert dest != source
            wait(lambda dest=dest: _tap_on(cloud.names, port_id, dest))
            time.sleep(0.5)
            stop.set()
            thread.join()
            gap, down_since = 0.0, None
            for t, ok in log:
                if not ok and down_since is None:
                    down_since = t
                elif ok and down_since is not None:
                    gap, down_since = max(gap, t - down_since), None
            if down_since is not None:
                gap = max(gap, log[-1][0] - down_since)
            gaps.append(gap)
        rows.append([f"live migrate: longest interruption (median of {n})",
                     f"{statistics.median(gaps):.3f} s", "1 s",
                     f"{statistics.median(gaps) / 1.0:.2f}"])
        rows.append([f"live migrate: longest interruption (max of {n})", f"{max(gaps):.3f} s",
                     "1 s", f"{max(gaps) / 1.0:.2f}"])
    finally:
        _stop(srv, tmp)
    return rows


def _racks_config() -> str:
    hosts = "".join(
        f"    - name: compute-r{r}-{h}\n      vcpus: 64\n      memory_mb: 131072\n"
        f"      physical_networks: [public, physnet{r}]\n"
        for r in range(1, RACKS + 1) for h in range(1, HOSTS_PER_RACK + 1))
    physnets = ", ".join(f"physnet{r}" for r in range(1, RACKS + 1))
    ranges = ", ".join(f"'physnet{r}:{100 * r}:{100 * r + 99}'" for r in range(1, RACKS + 1))
    return (f"compute:\n  hosts:\n{hosts}"
            f"network:\n  ml2:\n    flat_networks: [public, {physnets}]\n"
            f"    network_vlan_ranges: [{ranges}]\n")


def racks(guests: int, sample: int) -> list[list[Any]]:
    srv, tmp, key = _start(ENV, _racks_config())
    rows: list[list[Any]] = []
    try:
        cloud = Cloud(srv)
        cloud.post("/compute/v2.1/os-keypairs", {"keypair": {
            "name": "bench", "public_key": key.with_suffix(".pub").read_text()}})
        net = cloud.post("/networking/v2.0/networks", {"network": {
            "name": "racks", "provider:network_type": "vlan",
            "provider:physical_network": "physnet1",
            "provider:segmentation_id": 2101}})["network"]
        segments = [cloud.c.get("/networking/v2.0/segments",
                                params={"network_id": net["id"]}).json()["segments"][0]]
        for r in range(2, RACKS + 1):
            segments.append(cloud.post("/networking/v2.0/segments", {"segment": {
                "network_id": net["id"], "network_type": "vlan",
                "physical_network": f"physnet{r}", "segmentation_id": 2100 + r}})["segment"])
        for r, seg in enumerate(segments, start=1):
            cloud.post("/networking/v2.0/subnets", {"subnet": {
                "network_id": net["id"], "segment_id": seg["id"], "ip_version": 4,
                "cidr": f"10.92.{r}.0/24"}})
        t0 = time.perf_counter()
        ids = [_admin_boot(cloud, net["id"], f"r{i}") for i in range(guests)]
        wait(lambda: all(_status(cloud, i) in ("ACTIVE", "ERROR") for i in ids), timeout=600)
        errors = [i for i in ids if _status(cloud, i) == "ERROR"]
        addresses = {i: cloud.address(i) for i in ids if i not in errors}
        for sid, ip in addresses.items():
            ns = cloud.names.guest(sid)
            wait(lambda ns=ns, ip=ip: Path(f"/run/netns/{ns}").exists() and banner(ns, ip),
                 timeout=600)
        all_up = time.perf_counter() - t0
        hosts = {sid: _host(cloud, sid) for sid in addresses}
        by_rack: dict[str, list[str]] = {}
        for sid, host in hosts.items():
            by_rack.setdefault(host.split("-")[1], []).append(sid)
        rng = random.Random(22)
        chosen: list[str] = []
        while len(chosen) < min(sample, len(addresses)):  # round robin over the racks
            for rack in sorted(by_rack):
                left = [s for s in by_rack[rack] if s not in chosen]
                if left and len(chosen) < sample:
                    chosen.append(rng.choice(left))
        t1 = time.perf_counter()
        pairs = failed = 0
        for a in chosen:
            for b in chosen:
                if a != b:
                    pairs += 1
                    if not banner(cloud.names.guest(a), addresses[b], 1.0):
                        failed += 1
        check = time.perf_counter() - t1
        mem = memory_kb(cloud.names.prefix)
        rows.append([f"{RACKS} racks x {HOSTS_PER_RACK} hosts: {len(addresses)} guests up "
                     f"({len(errors)} in ERROR), {len(by_rack)} racks used",
                     f"{all_up:.1f} s", "-", "-"])
        rows.append([f"{len(chosen)} sampled guests: ordered pairs reachable",
                     f"{pairs - failed}/{pairs} ({check:.2f} s)", f"{pairs}/{pairs}",
                     f"{(pairs - failed) / max(pairs, 1):.2f}"])
        rows.append([f"{len(addresses)} guests: total memory (PSS)", f"{mem / 1024:.0f} MiB",
                     "-", f"{mem / 1024 / max(len(addresses), 1):.2f} MiB/guest"])
    finally:
        _stop(srv, tmp)
    return rows


def main() -> None:
    from stackling.dataplane.interface import unavailable_reason

    reason = unavailable_reason()
    if reason:
        print(f"dataplane wire bench skipped: {reason}")
        return
    args = [a for a in sys.argv[1:] if a not in ("dataplane_racks", "dataplane")]
    mode = args.pop(0) if args and args[0] in ("moves", "racks") else "moves"
    if mode == "racks":
        guests = int(args[0]) if args else 200
        sample = int(args[1]) if len(args) > 1 else 20
        rows = racks(guests, sample)
    else:
        rows = moves(int(args[0]) if args else 5)
    report(f"dataplane_{mode}", table(["measure", "median / value", "goal", "ratio"], rows))


if __name__ == "__main__":
    main()
