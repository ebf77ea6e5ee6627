"""Debian guests created at once all boot (issue 30): each guest's user namespace is its own
id's, so what its systemd holds (inotify instances above all) counts against a limit of its
own, not against the machine's root's, which every guest shared (at 20 guests booting,
networkd and resolved failed "Too many open files" in most of them and eth0 stayed down);
and each guest weighs its vCPUs in the machine's CPU scheduler, as a VM's vCPU threads do,
where all the cloud's guests together weighed one process."""

from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path

from tests.dataplane.conftest import DataplaneCloud, eventually
from tests.dataplane.test_images_boot import _debian, _ssh_allowed

GUESTS = 6  # what a CI run on 2 cores affords; the bench boots 20 (bench/dataplane.py debian)
NS_GET_OWNER_UID = 0xB704  # _IO(0xb7, 0x4), linux/nsfs.h


def _userns_owner(dp: DataplaneCloud, server_id: str) -> int:
    path = Path("/run/stackling") / dp.prefix / "guests" / server_id / "userns"
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = bytearray(4)
        fcntl.ioctl(fd, NS_GET_OWNER_UID, buf)
        return struct.unpack("I", buf)[0]
    finally:
        os.close(fd)


def _base_id(dp: DataplaneCloud, server_id: str) -> int:
    """The machine's id of the guest's root (its id map's first line)."""
    pid = int((Path("/run/stackling") / dp.prefix / "guests" / server_id / "pid").read_text())
    from stackling.dataplane.guests import descendants

    for child in descendants(pid):
        try:
            fields = Path(f"/proc/{child}/uid_map").read_text().split()
        except OSError:
            continue
        if fields[:1] == ["0"] and fields[1] != "0":
            return int(fields[1])
    raise AssertionError(f"no process of guest {server_id} in its user namespace")


def _cpu_weights(dp: DataplaneCloud, server_ids: list[str]) -> tuple[int, list[int]]:
    """The cloud's level's CPU weight and its guests' (cgroup v1 cpu.shares or v2 cpu.weight)."""
    from stackling.dataplane.cgroups import Cgroups

    cg = Cgroups(dp.prefix)
    top, name = ((cg.v1["cpu"], "cpu.shares") if "cpu" in cg.v1 else (cg.v2, "cpu.weight"))
    assert top is not None
    level = top / dp.prefix
    return (int((level / name).read_text()),
            [int((level / sid / name).read_text()) for sid in server_ids])


def test_debian_guests_created_at_once_all_boot(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    image = _debian(dp)
    net, _ = dp.network("dp-deb-many", "10.88.0.0/24")
    _ssh_allowed(dp)
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    key = dp.keypair().name
    servers = [dp.sdk.compute.create_server(
        name=f"deb{i}", image_id=image.id, flavor_id=flavor.id, key_name=key,
        networks=[{"uuid": net.id}]) for i in range(GUESTS)]
    servers = [dp.sdk.compute.wait_for_server(s, wait=300, interval=0.5) for s in servers]
    ns = dp.names.dhcp(net.id)
    for server in servers:
        ip = dp.address(server)
        assert dp.wait_ssh(ns, ip, "hostname", timeout=900, user="debian").strip() == server.name
        out: dict[str, str] = {}

        def booted(ip: str = ip, out: dict[str, str] = out) -> bool:
            out["status"] = dp.ssh(ns, ip, "cloud-init status; systemctl is-system-running",
                                   user="debian").stdout
            return "status: done" in out["status"] and "starting" not in out["status"]

        assert eventually(booted, timeout=600), out
        # every unit started: the network's own (networkd, resolved) too, with eth0 up
        assert "running" in out["status"], (
            out, dp.ssh(ns, ip, "systemctl --failed --no-legend", user="debian").stdout)
        assert dp.ssh(ns, ip, "systemctl is-active systemd-networkd systemd-resolved",
                      user="debian").stdout.split() == ["active", "active"]
        # the guest's user namespace is its own root's, not the machine's root's
        assert _userns_owner(dp, server.id) == _base_id(dp, server.id) != 0
    # each guest weighs its vCPU as one process of the machine; the cloud, all of them
    total, weights = _cpu_weights(dp, [s.id for s in servers])
    assert len(set(weights)) == 1 and weights[0] in (1024, 100)  # (m1.tiny: 1 vCPU)
    assert total == sum(weights)  # (no other guest in this cloud)
