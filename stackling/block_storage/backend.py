"""The volume driver interface and its file backend (Cinder's NFS driver's shape on a
local directory): one sparse file per volume, `<backend dir>/<volume id>`, snapshots
under `<backend dir>/snapshots/<snapshot id>`.

Every write goes to a temporary name first and is renamed into place, so a crash in
the middle of a copy leaves no volume file (only a `.part`, removed when the work is
taken over); a file of a volume is never half made. Copies stream in fixed chunks and
skip holes (all-zero chunks are seeked over), so memory stays bounded and a sparse
source stays sparse."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

GiB = 1024 ** 3
CHUNK = 1024 * 1024  # bytes per read/write of a copy
_ZERO = bytes(CHUNK)


class Driver(Protocol):
    """What the volume manager asks of a backend (cinder.volume.driver.VolumeDriver)."""

    def create_volume(self, volume_id: str, size_gb: int) -> None: ...
    def delete_volume(self, volume_id: str) -> None: ...
    def extend_volume(self, volume_id: str, new_size_gb: int) -> None: ...
    def create_snapshot(self, snapshot_id: str, volume_id: str) -> None: ...
    def delete_snapshot(self, snapshot_id: str) -> None: ...
    def create_volume_from_snapshot(self, volume_id: str, snapshot_id: str,
                                    size_gb: int) -> None: ...
    def create_cloned_volume(self, volume_id: str, source_id: str, size_gb: int) -> None: ...
    def copy_image_to_volume(self, volume_id: str, source: BinaryIO | None,
                             size_gb: int) -> int: ...
    def copy_volume_to_image(self, volume_id: str, target: Path) -> int: ...
    def initialize_connection(self, volume_id: str, connector: dict[str, Any]
                              ) -> dict[str, Any]: ...
    def terminate_connection(self, volume_id: str, connector: dict[str, Any]) -> None: ...
    def volume_path(self, volume_id: str) -> Path: ...


class FileDriver:
    """Sparse files under one directory (settings block_storage.backend_dir)."""

    driver_volume_type = "file"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.snapshots = root / "snapshots"

    # ----------------------------------------------------------------- paths
    def volume_path(self, volume_id: str) -> Path:
        return self.root / volume_id

    def snapshot_path(self, snapshot_id: str) -> Path:
        return self.snapshots / snapshot_id

    def _part(self, final: Path) -> Path:
        return final.with_name(final.name + ".part")

    @contextlib.contextmanager
    def _writing(self, final: Path) -> Iterator[BinaryIO]:
        """A file opened at `final`.part, renamed to `final` once written (removed on error)."""
        final.parent.mkdir(parents=True, exist_ok=True)
        part = self._part(final)
        fh = open(part, "wb")  # noqa: SIM115 - closed below on both paths
        try:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            os.replace(part, final)
        except BaseException:
            fh.close()
            with contextlib.suppress(FileNotFoundError):
                part.unlink()
            raise

    # ----------------------------------------------------------------- volumes
    def create_volume(self, volume_id: str, size_gb: int) -> None:
        with self._writing(self.volume_path(volume_id)) as fh:
            fh.truncate(size_gb * GiB)  # sparse: no block until written

    def delete_volume(self, volume_id: str) -> None:
        for path in (self.volume_path(volume_id), self._part(self.volume_path(volume_id))):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def extend_volume(self, volume_id: str, new_size_gb: int) -> None:
        path = self.volume_path(volume_id)
        if path.stat().st_size < new_size_gb * GiB:
            os.truncate(path, new_size_gb * GiB)

    def create_cloned_volume(self, volume_id: str, source_id: str, size_gb: int) -> None:
        self._copy_file(self.volume_path(source_id), self.volume_path(volume_id), size_gb)

    # ----------------------------------------------------------------- snapshots
    def create_snapshot(self, snapshot_id: str, volume_id: str) -> None:
        source = self.volume_path(volume_id)
        self._copy_file(source, self.snapshot_path(snapshot_id),
                        -(-source.stat().st_size // GiB))

    def delete_snapshot(self, snapshot_id: str) -> None:
        for path in (self.snapshot_path(snapshot_id), self._part(self.snapshot_path(snapshot_id))):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def create_volume_from_snapshot(self, volume_id: str, snapshot_id: str,
                                    size_gb: int) -> None:
        self._copy_file(self.snapshot_path(snapshot_id), self.volume_path(volume_id), size_gb)

    def revert_to_snapshot(self, volume_id: str, snapshot_id: str, size_gb: int) -> None:
        self._copy_file(self.snapshot_path(snapshot_id), self.volume_path(volume_id), size_gb)

    # ----------------------------------------------------------------- images
    def copy_image_to_volume(self, volume_id: str, source: BinaryIO | None,
                             size_gb: int) -> int:
        """The image's bytes at the start of a new volume of `size_gb` (the rest sparse);
        returns the bytes copied. A raw image is what a guest reads; other formats are
        copied as they are (no qemu-img conversion here)."""
        with self._writing(self.volume_path(volume_id)) as fh:
            copied = _stream(source, fh, limit=size_gb * GiB) if source is not None else 0
            fh.truncate(size_gb * GiB)
        return copied

    def copy_volume_to_image(self, volume_id: str, target: Path) -> int:
        with open(self.volume_path(volume_id), "rb") as src, self._writing(target) as fh:
            return _stream(src, fh, sparse=False)

    # ----------------------------------------------------------------- connections
    def initialize_connection(self, volume_id: str, connector: dict[str, Any]
                              ) -> dict[str, Any]:
        """os-brick's connection info for a local file (what the dataplane attaches)."""
        return {"driver_volume_type": self.driver_volume_type,
                "data": {"path": str(self.volume_path(volume_id)), "volume_id": volume_id,
                         "format": "raw", "access_mode": "rw", "encrypted": False,
                         "discard": True, "cacheable": False}}

    def terminate_connection(self, volume_id: str, connector: dict[str, Any]) -> None:
        return None  # a local file has no export to tear down

    # ----------------------------------------------------------------- helpers
    def _copy_file(self, source: Path, target: Path, size_gb: int) -> None:
        with open(source, "rb") as src, self._writing(target) as fh:
            _stream(src, fh)
            fh.truncate(max(size_gb * GiB, source.stat().st_size))

    def usage(self) -> int:
        """Bytes the backend's files hold on disk (their allocated blocks)."""
        total = 0
        for directory in (self.root, self.snapshots):
            if directory.is_dir():
                for entry in os.scandir(directory):
                    if entry.is_file():
                        total += entry.stat().st_blocks * 512
        return total


def data_starts(fd: int, offset: int) -> int:
    """The first offset at or after `offset` holding data (SEEK_DATA), the file's size
    when only a hole is left, `offset` itself where the file system cannot say."""
    try:
        return os.lseek(fd, offset, os.SEEK_DATA)
    except OSError as err:
        return os.fstat(fd).st_size if err.errno == errno.ENXIO else offset


def _stream(src: BinaryIO, dst: BinaryIO, *, limit: int | None = None,
            sparse: bool = True) -> int:
    """Copy `src` to `dst` in CHUNK pieces (bounded memory); all-zero chunks are holes,
    and a sparse source's holes are skipped unread."""
    copied = 0
    fd = _fileno(src)
    while limit is None or copied < limit:
        if sparse and fd is not None:
            start = src.tell()
            ahead = max(0, data_starts(fd, start) - start)
            if limit is not None:
                ahead = min(ahead, limit - copied)
            src.seek(start + ahead)  # absolute: lseek moved the descriptor under the buffer
            if ahead > 0:  # a hole: the target's stays one
                dst.seek(ahead, os.SEEK_CUR)
                copied += ahead
                continue
        want = CHUNK if limit is None else min(CHUNK, limit - copied)
        data = src.read(want)
        if not data:
            break
        if sparse and data == _ZERO[:len(data)]:
            dst.seek(len(data), os.SEEK_CUR)
        else:
            dst.write(data)
        copied += len(data)
    if sparse:
        dst.truncate(dst.tell())  # a trailing hole still counts in the size
    return copied


def _fileno(fh: Any) -> int | None:
    try:
        return int(fh.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def driver_for(settings: Any) -> FileDriver:
    """The configured backend: the file driver under block_storage.backend_dir."""
    configured = settings.block_storage.backend_dir
    return FileDriver(Path(configured) if configured else Path(settings.data_dir) / "volumes")
