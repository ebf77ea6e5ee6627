"""Live clouds with `dataplane.driver: netns` (marker `dataplane`): they run as root with
the tools `make dataplane-deps` installs, and skip with the reason elsewhere.

Every test runs between a snapshot and a check of the machine's own network namespace
(`host-netns-guard`); before its cloud stops, `GET /audit` must find nothing about the wire
(every kernel object the database asks for, and no other with the cloud's prefix: set
STACKLING_TEST_NO_WIRE_AUDIT=1 to skip it), and its clean stop must leave none of its
kernel objects or processes behind.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

GUARD = Path(__file__).resolve().parents[3] / "shared" / "tools" / "host-netns-guard"
SSH_OPTS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "BatchMode=yes", "-o", "ConnectTimeout=3", "-o", "LogLevel=ERROR",
            # a session whose guest went away without a reset (a move's old guest torn down)
            # ends within seconds instead of hanging
            "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=2"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/dataplane/" in str(item.fspath):
            item.add_marker(pytest.mark.dataplane)


def _unavailable() -> str | None:
    from stackling.dataplane.interface import unavailable_reason

    reason = unavailable_reason()
    if reason is None and not (shutil.which("ssh") and shutil.which("ssh-keygen")):
        return "no ssh client (make dataplane-deps)"
    if reason is None and not GUARD.exists() and not Path("/work/shared/tools/host-netns-guard").exists():
        return "host-netns-guard is missing"
    return reason


@pytest.fixture
def netns_guard(tmp_path: Path) -> Iterator[None]:
    """The machine's own namespace gains nothing (addresses, routes, links, rules, tables)."""
    reason = _unavailable()
    if reason:
        pytest.skip(f"dataplane: {reason}")
    guard = str(GUARD if GUARD.exists() else "/work/shared/tools/host-netns-guard")
    snap = tmp_path / "host-netns.snapshot"
    subprocess.run([guard, "snapshot", str(snap)], check=True)
    yield
    check = subprocess.run([guard, "check", str(snap)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def eventually(check: Callable[[], bool], timeout: float = 30) -> bool:
    """Whether `check()` holds within `timeout` (polled; a condition, not a sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


class DataplaneCloud:
    def __init__(self, cloud: Any) -> None:
        from stackling.dataplane.names import Names, cloud_prefix

        self.cloud = cloud
        self.prefix = cloud_prefix(cloud.database_url)
        self.names = Names(self.prefix)
        self.key = cloud.data_dir.parent / "id_ed25519"
        if not self.key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)],
                           check=True)

    @property
    def sdk(self) -> Any:
        return self.cloud.sdk()

    def keypair(self, name: str = "dp-key") -> Any:
        found = self.sdk.compute.find_keypair(name)
        return found or self.sdk.compute.create_keypair(
            name=name, public_key=self.key.with_suffix(".pub").read_text())

    def network(self, name: str, cidr: str) -> tuple[Any, Any]:
        net = self.sdk.network.create_network(name=name)
        subnet = self.sdk.network.create_subnet(network_id=net.id, cidr=cidr, ip_version=4,
                                                name=f"{name}-subnet")
        return net, subnet

    def server(self, name: str, network_id: str, user_data: str | None = None,
               security_groups: list[str] | None = None) -> Any:
        image = self.sdk.image.find_image("cirros")
        flavor = next(f for f in self.sdk.compute.flavors() if f.name == "m1.tiny")
        kwargs: dict[str, Any] = {}
        if user_data:
            kwargs["user_data"] = base64.b64encode(user_data.encode()).decode()
        if security_groups:
            kwargs["security_groups"] = [{"name": g} for g in security_groups]
        server = self.sdk.compute.create_server(
            name=name, image_id=image.id, flavor_id=flavor.id, key_name=self.keypair().name,
            networks=[{"uuid": network_id}], **kwargs)
        return self.sdk.compute.wait_for_server(server, wait=120, interval=0.2)

    def address(self, server: Any) -> str:
        ports = list(self.sdk.network.ports(device_id=server.id))
        return ports[0].fixed_ips[0]["ip_address"]

    def in_ns(self, namespace: str, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(["nsenter", f"--net=/run/netns/{namespace}", "--", *cmd],
                              capture_output=True, text=True, timeout=timeout)

    def ssh(self, namespace: str, address: str, command: str, user: str = "cirros"
            ) -> subprocess.CompletedProcess:
        return self.in_ns(namespace, "ssh", "-i", str(self.key), *SSH_OPTS,
                          f"{user}@{address}", command)

    def wait_ssh(self, namespace: str, address: str, command: str = "hostname",
                 timeout: float = 60, user: str = "cirros") -> str:
        """Wait (on the condition, bounded) until SSH answers; the command's output."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = self.ssh(namespace, address, command, user=user)
            except subprocess.TimeoutExpired as exc:  # a try that hung: try again
                last = subprocess.CompletedProcess(exc.cmd, 124, "", f"timed out: {exc}")
                continue
            if last.returncode == 0:
                return last.stdout
            time.sleep(0.2)
        raise AssertionError(f"ssh {address} from {namespace}: {last.stderr if last else ''}\n"
                             f"{self.consoles(address)}\n{self.cloud.log_tail(3000)}")

    def consoles(self, address: str) -> str:
        """The console logs that name `address` (a failed wait shows the guest's boot)."""
        out = []
        for log in sorted((self.cloud.data_dir / "dataplane" / "console").glob("*.log")):
            text = log.read_text(errors="replace")
            if f" {address}/" in text or f" {address} " in text:
                out.append(f"--- console {log.stem}:\n{text[-3000:]}")
        return "\n".join(out) or f"(no console log names {address})"

    def unreachable(self, namespace: str, address: str, port: int = 22) -> bool:
        """Nothing answers a TCP connect from `namespace` (busy-waiting is not needed: a
        refusal or a timeout of 2 s is the answer)."""
        probe = self.in_ns(namespace, "timeout", "3", "bash", "-c",
                           f"exec 3<>/dev/tcp/{address}/{port}", timeout=10)
        return probe.returncode != 0

    def leftovers(self) -> list[str]:
        """Every kernel object or process of this cloud still on the machine."""
        out = [f"netns {n}" for n in
               subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
               .stdout.split() if n.startswith(self.prefix + "-")]
        run_dir = f"/run/stackling/{self.prefix}"
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if run_dir in cmdline:
                out.append(f"process {pid}: {cmdline[:120]}")
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        out += [f"host link {line}" for line in links.splitlines() if f" {self.prefix}-" in line]
        # the guests' boundary (boundary.py, cgroups.py): mounts under the run directory
        # (user namespaces, the root filesystem), cgroups, claimed id ranges
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        out += [f"mount {line.split()[4]}" for line in mounts if f" {run_dir}/" in line
                or line.split()[4] == run_dir]
        # images prepared for guests (images/): their mounts and loop devices, in the data dir
        data_dir = str(self.cloud.data_dir)
        out += [f"mount {line.split()[4]}" for line in mounts
                if line.split()[4].startswith(data_dir + "/")]
        # ... and the servers' root disks (disks.py): a loop device per running guest, its
        # backing file in the data dir (read from sysfs: a deleted file's too)
        for entry in sorted(Path("/sys/block").glob("loop*")):
            try:
                backing = (entry / "loop" / "backing_file").read_text().strip()
            except OSError:
                continue  # not attached
            if backing.startswith(data_dir + "/"):
                out.append(f"loop device /dev/{entry.name}: {backing}")
        out += [f"cgroup {d}" for d in Path("/sys/fs/cgroup").glob(f"*/{self.prefix}")]
        ids = Path("/run/stackling/ids")
        for claim in ids.iterdir() if ids.is_dir() else ():
            try:
                if claim.name.isdigit() and claim.read_text().startswith(self.prefix + " "):
                    out.append(f"id range claim {claim}")
            except OSError:
                continue
        return out


def wire_findings(dp: DataplaneCloud) -> list[dict[str, Any]]:
    """The audit's findings about the cloud's kernel objects (GET /audit, as admin)."""
    import httpx

    r = httpx.get(dp.cloud.url + "/audit", headers={"X-Auth-Token": dp.cloud.token()},
                  timeout=120)
    if r.status_code != 200:
        return [{"check": "dataplane.wire", "message": f"GET /audit: {r.status_code}"}]
    return [f for f in r.json()["findings"] if f["check"] == "dataplane.wire"]


@pytest.fixture
def dataplane_clouds(netns_guard: None, cloud_factory: Callable[..., Any]
                     ) -> Iterator[Callable[..., DataplaneCloud]]:
    """Clouds with the netns driver: dataplane_clouds(backend, workers=..., extra_env=...).
    After the test, each one's clean stop leaves nothing of it on the machine."""
    started: list[DataplaneCloud] = []

    def start(backend: str = "sqlite", extra_env: dict[str, str] | None = None,
              **kwargs: Any) -> DataplaneCloud:
        cloud = cloud_factory(backend, extra_env={"STACKLING_DATAPLANE__DRIVER": "netns",
                                                  **(extra_env or {})}, **kwargs)
        started.append(DataplaneCloud(cloud))
        return started[-1]

    try:
        yield start
    finally:
        left, unaudited = [], []
        for dp in started:
            # the audit of the wire is empty once the reconciler has converged (issue 22)
            if dp.cloud.proc and dp.cloud.proc.poll() is None and not os.environ.get(
                    "STACKLING_TEST_NO_WIRE_AUDIT") and not eventually(
                        lambda dp=dp: not wire_findings(dp), timeout=30):
                unaudited += wire_findings(dp)
            dp.cloud.stop()
            left += dp.leftovers()
            if dp.leftovers():
                subprocess.run([str(Path(sys.executable).parent / "stackling"), "dataplane",
                                "down", "--database-url", dp.cloud.database_url,
                                "--data-dir", str(dp.cloud.data_dir)], capture_output=True)
        assert not left, f"left behind after a clean stop: {left}"
        assert not unaudited, f"stackling audit of the wire: {unaudited}"


@pytest.fixture
def dataplane_cloud(dataplane_clouds: Callable[..., DataplaneCloud]) -> DataplaneCloud:
    """A cloud on SQLite with the netns driver."""
    return dataplane_clouds("sqlite")
