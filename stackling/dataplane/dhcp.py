"""DHCP as Neutron's DHCP agent serves it: one dnsmasq per network, in the network's DHCP
namespace, from generated files (a hosts line per port: MAC, name, address; options per
subnet).

A new port is a new file in dnsmasq's hosts directory, which dnsmasq reads by itself
(inotify). Neutron reloads with SIGHUP instead, but Debian 12's dnsmasq 2.90 crashes
(SIGSEGV) on SIGHUP once it has handed out a lease; so a removed or changed host or
option restarts it (guests ask for a lease only at boot, and leases last a day)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import netaddr

from stackling.dataplane.dhcp_names import DhcpNames
from stackling.dataplane.ipv6 import Dhcp6
from stackling.dataplane.kernel import pid_alive

METADATA_IP = "169.254.169.254"
LEASE_SECONDS = 86400  # Neutron's dhcp_lease_duration


@dataclass
class DhcpSubnet:
    id: str
    cidr: str
    gateway_ip: str | None
    dns_nameservers: list[str]
    host_routes: list[dict[str, str]]
    # the DHCP port's address on this subnet when it differs from the config's (a routed
    # network: one per segment, the metadata route's on-link next hop)
    server_ip: str | None = None


@dataclass
class DhcpConfig:
    network_id: str
    interface: str
    server_ip: str  # the DHCP port's address (also where metadata is answered)
    mtu: int
    subnets: list[DhcpSubnet]
    hosts: list[tuple[str, str, str, str]] = field(default_factory=list)  # port, mac, ip, name
    ipv6: Dhcp6 | None = None  # the IPv6 subnets' part (ipv6.py)
    names: DhcpNames | None = None  # extra options, DNS names (dhcp_names.py)

    def command(self, directory: Path) -> list[str]:
        args = ["dnsmasq", "--no-hosts", "--no-resolv", "--port=0", "--bind-interfaces",
                f"--interface={self.interface}", "--except-interface=lo",
                f"--pid-file={directory / 'pid'}",
                f"--dhcp-hostsdir={directory / 'hosts'}", f"--dhcp-optsfile={directory / 'opts'}",
                "--leasefile-ro", "--dhcp-authoritative", "--domain=openstacklocal",
                "--user=nobody", "--group=nogroup", f"--log-facility={directory / 'log'}",
                "--quiet-dhcp"]
        for s in self.subnets:
            net = netaddr.IPNetwork(s.cidr)
            args.append(f"--dhcp-range=set:subnet-{s.id},{net.network},static,{net.netmask},"
                        f"{LEASE_SECONDS}s")
        if self.ipv6 is not None:
            args += self.ipv6.args()
        if self.names is not None:
            args = self.names.command(args, directory)
        return args

    def _hostname(self, port: str, ip: str) -> str:
        return self.names.hostname(port, ip) if self.names else f"host-{ip.replace('.', '-')}"

    def host_files(self) -> dict[str, str]:
        """Port id -> its hosts line(s), one file per port."""
        out: dict[str, str] = {}
        for port, mac, ip, _name in sorted(self.hosts):
            out[port] = out.get(port, "") + f"{mac},{self._hostname(port, ip)},{ip},set:port-{port}\n"
        return self.ipv6.merge_hosts(out) if self.ipv6 is not None else out

    def opts_text(self) -> str:
        lines = []
        for s in self.subnets:
            tag = f"tag:subnet-{s.id}"
            routes = [f"{METADATA_IP}/32,{s.server_ip or self.server_ip}"]
            routes += [f"{r['destination']},{r['nexthop']}" for r in s.host_routes]
            if s.gateway_ip:
                routes.append(f"0.0.0.0/0,{s.gateway_ip}")
                lines.append(f"{tag},option:router,{s.gateway_ip}")
            else:
                lines.append(f"{tag},option:router")
            lines.append(f"{tag},option:classless-static-route,{','.join(routes)}")
            lines.append(f"{tag},249,{','.join(routes)}")
            lines.append(f"{tag},option:mtu,{self.mtu}")
            if s.dns_nameservers:
                lines.append(f"{tag},option:dns-server,{','.join(s.dns_nameservers)}")
        return "".join(line + "\n" for line in lines) + (self.ipv6.opts() if self.ipv6 else "") \
            + (self.names.opts() if self.names else "")


class DhcpServers:
    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / "dhcp"

    def _pid(self, network_id: str) -> int | None:
        try:
            pid = int((self.dir / network_id / "pid").read_text())
        except (OSError, ValueError):
            return None
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return None
        return pid if pid_alive(pid) and exe.endswith("dnsmasq") and not _zombie(pid) else None

    def known(self) -> list[str]:
        return [p.name for p in self.dir.iterdir()] if self.dir.exists() else []

    def serving(self, network_id: str) -> bool:
        """Its dnsmasq runs (a guest whose port it serves waits for it before it boots)."""
        return self._pid(network_id) is not None

    def ensure(self, cfg: DhcpConfig, namespace: str) -> None:
        directory = self.dir / cfg.network_id
        hosts = directory / "hosts"
        hosts.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o755)
        os.chmod(hosts, 0o755)
        pid = self._pid(cfg.network_id)
        restart = _write(directory / "cmdline", "\0".join(cfg.command(directory)))
        restart |= _write(directory / "opts", cfg.opts_text())
        wanted = cfg.host_files()
        have = {p.name: p.read_text() for p in hosts.iterdir() if not p.name.startswith(".")}
        restart |= any(have[k] != wanted.get(k) for k in have)  # removed or changed
        restart |= _sync_dns(directory / "dns", cfg.names.dns if cfg.names else {})
        added = [k for k in wanted if k not in have]
        if pid is not None and restart:
            self.stop(cfg.network_id, forget=False)
            pid = None
        for name in set(have) - set(wanted):
            (hosts / name).unlink()
        if pid is None:
            for name, text in wanted.items():
                _write(hosts / name, text)
            subprocess.run(["nsenter", f"--net=/run/netns/{namespace}", "--",
                            *cfg.command(directory)], check=True, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        elif added:
            size = (directory / "log").stat().st_size if (directory / "log").exists() else 0
            for name in added:
                _write(hosts / name, wanted[name])
            _await_log(directory / "log", size, [f"hosts/{name}" for name in added])

    def stop(self, network_id: str, forget: bool = True) -> None:
        pid = self._pid(network_id)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            for _ in range(500):
                if not pid_alive(pid) or _zombie(pid):  # dead (init reaps it when it may)
                    break
                time.sleep(0.002)
        if forget:
            shutil.rmtree(self.dir / network_id, ignore_errors=True)


def _sync_dns(directory: Path, wanted: dict[str, str]) -> bool:
    """The DNS hosts files (dnsmasq reads new ones by itself); True when one was removed
    or changed (dnsmasq keeps what it read: a restart)."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o755)
    have = {p.name: p.read_text() for p in directory.iterdir() if not p.name.startswith(".")}
    for name in set(have) - set(wanted):
        (directory / name).unlink()
    for name, text in wanted.items():
        _write(directory / name, text)
    return any(have[k] != wanted.get(k) for k in have)


def _await_log(log: Path, size: int, names: list[str], timeout: float = 0.5) -> None:
    """Wait (briefly) until dnsmasq says it read every new hosts file: a guest booted
    before that would see its first DHCP discover ignored (a second lost)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(log, "rb") as fh:
                fh.seek(size)
                text = fh.read().decode(errors="replace")
            if all(name in text for name in names):
                return
        except OSError:
            pass
        time.sleep(0.002)


def _write(path: Path, text: str) -> bool:
    """Write when different; True when it changed."""
    try:
        if path.read_text() == text:
            return False
    except OSError:
        pass
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.chmod(0o644)
    tmp.replace(path)
    return True


def _zombie(pid: int) -> bool:
    try:
        return ") Z" in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
