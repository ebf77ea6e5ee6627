"""The cirros guest behaves as the real cirros does for its user (issue 30): what upstream's
scenario tests and users do there works, as the `cirros` user over SSH: sudo without a
password, ping, curl and wget from a neighbour's `nc -l`, scp and sftp both ways."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tests.dataplane.conftest import SSH_OPTS, DataplaneCloud, eventually
from tests.dataplane.test_images_boot import _ssh_allowed


def test_the_cirros_user_has_cirros_tools(dataplane_cloud: DataplaneCloud,
                                          tmp_path: Path) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-tools", "10.88.0.0/24")
    _ssh_allowed(dp)  # from the network's DHCP namespace, as a user's machine
    vm = dp.server("vm-tools", net.id)
    peer = dp.server("vm-peer", net.id)
    ns, ip, peer_ip = dp.names.dhcp(net.id), dp.address(vm), dp.address(peer)
    assert dp.wait_ssh(ns, ip).strip() == "vm-tools"
    assert dp.wait_ssh(ns, peer_ip).strip() == "vm-peer"

    # sudo without a password: root in the guest (root-only reads and writes), and that root
    # is the guest's, not the machine's (its uid 0 is a range of the machine's ids)
    out = dp.ssh(ns, ip, "id -u; sudo -n id -u; sudo -n sh -c 'echo secret > /root/only; "
                 "chmod 600 /root/only'; sudo -n cat /root/only; cat /root/only 2>/dev/null "
                 "|| echo refused; sudo -n cat /proc/self/uid_map")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[:4] == ["1000", "0", "secret", "refused"], out.stdout
    inside, outside, count = lines[4].split()
    assert inside == "0" and int(outside) > 0 and count == "65536", lines[4]
    # the set-user-ID kit is nobody's way to the machine's root: nosuid on the machine
    kit = f"/run/stackling/{dp.prefix}/rootfs"
    mounts = [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    options = [fields[5] for fields in mounts if fields[4] == kit]
    assert options and all("nosuid" in o.split(",") for o in options), options

    # the tools are there, and ping works for the user (the shell's applet, as tests call it)
    out = dp.ssh(ns, ip, "PATH=$PATH:/sbin:/usr/sbin; for t in curl wget nc ip udhcpc dhclient "
                 "scp ping; do command -v $t >/dev/null || echo missing $t; done")
    assert out.returncode == 0 and out.stdout == "", out
    out = dp.ssh(ns, ip, f"ping -c 1 -W 5 {peer_ip}")
    assert out.returncode == 0 and " 0% packet loss" in out.stdout, out

    # curl and wget fetch from the neighbour's `nc -l` (its user's: a port above 1024)
    serve = ("printf 'HTTP/1.0 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\nhello from nc\\n' "
             "> /tmp/reply; setsid sh -c 'while :; do nc -l -p 8080 < /tmp/reply; done' "
             ">/dev/null 2>&1 < /dev/null &")
    assert dp.ssh(ns, peer_ip, serve).returncode == 0
    url = f"http://{peer_ip}:8080/"
    fetched: dict[str, str] = {}

    def fetch(tool: str, command: str) -> bool:
        fetched[tool] = dp.ssh(ns, ip, command).stdout
        return fetched[tool] == "hello from nc\n"

    assert eventually(lambda: fetch("curl", f"curl -sS -m 5 {url}")), fetched
    # (busybox 1.35's wget, Debian 12's, crashes parsing -T, on the machine too: bounded here
    # by timeout instead)
    assert eventually(lambda: fetch("wget", f"timeout 10 wget -q -O - {url}")), fetched

    # scp (OpenSSH's SFTP protocol, and the legacy one: -O) and sftp, both ways, intact
    data = os.urandom(300_000)
    local = tmp_path / "up.bin"
    local.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    key = ["-i", str(dp.key), *SSH_OPTS]
    remote = f"cirros@{ip}"
    for mode, flags in (("sftp", []), ("legacy", ["-O"])):
        up = dp.in_ns(ns, "scp", *flags, *key, str(local), f"{remote}:{mode}.bin", timeout=60)
        assert up.returncode == 0, (mode, up.stderr)
        back = tmp_path / f"{mode}-back.bin"
        down = dp.in_ns(ns, "scp", *flags, *key, f"{remote}:{mode}.bin", str(back), timeout=60)
        assert down.returncode == 0, (mode, down.stderr)
        assert back.read_bytes() == data, mode
    batch = tmp_path / "batch"
    back = tmp_path / "sftp-b-back.bin"
    batch.write_text(f"put {local} batch.bin\nget batch.bin {back}\n")
    out = dp.in_ns(ns, "sftp", *key, "-b", str(batch), remote, timeout=60)
    assert out.returncode == 0, out.stderr
    assert back.read_bytes() == data
    out = dp.ssh(ns, ip, "sha256sum sftp.bin legacy.bin batch.bin; ls -l batch.bin")
    assert [line.split()[0] for line in out.stdout.splitlines()[:3]] == [digest] * 3, out
    assert " cirros " in out.stdout.splitlines()[3], out  # the user's own files
