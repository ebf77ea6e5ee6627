"""The guest boundary (issue 29; docs/security.md "The guest boundary"): root in a guest is
root of its own namespaces only. Each escape a member tried on the landed cloud is tried
again from a root shell inside a guest (its user data gives root the key, as a user does)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.dataplane.conftest import DataplaneCloud, eventually

ROOT_KEY = ("#!/bin/sh\nmkdir -p /root/.ssh\ncp /home/cirros/.ssh/authorized_keys /root/.ssh/\n"
            "chmod 700 /root/.ssh\n")


def _guest_dir(dp: DataplaneCloud, server_id: str) -> Path:
    return Path("/run/stackling") / dp.prefix / "guests" / server_id


def _guest_pids(dp: DataplaneCloud, server_id: str) -> list[int]:
    """The guest's processes as the machine numbers them (its launcher's descendants)."""
    from stackling.dataplane.guests import descendants

    return descendants(int((_guest_dir(dp, server_id) / "pid").read_text()))


def _guest_procs(dp: DataplaneCloud, server_id: str) -> dict[int, tuple[str, dict[str, str]]]:
    """Each of the guest's processes that is still there once read: its user namespace and
    its status (a process of the guest may end between the walk and the read)."""
    procs = {}
    for pid in _guest_pids(dp, server_id):
        try:
            procs[pid] = (os.readlink(f"/proc/{pid}/ns/user"), _status(pid))
        except (FileNotFoundError, ProcessLookupError):
            continue
    return procs


def _status(pid: int | str) -> dict[str, str]:
    text = Path(f"/proc/{pid}/status").read_text()
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def _expected_caps() -> str:
    from stackling.dataplane import boundary

    return f"{boundary.caps_mask():016x}"


def _root_guest(dp: DataplaneCloud, name: str, net_id: str, **kw: Any) -> tuple[Any, str]:
    server = dp.server(name, net_id, user_data=ROOT_KEY, **kw)
    return server, dp.address(server)


def test_root_in_a_guest_holds_nothing_of_the_machine(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-bound", "10.81.0.0/24")
    vm, ip = _root_guest(dp, "vm-bound", net.id)
    peer = dp.server("vm-peer", net.id)
    ns = dp.names.guest(peer.id)
    assert dp.wait_ssh(ns, ip, user="root").strip() == "vm-bound"

    def root(command: str) -> str:
        out = dp.ssh(ns, ip, command + " 2>&1; echo rc=$?", user="root")
        return out.stdout

    caps = _expected_caps()
    # the capability masks, exactly: the init (PID 1, the SSH server now: guest-run execs it),
    # the hot-plug watcher and a root login hold the guest's set within its own namespace
    masks = root("for p in 1 $PPID self; do "
                 "grep -E '^(CapEff|CapPrm|CapBnd|Seccomp):' /proc/$p/status; done; "
                 "cat /proc/self/uid_map; readlink /proc/1/exe; readlink /proc/$PPID/exe")
    for key in ("CapEff", "CapPrm", "CapBnd"):
        assert re.findall(rf"{key}:\s+(\S+)", masks) == [caps] * 3, masks
    assert re.findall(r"Seccomp:\s+(\S+)", masks) == ["2"] * 3, masks
    assert masks.count("/usr/sbin/dropbear") == 2, masks
    idmap = re.search(r"^\s*0\s+(\d+)\s+(\d+)\s*$", masks, re.M)
    assert idmap and int(idmap.group(1)) >= 1 << 24 and idmap.group(2) == "65536", masks
    # ... and on the machine: every process of the guest is in a user namespace that is not
    # the machine's, as an unprivileged id (never uid 0), with no capability there
    host_userns = os.readlink("/proc/self/ns/user")
    procs = _guest_procs(dp, vm.id)
    inside = [s for ns_, s in procs.values() if ns_ != host_userns]
    assert inside and all(int(s["Uid"].split()[0]) >= 1 << 24 for s in inside)
    assert all(s["Seccomp"] == "2" for _, s in procs.values())
    # the launcher's own processes that stay in the machine's user namespace (PID 1 of the
    # guest's PID namespace before it entered the guest's): none is left once booted, but
    # its console's copier (the pty's reader), which is nobody with no capability, and its
    # mount supervisor (guest_mounts.py: the machine's root, in the machine's PID
    # namespace, so no process of the guest sees or signals it)
    outside = sorted((s["Name"], s["Uid"].split()[0], s["CapEff"])
                     for ns_, s in procs.values() if ns_ == host_userns)
    assert outside == [("busybox", "65534", "0000000000000000"),
                       ("guest-mounts", "0", _status(os.getpid())["CapEff"])], outside

    # mounts: the machine's cgroup trees, a sysfs, another proc, a block device
    for command in ("mount -t cgroup -o memory none /mnt", "mount -t cgroup2 none /mnt",
                    "mount -t sysfs none /mnt", "mount -t proc none /mnt",
                    "mount -t ext4 /dev/zero /mnt", "mknod /tmp/vda b 254 0",
                    "umount /proc/timer_list"):
        out = root(command)
        assert "rc=0" not in out, (command, out)
    assert "rc=0" in root("mount -t tmpfs scratch /mnt")  # its own mounts are its own
    # the kernel's settings, modules
    for command in ("echo '|/tmp/x' > /proc/sys/kernel/core_pattern",
                    "echo 3 > /proc/sys/vm/drop_caches",
                    "head -c 4096 /dev/zero > /tmp/m.ko; insmod /tmp/m.ko"):
        out = root(command)
        assert "rc=0" not in out, (command, out)
    assert "not permitted" in root("insmod /tmp/m.ko").lower()  # refused by seccomp
    # the machine's processes: not there to read or to trace (its own PID namespace)
    server_pid = dp.cloud.proc.pid
    assert "rc=0" not in root(f"cat /proc/{server_pid}/environ")
    assert "rc=0" not in root(f"kill -0 {server_pid}")
    assert int(root("ps -o pid | wc -l").split()[0]) < 30
    assert all(line.endswith(":/") for line in root("cat /proc/self/cgroup").split()[:-1])
    # no path of the machine's in its mount table
    table = root("cat /proc/self/mountinfo")
    # (the checkout's own path, not "/work": the overlay's workdir=disk/work has that)
    checkout = str(Path(__file__).resolve().parents[2])
    for machine_path in ("/run/stackling", str(dp.cloud.data_dir), checkout, "/tmp/pytest"):
        assert machine_path not in table, table
    # cgroup limits on the machine's side: the flavor's RAM and vCPUs, a process limit
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    memory = Path(f"/sys/fs/cgroup/memory/{dp.prefix}/{vm.id}/memory.limit_in_bytes")
    if memory.exists():
        assert int(memory.read_text()) == flavor.ram * 1024 * 1024
        quota = Path(f"/sys/fs/cgroup/cpu/{dp.prefix}/{vm.id}/cpu.cfs_quota_us").read_text()
        assert int(quota) == flavor.vcpus * 100_000


def test_security_groups_hold_whatever_root_does_in_the_guest(
        dataplane_cloud: DataplaneCloud) -> None:
    """Item 2: the filter is in the host's namespace; renaming the NIC, adding addresses and
    flushing every nftables table the guest can see changes nothing, both ways."""
    dp = dataplane_cloud
    net, subnet = dp.network("dp-sgroot", "10.82.0.0/24")
    locked = dp.sdk.network.create_security_group(name="dp-locked")
    for rule in list(dp.sdk.network.security_group_rules(security_group_id=locked.id)):
        dp.sdk.network.delete_security_group_rule(rule)  # no egress at all
    dp.sdk.network.create_security_group_rule(
        security_group_id=locked.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22, remote_ip_prefix="0.0.0.0/0")
    dp.sdk.network.create_security_group_rule(  # its key and user data: metadata only
        security_group_id=locked.id, direction="egress", ethertype="IPv4", protocol="tcp",
        port_range_min=80, port_range_max=80, remote_ip_prefix="169.254.169.254/32")
    vm, ip = _root_guest(dp, "vm-locked", net.id, security_groups=["dp-locked"])
    peer = dp.server("vm-free", net.id)
    peer_ip, ns = dp.address(peer), dp.names.guest(peer.id)
    assert dp.wait_ssh(ns, ip, user="root").strip() == "vm-locked"
    listen = "setsid sh -c 'while :; do nc -l -p 8080 -e echo hello; done' >/dev/null 2>&1 &"
    assert dp.ssh(ns, ip, listen, user="root").returncode == 0

    def holds() -> None:
        assert dp.unreachable(ns, ip, 8080)  # ingress: only 22 is let in
        out = dp.ssh(ns, ip, f"ping -c 1 -W 1 {peer_ip} >/dev/null 2>&1; echo rc=$?",
                     user="root")
        assert "rc=1" in out.stdout, out  # egress: nothing is let out

    holds()
    gateway = subnet.gateway_ip
    evil = "10.82.0.250"
    script = (f"setsid sh -c 'ip link set eth0 down; ip link set eth0 name evil0; "
              f"ip link set evil0 up; ip addr add {evil}/24 dev evil0; "
              f"ip route add default via {gateway} dev evil0' >/dev/null 2>&1 &")
    dp.ssh(ns, ip, script, user="root")
    assert eventually(lambda: "evil0" in dp.ssh(ns, ip, "ip -o link", user="root").stdout,
                      timeout=60)
    # every table the guest's root can see, flushed with its credentials (its user and
    # network namespaces, as `nft` run by root in the guest would)
    userns = _guest_dir(dp, vm.id) / "userns"
    guest_ns = f"/run/netns/{dp.names.guest(vm.id)}"
    flushed = subprocess.run(["nsenter", f"--user={userns}", f"--net={guest_ns}", "-S", "0",
                              "-G", "0", "--", "nft", "flush", "ruleset"],
                             capture_output=True, text=True)
    assert flushed.returncode == 0, flushed.stderr
    seen = subprocess.run(["nsenter", f"--user={userns}", f"--net={guest_ns}", "-S", "0",
                           "-G", "0", "--", "nft", "list", "ruleset"],
                          capture_output=True, text=True)
    assert dp.prefix not in seen.stdout  # none of the cloud's rules is in the guest's reach
    assert dp.wait_ssh(ns, ip, "ip -o link", user="root").count("evil0") >= 1
    holds()
    # the added address is no way out either (anti-spoofing on the host)
    out = dp.ssh(ns, ip, f"ping -c 1 -W 1 -I {evil} {peer_ip} >/dev/null 2>&1; echo rc=$?",
                 user="root")
    assert "rc=1" in out.stdout


def _sniff(namespace: str, ifname: str, seconds_max: float, stop: threading.Event,
           seen: list[tuple[str, int]], ready: threading.Event) -> None:
    """(source MAC, UDP source port) of DHCP frames on `ifname` in `namespace`, until `stop`;
    `ready` is set once its socket is bound."""
    code = (
        "import socket,sys,time\n"
        "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW,socket.htons(3))\n"
        f"s.bind(('{ifname}',0)); s.settimeout(0.5); end=time.time()+{seconds_max}\n"
        "print('ready', 0, flush=True)\n"
        "while time.time()<end:\n"
        "  try: f=s.recv(2048)\n"
        "  except socket.timeout: continue\n"
        "  if f[12:14]!=b'\\x08\\x00' or f[23]!=17: continue\n"
        "  ihl=(f[14]&15)*4; sport=int.from_bytes(f[14+ihl:16+ihl],'big')\n"
        "  if sport in (67,68): print(f[6:12].hex(':'), sport, flush=True)\n")
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{namespace}", "--", sys.executable, "-c",
                             code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            mac, port = line.split()
            if mac == "ready":
                ready.set()
            else:
                seen.append((mac, int(port)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stop.wait(seconds_max)
    proc.kill()
    proc.wait()


def test_a_rogue_dhcp_server_in_a_guest_never_reaches_its_neighbours(
        dataplane_cloud: DataplaneCloud) -> None:
    """Item 3: as Neutron's firewall drivers, DHCP server replies from an instance port are
    dropped whatever its rules say."""
    dp = dataplane_cloud
    net, _ = dp.network("dp-rogue", "10.83.0.0/24")
    # (its group lets the neighbours' DHCP asks in: nothing on the rogue's side stops it)
    open_group = dp.sdk.network.create_security_group(name="dp-rogue-open")
    dp.sdk.network.create_security_group_rule(
        security_group_id=open_group.id, direction="ingress", ethertype="IPv4",
        remote_ip_prefix="0.0.0.0/0")
    rogue, rogue_ip = _root_guest(dp, "vm-rogue", net.id,
                                  security_groups=["default", "dp-rogue-open"])
    victim, victim_ip = _root_guest(dp, "vm-victim", net.id)
    ns = dp.names.guest(victim.id)
    assert dp.wait_ssh(ns, rogue_ip, user="root").strip() == "vm-rogue"
    assert dp.wait_ssh(dp.names.guest(rogue.id), victim_ip, user="root").strip() == "vm-victim"
    rogue_mac = next(iter(dp.sdk.network.ports(device_id=rogue.id))).mac_address.lower()
    dhcp_macs = {p.mac_address.lower() for p in dp.sdk.network.ports(
        network_id=net.id, device_owner="network:dhcp")}
    conf = ("interface eth0\\nstart 10.83.0.200\\nend 10.83.0.210\\noption subnet 255.255.255.0\\n"
            "option router 10.83.0.250\\nlease_file /tmp/udhcpd.leases\\n")
    dp.ssh(ns, rogue_ip, f"printf '{conf}' > /tmp/udhcpd.conf; touch /tmp/udhcpd.leases; "
                         "setsid udhcpd -f /tmp/udhcpd.conf >/dev/null 2>&1 < /dev/null &",
           user="root")
    at_victim: list[tuple[str, int]] = []
    at_rogue: list[tuple[str, int]] = []
    stop = threading.Event()
    ready = [threading.Event(), threading.Event()]
    sniffers = [threading.Thread(target=_sniff, args=(ns, "eth0", 90, stop, at_victim,
                                                      ready[0])),
                threading.Thread(target=_sniff, args=(dp.names.guest(rogue.id), "eth0", 90,
                                                      stop, at_rogue, ready[1]))]
    for t in sniffers:
        t.start()
    assert all(r.wait(60) for r in ready)  # (their sockets bound)
    try:
        def asked_and_answered() -> bool:
            dp.ssh(dp.names.guest(rogue.id), victim_ip,
                   "udhcpc -i eth0 -n -q -t 2 -T 1 -s /bin/true >/dev/null 2>&1", user="root")
            offers = [m for m, p in at_victim if p == 67]
            return len([m for m in offers if m in dhcp_macs]) >= 2 and \
                any(m == rogue_mac and p == 67 for m, p in at_rogue)

        # the cloud's DHCP server answered the neighbour, and the rogue one did send
        assert eventually(asked_and_answered, timeout=60), (at_victim, at_rogue)
    finally:
        stop.set()
        for t in sniffers:
            t.join()
    assert not [m for m, p in at_victim if p == 67 and m == rogue_mac], at_victim


def test_a_memory_hog_and_a_fork_bomb_die_inside_their_guest(
        dataplane_clouds: Any) -> None:
    """Item 5: the flavor's RAM and a process limit are the guest's cgroup's; the neighbour
    and the API answer throughout."""
    dp = dataplane_clouds("sqlite", extra_env={"STACKLING_DATAPLANE__GUEST_PROCESSES": "200"})
    net, _ = dp.network("dp-limits", "10.84.0.0/24")
    hog, hog_ip = _root_guest(dp, "vm-hog", net.id)
    peer = dp.server("vm-calm", net.id)
    ns, peer_ip = dp.names.guest(peer.id), dp.address(peer)
    assert dp.wait_ssh(ns, hog_ip, user="root").strip() == "vm-hog"
    answers: list[bool] = []
    done = threading.Event()

    def watch() -> None:  # the API and the neighbour, all along
        while not done.is_set():
            try:
                answers.append(dp.sdk.compute.get_server(peer.id).status == "ACTIVE" and
                               dp.ssh(dp.names.guest(hog.id), peer_ip, "true").returncode == 0)
            except Exception:  # noqa: BLE001 - counted as a failed answer
                answers.append(False)
            done.wait(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    # 700 MB in one buffer on a 512 MB flavor: the kernel kills it inside the guest
    out = dp.ssh(ns, hog_ip, "dd if=/dev/zero of=/dev/null bs=700M count=1 2>&1; echo rc=$?",
                 user="root").stdout
    assert "rc=137" in out or "Killed" in out, out
    assert dp.wait_ssh(ns, hog_ip, user="root").strip() == "vm-hog"  # the guest goes on
    # a fork bomb (bounded here) stops at the process limit, inside the guest
    # (the shell itself stops at its first refused fork, as a non-interactive sh does)
    bomb = ("i=0; while [ $i -lt 400 ]; do sleep 120 >/dev/null 2>&1 & i=$((i+1)); done "
            "2>/tmp/bomb.err")
    dp.ssh(ns, hog_ip, bomb, user="root")
    cgroup = Path(f"/sys/fs/cgroup/pids/{dp.prefix}/{hog.id}")
    assert (cgroup / "pids.max").read_text().strip() == "200"
    assert int((cgroup / "pids.current").read_text()) <= 200
    assert "max 0" not in (cgroup / "pids.events").read_text()  # it was refused a fork
    for pid in (cgroup / "cgroup.procs").read_text().split():  # (the machine ends them)
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep":
                os.kill(int(pid), 9)
        except OSError:
            continue
    assert "fork" in dp.wait_ssh(ns, hog_ip, "cat /tmp/bomb.err", user="root")
    done.set()
    watcher.join()
    # the neighbour and the API answered throughout
    assert answers and all(answers), answers
    assert dp.wait_ssh(dp.names.guest(hog.id), peer_ip).strip() == "vm-calm"
    assert dp.sdk.compute.get_server(hog.id).status == "ACTIVE"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_guest_whose_boundary_is_not_as_meant_is_error_with_a_fault(
        dataplane_clouds: Any, backend: str) -> None:
    """The boot's check (rootfs.INIT): made to fail by the launcher's test switch, which
    makes the expected set differ by one capability from the one the guest gets."""
    dp = dataplane_clouds(backend, extra_env={"STACKLING_TEST_GUEST_BOUNDARY_FAULT": "1"})
    net, _ = dp.network("dp-fault", "10.85.0.0/24")
    server = dp.server("vm-fault", net.id)
    failed = dp.sdk.compute.wait_for_server(server, status="ERROR", wait=60, interval=0.2)
    assert "isolation" in failed.fault["message"], failed.fault
    log = dp.cloud.cli("console", "log", "show", server.id, parse=False)
    assert "guest boundary check failed" in log and "login:" not in log, log
    # it is not booted again
    assert not _guest_pids_alive(dp, server.id)


def _guest_pids_alive(dp: DataplaneCloud, server_id: str) -> bool:
    try:
        pid = int((_guest_dir(dp, server_id) / "pid").read_text())
    except (OSError, ValueError):
        return False
    return Path(f"/proc/{pid}").exists()


def test_a_guest_asks_for_dhcp_until_its_server_answers(dataplane_cloud: DataplaneCloud) -> None:
    """A DHCP server that answers late (a busy machine) still gives the guest its address,
    key and user data: its client asks again, as a VM's does."""
    import signal

    dp = dataplane_cloud
    net, _ = dp.network("dp-late", "10.86.0.0/24")
    first = dp.server("vm-early", net.id)
    assert dp.wait_ssh(dp.names.guest(first.id), dp.address(first)).strip() == "vm-early"
    dnsmasq = int(next((Path("/run/stackling") / dp.prefix).glob(f"*/{net.id}/pid")).read_text())
    os.kill(dnsmasq, signal.SIGSTOP)
    try:
        late = dp.sdk.compute.create_server(
            name="vm-late", image_id=dp.sdk.image.find_image("cirros").id,
            flavor_id=next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny").id,
            key_name=dp.keypair().name, networks=[{"uuid": net.id}])

        def console() -> str:
            return dp.sdk.compute.get_server_console_output(late)["output"]

        assert eventually(lambda: "asking again" in console(), timeout=90), console()
    finally:
        os.kill(dnsmasq, signal.SIGCONT)
    late = dp.sdk.compute.wait_for_server(late, wait=60, interval=0.2)
    assert dp.wait_ssh(dp.names.guest(first.id), dp.address(late), timeout=120).strip() == \
        "vm-late"
