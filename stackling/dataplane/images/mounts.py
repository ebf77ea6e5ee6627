"""Loop devices and mounts of image files, found again by where they are: a mount by its
mount point and a loop device by its backing file, both under the images' cache dir (so a
restart or a crash leaves nothing that the next cleanup cannot find)."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import subprocess
from pathlib import Path

from stackling.dataplane.images.errors import Refused

MNT_DETACH = 2
LOOP_CLR_FD = 0x4C01
# Read-only, no devices, no setuid from the machine's side; a dirty journal is never
# replayed (that would write to the image).
MOUNT_OPTIONS = {
    "ext4": "ro,nodev,nosuid,noload",
    "xfs": "ro,nodev,nosuid,norecovery,nouuid",
    "btrfs": "ro,nodev,nosuid,rescue=nologreplay",
    "squashfs": "ro,nodev,nosuid",
    "erofs": "ro,nodev,nosuid",
}
_LIBC = ctypes.CDLL(None, use_errno=True)


def attach(path: Path, offset: int, size: int) -> str:
    """A read-only loop device over `size` bytes of `path` from `offset`."""
    result = subprocess.run(
        ["losetup", "--read-only", "--offset", str(offset), "--sizelimit", str(size),
         "--find", "--show", str(path)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise Refused(f"cannot be attached: {result.stderr.strip() or 'losetup failed'}")
    return result.stdout.strip()


def detach(device: str) -> None:
    """Detach a loop device (the kernel defers it while something still holds it)."""
    try:
        fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        fcntl.ioctl(fd, LOOP_CLR_FD)
    except OSError as e:
        if e.errno != errno.ENXIO:  # not attached (any more)
            raise
    finally:
        os.close(fd)


def mount(device: str, target: Path, fstype: str) -> None:
    result = subprocess.run(["mount", "-t", fstype, "-o", MOUNT_OPTIONS[fstype], device,
                             str(target)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        why = result.stderr.strip().removeprefix("mount: ").replace(f"{target}: ", "")
        raise Refused(f"has no root filesystem: its {fstype} does not mount ({why})")


def unmount(target: Path, *, lazy: bool = False) -> None:
    """Unmount `target` (OSError EBUSY while a guest's overlay still holds it, unless
    `lazy`: then it goes when the last user does)."""
    if _LIBC.umount2(os.fsencode(target), MNT_DETACH if lazy else 0) != 0:
        err = ctypes.get_errno()
        if err != errno.EINVAL:  # not a mount point (any more)
            raise OSError(err, os.strerror(err), str(target))


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mounts_under(root: Path) -> list[Path]:
    """Mount points at or below `root` in this process's mount table, deepest first."""
    base = str(root.resolve())
    found = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = _unescape(line.split(" ", 5)[4])
            if point == base or point.startswith(base + "/"):
                found.append(Path(point))
    return sorted(set(found), key=lambda p: -len(p.parts))


def is_mount_point(path: Path) -> bool:
    return Path(str(path.resolve())) in mounts_under(path)


def loops_under(root: Path) -> list[str]:
    """Loop devices whose backing file is at or below `root` (deleted ones too)."""
    base = str(root.resolve())
    found = []
    for entry in Path("/sys/block").glob("loop*"):
        try:
            backing = (entry / "loop" / "backing_file").read_text().rstrip("\n")
        except OSError:
            continue  # not attached
        backing = backing.removesuffix(" (deleted)")
        if backing == base or backing.startswith(base + "/"):
            found.append(f"/dev/{entry.name}")
    return sorted(found)
