"""The demo cloud's images: a public, active cirros (metadata only; no data file), and
`debian-12` from the file `make image-debian` builds (setting `image.debian_image`) when it
exists: a bootstrap step on a first start, and a check at every start for a cloud that was
bootstrapped before the file was built (one stat when it is absent)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
from pathlib import Path
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common import storage
from stackling.image import stores
from stackling.image.models import Image

LOG = logging.getLogger(__name__)
CIRROS_ID = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
DEBIAN_ID = "0d3b6a52-7c1e-4f9a-b8d2-5e6f1a2c3d12"
# Glance's common image properties (os_distro from libosinfo's short ids).
DEBIAN_PROPERTIES = {"os_distro": "debian", "os_version": "12", "os_admin_user": "debian"}
GiB = 1 << 30


def bootstrap_images(db: Session, runtime: Any) -> None:
    from stackling.identity import interface as identity

    owner = identity.admin_project_id(db)  # the owner is the admin project
    db.add(Image(
        id=CIRROS_ID, name="cirros", status="active", visibility="public", owner=owner,
        disk_format="qcow2", container_format="bare", min_disk=0, min_ram=0,
        size=21430272, virtual_size=117440512, checksum="443b7623e27ecf03dc9e01ee93f67afe",
        os_hash_algo="sha512",
        os_hash_value=("6513f21e44aa3da349f248188a44bc304a3653a04122d8fb4535423c8e1d14cd"
                       "6a153f735bb0982e2161b5b5186106570c17a9e58b64dd39390617cd5a350f78"),
        properties={"hw_rng_model": "virtio"}, tags=[]))


def bootstrap_debian(db: Session, runtime: Any) -> None:
    """The bootstrap step: `debian-12` when its file exists."""
    source = debian_file(runtime.settings)
    if source is not None:
        add_debian(db, runtime, source)


def start(runtime: Any) -> None:
    """At every start: `debian-12` for a cloud bootstrapped before its file existed. An
    image of that id already there (deleted included: its row stays) is left alone."""
    source = debian_file(runtime.settings)
    if source is None:
        return
    try:
        with runtime.db.transaction() as db:
            if db.get(Image, DEBIAN_ID) is None:
                add_debian(db, runtime, source)
    except IntegrityError:
        pass  # another process of this cloud added it meanwhile


def debian_file(settings: Any) -> Path | None:
    name = settings.image.debian_image
    if not name:
        return None
    path = Path(name)
    return path.resolve() if path.is_file() else None


def add_debian(db: Session, runtime: Any, source: Path) -> None:
    """The image row and its data in the default store: a hard link to the file (a copy
    on another filesystem), with the digests read from its memo, so no start reads it."""
    from stackling.identity import interface as identity

    settings = runtime.settings
    data_dir = Path(settings.data_dir) / "images"
    digests = file_digests(source, data_dir)
    configured = stores.configured(settings)
    target = stores.path(data_dir, configured, configured.default, DEBIAN_ID)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{DEBIAN_ID}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    try:
        os.link(source, partial)
    except OSError:  # another filesystem, or links not allowed: a whole copy
        try:
            storage.copy_file(source, partial)
        except storage.StorageFull:
            # A data dir too small for it: the cloud starts without debian-12 (a start that
            # fails over a demo image would be worse); the next start tries again.
            partial.unlink(missing_ok=True)
            LOG.warning("debian-12 not added: %s is full", target.parent)
            return
    os.replace(partial, target)
    db.add(Image(
        id=DEBIAN_ID, name="debian-12", status="active", visibility="public",
        owner=identity.admin_project_id(db), disk_format="qcow2", container_format="bare",
        min_disk=-(-digests["virtual_size"] // GiB), min_ram=0, size=digests["size"],
        virtual_size=digests["virtual_size"], checksum=digests["md5"], os_hash_algo="sha512",
        os_hash_value=digests["sha512"], properties=dict(DEBIAN_PROPERTIES), tags=[],
        stores=[configured.default] if configured.multi else None))
    db.flush()


def file_digests(path: Path, data_dir: Path) -> dict[str, Any]:
    """size, md5, sha512 and (qcow2) virtual_size of the file, from its memo when the
    file's size and mtime are the memo's: `<file>.digests.json` beside it (written by
    images/debian/build.py, or here once where the directory allows), else one in the
    data dir. Read and remembered when there is none."""
    st = path.stat()
    memos = [path.with_name(path.name + ".digests.json"),
             data_dir / ".digests" / (hashlib.sha256(str(path).encode()).hexdigest() + ".json")]
    for memo in memos:
        try:
            known = json.loads(memo.read_text())
        except (OSError, ValueError):
            continue
        if (isinstance(known, dict) and known.get("size") == st.st_size
                and known.get("mtime_ns") == st.st_mtime_ns):
            return known
    LOG.info("reading %s once for its digests", path)
    md5, sha512 = hashlib.md5(usedforsecurity=False), hashlib.sha512()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            md5.update(chunk)
            sha512.update(chunk)
        fh.seek(0)
        header = fh.read(32)
    virtual = struct.unpack(">Q", header[24:32])[0] if header[:4] == b"QFI\xfb" else st.st_size
    known = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "md5": md5.hexdigest(),
             "sha512": sha512.hexdigest(), "virtual_size": virtual}
    for memo in memos:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            partial = memo.with_name(f".{memo.name}.{os.getpid()}")
            partial.write_text(json.dumps(known))
            os.replace(partial, memo)
            break
        except OSError:
            continue
    return known
