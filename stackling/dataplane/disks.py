"""A guest's root disk: its image's root filesystem, read-only, under a copy-on-write layer
of the server's own (as Incus and Docker layer an instance over its image).

The layer, `<data dir>/dataplane/disks/<server id>/{upper,work}`, holds the server's own
changes with the image's canonical ids (root is 0), so it survives a stop, reboot, restart
of the cloud or a move to another host of this machine whatever id range the guest has
then; rebuild resets it, delete removes it. At each boot both the image's tree and the
layer are shown to the guest through idmapped mounts of its user namespace (idmap.py) and
overlaid at `<guest dir>/root`, which the launcher pivots into.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path

from stackling.dataplane import idmap, kernel

_libc = ctypes.CDLL(None, use_errno=True)
# what a system container's launcher mounts on (an image may lack them: a Docker image)
MOUNT_POINTS = ("run", "dev", "proc", "sys", "tmp")


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
              userns: Path, base_id: int, seed: dict[str, bytes] | None = None) -> Path:
        """The guest's root at `<gdir>/root` (mounted anew: whatever was there is let go).
        A new `generation` (a rebuild: another image, or the same one afresh) starts the
        layer empty. `seed`: files (path in the guest -> content) written into the layer
        first, root's, as a config drive's are there at boot."""
        self.unmount(gdir)
        layer = self.layer(server_id)
        marker = layer / "generation"
        if marker.exists() and marker.read_text() != generation:
            shutil.rmtree(layer / "upper", ignore_errors=True)
            shutil.rmtree(layer / "work", ignore_errors=True)
        for d in ("upper", "work"):
            (layer / d).mkdir(parents=True, exist_ok=True)
        for d in MOUNT_POINTS:
            if not (image_root / d).is_dir() and not (layer / "upper" / d).is_dir():
                (layer / "upper" / d).mkdir(mode=0o755)
        marker.write_text(generation)
        for path, content in (seed or {}).items():
            target = _inside(layer / "upper", path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            target.chmod(0o600)
        lower, disk, root = gdir / "lower", gdir / "disk", gdir / "root"
        for d in (lower, disk, root):
            d.mkdir(parents=True, exist_ok=True)
        idmap.bind(str(image_root), str(lower), str(userns))
        idmap.bind(str(layer), str(disk), str(userns), readonly=False)
        # (relative to the guest's directory: a guest's mount table shows its options, and
        # no path of the machine's may show there)
        _mount_overlay("lowerdir=lower,upperdir=disk/upper,workdir=disk/work", str(gdir),
                       "root", base_id)
        return root

    def unmount(self, gdir: Path) -> None:
        for d in ("root", "disk", "lower"):
            kernel.unmount(str(gdir / d))

    def delete(self, server_id: str) -> None:
        shutil.rmtree(self.layer(server_id), ignore_errors=True)

    def known(self) -> list[str]:
        return [p.name for p in self.base.iterdir()] if self.base.is_dir() else []


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
