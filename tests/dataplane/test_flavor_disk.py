"""The root disk's filesystem of the flavor's size (disks.py): a layer of before moves into
it. (Guests boot on it no more for now, guests.py says why: its ENOSPC test went with it.)"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

GiB = 1 << 30


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mkfs.ext4"),
                    reason="root disks: root and mkfs.ext4")
def test_a_layer_of_before_moves_into_its_filesystem(tmp_path: Path) -> None:
    """A layer made before the flavor bounded it (plain upper/ and work/) is copied into its
    filesystem once, owners, modes and overlayfs' whiteouts and xattrs kept; one that does
    not fit boots unbounded as before."""
    from stackling.dataplane import disks

    d = disks.Disks(tmp_path / "disks")
    upper = d.layer("old") / "upper"
    (upper / "etc").mkdir(parents=True)
    (d.layer("old") / "work").mkdir()
    (upper / "etc" / "motd").write_text("mine\n")
    os.chown(upper / "etc" / "motd", 1000, 1000)
    os.mknod(upper / "etc" / "gone", stat.S_IFCHR | 0o600, os.makedev(0, 0))  # a whiteout
    os.setxattr(upper / "etc", "trusted.overlay.opaque", b"y")
    fs = tmp_path / "fs"
    try:
        assert d._filesystem("old", fs, 1) == fs
        assert (fs / "upper" / "etc" / "motd").read_text() == "mine\n"
        assert (fs / "upper" / "etc" / "motd").stat().st_uid == 1000
        assert stat.S_ISCHR((fs / "upper" / "etc" / "gone").lstat().st_mode)
        assert os.getxattr(fs / "upper" / "etc", "trusted.overlay.opaque") == b"y"
        assert not upper.exists() and (d.layer("old") / disks.FILE).stat().st_size == GiB
    finally:
        disks._unmount_now(fs)
    # too large for its flavor's disk (16 MiB here): kept as it was
    big = d.layer("big") / "upper"
    big.mkdir(parents=True)
    (big / "data").write_bytes(os.urandom(24 << 20))
    assert d._migrate("big", fs, 16 << 20) == d.layer("big")
    assert (big / "data").stat().st_size == 24 << 20
    assert not (d.layer("big") / disks.FILE).exists() and not list(d.layer("big").glob("*.new"))
    # (its next boots do not try again at that size; a larger flavor's does)
    assert d._filesystem("big", fs, 1) == fs  # 1 GiB holds it
    disks._unmount_now(fs)
    assert not big.exists() and (d.layer("big") / disks.FILE).exists()
    d.wait_released()
    assert d.loops() == []
