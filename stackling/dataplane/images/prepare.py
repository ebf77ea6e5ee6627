"""An image's bytes made a read-only root filesystem, once per image, under the cache dir:

    <cache_dir>/.locks/<image id>.lock    flock: one preparer per image over all processes
    <cache_dir>/<image id>/disk.raw       a qcow2 converted (sparse), or the raw data linked
    <cache_dir>/<image id>/root/          the root filesystem (a read-only mount, or a tree)
    <cache_dir>/<image id>/prepared.json  written last: the image is prepared

A disk's root is mounted from a read-only loop device at its partition's offset; a
container image's layers are applied into the tree. A second `prepare` of the image finds
prepared.json and, for a mount, mounts it again if it went (a restart after
`cleanup_all(keep_files=True)`). The files keep the image's own owners and modes: mapping
ids is the guest's business (an idmapped mount over `root`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from stackling.dataplane.images import layers, mounts, partitions, qcow2
from stackling.dataplane.images.errors import ImageBusy, ImageError, Refused
from stackling.dataplane.images.layers import Limits

DISK_FORMATS = ("raw", "qcow2")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# How long a stop waits for lazily detached loop devices to be released (seconds).
LOOP_RELEASE_WAIT = 10.0


@dataclass(frozen=True)
class Prepared:
    image_id: str
    root: Path  # the image's root filesystem, read-only
    kind: str  # "disk" (a partition of a whole disk), "filesystem" (bare), "layers"
    where: str  # for a reader: "partition 1 of its GPT", "3 layers of a docker archive"
    fstype: str | None = None  # what is mounted at root (None: a tree of layers)
    device: str | None = None  # the loop device attached
    offset: int = 0  # of the filesystem in disk.raw
    size: int = 0


def prepare(image_id: str, image_file: Path, disk_format: str | None,
            container_format: str | None, cache_dir: Path, prefix: str,
            limits: Limits | None = None) -> Prepared:
    """The image's root filesystem, prepared on the first call (ImageError, whose message
    is the server's fault, when the image cannot be booted; nothing is then left)."""
    _check_id(image_id)
    limits = limits or Limits()
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _locked(cache_dir, image_id):
        home = cache_dir / image_id
        done = _load(home)
        if done is not None and (mounts.is_mount_point(done.root) if done.fstype
                                 else done.root.is_dir()):
            return done
        try:
            if done is not None and done.fstype and (home / "disk.raw").is_file():
                for device in mounts.loops_under(home):  # its mount went, its device stayed
                    mounts.detach(device)
                return _mount(home, done.kind, partitions.Volume(
                    done.offset, done.size, done.fstype, done.where), image_id)
            _clear(home)
            home.mkdir(mode=0o700)
            return _prepare(image_id, image_file, disk_format, container_format, home,
                            prefix, limits)
        except Refused as e:
            _clear(home)
            raise ImageError(image_id, str(e)) from None
        except BaseException:
            _clear(home)
            raise


def release(image_id: str, cache_dir: Path, *, lazy: bool = False) -> None:
    """Unmount, detach and remove the image's root filesystem (none: nothing to do).
    ImageBusy while a guest still holds it, unless `lazy` (it then goes with the last)."""
    _check_id(image_id)
    if not (cache_dir / image_id).exists() and not (cache_dir / ".locks").is_dir():
        return
    with _locked(cache_dir, image_id, remove=True):
        try:
            _clear(cache_dir / image_id, lazy=lazy)
        except OSError as e:
            raise ImageBusy(image_id, f"is still in use: {e.strerror}") from None


def cleanup_all(cache_dir: Path, *, keep_files: bool = False) -> None:
    """Every mount and loop device under `cache_dir` gone (busy mounts detached lazily:
    the cloud is stopping), and with them the files unless `keep_files`."""
    if not cache_dir.exists():
        return
    for point in mounts.mounts_under(cache_dir):
        try:
            mounts.unmount(point)
        except OSError:
            mounts.unmount(point, lazy=True)
    for device in mounts.loops_under(cache_dir):
        mounts.detach(device)
    # A lazily detached mount lets its loop device go when its last user does (a guest's
    # mount namespace whose killed processes are still exiting): waited for, bounded, so
    # that a stop leaves no loop device behind
    deadline = time.monotonic() + LOOP_RELEASE_WAIT
    while mounts.loops_under(cache_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not keep_files:
        shutil.rmtree(cache_dir, ignore_errors=True)


def _check_id(image_id: str) -> None:
    if not isinstance(image_id, str) or _ID.fullmatch(image_id) is None:
        raise ImageError(str(image_id)[:64], "has an id that cannot name a directory")


@contextlib.contextmanager
def _locked(cache_dir: Path, image_id: str, *, remove: bool = False) -> Iterator[None]:
    """The image's lock, held over processes. A lock file removed by a release meanwhile
    is not the lock any more: taken again on the new file."""
    locks = cache_dir / ".locks"
    locks.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = locks / f"{image_id}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    yield
                finally:
                    if remove:
                        path.unlink(missing_ok=True)
                return
        finally:
            os.close(fd)


def _load(home: Path) -> Prepared | None:
    try:
        record = json.loads((home / "prepared.json").read_text())
        record["root"] = Path(record["root"])
        return Prepared(**record)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _save(home: Path, prepared: Prepared) -> Prepared:
    record = {**asdict(prepared), "root": str(prepared.root)}
    partial = home / "prepared.json.partial"
    partial.write_text(json.dumps(record))
    os.replace(partial, home / "prepared.json")
    return prepared


def _clear(home: Path, *, lazy: bool = False) -> None:
    """Nothing of the image's directory left: its mounts, its loop devices, its files."""
    if not home.exists():
        return
    for point in mounts.mounts_under(home):
        mounts.unmount(point, lazy=lazy)
    for device in mounts.loops_under(home):
        mounts.detach(device)
    shutil.rmtree(home)


def _prepare(image_id: str, image_file: Path, disk_format: str | None,
             container_format: str | None, home: Path, prefix: str, limits: Limits) -> Prepared:
    if not image_file.is_file():
        raise Refused("has no data")
    if container_format == "docker":
        partial = home / f".{prefix}-layers.partial"
        partial.mkdir(mode=0o755)
        count = layers.apply_image(image_file, partial, limits)
        os.replace(partial, home / "root")
        return _save(home, Prepared(image_id, home / "root", "layers",
                                    f"{count} layers of a container image"))
    if container_format not in (None, "", "bare"):
        raise Refused(f"has unsupported container_format '{container_format}'")
    if disk_format not in DISK_FORMATS:
        raise Refused(f"has unsupported disk_format '{disk_format}'")
    disk = home / "disk.raw"
    if disk_format == "qcow2":
        virtual_size = qcow2.check(image_file)
        if virtual_size > limits.max_bytes:
            raise Refused(f"is a qcow2 of {virtual_size} bytes, more than {limits.max_bytes}")
        partial = home / f".{prefix}-disk.partial"
        qcow2.to_raw(image_file, partial)
        os.replace(partial, disk)
    else:
        _link_or_copy(image_file, disk)
    size = disk.stat().st_size
    with open(disk, "rb") as fh:
        volume = partitions.find_root(lambda at, n: os.pread(fh.fileno(), n, at), size)
    kind = "filesystem" if volume.where.startswith("a bare") else "disk"
    return _mount(home, kind, volume, image_id)


def _mount(home: Path, kind: str, volume: partitions.Volume, image_id: str) -> Prepared:
    root = home / "root"
    root.mkdir(mode=0o755, exist_ok=True)
    device = mounts.attach(home / "disk.raw", volume.offset, volume.size)
    try:
        mounts.mount(device, root, volume.fstype)
    except BaseException:
        mounts.detach(device)
        raise
    return _save(home, Prepared(image_id, root, kind, volume.where, volume.fstype, device,
                                volume.offset, volume.size))


def _link_or_copy(source: Path, target: Path) -> None:
    """The raw data under the image's directory, sharing its blocks where it can (a hard
    link; else a reflink or sparse copy): its loop device is then found by its path."""
    try:
        os.link(source, target)
    except OSError:
        result = subprocess.run(["cp", "--reflink=auto", "--sparse=always", str(source),
                                 str(target)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise Refused(f"cannot be read: {result.stderr.strip()}") from None
