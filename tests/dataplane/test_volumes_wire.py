"""Volumes on the wire (issue 31): an attached volume is a block device inside the guest
(`/dev/vdb`, `/dev/disk/by-id/virtio-<id[:20]>`), hot-plugged and unplugged without a
reboot, and its data goes with it to another server."""

from __future__ import annotations

import subprocess
from typing import Any

from tests.dataplane.conftest import DataplaneCloud, eventually, wire_findings
from tests.dataplane.test_images_boot import _ssh_allowed


def _attach(dp: DataplaneCloud, server: Any, volume: Any) -> None:
    dp.sdk.compute.create_volume_attachment(server, volume_id=volume.id)
    dp.sdk.block_storage.wait_for_status(volume, status="in-use", wait=60, interval=0.2)


def _detach(dp: DataplaneCloud, server: Any, volume: Any) -> None:
    dp.sdk.compute.delete_volume_attachment(server, volume.id)
    dp.sdk.block_storage.wait_for_status(volume, status="available", wait=60, interval=0.2)


def test_a_volume_is_a_block_device_that_moves_between_servers(
        dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-vol", "10.84.1.0/24")
    _ssh_allowed(dp)  # from the network's DHCP namespace, as a user's machine
    one, two = dp.server("vm-vol1", net.id), dp.server("vm-vol2", net.id)
    ns, ip1, ip2 = dp.names.dhcp(net.id), dp.address(one), dp.address(two)
    assert dp.wait_ssh(ns, ip1).strip() == "vm-vol1"
    volume = dp.sdk.block_storage.create_volume(size=1, name="data")
    dp.sdk.block_storage.wait_for_status(volume, status="available", wait=60, interval=0.2)
    serial = f"virtio-{volume.id[:20]}"

    _attach(dp, one, volume)
    # hot-plugged: the running guest gets its disk, as a KVM guest names it
    assert eventually(lambda: dp.ssh(ns, ip1, "test -b /dev/vdb").returncode == 0), \
        dp.cloud.log_tail(3000)
    out = dp.ssh(ns, ip1, f"readlink /dev/disk/by-id/{serial}; "
                 "sudo blockdev --getsize64 /dev/vdb").stdout.split()
    assert out == ["../../vdb", str(1 << 30)], out
    write = dp.ssh(ns, ip1, "echo stackling-volume-data | sudo dd of=/dev/vdb bs=512 "
                   "conv=sync,fsync 2>/dev/null && sudo head -c 20 /dev/vdb")
    assert write.stdout == "stackling-volume-dat", write
    # a filesystem on it, mounted inside the guest (the machine mounts it for the guest:
    # guest_mounts.py), owned by the guest's root as its own
    out = dp.ssh(ns, ip1, "sudo mke2fs /dev/vdb >/dev/null 2>&1; sudo mkdir -p /mnt/data && "
                 "sudo mount -t ext2 /dev/vdb /mnt/data && echo kept | sudo tee /mnt/data/file"
                 " >/dev/null && sudo ls -ln /mnt/data/file && grep ' /mnt/data ' /proc/mounts "
                 "&& sudo umount /mnt/data && echo unmounted")
    assert out.stdout.split("\n")[0].split()[2:4] == ["0", "0"], out
    assert "/dev/vdb /mnt/data ext4 rw,nosuid,nodev" in out.stdout, out
    assert out.stdout.strip().endswith("unmounted"), out
    # what is not its own volume is refused as before (a loop device of the machine's)
    out = dp.ssh(ns, ip1, "sudo mount -t ext4 /dev/loop0 /mnt/data 2>&1; "
                 "sudo mount -t ext2 /dev/zero /mnt/data 2>&1; echo done")
    assert out.stdout.strip().endswith("done") and "/mnt/data" not in dp.ssh(
        ns, ip1, "cat /proc/mounts").stdout, out
    # the cirros user is not root: the node is the guest's root's alone
    assert dp.ssh(ns, ip1, "head -c 1 /dev/vdb").returncode != 0
    # the other guest has no such device
    assert dp.wait_ssh(ns, ip2, "ls /dev/vdb 2>&1 || true").strip().endswith(
        "No such file or directory")

    _detach(dp, one, volume)
    assert eventually(lambda: dp.ssh(ns, ip1, "test -e /dev/vdb || echo gone"
                                     ).stdout.strip() == "gone")
    _attach(dp, two, volume)
    assert eventually(lambda: dp.ssh(ns, ip2, "test -b /dev/vdb").returncode == 0)
    out = dp.ssh(ns, ip2, f"sudo mkdir -p /mnt/v && sudo mount -t ext2 /dev/disk/by-id/{serial}"
                 " /mnt/v && cat /mnt/v/file")
    assert out.stdout.strip() == "kept", out
    # extended while attached (3.42): the guest's disk grows in place, its filesystem mounted
    r = dp.sdk.block_storage.post(f"/volumes/{volume.id}/action",
                                  json={"os-extend": {"new_size": 2}},
                                  headers={"OpenStack-API-Version": "volume 3.42"})
    assert r.status_code == 202, r.text
    assert eventually(lambda: dp.ssh(ns, ip2, "sudo blockdev --getsize64 /dev/vdb"
                                     ).stdout.strip() == str(2 << 30))
    dp.sdk.block_storage.wait_for_status(volume, status="in-use", wait=60, interval=0.2)
    assert dp.ssh(ns, ip2, "cat /mnt/v/file").stdout.strip() == "kept"

    # kill -9 of the cloud: the guest keeps its disk and its mount; the next start adopts
    # them (nothing attached twice), and mounts are still served (its supervisor is the
    # guest's, not the service's)
    loops = _loops(dp)
    dp.cloud.stop(kill=True)
    assert dp.ssh(ns, ip2, "cat /mnt/v/file").stdout.strip() == "kept"
    dp.cloud.start()
    assert dp.wait_ssh(ns, ip2, "cat /mnt/v/file; test -b /dev/vdb && echo disk"
                       ).split() == ["kept", "disk"]
    out = dp.ssh(ns, ip2, "sudo umount /mnt/v && sudo mount -t ext4 /dev/vdb /mnt/v && "
                 "echo again | sudo tee -a /mnt/v/file >/dev/null && sudo umount /mnt/v && "
                 "echo ok")
    assert out.stdout.strip() == "ok", out
    assert _loops(dp) == loops
    _detach(dp, two, volume)
    assert eventually(lambda: dp.ssh(ns, ip2, "test -e /dev/vdb || echo gone"
                                     ).stdout.strip() == "gone")
    assert eventually(lambda: not _loops(dp))

    # a read-only volume is a read-only disk: its filesystem mounts read-only, a write fails
    def readonly(flag: bool) -> None:
        r = dp.sdk.block_storage.post(f"/volumes/{volume.id}/action",
                                      json={"os-update_readonly_flag": {"readonly": flag}})
        assert r.status_code == 202, r.text

    readonly(True)
    _attach(dp, one, volume)
    assert eventually(lambda: dp.ssh(ns, ip1, "sudo blockdev --getro /dev/vdb"
                                     ).stdout.strip() == "1")
    out = dp.ssh(ns, ip1, "sudo dd if=/dev/zero of=/dev/vdb bs=512 count=1 2>/dev/null "
                 "&& echo wrote; sudo mkdir -p /mnt/ro && sudo mount -o ro /dev/vdb /mnt/ro "
                 "&& cat /mnt/ro/file && grep ' /mnt/ro ' /proc/mounts && sudo umount /mnt/ro")
    assert "wrote" not in out.stdout and out.stdout.split()[:2] == ["kept", "again"], out
    assert "/dev/vdb /mnt/ro ext4 ro," in out.stdout, out
    _detach(dp, one, volume)
    assert eventually(lambda: not _loops(dp))
    readonly(False)

    # snapshot -> new volume -> a third server, attached before its next boot too
    snap = dp.sdk.block_storage.create_snapshot(volume_id=volume.id, name="data-snap")
    dp.sdk.block_storage.wait_for_status(snap, status="available", wait=60, interval=0.2)
    copy = dp.sdk.block_storage.create_volume(size=2, snapshot_id=snap.id, name="copy")
    dp.sdk.block_storage.wait_for_status(copy, status="available", wait=60, interval=0.2)
    three = dp.server("vm-vol3", net.id)
    ip3 = dp.address(three)
    dp.wait_ssh(ns, ip3)
    _attach(dp, three, copy)
    assert eventually(lambda: dp.ssh(ns, ip3, "test -b /dev/vdb").returncode == 0)
    dp.sdk.compute.reboot_server(three, "HARD")
    # (a fresh look: the SDK's wait returns at once when the object it is given says ACTIVE;
    # HARD_REBOOT lasts until the new boot has started, so the login below is the new boot's)
    dp.sdk.compute.wait_for_server(dp.sdk.compute.get_server(three.id), status="ACTIVE",
                                   wait=60, interval=0.2)
    out = dp.wait_ssh(ns, ip3, f"readlink /dev/disk/by-id/virtio-{copy.id[:20]}; sudo mkdir -p"
                      " /mnt/c && sudo mount /dev/vdb /mnt/c && cat /mnt/c/file")
    assert out.split() == ["../../vdb", "kept", "again"], out

    # the audit: a loop device over a volume's file that no attachment explains is a
    # finding, and so is a guest's volume node gone missing
    stray = subprocess.run(["losetup", "--find", "--show", "--read-only",
                            str(dp.cloud.data_dir / "volumes" / volume.id)],
                           capture_output=True, text=True, check=True).stdout.strip()
    try:
        assert eventually(lambda: any(f["resource"] == "volume loop device (no attachment)/"
                                      f"{stray.removeprefix('/dev/')} {volume.id}"
                                      for f in wire_findings(dp))), wire_findings(dp)
    finally:
        subprocess.run(["losetup", "--detach", stray], check=True)
    out = dp.ssh(ns, ip3, "sudo umount /mnt/c && sudo rm /dev/vdb && echo ok")
    assert out.stdout.strip() == "ok", out
    assert any(f["resource"] == f"volume device node {three.id}/vdb {copy.id}"
               and f["actual"] == "missing" for f in wire_findings(dp)), wire_findings(dp)
    # ... made again by the reconciler's full check (every 30th pass: reconciler.FULL_EVERY)
    assert eventually(lambda: dp.ssh(ns, ip3, "test -b /dev/vdb").returncode == 0, timeout=180)


def _loops(dp: DataplaneCloud) -> list[str]:
    """The loop devices of the cloud's volumes."""
    out = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    return sorted(line.split(":")[0] for line in out.splitlines()
                  if str(dp.cloud.data_dir / "volumes") + "/" in line)
