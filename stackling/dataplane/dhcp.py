"""DHCP as Neutron's DHCP agent serves it: one dnsmasq per network, in the network's DHCP
namespace, from generated files (a hosts line per port: MAC, name, address; options per
subnet), reloaded with SIGHUP when the files change and restarted only when its command
line does."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import netaddr

from stackling.dataplane.kernel import pid_alive

METADATA_IP = "169.254.169.254"


@dataclass
class DhcpSubnet:
    id: str
    cidr: str
    gateway_ip: str | None
    dns_nameservers: list[str]
    host_routes: list[dict[str, str]]


@dataclass
class DhcpConfig:
    network_id: str
    interface: str
    server_ip: str  # the DHCP port's address (also where metadata is answered)
    mtu: int
    subnets: list[DhcpSubnet]
    hosts: list[tuple[str, str, str, str]] = field(default_factory=list)  # port, mac, ip, name

    def command(self, directory: Path) -> list[str]:
        args = ["dnsmasq", "--no-hosts", "--no-resolv", "--port=0", "--bind-interfaces",
                f"--interface={self.interface}", "--except-interface=lo",
                f"--pid-file={directory / 'pid'}",
                f"--dhcp-hostsfile={directory / 'host'}", f"--dhcp-optsfile={directory / 'opts'}",
                "--leasefile-ro", "--dhcp-authoritative", "--domain=openstacklocal",
                "--user=nobody", "--group=nogroup", f"--log-facility={directory / 'log'}",
                "--quiet-dhcp"]
        for s in self.subnets:
            net = netaddr.IPNetwork(s.cidr)
            args.append(f"--dhcp-range=set:subnet-{s.id},{net.network},static,{net.netmask},"
                        "infinite")
        return args

    def hosts_text(self) -> str:
        return "".join(f"{mac},host-{ip.replace('.', '-')},{ip},set:port-{port}\n"
                       for port, mac, ip, _name in sorted(self.hosts))

    def opts_text(self) -> str:
        lines = []
        for s in self.subnets:
            tag = f"tag:subnet-{s.id}"
            routes = [f"{METADATA_IP}/32,{self.server_ip}"]
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
        return "".join(line + "\n" for line in lines)


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
        return pid if pid_alive(pid) and exe.endswith("dnsmasq") else None

    def known(self) -> list[str]:
        return [p.name for p in self.dir.iterdir()] if self.dir.exists() else []

    def ensure(self, cfg: DhcpConfig, namespace: str) -> None:
        directory = self.dir / cfg.network_id
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, 0o755)
        changed = _write(directory / "host", cfg.hosts_text())
        changed |= _write(directory / "opts", cfg.opts_text())
        command = "\0".join(cfg.command(directory))
        restart = _write(directory / "cmdline", command)
        pid = self._pid(cfg.network_id)
        if pid is not None and restart:
            self.stop(cfg.network_id, forget=False)
            pid = None
        if pid is None:
            subprocess.run(["nsenter", f"--net=/run/netns/{namespace}", "--",
                            *cfg.command(directory)], check=True, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        elif changed:
            os.kill(pid, signal.SIGHUP)

    def stop(self, network_id: str, forget: bool = True) -> None:
        pid = self._pid(network_id)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            for _ in range(500):
                if not pid_alive(pid):
                    break
                import time

                time.sleep(0.01)
        if forget:
            shutil.rmtree(self.dir / network_id, ignore_errors=True)


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
