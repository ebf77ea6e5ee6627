"""The cloud's wire as the kernel has it now: its namespaces, their links (kind, bridge,
veth peer across namespaces, VXLAN id, state, addresses), routes and forwarding, read
with netlink (pyroute2) from a thread that enters each namespace (never creating one).

Nothing here knows the reconciler's plan: what a namespace is (a host, a physnet's switch,
a ToR, a router, a guest) comes from its name, and how links join from the kernel (a
veth's peer is found by its index and the peer namespace's id as netlink reports them).
The console's wire view and the path tracer (`path.py`) read this.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass, field
from typing import Any

from stackling.dataplane.inventory import read_in
from stackling.dataplane.names import Names

ROLES = (("fabric", "network node"), ("outside", "edge"), ("underlay", "underlay"))
PREFIX_ROLES = (("pn-", "switch"), ("tor-", "tor"), ("g", "guest"), ("d", "dhcp"),
                ("r", "router"), ("h", "host"))


@dataclass
class Link:
    ns: str
    name: str
    index: int
    kind: str | None  # bridge, veth, vxlan, None (loopback, ...)
    master: int | None
    peer: int | None  # a veth's peer index, in the namespace `peer_nsid` names
    peer_nsid: int | None
    up: bool  # administratively up
    carrier: bool  # operationally up (its peer up too, for a veth)
    vni: int | None
    mac: str | None
    udp_port: int | None = None  # a VXLAN device's (each tunnel type has its own)
    addresses: list[str] = field(default_factory=list)  # "10.0.0.5/24"

    @property
    def key(self) -> tuple[str, int]:
        return self.ns, self.index


@dataclass
class Route:
    dst: ipaddress.IPv4Network
    gateway: str | None
    oif: int | None


@dataclass
class Namespace:
    name: str
    role: str
    label: str  # the host, physnet, router or server it stands for
    links: dict[int, Link]
    routes: list[Route]
    forwarding: bool
    nsids: dict[int, str] = field(default_factory=dict)  # peer namespace id -> name

    def link(self, name: str) -> Link | None:
        return next((lk for lk in self.links.values() if lk.name == name), None)

    def route(self, address: str) -> Route | None:
        """The main table's longest match for an IPv4 address."""
        ip = ipaddress.ip_address(address)
        best = None
        for r in self.routes:
            if ip in r.dst and (best is None or r.dst.prefixlen > best.dst.prefixlen):
                best = r
        return best

    def holds(self, address: str) -> Link | None:
        for lk in self.links.values():
            if any(a.split("/")[0] == address for a in lk.addresses):
                return lk
        return None


def role(names: Names, ns: str) -> tuple[str, str]:
    """(role, label) of one of the cloud's namespaces, from its name."""
    rest = ns[len(names.prefix) + 1:]
    for exact, what in ROLES:
        if rest == exact:
            return what, exact
    for start, what in PREFIX_ROLES:
        if rest.startswith(start):
            return what, rest[len(start):]
    return "other", rest


def read_namespace(names: Names, ns: str, peers: list[str]) -> Namespace | None:
    """One namespace's links, addresses, routes and IPv4 forwarding; None when gone. Its
    veths' peers are resolved among `peers` (the namespaces read with it)."""
    from pyroute2 import IPRoute

    def read() -> Namespace:
        with IPRoute() as ip:
            links: dict[int, Link] = {}
            for msg in ip.get_links():
                info = msg.get("IFLA_LINKINFO")
                kind = info.get("IFLA_INFO_KIND") if info else None
                data = info.get("IFLA_INFO_DATA") if info else None
                vxlan = kind == "vxlan" and data
                links[msg["index"]] = Link(
                    ns, msg.get("ifname"), msg["index"], kind, msg.get("master"),
                    msg.get("link") if kind == "veth" else None,
                    msg.get("link_netnsid") if kind == "veth" else None,
                    bool(msg["flags"] & 1), msg.get("operstate") in ("UP", "UNKNOWN"),
                    data.get("IFLA_VXLAN_ID") if vxlan else None, msg.get("address"),
                    data.get("IFLA_VXLAN_PORT") if vxlan else None)
            for msg in ip.get_addr(family=socket.AF_INET):
                if msg["index"] in links:
                    links[msg["index"]].addresses.append(
                        f"{msg.get('address')}/{msg['prefixlen']}")
            routes = []
            for msg in ip.get_routes(family=socket.AF_INET, table=254):
                dst = msg.get("RTA_DST") or "0.0.0.0"
                routes.append(Route(ipaddress.ip_network(f"{dst}/{msg['dst_len']}", strict=False),
                                    msg.get("RTA_GATEWAY"), msg.get("RTA_OIF")))
            # /proc/sys/net shows the namespace of the thread that opens it
            with open("/proc/sys/net/ipv4/ip_forward") as fh:  # noqa: PTH123
                forwarding = fh.read().strip() == "1"
            what, label = role(names, ns)
            space = Namespace(ns, what, label, links, routes, forwarding)
            wanted = {lk.peer_nsid for lk in links.values() if lk.peer_nsid is not None}
            space.nsids = _nsids(ip, wanted, peers)
            return space

    try:
        return read_in(ns, read)
    except OSError:
        return None


def _nsids(ip: Any, wanted: set[int], peers: list[str]) -> dict[int, str]:
    """Which of `peers` each peer namespace id names, as seen from here (one netlink query
    per candidate: the kernel numbers a namespace's peers per namespace)."""
    out: dict[int, str] = {}
    if not wanted:
        return out
    for other in peers:
        try:
            fd = os.open(f"/run/netns/{other}", os.O_RDONLY)
        except OSError:
            continue
        try:
            nsid = (ip.get_netnsid(fd=fd) or {}).get("nsid")
        except Exception:  # noqa: BLE001 - a namespace going away
            nsid = None
        finally:
            os.close(fd)
        if nsid is not None and nsid >= 0 and nsid in wanted:
            out[nsid] = other
            if len(out) == len(wanted):
                break
    return out


@dataclass
class Wire:
    """The namespaces read (all of the cloud's but guests and DHCP, plus those asked for)."""

    names: Names
    spaces: dict[str, Namespace]
    listed: list[str]  # every namespace of the cloud

    def peer(self, link: Link) -> Link | None:
        """A veth's other end, when its namespace was read."""
        if link.peer is None:
            return None
        here = self.spaces[link.ns]
        other = here.nsids.get(link.peer_nsid) if link.peer_nsid is not None else link.ns
        space = self.spaces.get(other or "")
        return space.links.get(link.peer) if space else None

    def ports(self, bridge: Link) -> list[Link]:
        return [lk for lk in self.spaces[bridge.ns].links.values() if lk.master == bridge.index]


def read(names: Names, also: set[str] | None = None, leaves: bool = False) -> Wire:
    """The wire: every namespace of the cloud but guests and DHCP servers (the leaves, read
    only when `leaves` or named in `also`)."""
    from stackling.dataplane import kernel

    listed = kernel.list_namespaces(names.prefix)
    chosen = [ns for ns in listed if leaves or role(names, ns)[0] not in ("guest", "dhcp")
              or ns in (also or set())]
    spaces = {}
    for ns in chosen:
        space = read_namespace(names, ns, chosen)
        if space is not None:
            spaces[ns] = space
    return Wire(names, spaces, listed)


def summary(wire: Wire, taps: dict[str, str]) -> dict[str, Any]:
    """What the console draws: each host with the physical networks it reaches (its cables
    into their switches), its tunnel address and the servers whose taps hang off it (`taps`:
    tap name -> server id); each physnet's switch and ToR."""
    hosts = []
    for space in sorted(wire.spaces.values(), key=lambda s: s.name):
        if space.role not in ("host", "network node"):
            continue
        physnets, servers, tunnel = set(), set(), None
        for lk in space.links.values():
            if lk.name in taps:
                servers.add(taps[lk.name])
            peer_ns = space.nsids.get(lk.peer_nsid) if lk.peer_nsid is not None else None
            if peer_ns is None:
                continue
            what, label = role(wire.names, peer_ns)
            if what == "switch":
                physnets.add(label)
            elif what == "underlay":
                tunnel = next((a for a in lk.addresses), tunnel)
        hosts.append({"name": space.label if space.role == "host" else "network node",
                      "namespace": space.name, "role": space.role,
                      "physical_networks": sorted(physnets), "tunnel_address": tunnel,
                      "servers": sorted(servers)})
    switches = [{"physical_network": s.label, "namespace": s.name,
                 "bridges": sorted(lk.name for lk in s.links.values() if lk.kind == "bridge")}
                for s in sorted(wire.spaces.values(), key=lambda s: s.name) if s.role == "switch"]
    tors = [{"physical_network": s.label, "namespace": s.name,
             "addresses": sorted(a for lk in s.links.values() for a in lk.addresses
                                 if not a.startswith("127."))}
            for s in sorted(wire.spaces.values(), key=lambda s: s.name) if s.role == "tor"]
    counts: dict[str, int] = {}
    for ns in wire.listed:
        what = role(wire.names, ns)[0]
        counts[what] = counts.get(what, 0) + 1
    return {"prefix": wire.names.prefix, "hosts": hosts, "physical_networks": switches,
            "tors": tors, "namespaces": counts}
