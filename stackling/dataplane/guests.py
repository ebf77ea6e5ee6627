"""Guests: one process tree per ACTIVE server in its own network, UTS, mount, IPC and PID
namespaces over the shared read-only root filesystem (rootfs.py).

The launcher runs as PID 1 of the new PID namespace: it mounts the guest's tmpfs
directories, binds a few device nodes, and chroots into the template with a bounding set
of capabilities for boot only; the guest's init drops to a smaller one before it runs user
data and the SSH server. Its stdout is the server's console log. Guests outlive a crash of
the serving process (kill -9 then start finds them by their pid files and keeps them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from stackling.dataplane import hotplug, kernel
from stackling.dataplane.rootfs import BUSYBOX

BOOT_CAPS = "-all,+chown,+dac_override,+fowner,+setuid,+setgid,+kill,+net_bind_service," \
            "+net_raw,+net_admin,+sys_admin"
RUN_CAPS = "-all,+chown,+dac_override,+fowner,+setuid,+setgid,+kill,+net_bind_service,+net_raw"

LAUNCH = r"""set -e
T=$1 G=$2 R=$2/root
# this mount namespace's copies of the named network namespaces would keep them alive
# after `ip netns del` (propagation is private here): let go of them, all at once when
# /run/netns is a mount point (iproute2's and pyroute2's way; one umount per namespace
# made a pass from nothing with 100 guests quadratic)
umount -l /run/netns 2>/dev/null ||
for m in $(awk '$5 ~ "^/run/netns/" || $5 ~ "^/var/run/netns/" {print $5}' /proc/self/mountinfo); do
  umount -l "$m" 2>/dev/null || true
done
mkdir -p "$R"
mount --bind "$T" "$R"
mount -o remount,bind,ro "$R"
for d in tmp run root home var; do mount -t tmpfs -o mode=755,size=16m,nosuid,nodev guest "$R/$d"; done
chmod 1777 "$R/tmp"
mount -t tmpfs -o mode=755,size=4m,nosuid,nodev guest "$R/etc"
# the guest's /etc, written here by the shell itself (no file of the host's per guest: each
# one made on the host's disk was a good part of a restart's kernel time)
mkdir "$R/etc/stackling" "$R/etc/dropbear"
printf 'root:x:0:0:root:/root:/bin/sh\n%s:x:1000:1000:%s:/home/%s:/bin/sh\n' "$5" "$5" "$5" \
  > "$R/etc/passwd"
printf 'root:x:0:\n%s:x:1000:\n' "$5" > "$R/etc/group"
echo /bin/sh > "$R/etc/shells"
echo "127.0.0.1 localhost" > "$R/etc/hosts"
printf '%s' "$4" > "$R/etc/stackling/name"
printf '%s' "$5" > "$R/etc/stackling/user"
printf '%s' "$6" > "$R/etc/stackling/caps"
mount -t tmpfs -o mode=755,size=1m,nosuid guest "$R/dev"
for n in null zero urandom random tty; do touch "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done
mkdir "$R/dev/pts"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
exec chroot "$R" /usr/bin/setpriv --bounding-set="$3" --inh-caps=-all /bin/sh /sbin/guest-init
"""


@dataclass(frozen=True)
class GuestSpec:
    """What a guest is made of; a change of its token (a rebuild, a reboot) is a new boot.
    Its NICs are not in the token: one attached or detached later is hot-plugged."""

    server_id: str
    name: str
    user: str
    nics: tuple[tuple[str, str, int], ...]  # (port id, MAC, MTU) at boot, eth0 first
    boots: int = 0  # the server's boot count: a reboot or rebuild boots the guest again

    def token(self) -> str:
        return repr((self.name, self.user, self.boots))


class Guests:
    def __init__(self, run_dir: Path, template: Path, console_dir: Path) -> None:
        self.dir = run_dir / "guests"
        self.template = template
        self.console_dir = console_dir

    def _gdir(self, server_id: str) -> Path:
        return self.dir / server_id

    def pid(self, server_id: str) -> int | None:
        """The launcher's pid when that process is alive and still this guest's."""
        try:
            pid = int((self._gdir(server_id) / "pid").read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if str(self._gdir(server_id)).encode() in cmdline else None

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
        path = self._gdir(server_id) / "nics"
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

    def hotplug(self, server_id: str) -> bool:
        """Tell the running guest a NIC was plugged (its watcher takes it by DHCP)."""
        pid = self.pid(server_id)
        return pid is not None and hotplug.notify(_descendants(pid)) > 0

    def frozen(self, server_id: str) -> bool:
        return (self._gdir(server_id) / "paused").exists()

    def start(self, spec: GuestSpec, netns: str) -> None:
        gdir = self._gdir(spec.server_id)
        gdir.mkdir(parents=True, exist_ok=True)
        (gdir / "spec").write_text(spec.token())
        (gdir / "paused").unlink(missing_ok=True)
        self.console_dir.mkdir(parents=True, exist_ok=True)
        with open(self.console_dir / f"{spec.server_id}.log", "ab") as console:
            # forked by a thread inside the guest's network namespace (no nsenter), the
            # launcher a static busybox sh whose mkdir/touch/chmod/ln run in-process: at
            # 100 guests booting at once their forks and execs were the CPU's bottleneck
            proc = kernel.in_namespace(netns, lambda: subprocess.Popen(
                ["unshare", "--pid", "--fork", "--mount", "--uts", "--ipc", "--kill-child",
                 "--propagation", "private", "--",
                 BUSYBOX, "sh", "-c", LAUNCH, "guest", str(self.template), str(gdir),
                 BOOT_CAPS, spec.name, spec.user, RUN_CAPS],
                stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True))
        (gdir / "pid").write_text(str(proc.pid))
        # Reaped by a thread of ours (a zombie launcher would look alive to pid()).
        _reap_later(proc)

    def stop(self, server_id: str, forget: bool = True) -> None:
        """Power off: the launcher dies, and with it (kill-child) the PID namespace."""
        pid = self.pid(server_id)
        if pid is not None:
            _kill_tree(pid)
        gdir = self._gdir(server_id)
        if forget:
            shutil.rmtree(gdir, ignore_errors=True)
        else:
            (gdir / "pid").unlink(missing_ok=True)

    def stop_all(self) -> None:
        """Power every guest off at once (a clean stop, `dataplane down`): one look at the
        process table, every tree killed, then each waited for (one by one, each stop read
        the whole table again: 100 guests outlasted the patience of a stop)."""
        pids = {server_id: self.pid(server_id) for server_id in self.known()}
        alive = [pid for pid in pids.values() if pid is not None]
        table = _children()
        for pid in alive:
            _kill([pid, *_descendants(pid, table)])
        for pid in alive:
            _wait_gone(pid)
        for server_id in pids:
            shutil.rmtree(self._gdir(server_id), ignore_errors=True)

    def pause(self, server_id: str, paused: bool) -> None:
        """Paused is frozen: every process of the guest stopped (SIGSTOP), as a VM's vCPUs."""
        pid = self.pid(server_id)
        if pid is None:
            return
        for p in [pid, *_descendants(pid)]:
            try:
                os.kill(p, signal.SIGSTOP if paused else signal.SIGCONT)
            except ProcessLookupError:
                pass
        marker = self._gdir(server_id) / "paused"
        if paused:
            marker.touch()
        else:
            marker.unlink(missing_ok=True)

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


def _descendants(pid: int, children: dict[int, list[int]] | None = None) -> list[int]:
    children = _children() if children is None else children
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill_tree(pid: int) -> None:
    _kill([pid, *_descendants(pid)])
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


def _reap_later(proc: subprocess.Popen) -> None:
    import threading

    threading.Thread(target=proc.wait, name="guest-reaper", daemon=True).start()
