"""A guest's root disk: its image's root filesystem, read-only, under a copy-on-write layer
of the server's own (as Incus and Docker layer an instance over its image).

The layer, `<data dir>/dataplane/disks/<server id>/`, holds the server's own changes with
the image's canonical ids (root is 0), so it survives a stop, reboot, restart of the cloud
or a move to another host of this machine whatever id range the guest has then; rebuild
resets it, delete removes it. At each boot both the image's tree and the layer are shown to
the guest through idmapped mounts of its user namespace (idmap.py) and overlaid at
`<guest dir>/root`, which the launcher pivots into.

The flavor's disk bounds it (issue 30): the layer's `upper/` and `work/` live on an ext4
filesystem of the flavor's size in a sparse file, `disk.ext4` (made on first use, grown on a
resize to a larger flavor), loop-mounted at `<guest dir>/fs` (the loop device autoclears:
the last unmount frees it), so a write past it is ENOSPC in the guest and the file on the
machine never holds more than the flavor's disk. A layer made before this (plain `upper/`
and `work/` directories) is moved into its filesystem at its next boot; one that does not
fit there keeps booting unbounded (logged).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from stackling.dataplane import idmap, kernel
from stackling.dataplane.images import mounts

LOG = logging.getLogger(__name__)
_libc = ctypes.CDLL(None, use_errno=True)
# what a system container's launcher mounts on (an image may lack them: a Docker image)
MOUNT_POINTS = ("run", "dev", "proc", "sys", "tmp")
GiB = 1 << 30
FILE = "disk.ext4"  # the layer's filesystem, the flavor's disk in size (sparse)
# mkfs: inode tables and journal left for the kernel (no zeroing of a sparse file); mounted
# with noinit_itable, so nothing zeroes them later either (ext4 knows them unused). No
# blocks reserved for root: they are CAP_SYS_RESOURCE's of the machine's user namespace,
# which no guest ever holds
MKFS = ("mkfs.ext4", "-q", "-F", "-m", "0", "-E",
        "lazy_itable_init=1,lazy_journal_init=1,nodiscard")
# nobarrier: a guest's flush reaches the machine's page cache, not its disk (qemu's
# cache=unsafe): a crash of the machine may lose a guest's last writes, a guest's own crash
# or kill loses nothing. With barriers every fsync in a guest, and each unmount, was an
# fsync of the whole file on the machine: seconds at a clean stop of a loaded machine
MOUNT_OPTIONS = b"noinit_itable,nobarrier"
MS_NOSUID, MS_NODEV = 2, 4
LOOP_CTL_GET_FREE, LOOP_CONFIGURE = 0x4C82, 0x4C0A
LO_FLAGS_AUTOCLEAR = 4


class _LoopInfo64(ctypes.Structure):
    _fields_ = [("lo_device", ctypes.c_uint64), ("lo_inode", ctypes.c_uint64),
                ("lo_rdevice", ctypes.c_uint64), ("lo_offset", ctypes.c_uint64),
                ("lo_sizelimit", ctypes.c_uint64), ("lo_number", ctypes.c_uint32),
                ("lo_encrypt_type", ctypes.c_uint32), ("lo_encrypt_key_size", ctypes.c_uint32),
                ("lo_flags", ctypes.c_uint32), ("lo_file_name", ctypes.c_uint8 * 64),
                ("lo_crypt_name", ctypes.c_uint8 * 64), ("lo_encrypt_key", ctypes.c_uint8 * 32),
                ("lo_init", ctypes.c_uint64 * 2)]


class _LoopConfig(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_uint32), ("block_size", ctypes.c_uint32),
                ("info", _LoopInfo64), ("reserved", ctypes.c_uint64 * 8)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


class Disks:
    def __init__(self, base: Path) -> None:
        self.base = base

    def layer(self, server_id: str) -> Path:
        return self.base / server_id

    def mount(self, server_id: str, image_root: Path, generation: str, gdir: Path,
              userns: Path, base_id: int, seed: dict[str, bytes] | None = None,
              size_gb: int = 0) -> Path:
        """The guest's root at `<gdir>/root` (mounted anew: whatever was there is let go).
        A new `generation` (a rebuild: another image, or the same one afresh) starts the
        layer empty. `seed`: files (path in the guest -> content) written into the layer
        first, root's, as a config drive's are there at boot. `size_gb`: the flavor's disk
        (0: unbounded, the layer plain directories)."""
        self.unmount(gdir)
        layer = self.layer(server_id)
        layer.mkdir(parents=True, exist_ok=True)
        marker = layer / "generation"
        if marker.exists() and marker.read_text() != generation:
            shutil.rmtree(layer / "upper", ignore_errors=True)
            shutil.rmtree(layer / "work", ignore_errors=True)
            (layer / FILE).unlink(missing_ok=True)
            (layer / "unbounded").unlink(missing_ok=True)
        top = self._filesystem(server_id, gdir / "fs", size_gb) if size_gb > 0 else layer
        for d in ("upper", "work"):
            (top / d).mkdir(parents=True, exist_ok=True)
        for d in MOUNT_POINTS:
            if not (image_root / d).is_dir() and not (top / "upper" / d).is_dir():
                (top / "upper" / d).mkdir(mode=0o755)
        marker.write_text(generation)
        for path, content in (seed or {}).items():
            target = _inside(top / "upper", path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            target.chmod(0o600)
        lower, disk, root = gdir / "lower", gdir / "disk", gdir / "root"
        for d in (lower, disk, root):
            d.mkdir(parents=True, exist_ok=True)
        idmap.bind(str(image_root), str(lower), str(userns))
        idmap.bind(str(top), str(disk), str(userns), readonly=False)
        # (relative to the guest's directory: a guest's mount table shows its options, and
        # no path of the machine's may show there)
        _mount_overlay("lowerdir=lower,upperdir=disk/upper,workdir=disk/work", str(gdir),
                       "root", base_id)
        return root

    def _filesystem(self, server_id: str, fs: Path, size_gb: int) -> Path:
        """The layer's filesystem mounted at `fs`, made (or grown) to `size_gb` GiB first;
        the layer itself when a layer of before does not fit in it (or no mkfs.ext4)."""
        layer, size = self.layer(server_id), size_gb * GiB
        image = layer / FILE
        fs.mkdir(parents=True, exist_ok=True)
        if not image.exists():
            if not shutil.which(MKFS[0]):
                LOG.warning("dataplane: no %s: server %s's root disk is unbounded", MKFS[0],
                            server_id)
                return layer
            if (layer / "upper").is_dir():
                tried = layer / "unbounded"  # (the size it did not fit: tried again larger)
                if tried.exists() and int(tried.read_text() or 0) >= size:
                    return layer
                return self._migrate(server_id, fs, size)
            _make(image, size)
        # the guest's last boot let go of it first: its mount namespace, which holds the
        # filesystem, goes with its last process (then the loop device clears); never two
        # mounts of one ext4 at once
        _wait_detached(image)
        if image.stat().st_size < size:  # (a resize to a smaller flavor keeps it: no shrink)
            _grow(image, size, server_id)
        _attach_mount(image, fs)
        return fs

    def _migrate(self, server_id: str, fs: Path, size: int) -> Path:
        """A layer of before (plain directories) copied into a new filesystem once; kept as
        it is (unbounded) when it does not fit."""
        layer = self.layer(server_id)
        new = layer / (FILE + ".new")
        _make(new, size)
        _attach_mount(new, fs)
        copied = subprocess.run(["cp", "-a", "--sparse=always", str(layer / "upper"),
                                 str(fs / "upper")], capture_output=True, text=True,
                                check=False)
        _unmount_now(fs)
        if copied.returncode != 0:
            new.unlink(missing_ok=True)
            (layer / "unbounded").write_text(str(size))
            LOG.warning("dataplane: server %s's root disk does not fit its flavor's disk (%s): "
                        "it boots unbounded", server_id, copied.stderr.strip()[:200])
            return layer
        new.rename(layer / FILE)
        (layer / "unbounded").unlink(missing_ok=True)
        shutil.rmtree(layer / "upper", ignore_errors=True)
        shutil.rmtree(layer / "work", ignore_errors=True)
        _wait_detached(layer / FILE)  # (the copy's loop device, renamed with its file)
        _attach_mount(layer / FILE, fs)
        return fs

    def unmount(self, gdir: Path) -> None:
        for d in ("root", "disk", "lower"):
            kernel.unmount(str(gdir / d))
        _unmount_now(gdir / "fs")

    @contextlib.contextmanager
    def upper(self, server_id: str, gdir: Path, scratch: Path) -> Iterator[Path]:
        """The layer's `upper/` to read (a snapshot's capture): on its filesystem, which a
        running guest's boot mounted at `<gdir>/fs`, or which is mounted at `scratch` for
        the time of the read when the guest is off (the server's task state keeps it off
        meanwhile); the plain directory of a layer without one."""
        image = self.layer(server_id) / FILE
        if not image.exists():
            yield self.layer(server_id) / "upper"
        elif os.path.ismount(gdir / "fs"):
            yield gdir / "fs" / "upper"
        else:
            _wait_detached(image)
            scratch.mkdir(parents=True, exist_ok=True)
            _attach_mount(image, scratch)
            try:
                yield scratch / "upper"
            finally:
                _unmount_now(scratch)

    def delete(self, server_id: str) -> None:
        shutil.rmtree(self.layer(server_id), ignore_errors=True)

    def known(self) -> list[str]:
        return [p.name for p in self.base.iterdir()] if self.base.is_dir() else []

    def loops(self) -> list[str]:
        """Loop devices whose backing file is a layer's (deleted ones too)."""
        if not self.base.exists():
            return []
        base = str(self.base.resolve()) + "/"
        return sorted(device for device, backing in _loops() if backing.startswith(base))

    def wait_released(self, timeout: float = 5) -> None:
        """Until every layer's loop device has cleared itself (its filesystem's last user,
        a guest's mount namespace, goes when its last process has); then any left is
        detached (the kernel defers that while something still holds it)."""
        deadline = time.monotonic() + timeout
        while self.loops() and time.monotonic() < deadline:
            time.sleep(0.02)
        for device in self.loops():
            try:
                mounts.detach(device)
            except OSError as e:
                if e.errno != errno.EBUSY:  # (busy: the kernel detaches it once let go)
                    raise


def _loops() -> list[tuple[str, str]]:
    """(device, backing file) of every attached loop device."""
    found = []
    for entry in Path("/sys/block").glob("loop*"):
        try:
            backing = (entry / "loop" / "backing_file").read_text().rstrip("\n")
        except OSError:
            continue  # not attached
        found.append((f"/dev/{entry.name}", backing))
    return found


def _wait_detached(path: Path, timeout: float = 10) -> None:
    """Until no loop device is backed by `path` (OSError EBUSY after `timeout`: the boot is
    retried by the next pass)."""
    name = str(path.resolve())
    deadline = time.monotonic() + timeout
    while any(backing == name for _, backing in _loops()):
        if time.monotonic() > deadline:
            raise OSError(errno.EBUSY, f"{path.name} still attached from the guest's last boot")
        time.sleep(0.02)


def _make(path: Path, size: int) -> None:
    """A sparse file of `size` bytes holding an empty ext4."""
    path.unlink(missing_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(size)
    result = subprocess.run([*MKFS, str(path)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        path.unlink(missing_ok=True)
        raise OSError(errno.EIO, f"mkfs.ext4 {path.name}: {result.stderr.strip()}")


def _grow(path: Path, size: int, server_id: str) -> None:
    """The file and its filesystem grown to `size` bytes, unmounted (online growth asks for
    CAP_SYS_RESOURCE, which this machine's root may lack): checked first, as resize2fs asks.
    A filesystem that does not grow stays as it was (the file's tail is never used)."""
    os.truncate(path, size)
    for command in (["e2fsck", "-f", "-p", str(path)], ["resize2fs", str(path)]):
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode not in (0, 1):  # (e2fsck: 1 is "errors corrected")
            LOG.warning("dataplane: server %s's root disk not grown to %d GiB: %s", server_id,
                        size // GiB, (result.stderr or result.stdout).strip()[-300:])
            return


def _attach_mount(path: Path, target: Path) -> str:
    """`path` on a new autoclearing loop device, mounted (nodev, nosuid) at `target`; its
    device. (The ioctls, not losetup and mount: a boot forks enough as it is.)"""
    file_fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        control = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
        try:
            for _ in range(64):  # (another attach may take the free device first: EBUSY)
                n = fcntl.ioctl(control, LOOP_CTL_GET_FREE)
                device = f"/dev/loop{n}"
                try:
                    loop_fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
                except FileNotFoundError:
                    continue
                config = _LoopConfig(fd=file_fd)
                config.info.lo_flags = LO_FLAGS_AUTOCLEAR
                name = str(path).encode()[:63]
                ctypes.memmove(config.info.lo_file_name, name, len(name))
                try:
                    fcntl.ioctl(loop_fd, LOOP_CONFIGURE, config)
                except OSError as e:
                    os.close(loop_fd)
                    if e.errno == errno.EBUSY:
                        continue
                    raise
                break
            else:
                raise OSError(errno.EBUSY, f"no free loop device for {path.name}")
        finally:
            os.close(control)
    finally:
        os.close(file_fd)
    try:  # (closed after the mount, which holds the device: autoclear then waits for it)
        if _libc.mount(device.encode(), os.fsencode(target), b"ext4", MS_NOSUID | MS_NODEV,
                       MOUNT_OPTIONS) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mount {path.name}: {os.strerror(err)}")
    finally:
        os.close(loop_fd)
    return device


def _unmount_now(target: Path) -> None:
    """Unmounted at once when nothing holds it (its loop device then clears), else lazily."""
    if _libc.umount2(os.fsencode(target), 0) != 0:
        err = ctypes.get_errno()
        if err == errno.EBUSY:
            kernel.unmount(str(target))
        elif err not in (errno.EINVAL, errno.ENOENT):
            raise OSError(err, f"umount {target}: {os.strerror(err)}")


def _inside(root: Path, path: str) -> Path:
    """`path` under `root`, never through a link a guest made (its layer is its own)."""
    target = root
    for part in Path(path.lstrip("/")).parts:
        if part in ("", ".", ".."):
            raise ValueError(f"bad seed path {path!r}")
        target = target / part
        if target.is_symlink():
            target.unlink()
    return target


def _mount_overlay(options: str, cwd: str, target: str, base_id: int) -> None:
    """overlayfs creates its work files and copies up as its mounter: mounted with the
    guest root's id as the file-system id (and the machine root's capabilities kept), what
    it writes through the idmapped layer is root's of the image, never unmapped (EOVERFLOW).
    In a child process: the file-system id is per thread, and must not stick to ours."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # (only ctypes calls until _exit: safe after a fork of a threaded process)
        try:
            os.close(read)
            os.chdir(cwd)
            _libc.setfsuid(base_id)
            _libc.setfsgid(base_id)
            header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
            _libc.capget(ctypes.byref(header), data)
            for half in data:  # (a non-zero fsuid drops the file capabilities: raised again)
                half.effective = half.permitted
            _libc.capset(ctypes.byref(header), data)
            err = 0
            if _libc.mount(b"stackling-disk", target.encode(), b"overlay", 0,
                           options.encode()) != 0:
                err = ctypes.get_errno()
            os.write(write, str(err).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        answer = os.read(read, 16)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    err = int(answer or b"-1")
    if err:
        raise OSError(err if err > 0 else 0, f"mount overlay {target}: "
                      f"{os.strerror(err) if err > 0 else 'the mounting process died'}")
