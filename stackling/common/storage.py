"""Bulk data written to local files: whole or not at all, and a full disk said so.

`new_file(target)` gives a private temporary file beside `target` to write into; when the
block ends without an error the file is renamed into place (readers never see half of
it), otherwise it is removed. A write the file system refuses for want of space (ENOSPC,
a quota's EDQUOT, EFBIG) comes out as `StorageFull`, which each service answers in its own
words (the image service: Glance's 413 "Image storage media is full"); any other error is
left as it is. Image data (uploads, staging, web-download, store copies) is written
through it, and so should any other service writing files (volumes, backups).
"""

from __future__ import annotations

import errno
import hashlib
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

# What write(2), close(2) and copy_file_range(2) answer when the space is not there.
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class StorageFull(OSError):
    """The file system holding `path` has no room (or the writer's quota is spent). An
    OSError still (its errno, its file name), so that code handling any failed write
    handles this one too."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror or "No space left on device", str(path))
        self.path = path


def is_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in FULL_ERRNOS


@contextmanager
def new_file(target: Path) -> Iterator[BinaryIO]:
    """Write into the yielded file; it becomes `target` only if the block completes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as fh:  # closed (and flushed) inside the try: ENOSPC there too
            yield fh
        tmp.replace(target)
    except OSError as exc:
        if is_full(exc) and not isinstance(exc, StorageFull):
            raise StorageFull(target, exc) from exc
        raise
    finally:
        tmp.unlink(missing_ok=True)


def copy_file(source: Path, target: Path) -> None:
    """A whole copy of `source` at `target` (see new_file), else StorageFull or OSError."""
    with open(source, "rb") as src, new_file(target) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


class Digests:
    """Glance's checksums of data seen chunk by chunk: size, md5 (`checksum`) and sha512
    (`os_hash_value`), for every writer of image data (uploads, imports, snapshots)."""

    def __init__(self) -> None:
        self.size = 0
        self._md5, self._sha512 = hashlib.md5(usedforsecurity=False), hashlib.sha512()

    def update(self, chunk: bytes) -> None:
        self._md5.update(chunk)
        self._sha512.update(chunk)
        self.size += len(chunk)

    @property
    def md5(self) -> str:
        return self._md5.hexdigest()

    @property
    def sha512(self) -> str:
        return self._sha512.hexdigest()


def file_digests(path: Path, chunk: int = 1 << 20) -> Digests:
    """The Digests of a whole file, read in chunks (never held whole)."""
    digests = Digests()
    with open(path, "rb") as fh:
        while data := fh.read(chunk):
            digests.update(data)
    return digests
