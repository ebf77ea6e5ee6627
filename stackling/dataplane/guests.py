"""Guests: one process tree per ACTIVE server, unprivileged on the machine (boundary.py).

A guest's network namespace is owned by a user namespace of its own (made when it boots,
its ids a range of the machine's no one else has); the launcher joins the guest's cgroups
(cgroups.py: its flavor's RAM and vCPUs, a process limit) and its seccomp filter as the
machine's root, then enters that user namespace and new mount, PID, UTS, IPC and cgroup
namespaces owned by it, so nothing it does after holds a capability of the machine's. As
the guest's root it mounts its tmpfs directories and /proc over the cloud's read-only root
filesystem (rootfs.py, a tmpfs of its own: no path of the machine's shows in the guest's
mount table), pivots into it, lets go of the machine's mounts and execs the guest's init
with the bounding set boundary.CAPS_DROPPED leaves. Its stdout is the server's console
log. Guests outlive a crash of the serving process (kill -9 then start finds them by their
pid files and keeps them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stackling.dataplane import boundary, cgroups, guest_mounts, hotplug, kernel, volumes
from stackling.dataplane.disks import Disks
from stackling.dataplane.rootfs import BUSYBOX

# PID 1 of the guest's PID namespace, at first as the machine's root (seccomp already on,
# in the guest's cgroups and network namespace, in a new mount namespace): it lays out the
# guest's root, pivots into it and lets go of the machine's mounts, then enters the guest's
# user namespace (its ids then an unprivileged range of the machine's) with new mount, UTS
# and IPC namespaces of that namespace's own, and execs the init with its bounding set.
# The PID, cgroup and first mount namespaces stay the machine's root's: the guest cannot
# mount a proc, sysfs or cgroup filesystem, and its /proc masks are locked in place.
LAUNCH = r"""set -e
K=$1 G=$2 R=$2/root U=$8 C=/run/guest
exec 3< "$G/userns"
# R is the guest's root filesystem, its image's under its own copy-on-write layer (disks.py),
# mounted by the reconciler; the directories a system container needs are made in that
# layer when the image has none (a Docker image may lack /run, /proc or /sys)
for d in run dev proc sys tmp; do
  if [ ! -d "$R/$d" ]; then mkdir -p "$R/$d"; chown "$U:$U" "$R/$d"; fi
done
mount -t tmpfs -o mode=755,size=64m,nosuid,nodev,uid=$U,gid=$U run "$R/run"
mkdir -p "$R$C/kit"
# the cloud's boot kit (busybox, setpriv, the boundary check), read-only: what runs before
# the image's own init is the cloud's, whatever the image holds
mount --bind "$K" "$R$C/kit"
mount -o remount,bind,ro "$R$C/kit"
printf '%s' "$4" > "$R$C/name"
printf '%s' "$5" > "$R$C/user"
printf '%s\n' "$6" > "$R$C/boundary"
printf '%s\n' "$7" > "$R$C/dhcp4"
chown "$U:$U" "$R$C" "$R$C/name" "$R$C/user" "$R$C/boundary" "$R$C/dhcp4"
mount -t tmpfs -o mode=755,size=1m,nosuid guest "$R/dev"
for n in null zero full urandom random tty; do touch "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done
# the console: a pty the loader copies to the server's console log (the guest's stdout)
touch "$R/dev/console"
mount --bind "$STACKLING_CONSOLE" "$R/dev/console"
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount -t tmpfs -o mode=1777,size=64m,nosuid,nodev,uid=$U,gid=$U shm "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"
chown -h "$U:$U" "$R/dev" "$R/dev/ptmx" "$R/dev/fd"
# its volumes (volumes.py): nodes of its loop devices, its root's, as a KVM guest names them
if [ -s "$G/disks" ]; then
  mkdir -p "$R/dev/disk/by-id"
  chown "$U:$U" "$R/dev/disk" "$R/dev/disk/by-id"
  while read -r n maj min mode id; do
    mknod -m "$mode" "$R/dev/$n" b "$maj" "$min"
    ln -s "../../$n" "$R/dev/disk/by-id/$id"
    chown -h "$U:$U" "$R/dev/$n" "$R/dev/disk/by-id/$id"
  done < "$G/disks"
fi
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
# masked as container runtimes mask them (locked: the guest cannot unmount them)
for f in kcore sysrq-trigger timer_list keys sched_debug; do
  if [ -e "$R/proc/$f" ]; then mount --bind /dev/null "$R/proc/$f"; fi
done
# /sys read-only (its network part is the guest's own namespace's), and the guest's own
# cgroup (its cgroup namespace's root, delegated to it: cgroups.py) where systemd wants it
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$R/sys/fs/cgroup"
cd "$R"
mkdir "$R$C/old"
pivot_root . "${C#/}/old"
cd /
umount -l "$C/old"
rmdir "$C/old"
exec $C/kit/bin/busybox nsenter -F -U/proc/self/fd/3 -S 0 -G 0 -- \
  $C/kit/bin/busybox unshare -m -u -i --propagation private -- \
  $C/kit/bin/busybox sh $C/kit/sbin/setpriv --bounding-set="$3" --inh-caps=-all \
  $C/kit/bin/busybox sh $C/kit/sbin/stackling-boot
"""


CONSOLE_LIMIT = 8 << 20  # bytes of a console log kept (then rotated once: trim_console)

# A clean power-off asks the guest's init, then kills it after a bounded time, as Nova's
# libvirt driver (_clean_shutdown: ACPI, up to shutdown_timeout, then destroy). For a system
# container the ask is a signal to its PID 1, chosen by what that init listens for (its
# blocked and caught signals in /proc/<pid>/status, as LXC's shutdown looks whether PID 1
# blocks SIGRTMIN+3): systemd gets SIGRTMIN+4, poweroff.target, what `machinectl poweroff`
# and systemd's container interface send (LXC sends SIGRTMIN+3, halt.target; in a container
# both end in PID 1's exit, but a power-off is what Nova's stop asks for, and the console
# shows it); any other init SIGPWR, LXC's default and Incus's (lxc.signal.halt: sysvinit's
# powerfail, busybox init's halt), or SIGUSR2, busybox init's poweroff, when that is all
# it catches. An init that listens for none of them cannot hear any (the kernel drops a
# signal from outside a PID namespace that its init has no handler for): it is killed at
# once, as is the kit's own init of the busybox guests (cirros: nothing of theirs needs a
# shutdown, and their stop must stay as fast as it was: the bench and many tests stop
# many of them).
HALT_SIGNALS = (signal.SIGRTMIN + 4, signal.SIGPWR, signal.SIGUSR2)
STOP_ALL_GRACE = 5.0  # seconds a clean stop of the cloud waits for every asked init at once


@dataclass(frozen=True)
class GuestSpec:
    """What a guest is made of; a change of its token (a rebuild, a reboot) is a new boot.
    Its NICs are not in the token: one attached or detached later is hot-plugged."""

    server_id: str
    name: str
    user: str
    nics: tuple[tuple[str, str, int], ...]  # (port id, MAC, MTU) at boot, eth0 first
    boots: int = 0  # the server's boot count: a reboot or rebuild boots the guest again
    memory_mb: int = 512  # the flavor's, as cgroup limits
    vcpus: int = 1
    dhcp4: tuple[str, ...] = ()  # port ids whose DHCPv4 server is there: the boot waits on it
    # its image: (id, data file, disk_format, container_format, checksum); () for one with
    # no data (the kit's own root filesystem, cirros's)
    image: tuple[str, ...] = ()
    generation: str = ""  # the root disk's: a new one (a rebuild) starts its layer afresh
    # the root disk's size in GiB (the flavor's disk; disks.py), 0 unbounded. Not in the
    # token: only a resize changes it, and a resize is a boot (its count changes)
    disk_gb: int = 0

    def token(self) -> str:
        return repr((self.name, self.user, self.boots, self.generation))


class Guests:
    def __init__(self, run_dir: Path, template: Path, console_dir: Path, prefix: str = "sl",
                 pids_max: int = 1024, disks_dir: Path | None = None) -> None:
        self.dir = run_dir / "guests"
        self.template = template  # the boot kit (and cirros's root), as rootfs.publish made it
        self.disks = Disks(disks_dir or run_dir / "disks")
        self.console_dir = console_dir
        self.ids = boundary.IdRanges(prefix, run_dir)
        self.cgroups = cgroups.Cgroups(prefix)
        self.pids_max = pids_max
        # named by what it refuses: a new version's filter is a file of its own
        digest = hashlib.sha256(" ".join(boundary.SYSCALLS_REFUSED + ("notify:",)
                                         + boundary.SYSCALLS_SUPERVISED).encode()).hexdigest()[:12]
        self.seccomp = run_dir / f"seccomp-{digest}.bpf"
        self._powering_off: dict[str, threading.Thread] = {}  # server id -> its waiter

    def gdir(self, server_id: str) -> Path:
        return self.dir / server_id

    def pid(self, server_id: str) -> int | None:
        """The launcher's pid when that process is alive and still this guest's."""
        try:
            pid = int((self.gdir(server_id) / "pid").read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if str(self.gdir(server_id)).encode() in cmdline else None

    def running(self) -> dict[str, str]:
        """server id -> its spec token, for every guest alive now."""
        out = {}
        if self.dir.exists():
            for gdir in self.dir.iterdir():
                if self.pid(gdir.name) is not None:
                    token = gdir / "spec"
                    out[gdir.name] = token.read_text() if token.exists() else ""
        return out

    def known(self) -> list[str]:
        return [p.name for p in self.dir.iterdir()] if self.dir.exists() else []

    def nic_names(self, server_id: str, port_ids: list[str], fresh: bool) -> dict[str, str]:
        """Port id -> the guest's interface name: eth0... in port order at boot (`fresh`);
        later a plugged port takes the lowest free ethN and the others keep theirs, as a
        VM's NICs keep their names when another is hot-plugged or unplugged."""
        path = self.gdir(server_id) / "nics"
        old: dict[str, str] = {}
        if not fresh:
            try:
                old = json.loads(path.read_text())
            except (OSError, ValueError):
                old = {}
        names = {p: old[p] for p in port_ids if p in old}
        used, n = set(names.values()), 0
        for port_id in port_ids:
            if port_id not in names:
                while f"eth{n}" in used:
                    n += 1
                names[port_id] = f"eth{n}"
                used.add(names[port_id])
        if names != old:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(names))
        return names

    def plugged(self, server_id: str) -> list[str]:
        """The port ids whose NICs were last plugged into the running guest."""
        try:
            return list(json.loads((self.gdir(server_id) / "plugged").read_text()))
        except (OSError, ValueError):
            return list(self.nic_map(server_id))

    def set_plugged(self, server_id: str, port_ids: list[str]) -> None:
        path = self.gdir(server_id) / "plugged"
        text = json.dumps(sorted(port_ids))
        if path.parent.is_dir() and (not path.exists() or path.read_text() != text):
            path.write_text(text)

    def nic_map(self, server_id: str) -> dict[str, str]:
        try:
            return dict(json.loads((self.gdir(server_id) / "nics").read_text()))
        except (OSError, ValueError):
            return {}

    def hotplug(self, server_id: str) -> bool:
        """Tell the running guest a NIC was plugged (its watcher takes it by DHCP)."""
        pid = self.pid(server_id)
        return pid is not None and hotplug.notify(descendants(pid)) > 0

    def inside(self, server_id: str) -> int | None:
        """A process of the running guest past its pivot (volumes.guest_process)."""
        pid = self.pid(server_id)
        return None if pid is None else volumes.guest_process(pid, _children())

    def frozen(self, server_id: str) -> bool:
        return (self.gdir(server_id) / "paused").exists()

    def make_namespaces(self, server_id: str, netns: str, parent: str | None) -> None:
        """The guest's user namespace and the network namespace it owns, made anew (a boot
        is a fresh machine: whatever the guest did to its network stack is gone)."""
        base = self.ids.claim(server_id)
        boundary.make_namespaces(netns, self.gdir(server_id) / "userns", base, parent)

    def boundary_failed(self, server_id: str) -> bool:
        """Its last boot stopped at the init's boundary check (boundary.EXIT_BOUNDARY)."""
        try:
            return int((self.gdir(server_id) / "exit").read_text()) == boundary.EXIT_BOUNDARY
        except (OSError, ValueError):
            return False

    def start(self, spec: GuestSpec, netns: str, image_root: Path | None = None,
              seed: dict[str, bytes] | None = None, disks: str = "") -> None:
        """Boot it: `image_root` is its image's root filesystem (images.prepare), None the
        kit's; `seed` files its root disk holds at boot (a config drive's: disks.py);
        `disks` its volumes' device nodes (volumes.Volumes.boot_list)."""
        gdir = self.gdir(spec.server_id)
        (gdir / "root").mkdir(parents=True, exist_ok=True)
        (gdir / "spec").write_text(spec.token())
        (gdir / "disks").write_text(disks)
        for name in ("paused", "exit", "halt", "kit-init"):
            (gdir / name).unlink(missing_ok=True)
        if image_root is None:  # the kit's own init (cirros): its stop is a kill (HALT_SIGNALS)
            (gdir / "kit-init").touch()
        base = self.ids.claim(spec.server_id)
        self.cgroups.kill(spec.server_id)  # a guest whose launcher was killed, still there
        userns = gdir / "userns"
        if not userns.exists():
            raise RuntimeError(f"guest {spec.server_id}: no user namespace to boot in")
        dirs = self.cgroups.create(spec.server_id, cgroups.Limits(
            spec.memory_mb, spec.vcpus, self.pids_max), delegate_to=base)
        # The flavor-sized root filesystem (disks.py, `spec.disk_gb`) is off: a boot after a
        # resize or reboot could find the last boot's filesystem still held and never start
        # (issue 30, not yet found why); the layer is plain directories, unbounded, as before
        self.disks.mount(spec.server_id, image_root or self.template,
                         spec.generation, gdir, userns, base, seed, 0)
        bpf = boundary.seccomp_filter(self.seccomp)
        expected = f"{boundary.caps_mask():016x} 2 0 {base} {boundary.ID_RANGE}"
        if os.environ.get("STACKLING_TEST_GUEST_BOUNDARY_FAULT"):  # the check's own test
            expected = f"{boundary.caps_mask() ^ 1:016x} 2 0 {base} {boundary.ID_RANGE}"
        nics = {p: i for i, (p, _, _) in enumerate(spec.nics)}
        dhcp4 = " ".join(f"eth{nics[p]}" for p in spec.dhcp4 if p in nics)
        self.console_dir.mkdir(parents=True, exist_ok=True)
        log = self.console_dir / f"{spec.server_id}.log"
        with open(log, "ab") as console:
            # forked by a thread inside the guest's network namespace (no nsenter for it);
            # the launcher a static busybox sh whose mkdir/touch/chmod/ln run in-process:
            # at 100 guests booting at once their forks and execs were the CPU's bottleneck
            proc = kernel.in_namespace(netns, lambda: subprocess.Popen(
                [sys.executable, "-S", "-E", "-s", "-c", boundary.LOADER, str(bpf),
                 ":".join(map(str, dirs)), str(log), str(base), str(gdir),
                 guest_mounts.SUPERVISOR,
                 "unshare", "--pid", "--fork", "--mount", "--cgroup", "--kill-child",
                 "--propagation", "private", "--",
                 BUSYBOX, "sh", "-c", LAUNCH, "guest", str(self.template), str(gdir),
                 boundary.bounding_arg(), spec.name, spec.user, expected, dhcp4, str(base)],
                stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True))
        (gdir / "pid").write_text(str(proc.pid))
        self.set_plugged(spec.server_id, [p for p, _, _ in spec.nics])
        # Reaped by a thread of ours (a zombie launcher would look alive to pid()).
        _reap_later(proc, gdir / "exit")

    def stop(self, server_id: str, forget: bool = True) -> None:
        """Power off at once (a hard reboot, a delete, a timeout): the launcher dies, and
        with it (kill-child) the PID namespace."""
        pid = self.pid(server_id)
        if pid is not None:
            _kill_tree(pid)
        self.cgroups.kill(server_id)  # (and whatever outlived its launcher)
        gdir = self.gdir(server_id)
        self.disks.unmount(gdir)
        if forget:
            self._forget(server_id)
        else:
            (gdir / "pid").unlink(missing_ok=True)
            (gdir / "halt").unlink(missing_ok=True)

    def init_pid(self, server_id: str) -> int | None:
        """The guest's PID 1 as the machine sees it: the process below its launcher whose
        last NSpid field (its pid in the innermost PID namespace) is 1."""
        pid = self.pid(server_id)
        for p in descendants(pid) if pid is not None else []:
            try:
                status = Path(f"/proc/{p}/status").read_text()
            except OSError:
                continue
            nspid = next((line.split()[1:] for line in status.splitlines()
                          if line.startswith("NSpid:")), [])
            if len(nspid) > 1 and nspid[-1] == "1":
                return p
        return None

    def ask_power_off(self, server_id: str) -> float | None:
        """Ask the guest's init to power off (HALT_SIGNALS), once: when it was asked (a
        time.monotonic(), kept in its run directory so that a later pass, or the next
        process after a crash, keeps counting from the first ask), or None when nothing
        in it can hear (the kit's init, an init with no handler): kill it at once."""
        gdir = self.gdir(server_id)
        try:
            return float((gdir / "halt").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
        if (gdir / "kit-init").exists():
            return None
        init = self.init_pid(server_id)
        halt = _halt_signal(init) if init is not None else None
        if init is None or halt is None:
            return None
        try:
            os.kill(init, halt)
        except ProcessLookupError:
            return None
        asked = time.monotonic()
        (gdir / "halt").write_text(f"{asked} {int(halt)}")
        return asked

    def powering_off(self, server_id: str) -> bool:
        """Whether a power-off of this guest is under way (its waiter thread alive)."""
        waiter = self._powering_off.get(server_id)
        return waiter is not None and waiter.is_alive()

    def power_off(self, server_id: str, timeout: float, then: Callable[[], None]) -> bool:
        """A clean power-off that never blocks the caller: the init is asked, a thread
        waits for the guest to end (its launcher's pidfd) until `timeout` seconds after the
        ask, kills what is left (stop), unmounts its disk and calls `then`; True while that
        is under way (asking again then does nothing). False when the guest was stopped
        at once, here (it cannot hear, or was not running, or `timeout` is 0: Nova's "no
        opportunity to shut down gracefully"; `then` is not called)."""
        if self.powering_off(server_id):
            return True
        pid = self.pid(server_id)
        asked = self.ask_power_off(server_id) if pid is not None and timeout > 0 else None
        if pid is None or asked is None:
            self.stop(server_id, forget=False)
            return False

        def wait() -> None:
            try:
                _wait_exit(pid, asked + timeout - time.monotonic())
                self.stop(server_id, forget=False)  # (killed, if it did not end in time)
                then()
            finally:
                if self._powering_off.get(server_id) is threading.current_thread():
                    del self._powering_off[server_id]

        waiter = threading.Thread(target=wait, name=f"guest-power-off-{server_id[:8]}",
                                  daemon=True)
        self._powering_off[server_id] = waiter
        waiter.start()
        return True

    def _forget(self, server_id: str) -> None:
        """Its user namespace, cgroups, id range and run directory (its network namespace
        is the reconciler's: removed when nothing wants it)."""
        gdir = self.gdir(server_id)
        self.cgroups.kill(server_id)
        self.disks.unmount(gdir)
        self.cgroups.remove(server_id)  # (EBUSY: kept, and retried by the next pass)
        boundary.release_userns(gdir / "userns")
        self.ids.release(server_id)
        shutil.rmtree(gdir, ignore_errors=True)

    def stop_all(self) -> None:
        """Power every guest off at once (a clean stop, `dataplane down`): every init that
        can hear asked at once and given STOP_ALL_GRACE seconds in all, then one look at
        the process table, every tree killed, then each waited for (one by one, each stop
        read the whole table again: 100 guests outlasted the patience of a stop)."""
        pids = {server_id: self.pid(server_id) for server_id in self.known()}
        asked = [pid for server_id, pid in pids.items() if pid is not None
                 and self.ask_power_off(server_id) is not None]
        deadline = time.monotonic() + STOP_ALL_GRACE
        for pid in asked:
            _wait_exit(pid, deadline - time.monotonic())
        pids = {server_id: self.pid(server_id) for server_id in pids}
        alive = [pid for pid in pids.values() if pid is not None]
        table = _children()
        for pid in alive:
            _kill([pid, *descendants(pid, table)])
        for pid in alive:
            _wait_gone(pid)
        for server_id in pids:
            try:
                self._forget(server_id)
            except OSError:
                pass  # (its cgroup still busy: remove_all below tries once more)
            self.disks.unmount(self.gdir(server_id))
            boundary.release_userns(self.gdir(server_id) / "userns")
            shutil.rmtree(self.gdir(server_id), ignore_errors=True)
        self.ids.release_all()
        self.cgroups.remove_all()

    def pause(self, server_id: str, paused: bool) -> None:
        """Paused is frozen: every process of the guest stopped (SIGSTOP), as a VM's vCPUs."""
        pid = self.pid(server_id)
        if pid is None:
            return
        for p in [pid, *descendants(pid)]:
            try:
                os.kill(p, signal.SIGSTOP if paused else signal.SIGCONT)
            except ProcessLookupError:
                pass
        marker = self.gdir(server_id) / "paused"
        if paused:
            marker.touch()
        else:
            marker.unlink(missing_ok=True)

    def trim_console(self, server_id: str, limit: int = CONSOLE_LIMIT) -> None:
        """A console log past `limit` bytes: its content moved to `<log>.0` and the log
        emptied (its copier appends on), as virtlogd rotates Nova's."""
        log = self.console(server_id)
        try:
            if log.stat().st_size <= limit:
                return
            shutil.copyfile(log, log.with_name(log.name + ".0"))
            os.truncate(log, 0)
        except OSError:
            pass

    def console(self, server_id: str) -> Path:
        return self.console_dir / f"{server_id}.log"


def _children() -> dict[int, list[int]]:
    """parent pid -> its children's, from one reading of /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(pid: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """Every process below `pid`, from one reading of /proc."""
    children = _children() if children is None else children
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _halt_signal(pid: int) -> int | None:
    """The first of HALT_SIGNALS that process `pid` blocks (systemd reads its signals from
    a signalfd) or has a handler for; None when it listens for none."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    try:
        listens = int(fields["SigBlk"], 16) | int(fields["SigCgt"], 16)
    except (KeyError, ValueError):
        return None
    return next((int(s) for s in HALT_SIGNALS if listens >> (int(s) - 1) & 1), None)


def _wait_exit(pid: int, seconds: float) -> bool:
    """Wait up to `seconds` for process `pid` to end (its pidfd readable); True if it did."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(max(0.0, seconds) * 1000))
    finally:
        os.close(fd)


def _kill_tree(pid: int) -> None:
    _kill([pid, *descendants(pid)])
    _wait_gone(pid)


def _kill(pids: list[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
        except ChildProcessError:
            stat = Path(f"/proc/{pid}/stat")
            if not stat.exists() or ") Z" in stat.read_text():
                break
        time.sleep(0.01)


def _reap_later(proc: subprocess.Popen, exit_file: Path) -> None:
    """Its exit status is kept (boundary_failed reads it)."""
    import threading

    def reap() -> None:
        code = proc.wait()
        try:
            exit_file.write_text(str(code))
        except OSError:
            pass  # its guest was forgotten meanwhile

    threading.Thread(target=reap, name="guest-reaper", daemon=True).start()
