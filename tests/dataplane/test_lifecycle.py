"""Server actions act on the guest as a hypervisor would, and the dataplane survives a
kill -9 of the service: the next start finds every guest and dnsmasq, nothing twice."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.dataplane.conftest import DataplaneCloud, eventually


def _ssh_fails(dp: DataplaneCloud, namespace: str, address: str) -> bool:
    try:
        return dp.ssh(namespace, address, "true").returncode != 0
    except subprocess.TimeoutExpired:
        return True


def _host_key(dp: DataplaneCloud, namespace: str, address: str) -> list[str]:
    return dp.in_ns(namespace, "ssh-keyscan", "-t", "ed25519", address).stdout.split()[-1:]


def test_pause_reboot_rebuild(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-life", "10.81.0.0/24")
    probe = dp.server("vm-probe", net.id)
    vm = dp.server("vm-life", net.id)
    ns, ip = dp.names.guest(probe.id), dp.address(vm)
    assert dp.wait_ssh(ns, ip).strip() == "vm-life"

    # paused: frozen, its network too (no ping, no connection), as a paused VM; a connection
    # open before goes on after unpause
    import subprocess

    from tests.dataplane.conftest import SSH_OPTS, eventually

    held = subprocess.Popen(
        # (no keep-alive for this one: ssh takes an option's first value, and the pause may
        # well outlast SSH_OPTS' 2 x 2 s of unanswered keep-alives on a loaded machine)
        ["nsenter", f"--net=/run/netns/{ns}", "--", "ssh", "-i", str(dp.key),
         "-o", "ServerAliveInterval=0", *SSH_OPTS,
         f"cirros@{ip}", "echo open; read _; echo resumed"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert held.stdout is not None and held.stdout.readline().strip() == "open"
    dp.sdk.compute.pause_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="PAUSED", wait=60, interval=0.2)
    assert eventually(lambda: _ssh_fails(dp, ns, ip))
    assert dp.in_ns(ns, "ping", "-c", "2", "-W", "1", ip).returncode != 0
    dp.sdk.compute.unpause_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=60, interval=0.2)
    assert dp.wait_ssh(ns, ip).strip() == "vm-life"
    held.stdin.write("\n")  # type: ignore[union-attr]
    held.stdin.flush()  # type: ignore[union-attr]
    assert held.stdout.readline().strip() == "resumed"
    held.wait(timeout=30)

    # reboot: the guest boots again (a file in its /dev/shm, a tmpfs, is gone; one on its
    # root disk is kept, as a VM's; the console shows it)
    assert dp.ssh(ns, ip, "touch /dev/shm/before-reboot ~/kept").returncode == 0
    host_key = _host_key(dp, ns, ip)
    dp.sdk.compute.reboot_server(vm, "SOFT")
    dp.sdk.compute.wait_for_server(dp.sdk.compute.get_server(vm.id), status="ACTIVE",
                                   wait=60, interval=0.2)
    deadline = time.monotonic() + 60
    out = None
    while time.monotonic() < deadline:
        out = dp.ssh(ns, ip, "ls /dev/shm/before-reboot 2>/dev/null || echo rebooted; ls ~")
        if out.returncode == 0 and out.stdout.split()[:1] == ["rebooted"]:
            break
        time.sleep(0.2)
    assert out is not None and out.stdout.split() == ["rebooted", "kept"], out
    log = dp.cloud.cli("console", "log", "show", vm.id, parse=False)
    assert log.count("vm-life login:") == 2, log
    assert _host_key(dp, ns, ip) == host_key  # made at first boot, on its disk
    # a clean stop of the cloud ends its guests; the next start boots them on the same
    # disks: /home and the host key as they were
    dp.cloud.stop()
    dp.cloud.start()
    assert dp.wait_ssh(ns, ip, "ls ~", timeout=120).split() == ["kept"]
    assert _host_key(dp, ns, ip) == host_key

    # rebuild boots it once more, with the same port and address
    image = dp.sdk.image.find_image("cirros")
    boots = dp.sdk.compute.get_server_console_output(vm)["output"].count("vm-life login:")
    dp.sdk.compute.rebuild_server(vm, image=image.id)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=60, interval=0.2)
    # polled through the API (the CLI above already showed the same log); no CLI per poll
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and dp.sdk.compute.get_server_console_output(
            vm)["output"].count("vm-life login:") <= boots:
        time.sleep(0.2)
    assert dp.wait_ssh(ns, ip).strip() == "vm-life"
    assert dp.ssh(ns, ip, "ls ~").stdout.split() == []  # its root disk afresh


def _processes(marker: str) -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            # (a guest's mount supervisor is its launcher's fork: guest_mounts.py)
            if marker in cmd and comm != "guest-mounts":
                out.append(cmd)
    return out


def test_kill_9_and_start_restores_everything_once(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net1, sub1 = dp.network("dp-k1", "10.82.1.0/24")
    net2, sub2 = dp.network("dp-k2", "10.82.2.0/24")
    router = dp.sdk.network.create_router(name="dp-k-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub1.id)
    dp.sdk.network.add_interface_to_router(router, subnet=sub2.id)
    one = dp.server("vm-k1", net1.id)
    two = dp.server("vm-k2", net2.id)
    two_ip = dp.address(two)
    assert dp.wait_ssh(dp.names.guest(one.id), two_ip).strip() == "vm-k2"
    namespaces = sorted(n for n in _netns() if n.startswith(dp.prefix))
    run_dir = f"/run/stackling/{dp.prefix}"
    guests = sorted(_processes(f"{run_dir}/guests/"))
    dnsmasqs = sorted(_processes(f"{run_dir}/dhcp/"))
    assert len(guests) == 2 and len(dnsmasqs) == 2

    dp.cloud.stop(kill=True)
    # what the dead service programmed keeps working: the guests are not its children
    assert dp.wait_ssh(dp.names.guest(one.id), two_ip).strip() == "vm-k2"
    # remove a piece by hand, as a crash halfway through a change might leave it
    subprocess.run(["ip", "netns", "del", dp.names.router(router.id)], check=True)
    deadline = time.monotonic() + 30  # the kernel dismantles a namespace asynchronously
    while not dp.unreachable(dp.names.guest(one.id), two_ip) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert dp.unreachable(dp.names.guest(one.id), two_ip)

    dp.cloud.start()
    assert dp.wait_ssh(dp.names.guest(one.id), two_ip).strip() == "vm-k2"
    assert sorted(n for n in _netns() if n.startswith(dp.prefix)) == namespaces
    assert sorted(_processes(f"{run_dir}/guests/")) == guests
    assert sorted(_processes(f"{run_dir}/dhcp/")) == dnsmasqs
    # the metadata service answers again (the new process listens in the DHCP namespace)
    out = dp.ssh(dp.names.guest(one.id), two_ip,
                 "printf 'GET /latest/meta-data/hostname HTTP/1.0\\r\\n\\r\\n' "
                 "| nc -w 3 169.254.169.254 80 | tail -1")
    assert out.stdout.strip() == "vm-k2", out


def test_a_nic_deleted_by_hand_is_plugged_again_and_configured(
        dataplane_cloud: DataplaneCloud) -> None:
    """As a VM whose NIC its hypervisor plugs again: the reconciler plugs the port anew into
    the running guest, which takes its address and default route again by DHCP (it answers
    across a router) without booting."""
    dp = dataplane_cloud
    net1, sub1 = dp.network("dp-re1", "10.84.1.0/24")
    net2, sub2 = dp.network("dp-re2", "10.84.2.0/24")
    router = dp.sdk.network.create_router(name="dp-re-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub1.id)
    dp.sdk.network.add_interface_to_router(router, subnet=sub2.id)
    one = dp.server("vm-re1", net1.id)
    two = dp.server("vm-re2", net2.id)
    two_ip, two_ns = dp.address(two), dp.names.guest(two.id)
    assert dp.wait_ssh(dp.names.guest(one.id), two_ip).strip() == "vm-re2"

    def eth0() -> str:
        return dp.in_ns(two_ns, "ip", "-o", "link", "show", "eth0").stdout.split(":")[0]

    before = eth0()
    tap = dp.names.tap(next(iter(dp.sdk.network.ports(device_id=two.id))).id)
    holder = next(ns for ns in _netns() if ns.startswith(dp.prefix) and f" {tap}@"
                  in dp.in_ns(ns, "ip", "-o", "link").stdout)  # the guest's host
    subprocess.run(["ip", "-n", holder, "link", "del", tap], check=True)
    assert eventually(lambda: eth0() not in ("", before))  # plugged anew: another link
    assert dp.wait_ssh(dp.names.guest(one.id), two_ip).strip() == "vm-re2"
    log = dp.sdk.compute.get_server_console_output(two)["output"]
    assert "NIC eth0 hot-plugged" in log and log.count("vm-re2 login:") == 1, log


def _netns() -> list[str]:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
