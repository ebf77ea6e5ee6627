"""Servers run their image (issue 30): a Debian cloud image boots its own systemd and
cloud-init as a system container; images of each kind boot; an image that cannot boot ends
its server in ERROR with a fault saying why."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.dataplane.conftest import DataplaneCloud, eventually

DEBIAN = "debian-12"


def _debian(dp: DataplaneCloud) -> Any:
    image = dp.sdk.image.find_image(DEBIAN)
    if image is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no debian-12 image: `make image-debian` must have built it")
        pytest.skip("no debian-12 image (make image-debian)")
    return image


def _ssh_allowed(dp: DataplaneCloud) -> None:
    """SSH from the network's DHCP namespace (not a member of the default group) let in."""
    group = dp.sdk.network.find_security_group("default", project_id=dp.sdk.current_project_id)
    for rule in ({"protocol": "tcp", "port_range_min": 22, "port_range_max": 22},
                 {"protocol": "icmp"}):
        try:
            dp.sdk.network.create_security_group_rule(
                security_group_id=group.id, direction="ingress", ethertype="IPv4",
                remote_ip_prefix="0.0.0.0/0", **rule)
        except Exception:  # noqa: BLE001 - already there (409)
            pass


def _boot(dp: DataplaneCloud, name: str, networks: list[str], image_id: str,
          user_data: str | None = None, wait: bool = True, **extra: Any) -> Any:
    _ssh_allowed(dp)
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.small")
    kwargs: dict[str, Any] = dict(extra)
    if user_data:
        kwargs["user_data"] = base64.b64encode(user_data.encode()).decode()
    server = dp.sdk.compute.create_server(
        name=name, image_id=image_id, flavor_id=flavor.id, key_name=dp.keypair().name,
        networks=[{"uuid": n} for n in networks], **kwargs)
    if not wait:
        return server
    return dp.sdk.compute.wait_for_server(server, wait=180, interval=0.2)


def _cloud_init_done(dp: DataplaneCloud, ns: str, ip: str, user: str = "debian") -> str:
    """`cloud-init status --long` once cloud-init has finished (it runs after SSH answers)."""
    dp.wait_ssh(ns, ip, "true", timeout=240, user=user)
    out: dict[str, str] = {}

    def finished() -> bool:
        out["text"] = dp.ssh(ns, ip, "cloud-init status --long", user=user).stdout
        return "status: done" in out["text"] or "status: error" in out["text"]

    assert eventually(finished, timeout=240), out
    return out["text"]


def test_debian_boots_systemd_and_cloud_init(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    image = _debian(dp)
    net, _ = dp.network("dp-deb", "10.87.0.0/24")
    key = dp.key.with_suffix(".pub").read_text().strip()
    user_data = "\n".join([
        "#cloud-config",
        "users:",
        "  - default",
        "  - name: alice",
        "    shell: /bin/bash",
        "    sudo: ALL=(ALL) NOPASSWD:ALL",
        f"    ssh_authorized_keys: [{json.dumps(key)}]",
        "write_files:",
        "  - path: /etc/stackling-test",
        "    content: \"written by cloud-init\\n\"",
        "runcmd:",
        "  - [sh, -c, 'echo ran > /root/runcmd']",
        ""])
    vm = _boot(dp, "vm-deb", [net.id], image.id, user_data)
    ns, ip = dp.names.dhcp(net.id), dp.address(vm)
    status = _cloud_init_done(dp, ns, ip)
    assert "status: done" in status and "DataSourceOpenStack" in status, status
    out = dp.ssh(ns, ip, ". /etc/os-release; echo $ID $VERSION_ID; ps -p 1 -o comm=; "
                 "hostname; systemd-detect-virt --container; sudo -n true && echo sudo-ok",
                 user="debian").stdout.split()
    assert out == ["debian", "12", "systemd", "vm-deb", "lxc", "sudo-ok"], out
    # #cloud-config: a user with its key and sudo, a file, a command
    out = dp.ssh(ns, ip, "id -un; sudo cat /etc/stackling-test /root/runcmd", user="alice")
    assert out.stdout.split("\n")[:3] == ["alice", "written by cloud-init", "ran"], out
    # root in the guest is not root on the machine (each refused through SSH)
    port = dp.cloud.url.rsplit(":", 1)[1].split("/")[0]
    for command in ("mount -t proc none /mnt", "mount -t sysfs none /mnt",
                    "modprobe dummy", "sh -c 'echo 1 > /proc/sys/kernel/sysrq'",
                    f"curl -s -m 3 http://127.0.0.1:{port}/"):
        out = dp.ssh(ns, ip, f"sudo {command} 2>&1; echo rc=$?", user="debian").stdout
        assert "rc=0" not in out, (command, out)
    # its processes are its own (no process of the machine's shows)
    assert int(dp.ssh(ns, ip, "ps -e --no-headers | wc -l", user="debian").stdout) < 60
    # a guest past its flavor's RAM is killed in its own cgroup; it and the cloud answer on
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.small")
    hog = dp.ssh(ns, ip, f"python3 -c 'b = b\"x\" * ({flavor.ram + 512} << 20)'; echo rc=$?",
                 user="debian").stdout
    assert "rc=0" not in hog, hog
    assert dp.wait_ssh(ns, ip, "echo alive", user="debian").strip() == "alive"
    assert dp.sdk.compute.get_server(vm.id).status == "ACTIVE"
    # the console log is the image's own boot
    log = dp.sdk.compute.get_server_console_output(vm)["output"]
    assert "Debian GNU/Linux 12" in log and "cloud-init" in log, log[-2000:]
    # its root disk is its own: kept across a reboot, with the host key made at first boot
    keys = dp.in_ns(ns, "ssh-keyscan", "-t", "ed25519", ip).stdout.split()[-1:]
    assert dp.ssh(ns, ip, "touch ~/kept", user="debian").returncode == 0
    dp.sdk.compute.reboot_server(vm, "SOFT")
    # (a fresh look: the SDK's wait returns at once for an object that says ACTIVE)
    dp.sdk.compute.wait_for_server(dp.sdk.compute.get_server(vm.id), status="ACTIVE",
                                   wait=180, interval=0.2)
    assert eventually(lambda: dp.sdk.compute.get_server_console_output(vm)["output"]
                      .count("Debian GNU/Linux 12") >= 2, timeout=240)
    assert dp.wait_ssh(ns, ip, "ls ~", user="debian", timeout=240).split() == ["kept"]
    assert dp.in_ns(ns, "ssh-keyscan", "-t", "ed25519", ip).stdout.split()[-1:] == keys


def test_config_drive_and_two_nics(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    image = _debian(dp)
    one, _ = dp.network("dp-cd1", "10.88.1.0/24")
    two, _ = dp.network("dp-cd2", "10.88.2.0/24")
    vm = _boot(dp, "vm-cd", [one.id, two.id], image.id,
               "#cloud-config\nruncmd:\n  - [sh, -c, 'echo drive > /root/runcmd']\n",
               config_drive=True)
    ports = {p.network_id: p.fixed_ips[0]["ip_address"]
             for p in dp.sdk.network.ports(device_id=vm.id)}
    ns = dp.names.dhcp(one.id)
    status = _cloud_init_done(dp, ns, ports[one.id])
    assert "status: done" in status and "DataSourceConfigDrive" in status, status
    # network_data.json's two NICs, both configured by the image's own network stack
    addrs = dp.ssh(ns, ports[one.id], "ip -4 -o addr show scope global", user="debian").stdout
    assert ports[one.id] in addrs and ports[two.id] in addrs, addrs
    assert dp.ssh(dp.names.dhcp(two.id), ports[two.id], "sudo cat /root/runcmd",
                  user="debian").stdout.strip() == "drive"


def _docker_archive(root: Path, out: Path) -> None:
    """A `docker save` archive of one layer holding `root`'s tree."""
    layer = out.with_suffix(".layer.tar")
    subprocess.run(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", str(layer),
                    "."], check=True)
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "config": {"Cmd": ["/sbin/init"]},
                         "rootfs": {"type": "layers", "diff_ids": []}}).encode()
    with tarfile.open(out, "w") as tar:
        tar.add(layer, "layer0/layer.tar")
        for name, body in (("config.json", config), ("manifest.json", json.dumps(
                [{"Config": "config.json", "RepoTags": ["debian:12"],
                  "Layers": ["layer0/layer.tar"]}]).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    layer.unlink()


def _upload(dp: DataplaneCloud, name: str, path: Path, disk_format: str,
            container_format: str = "bare", user: str | None = "debian") -> Any:
    """`user`: the image's os_admin_user (None: no such property, the cloud's default)."""
    image = dp.sdk.image.create_image(
        name=name, filename=str(path), disk_format=disk_format,
        container_format=container_format, visibility="private",
        properties={"os_admin_user": user} if user else {}, wait=True)
    return image


def _debian_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The Debian image's qcow2 as a raw disk, its root partition as a bare ext4 filesystem,
    and that filesystem's files as a tree (under `tmp_path`)."""
    source = Path(os.environ.get("STACKLING_IMAGE_DEBIAN",
                                 "/var/cache/stackling/images/debian-12.qcow2"))
    raw = tmp_path / "debian.raw"
    subprocess.run(["qemu-img", "convert", "-O", "raw", str(source), str(raw)], check=True)
    table = json.loads(subprocess.run(["sfdisk", "--json", str(raw)], capture_output=True,
                                      text=True, check=True).stdout)["partitiontable"]
    part = table["partitions"][0]
    ext4 = tmp_path / "debian.ext4"
    subprocess.run(["dd", f"if={raw}", f"of={ext4}", "bs=512", f"skip={part['start']}",
                    f"count={part['size']}", "conv=sparse", "status=none"], check=True)
    tree = tmp_path / "tree"
    tree.mkdir()
    subprocess.run(["debugfs", "-R", f"rdump / {tree}", str(ext4)], check=True,
                   capture_output=True)
    return raw, ext4, tree


def test_images_of_each_kind_boot(dataplane_cloud: DataplaneCloud, tmp_path: Path) -> None:
    """The Debian image as raw and as a bare ext4 filesystem, a docker archive of its files,
    and cirros: each boots and answers SSH."""
    dp = dataplane_cloud
    debian = _debian(dp)
    raw, ext4, tree = _debian_files(tmp_path)
    archive = tmp_path / "debian-docker.tar"
    _docker_archive(tree, archive)
    images = {"raw": _upload(dp, "deb-raw", raw, "raw"),
              "ext4": _upload(dp, "deb-ext4", ext4, "raw"),
              "docker": _upload(dp, "deb-docker", archive, "raw", "docker")}
    for path in (raw, ext4, archive):
        path.unlink()
    net, _ = dp.network("dp-kinds", "10.89.0.0/24")
    servers = {kind: _boot(dp, f"vm-{kind}", [net.id], image.id, wait=False)
               for kind, image in images.items()}
    servers["cirros"] = dp.server("vm-cirros", net.id)
    ns = dp.names.dhcp(net.id)
    for kind, server in servers.items():
        server = dp.sdk.compute.wait_for_server(server, wait=180, interval=0.2)
        user = "cirros" if kind == "cirros" else "debian"
        name = dp.wait_ssh(ns, dp.address(server), "hostname", timeout=240, user=user)
        assert name.strip() == f"vm-{kind}", (kind, name)
    assert debian.id not in {i.id for i in images.values()}


def _fault(dp: DataplaneCloud, server: Any) -> str:
    def failed() -> bool:
        return dp.sdk.compute.get_server(server.id).status == "ERROR"

    assert eventually(failed, timeout=120), dp.sdk.compute.get_server(server.id).status
    return dp.sdk.compute.get_server(server.id).fault["message"]


def test_an_image_that_cannot_boot_ends_in_error(dataplane_cloud: DataplaneCloud,
                                                 tmp_path: Path) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-bad", "10.90.0.0/24")
    garbage = tmp_path / "garbage.qcow2"
    garbage.write_bytes(b"QFI\xfb" + os.urandom(4096))
    blank = tmp_path / "blank.raw"
    blank.write_bytes(b"\0" * (1 << 20))
    escape = tmp_path / "escape.tar"
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        info = tarfile.TarInfo("../../etc/escaped")
        body = b"out\n"
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    with tarfile.open(escape, "w") as tar:
        for name, data in (("l/layer.tar", layer.getvalue()), ("manifest.json", json.dumps(
                [{"Config": "c.json", "Layers": ["l/layer.tar"]}]).encode()),
                ("c.json", b"{}")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    cases = {"corrupt": (garbage, "qcow2", "bare", "qcow2"),
             "no root": (blank, "raw", "bare", "root filesystem"),
             "escape": (escape, "raw", "docker", "escapes")}
    before = set(Path("/etc").iterdir())
    servers = {}
    for name, (path, disk, container, _) in cases.items():
        image = _upload(dp, f"bad-{name.replace(' ', '-')}", path, disk, container)
        servers[name] = _boot(dp, f"vm-bad-{name.replace(' ', '-')}", [net.id], image.id,
                              wait=False)
    for name, server in servers.items():
        message = _fault(dp, server)
        assert cases[name][3] in message, (name, message)
    assert set(Path("/etc").iterdir()) == before
    assert not Path("/etc/escaped").exists()
