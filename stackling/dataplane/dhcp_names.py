"""A network's dnsmasq beyond addresses, as Neutron's DHCP agent configures it: each port's
`extra_dhcp_opts` and the names of `dns-integration`.

- Extra options go to the options file tagged by the port (`tag:port-<id>,option:<name>,
  <value>`; `option6:` for `ip_version` 6; a numeric name stays a number; a name written
  `tag:<t>,<name>` keeps its extra tag), as Neutron's `_format_option` writes them. An
  option name this dnsmasq does not know is left out with a warning in stackling's log
  (dnsmasq itself skips such a line, and a bad value, in its own log). `client-id` is not
  served.
- Names: each fixed IP's `dns_assignment` hostname is its DHCP host name, and dnsmasq
  answers DNS for every port (a hosts file per port in `--hostsdir`: `ip fqdn hostname`),
  under the network's `dns_domain` when it has one, else the domain of the port's FQDN
  (the setting `network.dns_domain`, `openstacklocal` by default). Guests are given the
  DHCP port's address as their DNS server when their subnet names none, as upstream.
"""

from __future__ import annotations

import functools
import logging
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOG = logging.getLogger(__name__)
DEFAULT_DOMAIN = "openstacklocal"
_TAGGED = re.compile(r"^(tag:[^,]+,)?(.+)$")


@functools.cache
def known_options(ip_version: int) -> frozenset[str]:
    """The option names this dnsmasq knows (`dnsmasq --help dhcp`/`dhcp6`)."""
    try:
        out = subprocess.run(["dnsmasq", "--help", "dhcp" if ip_version == 4 else "dhcp6"],
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(m.group(1) for m in re.finditer(r"^\s*\d+\s+(\S+)", out, re.MULTILINE))


def option_line(port_id: str, opt: dict[str, Any]) -> str | None:
    """One extra option as Neutron writes it, or None when dnsmasq cannot take it."""
    name, value = str(opt["opt_name"]), opt.get("opt_value")
    version = int(opt.get("ip_version") or 4)
    extra_tag, name = _TAGGED.match(name).groups()  # type: ignore[union-attr]
    if value is None or name in ("client-id", "61"):
        return None
    if not name.isdigit():
        if name not in known_options(version):
            LOG.warning("dataplane: port %s: dnsmasq knows no DHCP option %r; left out",
                        port_id, name)
            return None
        name = f"option:{name}" if version == 4 else f"option6:{name}"
    return ",".join([f"tag:port-{port_id}", *([extra_tag[:-1]] if extra_tag else []), name,
                     str(value)])


@dataclass
class DhcpNames:
    """The per-port options and names of one network's dnsmasq."""

    domain: str = DEFAULT_DOMAIN
    hostnames: dict[tuple[str, str], str] = field(default_factory=dict)  # (port, ip) -> name
    options: list[str] = field(default_factory=list)  # option file lines
    dns: dict[str, str] = field(default_factory=dict)  # port id -> its DNS hosts file

    def command(self, args: list[str], directory: Path) -> list[str]:
        """dnsmasq's arguments with DNS on (Neutron's dnsmasq answers DNS) and the domain."""
        out = [a for a in args if a != "--port=0" and not a.startswith("--domain=")]
        return [*out, f"--domain={self.domain}", f"--hostsdir={directory / 'dns'}"]

    def hostname(self, port_id: str, ip: str) -> str:
        return self.hostnames.get((port_id, ip)) or f"host-{ip.replace('.', '-')}"

    def opts(self) -> str:
        return "".join(line + "\n" for line in self.options)


def build(network: dict[str, Any], ports: list[dict[str, Any]]) -> DhcpNames:
    """The names and options of `ports` (the network's, its DHCP port excepted)."""
    domain = (network.get("dns_domain") or "").rstrip(".")
    fallback = DEFAULT_DOMAIN
    out = DhcpNames()
    for port in sorted(ports, key=lambda p: p["id"]):
        lines = []
        for a in port.get("dns_assignment") or []:
            host, ip, fqdn = a.get("hostname"), a.get("ip_address"), (a.get("fqdn") or "")
            if not host or not ip:
                continue
            out.hostnames[(port["id"], ip)] = host
            fqdn = fqdn.rstrip(".")
            if fqdn.startswith(host + ".") and not domain:
                fallback = fqdn[len(host) + 1:] or fallback
            names = dict.fromkeys([f"{host}.{domain}" if domain else fqdn or host, fqdn, host])
            lines.append(f"{ip} {' '.join(n for n in names if n)}")
        if lines:
            out.dns[port["id"]] = "".join(line + "\n" for line in lines)
        for opt in port.get("extra_dhcp_opts") or []:
            line = option_line(port["id"], opt)
            if line is not None:
                out.options.append(line)
    out.domain = domain or fallback
    return out
