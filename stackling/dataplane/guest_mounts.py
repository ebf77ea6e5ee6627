"""mount(2) of a guest's own volumes, done for it by the machine (issue 31).

The kernel refuses a block device's filesystem to a mount made inside a user namespace,
so `mount /dev/vdb /mnt` in a guest fails with EPERM, as it did in every unprivileged
container until Incus intercepted it (`security.syscalls.intercept.mount`). The same here:
the guest's seccomp filter (boundary.py) answers `mount` with SECCOMP_RET_USER_NOTIF, and
a supervisor, forked by the guest's launcher right after it installed that filter (the
listener comes from seccomp()'s SECCOMP_FILTER_FLAG_NEW_LISTENER), decides:

- it reads the call's source, target, type and options from /proc/<pid>/mem, then checks
  that the notification is still pending (SECCOMP_IOCTL_NOTIF_ID_VALID: the memory read
  was that task's, still inside its call), and uses only what it read;
- it mounts only when the source, resolved in the caller's root (openat2 RESOLVE_IN_ROOT,
  no magic links), is a block device node of one of THAT guest's attached volumes (the
  launcher's `disks` list in its run directory, which the reconciler keeps), the type is
  ext2/ext3/ext4/xfs, the flags are plain per-mount flags and the options are from a short
  list (nothing that names another device or path, such as ext4's journal_path);
- the filesystem is made by fsopen/fsconfig/fsmount from the volume's loop device, never
  attached in the machine's mount table (the supervisor has a private mount namespace
  of its own, whose /dev holds the node it names the source by, the guest's name for
  it: the guest's mount table shows `/dev/vdb`): a detached mount, nosuid and nodev always,
  read-only for a read-only attachment, idmapped by the guest's user namespace (its files'
  owners as the guest's ids), then moved onto the target in the caller's own mount
  namespace (setns, move_mount), and the call answered 0, or the errno the kernel gave;
- anything else (another type, a bind, a remount, a tmpfs of systemd's, a source that is
  not its volume) is handed back with SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel
  decides as before, in the guest's user namespace, so what was refused stays refused.
  That flag is safe here because it grants nothing: only the supervisor's own mounts, from
  what it read and checked, are made with the machine's privilege.

umount(2) is not intercepted: the mount is in the guest's mount namespace, which its
user namespace owns and it did not inherit locked, so the guest's root unmounts it
itself.

Why a process per guest, and this one: the listener dies with its last holder, and then
every mount(2) of the guest fails with ENOSYS; held by the serving process it would die
with a kill -9 of it. The supervisor is forked from the launcher's Python (no exec: its
pages are the launcher's, copy-on-write), so it is in the guest's cgroups (killed with the
guest, its memory the guest's) and its command line names the guest's run directory;
PR_SET_PDEATHSIG ends it with the launcher; its OOM score is -1000 where the machine's root
may set it (so a guest filling its memory cannot kill it and break its own mounts; this
machine's root lacks CAP_SYS_RESOURCE and it stays 0). It runs as the machine's root in the
machine's mount and PID namespaces (it must: it acts for the guest there), single-
threaded (setns of a mount namespace needs that).
"""

from __future__ import annotations

# The supervisor, run by boundary.LOADER in its forked child with `listener` (the
# notification fd), `gdir` (the guest's run directory) and `libc` (ctypes) defined.
SUPERVISOR = r"""
import ctypes, errno, fcntl, os, platform, stat, struct
x86 = platform.machine() == "x86_64"
SYS_MOUNT, ARCH = (165, 0xC000003E) if x86 else (40, 0xC00000B7)
RECV, SEND, VALID = 0xC0502100, 0xC0182101, 0x40082102
CONTINUE = 1
SYS_OPENAT2, SYS_FSOPEN, SYS_FSCONFIG, SYS_FSMOUNT = 437, 430, 431, 432
SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 429, 442
RESOLVE = 0x10 | 0x02  # RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
O_PATH = 0o10000000
# the guest's type -> the driver (ext4's mounts ext2 and ext3 too, and allows idmapping)
FSTYPES = {"ext2": "ext4", "ext3": "ext4", "ext4": "ext4", "xfs": "xfs"}
# per-mount flags a guest may ask for (and MS_SILENT); the rest is the kernel's to refuse
FLAGS = {1: 0x1, 8: 0x8, 1024: 0x10, 2048: 0x80, 1 << 24: 0x20}  # MS_* -> MOUNT_ATTR_*
PLAIN = 1 | 2 | 4 | 8 | 16 | 128 | 1024 | 2048 | 32768 | (1 << 21) | (1 << 24) | (1 << 25)
OPTION_FLAGS = {"barrier", "nobarrier", "user_xattr", "nouser_xattr", "acl", "noacl",
                "discard", "nodiscard", "delalloc", "nodelalloc", "noload", "nouuid",
                "inode64", "norecovery", "rw", "ro", "defaults"}
OPTION_VALUES = {"errors", "data", "commit", "barrier", "logbufs", "logbsize"}

libc.syscall.restype = ctypes.c_long

class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

class Attr(ctypes.Structure):
    _fields_ = [("set", ctypes.c_uint64), ("clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns", ctypes.c_uint64)]

def call(nr, *args):
    r = libc.syscall(nr, *args)
    if r < 0:
        raise OSError(ctypes.get_errno(), "")
    return r

def cstr(mem, addr, limit=4096):
    out = b""
    while len(out) < limit:
        n = min(4096 - (addr + len(out)) % 4096, limit - len(out))
        chunk = os.pread(mem, n, addr + len(out))
        if b"\0" in chunk:
            return (out + chunk.split(b"\0", 1)[0]).decode()
        if not chunk:
            break
        out += chunk
    raise ValueError("string too long")

def options(data, ro):
    out = []
    for item in filter(None, data.split(",")):
        key, eq, value = item.partition("=")
        if eq and key in OPTION_VALUES and value and all(c.isalnum() or c in "-_." for c in value):
            out.append((key, value))
        elif not eq and item in OPTION_FLAGS:
            if item == "ro":
                ro = True
            elif item not in ("rw", "defaults"):
                out.append((item, None))
        else:
            return None, ro
    return out, ro

def disks():
    out = {}
    with open(gdir + "/disks") as f:
        for line in f:
            name, major, minor, mode = line.split()[:4]
            out[(int(major), int(minor))] = (name, mode == "440")
    return out

def openat2(dirfd, path, flags):
    how = How(flags | os.O_CLOEXEC, 0, RESOLVE)
    return call(SYS_OPENAT2, dirfd, path.encode(), ctypes.byref(how), ctypes.sizeof(how))

def handle(nid, pid, args):
    fds = []
    try:
        mem = os.open("/proc/%d/mem" % pid, os.O_RDONLY | os.O_CLOEXEC); fds.append(mem)
        root = os.open("/proc/%d/root" % pid, O_PATH | os.O_CLOEXEC); fds.append(root)
        theirs = os.open("/proc/%d/ns/mnt" % pid, os.O_RDONLY | os.O_CLOEXEC); fds.append(theirs)
        if not (args[0] and args[1] and args[2]):
            return None
        source, target, fstype = cstr(mem, args[0]), cstr(mem, args[1]), cstr(mem, args[2])
        data = cstr(mem, args[4]) if args[4] else ""
        # the fds above and what was read are that task's: its call is still waiting
        fcntl.ioctl(listener, VALID, struct.pack("=Q", nid))
        flags = args[3] & 0xFFFF if args[3] & 0xFFFF0000 == 0xC0ED0000 else args[3]
        if fstype not in FSTYPES or flags & ~PLAIN or not source.startswith("/") \
                or not target.startswith("/"):
            return None
        opts, ro = options(data, bool(flags & 1))
        if opts is None:
            return None
        dev = openat2(root, source, O_PATH); fds.append(dev)
        st = os.fstat(dev)
        mine = disks()
        rdev = (os.major(st.st_rdev), os.minor(st.st_rdev))
        if not stat.S_ISBLK(st.st_mode) or rdev not in mine:
            return None
        name, readonly = mine[rdev]
        ro = ro or readonly
        try:
            where = openat2(root, target, O_PATH | os.O_DIRECTORY); fds.append(where)
        except OSError as e:
            return e.errno
        try:
            # the source by the guest's name for it, as its mount table shows it: a node
            # of the supervisor's own /dev (a tmpfs of its private mount namespace)
            node = "/dev/" + name
            if os.path.lexists(node):
                os.unlink(node)
            os.mknod(node, stat.S_IFBLK | 0o600, st.st_rdev)
            try:
                fs = call(SYS_FSOPEN, FSTYPES[fstype].encode(), 1); fds.append(fs)
                call(SYS_FSCONFIG, fs, 1, b"source", node.encode(), 0)
                for key, value in opts + ([("ro", None)] if ro else []):
                    if value is None:
                        call(SYS_FSCONFIG, fs, 0, key.encode(), None, 0)
                    else:
                        call(SYS_FSCONFIG, fs, 1, key.encode(), value.encode(), 0)
                call(SYS_FSCONFIG, fs, 6, None, None, 0)  # FSCONFIG_CMD_CREATE: opens it
            finally:
                os.unlink(node)
            attrs = 0x2 | 0x4 | (0x1 if ro else 0)  # nosuid, nodev, read-only
            for flag, attr in FLAGS.items():
                if flags & flag:
                    attrs |= attr
            mnt = call(SYS_FSMOUNT, fs, 1, attrs); fds.append(mnt)
            userns = os.open(gdir + "/userns", os.O_RDONLY | os.O_CLOEXEC); fds.append(userns)
            attr = Attr(0x100000, 0, 0, userns)  # MOUNT_ATTR_IDMAP: the guest's owners
            call(SYS_MOUNT_SETATTR, mnt, b"", 0x1000, ctypes.byref(attr), ctypes.sizeof(attr))
            own = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC); fds.append(own)
            if libc.setns(theirs, 0x20000) != 0:
                return ctypes.get_errno()
            try:
                call(SYS_MOVE_MOUNT, mnt, b"", where, b"", 0x4 | 0x40)  # F_ and T_EMPTY_PATH
            finally:
                if libc.setns(own, 0x20000) != 0:
                    os._exit(1)  # (never acts for anyone from the wrong namespace)
        except OSError as e:
            return e.errno or errno.EINVAL
        return 0
    finally:
        for fd in fds:
            os.close(fd)

def serve():
    while True:
        buf = bytearray(80)
        try:
            fcntl.ioctl(listener, RECV, buf, True)
        except OSError as e:
            if e.errno in (errno.EINTR, errno.ENOENT):
                continue
            return
        nid, pid, _, nr, arch = struct.unpack_from("=QIIiI", buf)
        args = struct.unpack_from("=6Q", buf, 32)
        answer = None
        if nr == SYS_MOUNT and arch == ARCH:
            try:
                answer = handle(nid, pid, args)
            except (OSError, ValueError):
                answer = None
        flags, error = (CONTINUE, 0) if answer is None else (0, -answer)
        try:
            fcntl.ioctl(listener, SEND, struct.pack("=QqiI", nid, 0, error, flags))
        except OSError:
            pass  # (the caller died meanwhile)

null = os.open("/dev/null", os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGKILL when its launcher goes
libc.prctl(15, b"guest-mounts", 0, 0, 0)  # PR_SET_NAME
try:  # (where the machine lets its root lower it: not without CAP_SYS_RESOURCE)
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("-1000")
except OSError:
    pass
# A private mount namespace with a /dev of its own (the mount API only: a mount(2) of its
# own would be a notification to itself): nothing it does shows in the machine's
if libc.unshare(0x20000) != 0:  # CLONE_NEWNS
    raise OSError(ctypes.get_errno(), "unshare")
call(SYS_MOUNT_SETATTR, -100, b"/", 0x8000, ctypes.byref(Attr(0, 0, 1 << 18, 0)),
     ctypes.sizeof(Attr))  # MS_PRIVATE, recursively
tmp = call(SYS_FSOPEN, b"tmpfs", 1)
call(SYS_FSCONFIG, tmp, 1, b"mode", b"0700", 0)
call(SYS_FSCONFIG, tmp, 6, None, None, 0)
dev = call(SYS_FSMOUNT, tmp, 1, 0x2 | 0x8)  # nosuid, noexec
call(SYS_MOVE_MOUNT, dev, b"", -100, b"/dev", 0x4)
os.close(dev)
os.close(tmp)
serve()
"""
