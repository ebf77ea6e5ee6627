"""IPv6 on the wire, as Neutron's agents put it there (issue 22).

Per subnet, `ipv6_ra_mode` says who advertises and `ipv6_address_mode` how a guest takes
its address:

- `slaac`: router advertisements carry the prefix with the A flag; the guest's kernel
  forms its EUI-64 address, which is the one Neutron gave the port.
- `dhcpv6-stateful`: advertisements with the M flag; dnsmasq serves exactly the port's
  address (a `[address]` on its hosts line) and the DNS servers.
- `dhcpv6-stateless`: SLAAC plus the O flag; dnsmasq answers information requests (DNS).
- `ipv6_address_mode` alone (no `ipv6_ra_mode`): an external router is expected to
  advertise (Neutron refuses such a subnet on its routers); dnsmasq still serves DHCPv6
  for a stateful one, nobody here advertises.
- neither: dnsmasq serves DHCPv6 as for stateful (Neutron's "static" default), no RA.

Advertisements come from the router's namespace (radvd, as Neutron's L3 agent runs it)
for a subnet attached to a router; for a subnet with `ipv6_ra_mode` and no router, the
network's dnsmasq advertises the prefix itself with a router lifetime of 0 (it is no
router). That second case is a deviation: Neutron sends no RA without a router.
Routers route IPv6 between their subnets without NAT, as Neutron's do.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import netaddr
from pyroute2.netlink.exceptions import NetlinkError

from stackling.common.context import admin_context
from stackling.common.db import Database
from stackling.dataplane import desired as desired_
from stackling.dataplane.kernel import Ns, pid_alive
from stackling.dataplane.metadata import METADATA_IPV6
from stackling.network import interface as network

LOG = logging.getLogger(__name__)
SLAAC, STATEFUL, STATELESS = "slaac", "dhcpv6-stateful", "dhcpv6-stateless"
LEASE_SECONDS = 86400
EEXIST, EADDRNOTAVAIL = 17, 99
RA_MIN_INTERVAL, RA_MAX_INTERVAL = 30, 100  # Neutron's min_rtr_adv_interval / max_


# ------------------------------------------------------------------ desired state
def v6_subnets(d: desired_.Desired, network_id: str) -> list[dict[str, Any]]:
    net = d.networks[network_id]
    return [d.subnets[s] for s in net.get("subnets", [])
            if s in d.subnets and d.subnets[s]["ip_version"] == 6]


def dhcp_subnets(d: desired_.Desired, network_id: str) -> list[dict[str, Any]]:
    """The network's IPv6 subnets with DHCP enabled: the DHCP port takes an address on
    each (Neutron's DHCP agent asks for one on every DHCP subnet)."""
    return [s for s in v6_subnets(d, network_id) if s["enable_dhcp"]]


def served(subnet: dict[str, Any]) -> bool:
    """dnsmasq serves DHCPv6 on it (every mode but SLAAC, as Neutron's DHCP agent)."""
    return subnet["ip_version"] == 6 and subnet["enable_dhcp"] and \
        subnet.get("ipv6_address_mode") != SLAAC and \
        not (subnet.get("ipv6_address_mode") is None and subnet.get("ipv6_ra_mode") == SLAAC)


def stateful(subnet: dict[str, Any]) -> bool:
    """dnsmasq hands out the port's address (stateful, or no mode at all)."""
    mode = subnet.get("ipv6_address_mode")
    return mode == STATEFUL or (mode is None and subnet.get("ipv6_ra_mode") is None)


def ipv6(d: desired_.Desired, port: dict[str, Any]) -> list[tuple[str, str]]:
    """(subnet id, address) of the port's IPv6 fixed IPs on subnets we know."""
    return [(ip["subnet_id"], ip["ip_address"]) for ip in port["fixed_ips"]
            if ip["subnet_id"] in d.subnets and ":" in ip["ip_address"]]


def routed_subnets(d: desired_.Desired) -> set[str]:
    """Subnets with a router interface on them (that router advertises them)."""
    out = set()
    for port in d.ports.values():
        if port["device_owner"] in desired_.ROUTER_INTERFACE_OWNERS and \
                port["device_id"] in d.routers:
            out |= {s for s, _ in ipv6(d, port)}
    return out


def missing_dhcp_subnets(d: desired_.Desired, network_id: str) -> list[str]:
    """IPv6 DHCP subnets the network's DHCP port has no address on yet."""
    port = d.dhcp_port(network_id)
    if port is None:
        return []
    have = {ip["subnet_id"] for ip in port["fixed_ips"]}
    return [s["id"] for s in dhcp_subnets(d, network_id) if s["id"] not in have]


def extend_dhcp_ports(database: Database, d: desired_.Desired) -> bool:
    """A DHCP port gains an address on an IPv6 DHCP subnet added after it (Neutron's DHCP
    agent updates its port so); True when one changed (the desired state is stale)."""
    grown = False
    for net_id in d.networks:
        missing = missing_dhcp_subnets(d, net_id)
        port = d.dhcp_port(net_id)
        if not missing or port is None:
            continue
        fixed = [{"subnet_id": ip["subnet_id"], "ip_address": ip["ip_address"]}
                 for ip in port["fixed_ips"]] + [{"subnet_id": s} for s in missing]
        with database.transaction() as db:
            network.update_port(db, admin_context(), port["id"], {"fixed_ips": fixed})
        grown = True
    return grown


# ------------------------------------------------------------------ dnsmasq
@dataclass
class Dhcp6:
    """The IPv6 part of a network's dnsmasq: ranges, RA (for subnets no router serves),
    hosts' addresses and options (DNS servers, domain)."""

    interface: str
    subnets: list[dict[str, Any]]
    advertised: set[str]  # subnet ids whose RAs this dnsmasq sends (no router on them)
    hosts: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # port -> mac, ips

    def args(self) -> list[str]:
        out = []
        ra = False
        for s in self.subnets:
            net = netaddr.IPNetwork(s["cidr"])
            tag = f"set:subnet-{s['id']}"
            mode = s.get("ipv6_ra_mode") or s.get("ipv6_address_mode")
            if s["id"] in self.advertised:
                ra = True
                kind = {SLAAC: "ra-only", STATELESS: "ra-stateless"}.get(mode, "static")
                out.append(f"--dhcp-range={tag},{net.network},{kind},{net.prefixlen},"
                           f"{LEASE_SECONDS}s")
            elif served(s) and net.prefixlen <= 64:
                out.append(f"--dhcp-range={tag},{net.network},static,{net.prefixlen},"
                           f"{LEASE_SECONDS}s")
        if ra:  # the DHCP port is no router: lifetime 0, the prefix only
            out += ["--enable-ra", f"--ra-param={self.interface},10,0"]
        if out:
            out += ["--quiet-dhcp6", "--quiet-ra"]
        return out

    def opts(self) -> str:
        lines = []
        for s in self.subnets:
            tag = f"tag:subnet-{s['id']}"
            dns = [a for a in s.get("dns_nameservers") or [] if ":" in a]
            if dns:
                lines.append(f"{tag},option6:dns-server,{','.join(f'[{a}]' for a in dns)}")
            lines.append(f"{tag},option6:domain-search,openstacklocal")
        return "".join(line + "\n" for line in lines)

    def merge_hosts(self, files: dict[str, str]) -> dict[str, str]:
        """Port id -> hosts file: the port's IPv6 addresses join its IPv4 line (one
        dhcp-host may hold both), or make a line of their own."""
        out = dict(files)
        for port, (mac, ips) in sorted(self.hosts.items()):
            addresses = ",".join(f"[{ip}]" for ip in ips)
            text = out.get(port)
            if text:
                first, _, rest = text.partition("\n")
                head, sep, tail = first.rpartition(",set:port-")
                out[port] = f"{head},{addresses}{sep}{tail}\n{rest}" if sep else text
            else:
                name = "host-" + ips[0].replace(":", "-")
                out[port] = f"{mac},{name},{addresses},set:port-{port}\n"
        return out


def dhcp6_config(d: desired_.Desired, network_id: str, interface: str) -> Dhcp6 | None:
    subnets = dhcp_subnets(d, network_id)
    if not subnets:
        return None
    routed = routed_subnets(d)
    advertised = {s["id"] for s in subnets if s.get("ipv6_ra_mode") and s["id"] not in routed}
    hosts: dict[str, tuple[str, list[str]]] = {}
    for port in d.ports.values():
        if port["network_id"] != network_id or port["device_owner"] == desired_.DHCP_OWNER:
            continue
        ips = [ip for s, ip in ipv6(d, port) if stateful(d.subnets[s]) and d.subnets[s]["enable_dhcp"]]
        if ips:
            hosts[port["id"]] = (port["mac_address"], ips)
    return Dhcp6(interface, subnets, advertised, hosts)


def dhcp_namespace(ns: Ns, interface: str, d: desired_.Desired, port: dict[str, Any]) -> bool:
    """The DHCP port's IPv6 addresses on its interface; it takes no RA (as Neutron's). On
    a network with IPv6 subnets the metadata service's link-local address too (metadata.py);
    whether it is there."""
    ns.sysctl(f"net.ipv6.conf.{interface}.accept_ra", "0")
    ensure_addresses(ns, interface, [f"{ip}/{d.prefixlen(s)}" for s, ip in ipv6(d, port)])
    wanted = bool(v6_subnets(d, port["network_id"]))
    _link_local(ns, interface, METADATA_IPV6, wanted)
    return wanted


def _link_local(ns: Ns, ifname: str, address: str, wanted: bool) -> None:
    """A link-local /64 address on the link (permanent, no duplicate address detection: it
    is the same on every network, each its own link), or none."""
    idx = ns.index(ifname)
    if idx is None:
        return
    try:
        ns.ip.addr("add" if wanted else "del", index=idx, address=address, prefixlen=64,
                   family=socket.AF_INET6, **({"flags": 0x80 | 0x02} if wanted else {}))
    except NetlinkError as exc:
        if exc.code not in (EEXIST, EADDRNOTAVAIL):
            raise


# ------------------------------------------------------------------ netlink
def ensure_addresses(ns: Ns, ifname: str, cidrs: list[str]) -> None:
    """Exactly these global IPv6 addresses on the link (its link-local one is the kernel's),
    without duplicate address detection (the port's address is Neutron's to give)."""
    idx = ns.index(ifname)
    if idx is None:
        return
    have = {f"{a.get_attr('IFA_ADDRESS')}/{a['prefixlen']}"
            for a in ns.ip.get_addr(index=idx, family=socket.AF_INET6) if a["scope"] == 0}
    wanted = {str(netaddr.IPNetwork(c)) for c in cidrs}
    for cidr in wanted - have:
        address, plen = cidr.split("/")
        try:
            ns.ip.addr("add", index=idx, address=address, prefixlen=int(plen),
                       family=socket.AF_INET6, flags=0x80 | 0x02)  # permanent, nodad
        except NetlinkError as exc:
            if exc.code != EEXIST:
                raise
    for cidr in have - wanted:
        address, plen = cidr.split("/")
        try:
            ns.ip.addr("del", index=idx, address=address, prefixlen=int(plen),
                       family=socket.AF_INET6)
        except NetlinkError as exc:
            if exc.code != EADDRNOTAVAIL:
                raise


def ensure_routes(ns: Ns, routes: dict[str, str]) -> None:
    """Exactly these IPv6 gateway routes (destination -> next hop) in the main table."""
    have = {}
    for r in ns.ip.get_routes(family=socket.AF_INET6, table=254):
        gw = r.get_attr("RTA_GATEWAY")
        if gw and r.get_attr("RTA_PREFSRC") is None and r["proto"] != 9:  # 9: from an RA
            dst = r.get_attr("RTA_DST") or "::"
            have[f"{dst}/{r['dst_len']}"] = gw
    for dst, gw in routes.items():
        if have.get(dst) != gw:
            ns.ip.route("replace", dst=dst, gateway=gw, family=socket.AF_INET6)
    for dst in set(have) - set(routes):
        try:
            ns.ip.route("del", dst=dst, gateway=have[dst], family=socket.AF_INET6)
        except NetlinkError:
            pass


# ------------------------------------------------------------------ routers
def router_port(ns: Ns, inside: str, d: desired_.Desired, port: dict[str, Any]) -> None:
    """A router interface's IPv6 addresses: the subnets' gateway addresses on `qr-`, the
    external port's on `qg-`."""
    ensure_addresses(ns, inside, [f"{ip}/{d.prefixlen(s)}" for s, ip in ipv6(d, port)])


def router_routes(ns: Ns, d: desired_.Desired, router: dict[str, Any],
                  gateway: dict[str, Any] | None) -> None:
    """Forwarding (off when `admin_state_up` is false), the default route via the external
    IPv6 subnet's gateway, IPv6 extra routes."""
    up = router.get("admin_state_up", True)
    ns.sysctl("net.ipv6.conf.all.forwarding", "1" if up else "0")
    routes = {}
    if gateway is not None:
        for subnet_id, _ in ipv6(d, gateway):
            gw = d.subnets[subnet_id].get("gateway_ip")
            if gw:
                routes["::/0"] = gw
    for route in router.get("routes") or []:
        if ":" in route["destination"]:
            routes[str(netaddr.IPNetwork(route["destination"]).cidr)] = route["nexthop"]
    ensure_routes(ns, routes)


def outside(ns: Ns, d: desired_.Desired) -> None:
    """The outside's side of the external networks' IPv6 subnets, as DevStack sets up
    br-ex: their gateway addresses, and a route to each router's internal IPv6 subnets via
    the router's external IPv6 address (no NAT for IPv6: the upstream must know the way)."""
    routes: dict[str, str] = {}
    for net_id, net in d.networks.items():
        if not net.get("router:external"):
            continue
        inside = "ex-" + net_id[:8]  # the reconciler's name for the outside's leg on it
        if ns.index(inside) is None:
            continue
        ns.sysctl(f"net.ipv6.conf.{inside}.accept_ra", "0")
        ensure_addresses(ns, inside, [f"{s['gateway_ip']}/{netaddr.IPNetwork(s['cidr']).prefixlen}"
                                      for s in v6_subnets(d, net_id) if s.get("gateway_ip")])
        for router_id in d.routers:
            ports = d.by_device.get(router_id, [])
            hops = [ip for p in ports if p["device_owner"] == desired_.GATEWAY_OWNER
                    and p["network_id"] == net_id for _, ip in ipv6(d, p)]
            if not hops:
                continue
            for p in ports:
                if p["device_owner"] in desired_.ROUTER_INTERFACE_OWNERS:
                    for subnet_id, _ in ipv6(d, p):
                        routes[str(netaddr.IPNetwork(d.subnets[subnet_id]["cidr"]).cidr)] = hops[0]
    ensure_routes(ns, routes)


def radvd_config(d: desired_.Desired, interfaces: list[tuple[str, dict[str, Any]]]) -> str:
    """radvd.conf for a router's `qr-` interfaces (name, port), as Neutron's L3 agent
    writes it: per subnet with an `ipv6_ra_mode`, the prefix (A flag for SLAAC and
    stateless), M for stateful, O for stateless, the network's MTU and DNS servers."""
    out = []
    for inside, port in interfaces:
        subnets = [d.subnets[s] for s, _ in ipv6(d, port) if d.subnets[s].get("ipv6_ra_mode")]
        if not subnets:
            continue
        modes = {s["ipv6_ra_mode"] for s in subnets}
        mtu = d.networks[port["network_id"]].get("mtu") or 1500
        lines = [f"interface {inside}", "{", "   AdvSendAdvert on;",
                 f"   MinRtrAdvInterval {RA_MIN_INTERVAL};",
                 f"   MaxRtrAdvInterval {RA_MAX_INTERVAL};", f"   AdvLinkMTU {mtu};"]
        if STATEFUL in modes:
            lines.append("   AdvManagedFlag on;")
        if STATELESS in modes:
            lines.append("   AdvOtherConfigFlag on;")
        dns = sorted({a for s in subnets for a in s.get("dns_nameservers") or [] if ":" in a})
        if dns:
            lines.append(f"   RDNSS {' '.join(dns[:3])} {{ }};")
        for s in subnets:
            auto = "on" if s["ipv6_ra_mode"] in (SLAAC, STATELESS) else "off"
            lines += [f"   prefix {netaddr.IPNetwork(s['cidr']).cidr}", "   {",
                      "        AdvOnLink on;", f"        AdvAutonomous {auto};", "   };"]
        lines.append("};")
        out.append("\n".join(lines) + "\n")
    return "".join(out)


class Radvd:
    """radvd per router namespace (Neutron's L3 agent's way), from a generated config;
    a changed config restarts it. Its pid file finds it again after a crash of ours."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / "radvd"
        self._warned = False

    def _pid(self, router_id: str) -> int | None:
        try:
            pid = int((self.dir / router_id / "pid").read_text())
            exe = os.readlink(f"/proc/{pid}/exe")
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid) and exe.endswith("radvd") and not _zombie(pid) else None

    def known(self) -> list[str]:
        return [p.name for p in self.dir.iterdir()] if self.dir.exists() else []

    def ensure(self, router_id: str, namespace: str, config: str) -> None:
        if not config:
            self.stop(router_id)
            return
        if shutil.which("radvd") is None:  # the router's other work goes on regardless
            if not self._warned:
                LOG.warning("dataplane: radvd is not installed (make dataplane-deps): "
                            "routers send no IPv6 router advertisements")
                self._warned = True
            return
        directory = self.dir / router_id
        directory.mkdir(parents=True, exist_ok=True)
        conf = directory / "radvd.conf"
        changed = not conf.exists() or conf.read_text() != config
        pid = self._pid(router_id)
        if pid is not None and not _in_namespace(pid, namespace):
            # its namespace was deleted under it (radvd keeps the old one alive): anew
            self.stop(router_id, forget=False)
            pid = None
        if pid is not None and not changed:
            return
        if pid is not None:
            self.stop(router_id, forget=False)
        conf.write_text(config)
        conf.chmod(0o644)
        subprocess.run(["nsenter", f"--net=/run/netns/{namespace}", "--", "radvd",
                        "-C", str(conf), "-p", str(directory / "pid"), "-m", "logfile",
                        "-l", str(directory / "log"), "-u", "nobody"],
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)
        deadline = time.monotonic() + 2  # radvd writes its pid file once it forked
        while self._pid(router_id) is None and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self, router_id: str, forget: bool = True) -> None:
        pid = self._pid(router_id)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 1
            while pid_alive(pid) and not _zombie(pid) and time.monotonic() < deadline:
                time.sleep(0.002)
        if forget:
            shutil.rmtree(self.dir / router_id, ignore_errors=True)
        else:
            (self.dir / router_id / "pid").unlink(missing_ok=True)


def _in_namespace(pid: int, namespace: str) -> bool:
    try:
        mine = os.stat(f"/proc/{pid}/ns/net")
        named = os.stat(f"/run/netns/{namespace}")
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (named.st_dev, named.st_ino)


def _zombie(pid: int) -> bool:
    try:
        return ") Z" in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True

