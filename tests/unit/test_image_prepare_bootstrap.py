"""`debian-12` uploaded at start from the file `make image-debian` builds (image/bootstrap.py):
a real image of the store, downloadable, with its real digests; added on a later start to a
cloud bootstrapped before the file existed; its digests read from a memo, never twice."""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stackling.image.bootstrap import DEBIAN_ID, file_digests
from tests.conftest import make_api

VIRTUAL = 3 * (1 << 30) + 1  # 4 GiB of min_disk, rounded up


def fake_qcow2(path: Path) -> bytes:
    """A qcow2 header with a virtual size, and some bytes (the bootstrap reads no more)."""
    data = b"QFI\xfb" + struct.pack(">I", 3) + bytes(16) + struct.pack(">Q", VIRTUAL) + b"x" * 5000
    path.write_bytes(data)
    return data


@contextmanager
def cloud(data_dir: Path, image: Path) -> Iterator[Any]:
    api = make_api(data_dir, image={"debian_image": str(image)})
    try:
        yield next(api)
    finally:
        api.close()


def debian(api: Any) -> list[dict]:
    return api.get("/image/v2/images?name=debian-12", user="demo").json()["images"]


def test_uploaded_at_bootstrap_as_a_real_image(tmp_path: Path) -> None:
    link = tmp_path / "debian-12.qcow2"
    data = fake_qcow2(tmp_path / "debian-12-abc.qcow2")
    link.symlink_to("debian-12-abc.qcow2")
    with cloud(tmp_path / "data", link) as api:
        [image] = debian(api)
        assert image["id"] == DEBIAN_ID and image["visibility"] == "public"
        assert (image["disk_format"], image["container_format"]) == ("qcow2", "bare")
        assert (image["os_distro"], image["os_version"], image["os_admin_user"]) == (
            "debian", "12", "debian")
        assert image["min_disk"] == 4 and image["virtual_size"] == VIRTUAL
        assert image["size"] == len(data) and image["checksum"] == hashlib.md5(data).hexdigest()
        assert image["os_hash_value"] == hashlib.sha512(data).hexdigest()
        assert api.get(f"/image/v2/images/{DEBIAN_ID}/file", user="demo").content == data
        # hard-linked into the store: no second copy of its bytes
        stored = tmp_path / "data" / "images" / DEBIAN_ID
        assert stored.stat().st_ino == (tmp_path / "debian-12-abc.qcow2").stat().st_ino
    # remembered beside the file, keyed by its size and mtime
    memo = json.loads((tmp_path / "debian-12-abc.qcow2.digests.json").read_text())
    assert memo["md5"] == hashlib.md5(data).hexdigest()


def test_a_later_start_adds_it_and_a_deleted_one_stays_deleted(tmp_path: Path) -> None:
    image = tmp_path / "debian-12.qcow2"
    with cloud(tmp_path / "data", image) as api:
        assert debian(api) == []  # no file: no image, and the bootstrap step is done
    fake_qcow2(image)
    with cloud(tmp_path / "data", image) as api:
        assert [i["id"] for i in debian(api)] == [DEBIAN_ID]
        assert api.delete(f"/image/v2/images/{DEBIAN_ID}").status_code == 204
    with cloud(tmp_path / "data", image) as api:
        assert debian(api) == []


def test_digests_are_read_once_per_file_version(tmp_path: Path, monkeypatch: Any) -> None:
    image = tmp_path / "ro" / "debian-12.qcow2"
    image.parent.mkdir()
    data = fake_qcow2(image)
    first = file_digests(image, tmp_path / "data")
    assert first["sha512"] == hashlib.sha512(data).hexdigest() and first["virtual_size"] == VIRTUAL
    reads = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: reads.append(p) or real_open(p, *a, **k))
    assert file_digests(image, tmp_path / "data") == first
    assert image not in reads  # the memo answered
    monkeypatch.undo()
    image.write_bytes(data + b"more")  # a new build: read again
    assert file_digests(image, tmp_path / "data")["size"] == len(data) + 4
