"""The guest boundary: a guest's processes hold no capability of the machine's.

Every guest runs in a user namespace of its own (as LXC's unprivileged containers): its ids
0-65535 are a range of the machine's that no other guest and no user of the machine has
(claimed per guest under /run/stackling/ids), so root in a guest is an unprivileged id on
the machine. Its network namespace is owned by that user namespace, so the guest configures
its own network stack as a VM does, while security groups, anti-spoofing and QoS live in
its host's namespace (firewall.py), which no process of the guest can reach. On top of the
user namespace:

- a seccomp filter (libseccomp through pyseccomp, exported to BPF once per cloud) refuses
  what no guest needs and what has been a way out of containers: module loading, kexec,
  bpf, perf_event_open, keyrings, open_by_handle_at, userfaultfd, swap, accounting,
  clock setting, the kernel log, raw I/O ports;
- a bounding set without the capabilities that mean the machine's hardware or kernel even
  inside a namespace (CAPS_DROPPED);
- a check at the start of the guest's init (rootfs.INIT) that its capabilities, seccomp
  mode and id map are what was meant; a guest that fails it exits with EXIT_BOUNDARY and
  its server goes to ERROR with a fault (reconciler.py).
"""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import threading
import time
from pathlib import Path

from stackling.dataplane import kernel

IDS_DIR = Path("/run/stackling/ids")
ID_RANGE = 65536  # ids a guest has, 0..65535 (nobody is 65534)
FIRST_SLOT, LAST_SLOT = 256, 65534  # slot k: machine ids k*65536.. (never a user's of the machine)
EXIT_BOUNDARY = 86  # the guest's init found its boundary was not what was meant

# Capabilities no guest gets even within its own user namespace (as LXC's default drops):
# they name the machine's kernel, clock, hardware, audit and security modules.
CAPS_DROPPED = ("sys_module", "sys_rawio", "sys_time", "mac_admin", "mac_override", "syslog",
                "wake_alarm", "block_suspend", "audit_control", "audit_read", "bpf", "perfmon")
CAP_NUMBERS = {"sys_module": 16, "sys_rawio": 17, "sys_time": 25, "mac_override": 32,
               "mac_admin": 33, "syslog": 34, "wake_alarm": 35, "block_suspend": 36,
               "audit_control": 30, "audit_read": 37, "perfmon": 38, "bpf": 39}

# Refused with EPERM, whatever the guest's capabilities in its namespace.
SYSCALLS_REFUSED = (
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "open_by_handle_at",
    "userfaultfd", "swapon", "swapoff", "acct", "syslog", "settimeofday", "clock_settime",
    "clock_adjtime", "iopl", "ioperm", "lookup_dcookie", "uselib", "quotactl",
    "quotactl_fd", "nfsservctl", "vm86", "vm86old", "create_module", "get_kernel_syms",
    "query_module", "_sysctl", "fanotify_init", "kcmp",
)
# Answered by the guest's mount supervisor (guest_mounts.py): its own volumes' filesystems
# mounted for it, anything else handed back to the kernel as before.
SYSCALLS_SUPERVISED = ("mount",)
# (personality stays: systemd's LockPersonality= asks for the current one, and its units
# fail to start without it; LXC's default policy allows it too)


def last_cap() -> int:
    return int(Path("/proc/sys/kernel/cap_last_cap").read_text())


def caps_mask() -> int:
    """The guest's bounding (and root's effective) set in its own namespace."""
    full = (1 << (last_cap() + 1)) - 1
    for name in CAPS_DROPPED:
        full &= ~(1 << CAP_NUMBERS[name])
    return full


def bounding_arg() -> str:
    """setpriv's --bounding-set for CAPS_DROPPED (only those this kernel knows)."""
    top = last_cap()
    return ",".join(f"-{n}" for n in CAPS_DROPPED if CAP_NUMBERS[n] <= top)


def seccomp_filter(path: Path) -> Path:
    """The filter as BPF, written once (the loader reads it at each boot)."""
    if path.exists():
        return path
    import pyseccomp

    f = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for arch in (pyseccomp.Arch.X86,) if pyseccomp.system_arch() == pyseccomp.Arch.X86_64 else ():
        f.add_arch(arch)  # 32-bit calls of an x86-64 machine are filtered the same
    for name in SYSCALLS_REFUSED:
        try:
            f.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            continue  # a call this architecture does not have
    for name in SYSCALLS_SUPERVISED:
        f.add_rule(pyseccomp.NOTIFY, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.{threading.get_ident()}")
    with open(tmp, "wb") as out:
        f.export_bpf(out)
    tmp.replace(path)
    return path


# Run as the first program of a guest's launch, as root of the machine: joins the guest's
# cgroups, installs the seccomp filter (no no_new_privs: a setuid sudo in an image works;
# root may install a filter without it), then execs the rest. Python because no tool of
# the machine's installs a BPF file without also setting no_new_privs.
LOADER = r"""
import ctypes, os, platform, sys
bpf, cgroups, console, owner, gdir, supervisor = sys.argv[1:7]
argv = sys.argv[7:]
for d in filter(None, cgroups.split(":")):
    with open(d + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
prog = open(bpf, "rb").read()
class Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
fprog = Filter(len(prog) // 8, prog)
if not supervisor:
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        sys.exit("stackling: seccomp filter refused: " + os.strerror(ctypes.get_errno()))
else:  # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER): its mount calls'
    # notifications go to the supervisor forked here (guest_mounts.py), which holds the fd
    listener = libc.syscall(317 if platform.machine() == "x86_64" else 277, 1, 8,
                            ctypes.byref(fprog))
    if listener < 0:
        sys.exit("stackling: seccomp filter refused: " + os.strerror(ctypes.get_errno()))
    if os.fork() == 0:
        try:
            exec(supervisor, {"listener": listener, "gdir": gdir, "libc": libc})
        finally:
            os._exit(1)  # (never the guest's launch: that is the parent's)
    os.close(listener)
if console:  # the guest's console: a pty whose output is the server's console log (as LXC's)
    import termios
    master, slave = os.openpty()
    os.chown(os.ttyname(slave), int(owner), int(owner))
    mode = termios.tcgetattr(slave)
    mode[1] &= ~termios.OPOST  # (the log as written: no CR before each newline)
    termios.tcsetattr(slave, termios.TCSANOW, mode)
    if os.fork() == 0:  # (in the guest's cgroups: it ends with the guest)
        os.setsid()
        os.dup2(master, 0)
        os.dup2(os.open(console, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640), 1)
        os.setgroups([])  # (what it holds open is all it needs: nobody, no capability)
        os.setgid(65534)
        os.setuid(65534)
        # (a static busybox, not a Python, copies: a guest's memory is its own; the log is
        # bounded by the reconciler: guests.Guests.trim_console)
        os.execv("/bin/busybox", ["cat", "-"])
    os.close(master)
    os.environ["STACKLING_CONSOLE"] = os.ttyname(slave)
    os.dup2(slave, 1)
    os.dup2(slave, 2)
os.execvp(argv[0], argv)
"""


# ------------------------------------------------------------------ id ranges
class IdRanges:
    """Machine-wide claims of id ranges, one file per slot (`<prefix> <server id>`), taken
    under an flock so two clouds on one machine never take the same."""

    def __init__(self, prefix: str, run_dir: Path) -> None:
        self.prefix = prefix
        self.guests_dir = run_dir / "guests"

    def _owner_alive(self, text: str) -> bool:
        prefix, _, server_id = text.partition(" ")
        return bool(server_id) and (Path("/run/stackling") / prefix / "guests" / server_id).is_dir()

    def claim(self, server_id: str) -> int:
        """The first machine id of the guest's range (the same one while it is claimed)."""
        IDS_DIR.mkdir(parents=True, exist_ok=True)
        me = f"{self.prefix} {server_id}"
        with open(IDS_DIR / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            mine = self.guests_dir / server_id / "ids"
            try:
                slot = int(mine.read_text())
                if (IDS_DIR / str(slot)).read_text() == me:
                    return slot * ID_RANGE
            except (OSError, ValueError):
                pass
            # the lowest slot nobody holds (one listing: 100 guests booting at once each
            # read every claim before, under the lock, and that was a restart's longest wait)
            taken = {int(n) for n in os.listdir(IDS_DIR) if n.isdigit()}
            slot = next((k for k in range(FIRST_SLOT, LAST_SLOT + 1) if k not in taken), None)
            if slot is None:  # all claimed: one whose guest is gone (its cloud was removed)
                slot = next((k for k in sorted(taken)
                             if not self._owner_alive(_read(IDS_DIR / str(k)))), None)
            if slot is not None:
                (IDS_DIR / str(slot)).write_text(me)
                mine.parent.mkdir(parents=True, exist_ok=True)
                mine.write_text(str(slot))
                return slot * ID_RANGE
        raise OSError(errno.ENOSPC, "no free id range for a guest")

    def release(self, server_id: str) -> None:
        me = f"{self.prefix} {server_id}"
        try:
            slot = int((self.guests_dir / server_id / "ids").read_text())
        except (OSError, ValueError):
            return
        claim = IDS_DIR / str(slot)
        with open(IDS_DIR / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if claim.read_text() == me:
                    claim.unlink()
            except OSError:
                pass

    def release_all(self) -> None:
        """Every claim of this cloud's (a clean stop)."""
        if not IDS_DIR.is_dir():
            return
        with open(IDS_DIR / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for claim in IDS_DIR.iterdir():
                if claim.name.isdigit():
                    try:
                        if claim.read_text().startswith(self.prefix + " "):
                            claim.unlink()
                    except OSError:
                        pass


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


# ------------------------------------------------------------------ namespaces
def make_namespaces(netns_name: str, userns_file: Path, base: int, parent: str | None) -> None:
    """A user namespace mapping 0-65535 to the machine's ids base.., and a network namespace
    it owns, named `netns_name` (under /run/netns, made from `parent`'s so its socket tables
    are small: kernel.CHILD_HASHES); the user namespace is kept by a bind mount on
    `userns_file`. Made by a child process: a threaded one cannot enter a new user
    namespace.

    Made as the guest's own root (`base`), not the machine's: a user namespace's owner is
    its maker, and the kernel charges what a namespace's processes hold (inotify instances,
    namespaces, ...) to its owner in the parent namespace against the machine's per-user
    limits. Owned by the machine's root, every guest's systemd shared root's 128 inotify
    instances (fs.inotify.max_user_instances): with ~20 guests booting, networkd and resolved
    failed "Too many open files" and eth0 stayed down. Owned by `base`, each guest has a
    user's limits of its own, as an LXC container its unprivileged user makes."""
    kernel.remove_namespace(netns_name)
    release_userns(userns_file)

    def spawn() -> subprocess.Popen:
        return subprocess.Popen(["unshare", "--user", "--net", "--", "/bin/busybox", "sh", "-c",
                                 "read _"], stdin=subprocess.PIPE, close_fds=True,
                                user=base, group=base, extra_groups=[])

    proc = kernel.in_namespace(parent, spawn) if parent else spawn()
    try:
        mine = os.readlink("/proc/self/ns/user")
        deadline = time.monotonic() + 30
        while os.readlink(f"/proc/{proc.pid}/ns/user") == mine:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise OSError(errno.ECHILD, "unshare --user --net did not start")
            time.sleep(0.001)
        Path(f"/proc/{proc.pid}/uid_map").write_text(f"0 {base} {ID_RANGE}\n")
        Path(f"/proc/{proc.pid}/gid_map").write_text(f"0 {base} {ID_RANGE}\n")
        from pyroute2 import netns

        netns.attach(netns_name, proc.pid)
        userns_file.parent.mkdir(parents=True, exist_ok=True)
        userns_file.touch()
        kernel.bind_mount(f"/proc/{proc.pid}/ns/user", str(userns_file))
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait()


def release_userns(userns_file: Path) -> None:
    kernel.unmount(str(userns_file))
    userns_file.unlink(missing_ok=True)
