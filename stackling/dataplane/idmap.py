"""Idmapped mounts: a tree of the machine's shown to one guest with its ids shifted.

An image's root filesystem is prepared once (images/) with the image's own owners (root is
0). Each guest sees it through an idmapped mount (as Incus shifts an image for an
unprivileged container), so root's files are its root's, whose id on the machine is the
guest's range's first id; a guest's copy-on-write layer above it (disks.py) then holds
files owned by the guest's own ids. Hand-written over the mount API's syscalls because
util-linux 2.38 (this machine's) has no X-mount.idmap, and no Python library wraps them.
"""

from __future__ import annotations

import ctypes
import os
import platform

_libc = ctypes.CDLL(None, use_errno=True)

# x86-64 and arm64 share these numbers (the new mount API came after the tables merged)
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC = 1, os.O_CLOEXEC
AT_FDCWD, AT_EMPTY_PATH, AT_RECURSIVE = -100, 0x1000, 0x8000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
MOUNT_ATTR_IDMAP = 0x100000


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def supported() -> str | None:
    """Why idmapped mounts cannot be made here, or None."""
    if platform.machine() not in ("x86_64", "aarch64"):
        return f"idmapped mounts: syscall numbers unknown on {platform.machine()}"
    release = tuple(int(x) for x in platform.release().split(".")[:2] if x.isdigit())
    if release < (5, 19):  # overlayfs over idmapped layers
        return "idmapped layers under overlayfs need Linux 5.19 or newer"
    return None


def bind(source: str, target: str, userns: str, readonly: bool = True) -> None:
    """Mount `source` (recursively) on `target`, its ids mapped by the user namespace whose
    nsfs file is `userns` (read-only, nodev, unless `readonly` is False)."""
    tree = _check(_libc.syscall(SYS_OPEN_TREE, AT_FDCWD, source.encode(),
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE),
                  f"open_tree {source}")
    try:
        ns = os.open(userns, os.O_RDONLY | os.O_CLOEXEC)
        try:
            attr = _MountAttr(MOUNT_ATTR_IDMAP | MOUNT_ATTR_NODEV
                              | (MOUNT_ATTR_RDONLY if readonly else 0), 0, 0, ns)
            _check(_libc.syscall(SYS_MOUNT_SETATTR, tree, b"", AT_EMPTY_PATH | AT_RECURSIVE,
                                 ctypes.byref(attr), ctypes.sizeof(attr)),
                   f"mount_setattr idmap {source}")
        finally:
            os.close(ns)
        _check(_libc.syscall(SYS_MOVE_MOUNT, tree, b"", AT_FDCWD, target.encode(),
                             MOVE_MOUNT_F_EMPTY_PATH), f"move_mount {source} {target}")
    finally:
        os.close(tree)
