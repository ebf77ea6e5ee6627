"""The flavor is the server's size (issue 30): a guest's root disk is a filesystem of its
flavor's disk (disks.py), so a write past it fails with ENOSPC inside the guest, the guest
and its neighbours answer on, and the file on the machine never holds more than the
flavor's disk; a resize to a larger flavor grows it, keeping what the guest wrote."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.dataplane.conftest import SSH_OPTS, DataplaneCloud, eventually
from tests.dataplane.test_guest_boundary import ROOT_KEY

GiB = 1 << 30


def _root(dp: DataplaneCloud, ns: str, ip: str, command: str, timeout: float = 600) -> str:
    """`command` as the guest's root (its user data gave root the key), output and status;
    a dd of a gigabyte on a loaded machine outlasts the usual SSH patience."""
    out = dp.in_ns(ns, "ssh", "-i", str(dp.key), *SSH_OPTS, f"root@{ip}",
                   command + " 2>&1; echo rc=$?", timeout=timeout)
    return out.stdout + out.stderr


def _disk_file(dp: DataplaneCloud, server_id: str) -> Path:
    return dp.cloud.data_dir / "dataplane" / "disks" / server_id / "disk.ext4"


def _allocated(path: Path) -> int:
    return path.stat().st_blocks * 512


def _df_kib(dp: DataplaneCloud, ns: str, ip: str) -> int:
    """The size of the guest's root filesystem as its `df` says (0: no answer yet)."""
    try:
        fields = _root(dp, ns, ip, "df -k / | tail -1", timeout=30).split()
    except subprocess.TimeoutExpired:
        return 0
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0


def _logins(dp: DataplaneCloud, vm: Any) -> int:
    """How many times the guest has booted to its login prompt (its console log)."""
    return dp.sdk.compute.get_server_console_output(vm)["output"].count(f"{vm.name} login:")


def test_writes_past_the_flavor_disk_get_enospc(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-disk", "10.84.0.0/24")
    vm = dp.server("vm-disk", net.id, user_data=ROOT_KEY)  # m1.tiny: a disk of 1 GiB
    peer = dp.server("vm-disk-peer", net.id)
    ip, peer_ip = dp.address(vm), dp.address(peer)
    ns, vm_ns = dp.names.guest(peer.id), dp.names.guest(vm.id)
    assert dp.wait_ssh(ns, ip, user="root").strip() == "vm-disk"
    disk = _disk_file(dp, vm.id)
    assert disk.stat().st_size == GiB
    assert "rc=0" in _root(dp, ns, ip, "echo kept > /kept")  # (before the disk fills)
    out = _root(dp, ns, ip, "dd if=/dev/zero of=/big bs=1M count=1100")
    assert "No space left on device" in out and "rc=0" not in out, out
    # the file on the machine holds at most the flavor's disk
    assert disk.stat().st_size == GiB and _allocated(disk) <= GiB
    # the guest and its neighbour answer on, and the server is as it was
    assert dp.wait_ssh(ns, ip, "cat /kept", user="root").strip() == "kept"
    assert dp.wait_ssh(vm_ns, peer_ip).strip() == "vm-disk-peer"
    assert dp.sdk.compute.get_server(vm.id).status == "ACTIVE"
    # what the full disk had is freed in the guest
    assert "rc=0" in _root(dp, ns, ip, "rm /big; sync")

    # a resize to a larger flavor grows the disk, keeping the guest's files
    bigger = dp.sdk.compute.create_flavor(name="dp-disk-2", ram=512, vcpus=1, disk=2)
    dp.sdk.compute.resize_server(vm, bigger.id)
    dp.sdk.compute.wait_for_server(vm, status="VERIFY_RESIZE", wait=120, interval=0.2)
    # (the guest boots again for the resize, then for its confirmation: each waited on)
    assert eventually(lambda: _df_kib(dp, ns, ip) > 1.9 * (1 << 20), timeout=180)
    assert disk.stat().st_size == 2 * GiB and _df_kib(dp, ns, ip) <= 2 * (1 << 20)
    boots = _logins(dp, vm)
    dp.sdk.compute.confirm_server_resize(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=120, interval=0.2)
    assert eventually(lambda: _logins(dp, vm) > boots, timeout=180)
    assert dp.wait_ssh(ns, ip, "cat /kept", user="root", timeout=120).strip() == "kept"
    out = _root(dp, ns, ip, "dd if=/dev/zero of=/big bs=1M count=1100")
    assert "rc=0" in out, out
    assert _allocated(disk) <= 2 * GiB
    # the disk goes with its server (its loop device with its guest: the fixture's check)
    dp.sdk.compute.delete_server(vm)
    dp.sdk.compute.wait_for_delete(vm, wait=120, interval=0.2)
    assert eventually(lambda: not disk.parent.exists(), timeout=60)


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
