"""The boot kit (dataplane/rootfs.py): its scripts parse, the light init is cirros's init run
from the kit's place (one text), and the kit's binaries run by the kit's own loader."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from stackling.dataplane import hotplug, rootfs

# a kit script or binary named by its path in the kit's own root (cirros's), not through $K
# (`$K/...`, or `${K:+...}/...`)
BARE_KIT_PATH = re.compile(r"(?<![\w$K}])/(?:usr/)?sbin/(?:guest-|light-init|nic-watch|dhcp|"
                           r"ipv6|kit-run|dhclient|dropbear)")


@pytest.mark.skipif(not os.path.exists(rootfs.BUSYBOX), reason="no busybox")
@pytest.mark.parametrize("name", [name for name, _ in rootfs._scripts()])
def test_kit_scripts_parse(name: str) -> None:
    text = dict(rootfs._scripts())[name]
    out = subprocess.run([rootfs.BUSYBOX, "sh", "-n"], input=text, text=True,
                         capture_output=True)
    assert out.returncode == 0, out.stderr


def test_the_light_init_is_the_kits_init_from_the_kits_place() -> None:
    assert rootfs.LIGHT_INIT.split() == [f"K={rootfs.KIT}", ".", "$K/sbin/guest-init"]
    assert "sbin/light-init" in dict(rootfs._scripts())
    # every kit path the boot's scripts run is through $K (empty in cirros's own root)
    for text in (rootfs.INIT, rootfs.RUN, rootfs.IPV6_UP, hotplug.NIC_WATCH):
        assert not BARE_KIT_PATH.findall(text), BARE_KIT_PATH.findall(text)
    # scripts other programs exec (udhcpc, dhclient) name the kit's shell: an image may have
    # no /bin/sh
    for text in (rootfs.DHCP_EVENT, rootfs.DHCP6_EVENT):
        assert text.startswith(f"#!{rootfs.KIT}/bin/sh\n")
    # the light init's SSH server: the image's OpenSSH where it has one, else the kit's
    # dropbear by the kit's loader
    assert "exec /usr/sbin/sshd -D -e" in rootfs.RUN and "ssh-keygen -A" in rootfs.RUN
    assert "${K:+$K/sbin/kit-run $K}/usr/sbin/dropbear" in rootfs.RUN


def test_the_kit_digest_names_the_light_init(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    before = rootfs.template_dir(tmp_path)
    monkeypatch.setattr(rootfs, "LIGHT_INIT", rootfs.LIGHT_INIT + "# changed\n")
    assert rootfs.template_dir(tmp_path) != before


@pytest.mark.skipif(not all(os.path.exists(p) for p in (rootfs.BUSYBOX, *rootfs.BINARIES))
                    or not shutil.which("ldd"), reason="no busybox, dropbear or setpriv")
def test_build_writes_the_light_init_and_the_kits_runner(tmp_path: Path) -> None:
    root = rootfs.build(tmp_path / "rootfs-test")
    assert (root / "sbin/light-init").read_text() == rootfs.LIGHT_INIT
    runner = (root / "sbin/kit-run").read_text()
    assert os.access(root / "sbin/kit-run", os.X_OK)
    match = re.fullmatch(rf'#!{rootfs.KIT}/bin/sh\nexec {rootfs.KIT}(\S+) --library-path '
                         r'(\S+) "\$@"\n', runner)
    assert match, runner
    assert (root / match[1].lstrip("/")).is_file()  # the kit's own loader
    dirs = match[2].split(":")
    assert all(d.startswith(rootfs.KIT + "/") and (root / d[len(rootfs.KIT) + 1:]).is_dir()
               for d in dirs), dirs
    # setpriv by the same loader and libraries
    assert (root / "sbin/setpriv").read_text().startswith(
        f"exec {rootfs.KIT}{match[1]} --library-path {match[2]} ")


CIRROS_TOOLS = ("/usr/bin/sudo", "/usr/libexec/sudo/sudoers.so", "/usr/bin/curl", "/usr/bin/scp",
                "/usr/lib/openssh/sftp-server")


@pytest.mark.skipif(not all(os.path.exists(p) for p in (rootfs.BUSYBOX, *rootfs.BINARIES,
                                                        *CIRROS_TOOLS))
                    or not shutil.which("ldd"), reason="make dataplane-deps not run")
def test_build_gives_cirros_its_tools_set_user_id_only_when_published(tmp_path: Path) -> None:
    import stat

    root = rootfs.build(tmp_path / "rootfs-test")
    for src, dst in rootfs.OPTIONAL_BINARIES.items():
        if os.path.exists(src):
            assert (root / dst).is_file(), dst
            # with every library it links, at the machine's path (cirros's root is the kit)
            for lib in rootfs._libraries(src):
                assert (root / lib.lstrip("/")).exists(), (src, lib)
    # sftp-server where the kit's dropbear execs it for the sftp subsystem
    assert b"/usr/lib/sftp-server\0" in Path("/usr/sbin/dropbear").read_bytes()
    assert (root / "usr/lib/sftp-server").is_file()
    for name, (text, mode) in rootfs.KIT_FILES.items():
        assert (root / name).read_text() == text
        assert stat.S_IMODE((root / name).stat().st_mode) == mode
    # set-user-ID nowhere in the template on the machine's disk (publish() sets it, on a
    # tmpfs the machine mounts nosuid)
    for name in rootfs.SETUID:
        assert not (root / name).stat().st_mode & stat.S_ISUID, name
    # the image's user gets sudo at its first boot, and its host name resolves (sudo asks)
    assert "NOPASSWD:ALL\" > /etc/sudoers.d/90-cloud-init-users" in rootfs.INIT
    assert 'echo "127.0.1.1 $host" >> /etc/hosts' in rootfs.INIT
