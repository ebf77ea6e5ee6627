"""Dataplane (driver netns): server create -> SSH answers (median of 20; goal <= 1 s, where
a cirros VM on DevStack takes 10-60 s), floating IP associate -> reachable (goal <= 0.3 s),
security group rule -> in force (goal <= 0.2 s), 100 guests' total memory (goal <= 1 GB)
and a restart -> all 100 answering again (goal <= 5 s). "Answers" is the SSH server's
banner, read from inside a probe guest (or, for floating IPs, the outside namespace).
Needs root and `make dataplane-deps`; SQLite, one process.

    python -m bench.dataplane [creates] [guests]
    python -m bench.dataplane moves [N] | racks [guests] [sample]   (bench/dataplane_racks.py)
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Server, free_port, noop_floor, report, table

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
ENV = {"STACKLING_DATAPLANE__DRIVER": "netns"}


def banner(namespace: str, address: str, timeout: float = 0.2) -> bool:
    """The SSH banner read from inside `namespace`."""
    from stackling.dataplane import kernel

    def probe() -> bool:
        with socket.socket() as s:
            s.settimeout(timeout)
            try:
                s.connect((address, 22))
                return s.recv(4) == b"SSH-"
            except OSError:
                return False

    try:
        return kernel.in_namespace(namespace, probe)
    except OSError:  # the namespace is being made or removed
        return False


def wait(fn: Any, timeout: float = 60) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if fn():
            return time.perf_counter() - t0
        time.sleep(0.005)
    raise RuntimeError("timed out")


class Cloud:
    def __init__(self, srv: Server) -> None:
        from stackling.dataplane.names import Names, cloud_prefix

        self.srv = srv
        self.c = srv.client()
        self.names = Names(cloud_prefix(f"sqlite:///{(srv.data_dir / 'stackling.db').resolve()}"))

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = self.c.post(path, json=body)
        r.raise_for_status()
        return r.json()

    def boot(self, network_id: str, name: str = "b", sg: str = "default",
             image: str = CIRROS, flavor: str = "1") -> str:
        return self.post("/compute/v2.1/servers", {"server": {
            "name": name, "flavorRef": flavor, "imageRef": image, "key_name": "bench",
            "networks": [{"uuid": network_id}], "security_groups": [{"name": sg}]}}
        )["server"]["id"]

    def address(self, server_id: str) -> str:
        def port() -> Any:
            ports = self.c.get("/networking/v2.0/ports", params={"device_id": server_id}).json()
            return ports["ports"][0] if ports["ports"] else None

        found: list[Any] = []
        wait(lambda: found.append(port()) or found[-1] is not None)
        return found[-1]["fixed_ips"][0]["ip_address"]

    def delete(self, server_id: str) -> None:
        self.c.delete(f"/compute/v2.1/servers/{server_id}").raise_for_status()


def memory_kb(prefix: str) -> int:
    """Proportional set size of every guest and dnsmasq process of the cloud."""
    total = 0
    marker = f"/run/stackling/{prefix}/".encode()
    roots = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
                    roots.append(int(pid))
            except OSError:
                pass
    from stackling.dataplane.guests import descendants

    for pid in {p for r in roots for p in [r, *descendants(r)]}:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def cgroup_memory(prefix: str, server_ids: list[str]) -> tuple[int, str]:
    """The guests' cgroups' memory summed (bytes), and which file: v2 memory.current, else
    v1 memory.usage_in_bytes (page cache included in both)."""
    from stackling.dataplane.cgroups import Cgroups

    cg = Cgroups(prefix)
    total, used = 0, set()
    for sid in server_ids:
        for root, name in ((cg.v2, "memory.current"),
                           (cg.v1.get("memory"), "memory.usage_in_bytes")):
            f = root / prefix / sid / name if root is not None else None
            if f is not None and f.exists():
                total += int(f.read_text())
                used.add(name)
                break
    return total, "+".join(sorted(used)) or "none found"


def key_login(namespace: str, address: str, key: Path, user: str) -> bool:
    """A key login as `user` from inside `namespace` (the guest's own sshd, its authorized key)."""
    r = subprocess.run(["ip", "netns", "exec", namespace, "ssh", "-i", str(key), "-o", "BatchMode=yes",
                        "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                        "-o", "ConnectTimeout=2", "-o", "LogLevel=ERROR", f"{user}@{address}", "true"],
                       capture_output=True, timeout=15)
    return r.returncode == 0


def main() -> None:
    from stackling.dataplane.interface import unavailable_reason

    reason = unavailable_reason()
    if reason:
        print(f"dataplane bench skipped: {reason}")
        return
    creates = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    guests = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    tmp = Path(tempfile.mkdtemp(prefix="stackling-bench-dp-"))
    key = tmp / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    srv = Server(tmp / "data", free_port(), env=ENV)
    srv.start()
    rows: list[list[Any]] = []
    try:
        cloud = Cloud(srv)
        floor = noop_floor(cloud.c, 50)
        cloud.post("/compute/v2.1/os-keypairs", {"keypair": {
            "name": "bench", "public_key": key.with_suffix(".pub").read_text()}})
        net = cloud.post("/networking/v2.0/networks", {"network": {"name": "bench"}})["network"]
        sub = cloud.post("/networking/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "cidr": "10.99.0.0/22", "ip_version": 4}})["subnet"]
        public = cloud.c.get("/networking/v2.0/networks", params={"name": "public"}).json()[
            "networks"][0]
        router = cloud.post("/networking/v2.0/routers", {"router": {
            "name": "bench", "external_gateway_info": {"network_id": public["id"]}}})["router"]
        cloud.c.put(f"/networking/v2.0/routers/{router['id']}/add_router_interface",
                    json={"subnet_id": sub["id"]}).raise_for_status()
        probe = cloud.boot(net["id"], "probe")
        probe_ns = cloud.names.guest(probe)
        wait(lambda: Path(f"/run/netns/{probe_ns}").exists()
             and banner(probe_ns, cloud.address(probe)))

        # server create -> SSH answers
        samples = []
        for _ in range(creates):
            t0 = time.perf_counter()
            sid = cloud.boot(net["id"])
            ip = cloud.address(sid)
            wait(lambda ip=ip: banner(probe_ns, ip))
            samples.append(time.perf_counter() - t0)
            cloud.delete(sid)
        create_ssh = statistics.median(samples)
        rows.append(["server create -> SSH answers", f"{create_ssh:.3f} s", "1 s",
                     f"{create_ssh / 1.0:.2f}"])

        # floating IP associate -> reachable from outside; SG rule -> in force
        sg = cloud.post("/networking/v2.0/security-groups", {"security_group": {
            "name": "bench-open"}})["security_group"]
        cloud.post("/networking/v2.0/security-group-rules", {"security_group_rule": {
            "security_group_id": sg["id"], "direction": "ingress", "protocol": "tcp",
            "port_range_min": 22, "port_range_max": 22, "remote_ip_prefix": "0.0.0.0/0"}})
        target = cloud.boot(net["id"], "target", "bench-open")
        wait(lambda: banner(probe_ns, cloud.address(target)))
        port_id = cloud.c.get("/networking/v2.0/ports",
                              params={"device_id": target}).json()["ports"][0]["id"]
        fip = cloud.post("/networking/v2.0/floatingips", {"floatingip": {
            "floating_network_id": public["id"]}})["floatingip"]
        outside, address = cloud.names.outside, fip["floating_ip_address"]
        samples = []
        for _ in range(max(5, creates // 2)):
            t0 = time.perf_counter()
            cloud.c.put(f"/networking/v2.0/floatingips/{fip['id']}",
                        json={"floatingip": {"port_id": port_id}}).raise_for_status()
            wait(lambda: banner(outside, address, 0.05))
            samples.append(time.perf_counter() - t0)
            cloud.c.put(f"/networking/v2.0/floatingips/{fip['id']}",
                        json={"floatingip": {"port_id": None}}).raise_for_status()
            wait(lambda: not banner(outside, address, 0.05))
        fip_s = statistics.median(samples)
        rows.append(["floating IP associate -> reachable", f"{fip_s:.3f} s", "0.3 s",
                     f"{fip_s / 0.3:.2f}"])
        cloud.c.put(f"/networking/v2.0/floatingips/{fip['id']}",
                    json={"floatingip": {"port_id": port_id}}).raise_for_status()
        wait(lambda: banner(outside, address, 0.05))
        cloud.c.put(f"/networking/v2.0/ports/{port_id}", json={"port": {
            "security_groups": [sg["id"]]}}).raise_for_status()
        samples = []
        closed = cloud.post("/networking/v2.0/security-groups", {"security_group": {
            "name": "bench-closed"}})["security_group"]
        cloud.c.put(f"/networking/v2.0/ports/{port_id}", json={"port": {
            "security_groups": [closed["id"]]}}).raise_for_status()
        wait(lambda: not banner(outside, address, 0.05))
        for _ in range(max(5, creates // 2)):
            t0 = time.perf_counter()
            rule_id = cloud.post("/networking/v2.0/security-group-rules", {"security_group_rule": {
                "security_group_id": closed["id"], "direction": "ingress", "protocol": "tcp",
                "port_range_min": 22, "port_range_max": 22,
                "remote_ip_prefix": "0.0.0.0/0"}})["security_group_rule"]["id"]
            wait(lambda: banner(outside, address, 0.05))
            samples.append(time.perf_counter() - t0)
            cloud.c.delete(f"/networking/v2.0/security-group-rules/{rule_id}").raise_for_status()
            # a new connection is refused again (existing ones keep their conntrack state)
            wait(lambda: not banner(outside, address, 0.05))
        sg_s = statistics.median(samples)
        rows.append(["security group rule -> in force", f"{sg_s:.3f} s", "0.2 s",
                     f"{sg_s / 0.2:.2f}"])

        # N guests: memory, then a restart until every one answers again
        cloud.delete(target)
        ids = [cloud.boot(net["id"], f"g{i}") for i in range(guests - 1)]
        addresses = [cloud.address(i) for i in ids]
        t0 = time.perf_counter()
        for ip in addresses:
            wait(lambda ip=ip: banner(probe_ns, ip), timeout=300)
        all_up = time.perf_counter() - t0
        mem = memory_kb(cloud.names.prefix)
        rows.append([f"{guests} guests: total memory (PSS)", f"{mem / 1024:.0f} MiB", "1024 MiB",
                     f"{mem / 1024 / 1024:.2f}"])
        rows.append([f"{guests} guests: last answers after the creates", f"{all_up:.2f} s", "-",
                     "-"])
        status = Path(f"/run/stackling/{cloud.names.prefix}/status.json")

        def first_pass(pid: int) -> bool:
            try:
                st = json.loads(status.read_text())
            except (OSError, ValueError):
                return False
            return st["pid"] == pid and st["converged"]

        srv.stop()  # a clean stop: every kernel object of the cloud removed
        t0 = time.perf_counter()
        listening = srv.start()
        passed = wait(lambda: srv.proc is not None and first_pass(srv.proc.pid), timeout=300)
        wait(lambda: Path(f"/run/netns/{probe_ns}").exists() and banner(probe_ns, addresses[0]),
             timeout=300)
        for ip in addresses:
            wait(lambda ip=ip: banner(probe_ns, ip), timeout=300)
        restart = time.perf_counter() - t0
        rows.append([f"restart -> all {guests} answering (from nothing)", f"{restart:.2f} s",
                     "5 s", f"{restart / 5:.2f}"])
        rows.append([f"  of which: serving, then the first pass done (all {guests} plugged)",
                     f"{listening:.2f} s, {listening + passed:.2f} s", "-", "-"])
        # kill -9, then start: the guests never stopped; the new process's first pass
        # checks and adopts all of them
        srv.proc.kill()
        srv.proc.wait()
        t0 = time.perf_counter()
        srv.start()
        pid = srv.proc.pid
        wait(lambda: first_pass(pid), timeout=300)  # (status.json may be half-written)
        adopt = time.perf_counter() - t0
        for ip in addresses:  # they never stopped answering (a probe may be slow under load)
            wait(lambda ip=ip: banner(probe_ns, ip), timeout=60)
        rows.append([f"kill -9, start -> all {guests} reconciled (first pass done)",
                     f"{adopt:.2f} s", "5 s", f"{adopt / 5:.2f}"])
        rows.append(["floor: authenticated no-op GET", f"{floor:.2f} ms", "-", "-"])
    finally:
        srv.stop()
        subprocess.run([sys.executable, "-m", "stackling.cli", "dataplane", "down", "--data-dir",
                        str(srv.data_dir)], capture_output=True)
        subprocess.run(["rm", "-rf", str(tmp)])
    text = table(["measure", "median / value", "goal", "ratio to goal"], rows)
    report("dataplane", text)


def debian(creates: int, guests: int) -> None:
    """debian-12 (issue 30): create -> SSH answers (median of `creates`; goal <= 2 s, where a
    DevStack VM takes 30-90 s), cirros create -> SSH in the same run, `guests` Debian guests'
    memory (goal <= 1 GiB for 20), and `make image-debian` cached. "Answers" is measured twice
    from the probe guest: the image's sshd's banner, then a key login as the image's user
    (debian/cirros; the key cloud-init installs). Memory: the guests' cgroups' memory.current
    (v2) or memory.usage_in_bytes (v1) summed, page cache included; PSS alongside.

    2026-12-02 17:34-17:39 UTC, load average 0.9 at the start, 16.5 during the creates, 4.6
    at the end (shared machine); table printed to bench/results/dataplane_debian.md (ignored by git):
    debian-12 create -> banner 7.32 s median (5.49-8.62), -> key login 7.79 s (5.99-9.09):
    3.7-3.9x the 2 s goal. cirros in the same run: 1.94 s banner, 2.02 s login (the
    cirros-only `python -m bench.dataplane` run was not done this session). 20 debian-12
    guests created together: only 6 took a key login within 150 s; in the others
    systemd-networkd failed to start (start timeout, restarted until its start limit), eth0
    DOWN with no address though sshd listened - a guest-boot bug under concurrency, not the
    bench's. Memory of those 20 (cgroup v1 usage_in_bytes): 475 MiB (goal 1024); PSS 275 MiB.
    make image-debian cached: 0.15-0.23 s. Cold build: not measured (out of time).

    2026-12-02 22:05-22:09 UTC (`debian 5 20`), load average 3.7 at the start, 12 during the
    20 creates (shared machine), after the two fixes of that session (each guest's user
    namespace its own root's: inotify instances no longer root's 128; a vCPU's CPU weight
    per guest) and the image's cloud-init config (no DSA key, no grub-dpkg, no sshd
    restart): debian-12 create -> banner 6.21 s median of 5 (5.61-10.57), -> key login
    6.63 s (6.16-11.01): 3.1-3.3x the 2 s goal. cirros in the same run 2.04 s / 2.13 s
    (1.36-3.04). 20 debian-12 guests created together: 20 of 20 took a key login, the last
    47.1 s after the creates. Cold build of the image: 80.6 s."""
    tmp = Path(tempfile.mkdtemp(prefix="stackling-bench-deb-"))
    key = tmp / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    srv = Server(tmp / "data", free_port(), env=ENV)
    srv.start()
    rows: list[list[Any]] = []
    try:
        cloud = Cloud(srv)
        image = cloud.c.get("/image/v2/images", params={"name": "debian-12"}).json()["images"]
        if not image:
            print("no debian-12 image: make image-debian")
            return
        debian_id = image[0]["id"]
        cloud.post("/compute/v2.1/os-keypairs", {"keypair": {
            "name": "bench", "public_key": key.with_suffix(".pub").read_text()}})
        net = cloud.post("/networking/v2.0/networks", {"network": {"name": "bench"}})["network"]
        cloud.post("/networking/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "cidr": "10.99.0.0/22", "ip_version": 4}})
        probe = cloud.boot(net["id"], "probe")
        probe_ns = cloud.names.guest(probe)
        wait(lambda: Path(f"/run/netns/{probe_ns}").exists()
             and banner(probe_ns, cloud.address(probe)), timeout=120)
        for label, img, user in (("debian-12", debian_id, "debian"), ("cirros", CIRROS, "cirros")):
            samples, logins = [], []
            for _ in range(creates):
                t0 = time.perf_counter()
                sid = cloud.boot(net["id"], image=img, flavor="1")
                ip = cloud.address(sid)
                wait(lambda ip=ip: banner(probe_ns, ip), timeout=300)
                samples.append(time.perf_counter() - t0)
                wait(lambda ip=ip, u=user: key_login(probe_ns, ip, key, u), timeout=300)
                logins.append(time.perf_counter() - t0)
                cloud.delete(sid)
            goal = 2.0 if label == "debian-12" else 1.0
            for what, xs in (("SSH banner", samples), (f"key login as {user}", logins)):
                med = statistics.median(xs)
                rows.append([f"{label} create -> {what} (median of {creates}; min {min(xs):.2f},"
                             f" max {max(xs):.2f})", f"{med:.2f} s", f"{goal:.0f} s",
                             f"{med / goal:.2f}"])
                print(rows[-1], flush=True)
        ids = [cloud.boot(net["id"], f"d{i}", image=debian_id, flavor="1")
               for i in range(guests)]
        t0 = time.perf_counter()
        answered = 0
        for sid in ids:  # bounded: a guest whose network never came up is counted, not waited on
            ip = cloud.address(sid)
            left = max(1.0, 150 - (time.perf_counter() - t0))
            try:
                wait(lambda ip=ip: banner(probe_ns, ip) and key_login(probe_ns, ip, key, "debian"),
                     timeout=left)
                answered += 1
            except RuntimeError:
                pass
        rows.append([f"{guests} debian-12 guests created together -> {answered} take a key login",
                     f"{time.perf_counter() - t0:.1f} s", "-", "-"])
        print(rows[-1], flush=True)
        mem, source = cgroup_memory(cloud.names.prefix, ids)
        rows.append([f"{guests} debian-12 guests: cgroups' {source} summed",
                     f"{mem / 2**20:.0f} MiB", "1024 MiB", f"{mem / 2**30:.2f}"])
        pss = memory_kb(cloud.names.prefix)
        rows.append([f"{guests} debian-12 guests (+1 cirros probe, dnsmasq): PSS",
                     f"{pss / 1024:.0f} MiB", "1024 MiB", f"{pss / 1024 / 1024:.2f}"])
        print(rows[-2], rows[-1], sep="\n", flush=True)
        # the build of the image this cloud booted, cached (its cache dir, not make's
        # default: a checkout's own image changes must not rebuild the machine's shared one)
        from stackling.config import load_settings

        cache = Path(load_settings().image.debian_image).parent
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "images/debian/build.py", "--cache-dir", str(cache)],
                       capture_output=True, check=True)
        cached = time.perf_counter() - t0
        rows.append([f"images/debian/build.py, cached ({cache})", f"{cached:.2f} s", "-", "-"])
    finally:
        srv.stop()
        subprocess.run([sys.executable, "-m", "stackling.cli", "dataplane", "down", "--data-dir",
                        str(srv.data_dir)], capture_output=True)
        subprocess.run(["rm", "-rf", str(tmp)])
    report("dataplane_debian", table(["measure", "median / value", "goal", "ratio to goal"],
                                     rows))


if __name__ == "__main__":
    if sys.argv[1:2] == ["debian"]:  # issue 30: python -m bench.dataplane debian [N] [guests]
        debian(int(sys.argv[2]) if len(sys.argv) > 2 else 10,
               int(sys.argv[3]) if len(sys.argv) > 3 else 20)
        sys.exit(0)
    if sys.argv[1:2] in (["moves"], ["racks"]):  # the wire (issue 22): bench/dataplane_racks.py
        from bench import dataplane_racks

        dataplane_racks.main()
    else:
        main()
