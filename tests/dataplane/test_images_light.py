"""Images without a usable init (issue 30): the kit's light init boots them from their own
root (DHCP, the metadata service's hostname, key and user data) and starts their SSH server:
the image's own OpenSSH where it has one, else the kit's dropbear."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.dataplane.conftest import DataplaneCloud, eventually
from tests.dataplane.test_images_boot import _boot, _debian, _debian_files, _docker_archive, _upload

USER_DATA = "#!/bin/sh\necho \"ran as $(id -u)\" > /tmp/light-user-data\n"


def _console(dp: DataplaneCloud, server: object, text: str) -> str:
    """The server's console log once it shows `text`."""
    out = {"log": ""}

    def shown() -> bool:
        out["log"] = dp.sdk.compute.get_server_console_output(server)["output"]
        return text in out["log"]

    assert eventually(shown, timeout=120), out["log"][-3000:]
    return out["log"]


def test_a_busybox_image_gets_the_kits_dropbear(dataplane_cloud: DataplaneCloud,
                                                tmp_path: Path) -> None:
    """A docker image of a static busybox and its applets only: no /sbin/init, no
    /etc/passwd, no SSH server, no libc."""
    dp = dataplane_cloud
    tree = tmp_path / "tree"
    (tree / "bin").mkdir(parents=True)
    shutil.copy2("/bin/busybox", tree / "bin/busybox")
    applets = subprocess.run(["/bin/busybox", "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    for applet in applets:
        if applet != "busybox":
            (tree / "bin" / applet).symlink_to("busybox")
    assert not (tree / "sbin").exists() and not (tree / "etc").exists()
    archive = tmp_path / "busybox-docker.tar"
    _docker_archive(tree, archive)
    image = _upload(dp, "busybox-light", archive, "raw", "docker", user=None)
    net, _ = dp.network("dp-light", "10.91.0.0/24")
    vm = _boot(dp, "vm-light", [net.id], image.id, USER_DATA)
    assert vm.status == "ACTIVE"
    ns, ip = dp.names.dhcp(net.id), dp.address(vm)
    # the cloud's default user (the image names none), with the key pair's key
    out = dp.wait_ssh(ns, ip, "hostname; id -un; cat /tmp/light-user-data; "
                      "tr '\\0' ' ' < /proc/1/cmdline", timeout=240)
    lines = out.splitlines()
    assert lines[:3] == ["vm-light", "cirros", "ran as 0"], out
    # PID 1 is the SSH server: the kit's dropbear, by the kit's own loader
    assert lines[3].startswith("/run/guest/kit/lib64/ld-linux") and \
        "/run/guest/kit/usr/sbin/dropbear" in lines[3], out
    assert "cirros:x:1000:1000:cirros:/home/cirros:/bin/sh" in dp.ssh(
        ns, ip, "cat /etc/passwd").stdout
    log = _console(dp, vm, "vm-light login:")
    assert "the image has no /sbin/init" in log and "starting the kit's dropbear" in log, log


def test_a_debian_image_without_init_gets_its_own_openssh(dataplane_cloud: DataplaneCloud,
                                                          tmp_path: Path) -> None:
    """The Debian image's files as a docker image with /sbin/init removed: its own sshd
    answers, as its own user (os_admin_user), made by the light init."""
    dp = dataplane_cloud
    _debian(dp)
    raw, ext4, tree = _debian_files(tmp_path)
    raw.unlink()
    ext4.unlink()
    init = tree / "sbin"
    init = (tree / "usr/sbin" if init.is_symlink() else init) / "init"  # (merged /usr)
    assert init.is_symlink() or init.exists()
    init.unlink()
    archive = tmp_path / "debian-noinit.tar"
    _docker_archive(tree, archive)
    subprocess.run(["rm", "-rf", str(tree)], check=True)
    image = _upload(dp, "debian-noinit", archive, "raw", "docker")
    archive.unlink()
    net, _ = dp.network("dp-light-deb", "10.92.0.0/24")
    vm = _boot(dp, "vm-light-deb", [net.id], image.id, USER_DATA)
    assert vm.status == "ACTIVE"
    ns, ip = dp.names.dhcp(net.id), dp.address(vm)
    out = dp.wait_ssh(ns, ip, "hostname; id -un; cat /tmp/light-user-data; ps -e -o comm=",
                      timeout=240, user="debian")
    lines = out.splitlines()
    assert lines[:3] == ["vm-light-deb", "debian", "ran as 0"], out
    assert "sshd" in lines[3:] and not any("dropbear" in line for line in lines), out
    # the lease's DNS server, written where the image's resolv.conf link points (systemd-
    # resolved's file under /run, which no init of its made)
    assert "nameserver 10.92.0." in dp.ssh(ns, ip, "cat /etc/resolv.conf", user="debian").stdout
    scan = dp.in_ns(ns, "ssh-keyscan", ip)
    assert "OpenSSH" in scan.stdout + scan.stderr, scan
    log = _console(dp, vm, "vm-light-deb login:")
    assert "the image has no /sbin/init" in log and "image's OpenSSH server" in log, log
