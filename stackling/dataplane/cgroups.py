"""A guest's cgroups: its flavor's RAM and vCPUs and a process limit, as the kernel's limits.

Per guest `<controller root>/<prefix>/<server id>` in the memory, cpu and pids hierarchies
(cgroup v1, as this machine mounts them) or in the unified one (cgroup v2), plus the unified
hierarchy in any case: the guest's cgroup namespace is rooted there, so a cgroup2 mount
made inside a guest shows its own cgroup, never the machine's tree. A memory hog is killed
by the kernel's OOM killer inside its own cgroup and a fork bomb stops at `pids.max`; the
machine, its neighbours and the API go on.

CPU weight as a VM's: the kernel shares CPU among the entities of a level, and the cloud's
level `<prefix>` is one entity among the machine's processes. At the default weight every
guest of the cloud together had one process's share (20 Debian guests booting on a loaded
machine each got a twentieth of it, and systemd's start timeouts ran out); a KVM guest's
vCPU is a thread of the machine's with a process's weight. So each guest weighs its vCPUs
(SHARES_PER_VCPU each) and the cloud's level the sum of its guests', recounted as they come
and go; the quota still holds each guest to its vCPUs.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "cpu", "pids")
PERIOD_US = 100_000
# One vCPU weighs what one process of the machine does by default: cgroup v1 cpu.shares
# (1024, at most 262144), v2 cpu.weight (100, at most 10000)
SHARES_PER_VCPU, MAX_SHARES = 1024, 262144
WEIGHT_PER_VCPU, MAX_WEIGHT = 100, 10000


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    vcpus: int
    pids: int


def _mounts() -> tuple[dict[str, Path], Path | None]:
    """controller -> its v1 hierarchy's mount point; the unified (v2) mount point."""
    v1: dict[str, Path] = {}
    v2 = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(fields) < 5 or len(rest) < 3:
                continue
            if rest[0] == "cgroup2" and v2 is None:
                v2 = Path(fields[4])
            elif rest[0] == "cgroup":
                for option in rest[2].split(","):
                    if option in CONTROLLERS:
                        v1.setdefault(option, Path(fields[4]))
    return v1, v2


class Cgroups:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.v1, self.v2 = _mounts()

    def available(self) -> str | None:
        """Why guests cannot be limited here, or None."""
        v2_has = set()
        if self.v2 is not None:
            try:
                v2_has = set((self.v2 / "cgroup.controllers").read_text().split())
            except OSError:
                pass
        missing = [c for c in CONTROLLERS if c not in self.v1 and c not in v2_has]
        return f"no cgroup controller for {', '.join(missing)}" if missing else None

    def dirs(self, server_id: str) -> list[Path]:
        out = [self.v1[c] / self.prefix / server_id for c in CONTROLLERS if c in self.v1]
        if self.v2 is not None:
            out.append(self.v2 / self.prefix / server_id)
        return list(dict.fromkeys(out))

    def create(self, server_id: str, limits: Limits, delegate_to: int | None = None) -> list[Path]:
        """The guest's cgroups with its limits (written again at each boot: a resize); its
        unified one delegated to the guest's root (`delegate_to`, its id on the machine),
        as systemd's container interface asks: the image's systemd makes its own tree
        below it (the limits are the levels above, which it cannot write)."""
        v2_controllers = [c for c in CONTROLLERS if c not in self.v1]
        if self.v2 is not None and v2_controllers:
            parent = self.v2 / self.prefix
            parent.mkdir(exist_ok=True)
            # (the machine's root must delegate them; our own level passes them on)
            _write(parent / "cgroup.subtree_control",
                   " ".join(f"+{c}" for c in v2_controllers), missing_ok=True)
        for d in self.dirs(server_id):
            d.mkdir(parents=True, exist_ok=True)
        memory = limits.memory_mb * 1024 * 1024
        quota = max(1, limits.vcpus) * PERIOD_US
        if "memory" in self.v1:
            d = self.v1["memory"] / self.prefix / server_id
            # (memory+swap is never below memory: lifted first, so a resize either way works)
            _write(d / "memory.memsw.limit_in_bytes", "-1", missing_ok=True)
            _write(d / "memory.limit_in_bytes", str(memory))
            _write(d / "memory.memsw.limit_in_bytes", str(memory), missing_ok=True)
        if "cpu" in self.v1:
            d = self.v1["cpu"] / self.prefix / server_id
            _write(d / "cpu.cfs_period_us", str(PERIOD_US))
            _write(d / "cpu.cfs_quota_us", str(quota))
        if "pids" in self.v1:
            _write(self.v1["pids"] / self.prefix / server_id / "pids.max", str(limits.pids))
        if self.v2 is not None and v2_controllers:
            d = self.v2 / self.prefix / server_id
            if "memory" in v2_controllers:
                _write(d / "memory.max", str(memory))
                _write(d / "memory.swap.max", "0", missing_ok=True)
            if "cpu" in v2_controllers:
                _write(d / "cpu.max", f"{quota} {PERIOD_US}")
            if "pids" in v2_controllers:
                _write(d / "pids.max", str(limits.pids))
        self._weigh(server_id, max(1, limits.vcpus))
        if self.v2 is not None and delegate_to is not None:
            d = self.v2 / self.prefix / server_id
            for path in (d, d / "cgroup.procs", d / "cgroup.threads", d / "cgroup.subtree_control"):
                try:
                    os.chown(path, delegate_to, delegate_to)
                except FileNotFoundError:
                    pass
        return self.dirs(server_id)

    def _cpu_level(self) -> tuple[Path, str, int, int] | None:
        """The cloud's level in the cpu hierarchy, its weight file, one vCPU's weight, max."""
        if "cpu" in self.v1:
            return self.v1["cpu"] / self.prefix, "cpu.shares", SHARES_PER_VCPU, MAX_SHARES
        if self.v2 is not None:
            return self.v2 / self.prefix, "cpu.weight", WEIGHT_PER_VCPU, MAX_WEIGHT
        return None

    def _weigh(self, server_id: str | None, vcpus: int = 0) -> None:
        """The guest's weight (its vCPUs'), then the cloud's level: its guests' summed."""
        level = self._cpu_level()
        if level is None:
            return
        top, name, per_vcpu, most = level
        if server_id is not None:
            _write(top / server_id / name, str(min(most, vcpus * per_vcpu)), missing_ok=True)
        # Guests start at once (threads of a pass, or other processes): each counts, and
        # writes its count until the level holds what it counts after its own write, so
        # the last writer's count, made after every guest's own weight, stands
        for _ in range(10):
            total = min(most, _children_sum(top, name))
            try:
                if not total or int((top / name).read_text()) == total:
                    return
            except (OSError, ValueError):
                return  # (no such level: no weight to keep)
            _write(top / name, str(total), missing_ok=True)

    def kill(self, server_id: str, patience: float = 10.0) -> None:
        """Every process of the guest, whatever its parent: its processes outlive their
        launcher (the kernel clears a parent-death signal when a process enters another
        user namespace), so a guest is ended by its cgroups, not by its process tree.
        Returns once they are empty (or after `patience`: remove() then says EBUSY)."""
        if self.v2 is not None:
            _write(self.v2 / self.prefix / server_id / "cgroup.kill", "1", missing_ok=True)
        deadline = time.monotonic() + patience
        while True:
            pids = set()
            for d in self.dirs(server_id):
                try:
                    pids |= {int(p) for p in (d / "cgroup.procs").read_text().split()}
                except OSError:
                    continue
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def remove(self, server_id: str) -> None:
        """Once its processes are gone (EBUSY until then: retried by the next pass)."""
        for d in self.dirs(server_id):
            _rmdir_tree(d)
        self._weigh(None)

    def remove_all(self) -> None:
        roots = {self.v1[c] for c in CONTROLLERS if c in self.v1}
        if self.v2 is not None:
            roots.add(self.v2)
        for root in roots:
            top = root / self.prefix
            if top.is_dir():
                for child in top.iterdir():
                    if child.is_dir():
                        _rmdir_tree(child)
                _rmdir(top)


def _children_sum(top: Path, name: str) -> int:
    total = 0
    for child in top.iterdir() if top.is_dir() else ():
        try:
            total += int((child / name).read_text()) if child.is_dir() else 0
        except (OSError, ValueError):
            continue  # (a guest's cgroup being removed)
    return total


def _write(path: Path, value: str, missing_ok: bool = False) -> None:
    try:
        path.write_text(value)
    except FileNotFoundError:
        if not missing_ok:
            raise
    except OSError as exc:
        if not (missing_ok and exc.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.EACCES)):
            raise


def _rmdir_tree(path: Path) -> None:
    """A cgroup and the ones its guest made below it (systemd's), deepest first."""
    if not path.is_dir():
        return
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            _rmdir_tree(child)
    _rmdir(path)


def _rmdir(path: Path) -> None:
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
