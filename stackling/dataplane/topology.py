"""The wire: compute hosts, physical networks, tunnels and top-of-rack routers (issue 22).

`plan(desired, names)` says, from the database alone, which node carries which segment,
where each port plugs (or why it cannot), and which ToR holds which gateway: the
reconciler applies it (`Wire`), and the audit and the console read the same answer.

- Nodes: each compute host is a namespace (`<p>-h<host>`); the network node is
  `<p>-fabric` (DHCP namespaces, routers and the outside plug there; it reaches every
  physical network and every tunnel). A node has a bridge per segment it carries.
- Physical networks: a namespace per physnet (`<p>-pn-<physnet>`, its switch) with a
  bridge per segment on it. A node mapped to the physnet has a cable (veth) into the
  switch per segment it carries there: the physnet's untagged uplink for flat (every mapped
  host has it), one per VLAN id for VLAN (this kernel has neither 802.1Q devices nor
  VLAN-filtering bridges nor tc actions, so a tag is a separate cable between the same two
  ends). A host not mapped to a physnet has no link into its switch.
- Tunnels: `<p>-underlay` holds one bridge; each node has a VTEP link on it
  (198.18.0.0/16, the benchmarking range, inside our namespaces only) and per tunnelled
  segment a VXLAN device with head-end replication to the other nodes carrying it (VXLAN
  on 4789; GRE and Geneve ids on VXLAN over 4790 and 6081, so equal ids never meet).
- Routed networks: a network whose subnets name segments. Each segment is its own L2; its
  subnets' gateways live on the ToR of the segment's physnet (`<p>-tor-<physnet>`, on the
  switch like a host), the ToRs and the provider's edge (the outside namespace) share a
  spine (198.19.0.0/24) and route between the segments and to the outside.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass, field
from typing import Any

from stackling.dataplane import desired as desired_
from stackling.dataplane import kernel
from stackling.dataplane.names import TUNNEL_LETTER, TUNNEL_PORT, Names

LOG = logging.getLogger(__name__)
UNDERLAY = ipaddress.ip_network("198.18.0.0/16")
SPINE = ipaddress.ip_network("198.19.0.0/24")
UNDERLAY_MTU = 9000  # jumbo underlay: any tenant MTU fits in a VXLAN packet
PHYSICAL = ("flat", "vlan")


def network_segments(d: desired_.Desired, network_id: str) -> list[dict[str, Any]]:
    """The network's segments in order; a network without segment rows is one local
    segment (its bridges connect nothing beyond their node)."""
    segs = [s for s in d.segments.values() if s["network_id"] == network_id]
    if not segs:
        return [{"id": f"local-{network_id}", "network_id": network_id, "network_type": "local",
                 "physical_network": None, "segmentation_id": None, "segment_index": 0}]
    return sorted(segs, key=lambda s: (s.get("segment_index") or 0, s["id"]))


def reaches(seg: dict[str, Any], physnets: list[str] | set[str]) -> bool:
    return seg["network_type"] not in PHYSICAL or seg.get("physical_network") in physnets


def routed(d: desired_.Desired, network_id: str) -> bool:
    net = d.networks.get(network_id) or {}
    return any((d.subnets.get(s) or {}).get("segment_id") for s in net.get("subnets", []))


def first_segment_only(d: desired_.Desired, network_id: str,
                       subnets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The subnets a network's first DHCP port may take: on a routed network, those of its
    first segment that has any (a port's addresses are on one segment; the other segments
    get their own DHCP ports)."""
    if not routed(d, network_id):
        return subnets
    for seg in network_segments(d, network_id):
        mine = [s for s in subnets if s.get("segment_id") == seg["id"]]
        if mine:
            return mine
    return [s for s in subnets if not s.get("segment_id")]


def port_segment(d: desired_.Desired, port: dict[str, Any],
                 physnets: list[str] | None = None) -> dict[str, Any] | None:
    """The segment a port is on: its first fixed IP's subnet's segment on a routed
    network, else the first segment the host reaches (the network node reaches all)."""
    segs = network_segments(d, port["network_id"])
    by_id = {s["id"]: s for s in segs}
    for ip in port.get("fixed_ips") or []:
        seg_id = (d.subnets.get(ip["subnet_id"]) or {}).get("segment_id")
        if seg_id in by_id:
            return by_id[seg_id]
    if physnets is None:
        return segs[0]
    return next((s for s in segs if reaches(s, physnets)), None)


@dataclass
class Plan:
    hosts: dict[str, list[str]]  # host -> its physnets
    physnets: list[str]
    # node namespace -> segment ids it carries (a bridge each)
    nodes: dict[str, set[str]] = field(default_factory=dict)
    # compute port id -> (host namespace, segment id)
    placement: dict[str, tuple[str, str]] = field(default_factory=dict)
    cuts: dict[str, str] = field(default_factory=dict)  # port id -> why it is not plugged
    # physnet -> [(segment, [(subnet cidr, gateway ip)])] held by its ToR
    tors: dict[str, list[tuple[dict[str, Any], list[tuple[str, str]]]]] = field(
        default_factory=dict)
    vteps: dict[str, str] = field(default_factory=dict)  # node namespace -> tunnel address
    tor_addresses: dict[str, str] = field(default_factory=dict)  # physnet -> spine address
    segments: dict[str, dict[str, Any]] = field(default_factory=dict)
    _host_by_ns: dict[str, str] = field(default_factory=dict)  # host namespace -> host

    def host_physnets(self, ns: str) -> list[str] | None:
        return None if ns not in self._host_by_ns else self.hosts[self._host_by_ns[ns]]

    def members(self, seg_id: str) -> list[str]:
        return sorted(ns for ns, segs in self.nodes.items() if seg_id in segs)

    def links(self, names: Names) -> dict[str, set[str]]:
        """Every link of the wire by namespace (the guests' taps are the reconciler's)."""
        out: dict[str, set[str]] = {}
        for ns, seg_ids in self.nodes.items():
            mine = out.setdefault(ns, set())
            for seg_id in seg_ids:
                seg = self.segments[seg_id]
                mine.add(names.segment_bridge(seg))
                if seg["network_type"] in PHYSICAL:
                    mine.add(names.channel(seg))
                    switch = out.setdefault(names.switch(seg["physical_network"]), set())
                    switch |= {names.segment_bridge(seg), names.switch_port(ns, seg)}
                elif seg["network_type"] in TUNNEL_LETTER and seg.get("segmentation_id"):
                    mine.add(names.vxlan(seg))
            host = self._host_by_ns.get(ns)
            for physnet in self.hosts.get(host, []) if host else []:
                flat = _flat(physnet)
                mine.add(names.channel(flat))
                out.setdefault(names.switch(physnet), set()).update(
                    {names.segment_bridge(flat), names.switch_port(ns, flat)})
            if ns in self.vteps:
                mine.add(names.vtep)
                out.setdefault(names.underlay, set()).update(
                    {names.underlay_bridge, names.underlay_port(ns)})
        for physnet, held in self.tors.items():
            tor = out.setdefault(names.tor(physnet), set())
            tor.add(names.tor_uplink)
            out.setdefault(names.outside, set()).update({names.spine, names.spine_port(physnet)})
            for seg, _ in held:
                tor.add(names.channel(seg))
                out.setdefault(names.switch(physnet), set()).update(
                    {names.segment_bridge(seg), names.switch_port(names.tor(physnet), seg)})
        return out

    def namespaces(self, names: Names) -> set[str]:
        return set(self.links(names)) | {names.host(h) for h in self.hosts} | \
            {names.switch(p) for p in self.physnets}


def _flat(physnet: str) -> dict[str, Any]:
    return {"id": f"uplink-{physnet}", "network_id": "", "network_type": "flat",
            "physical_network": physnet, "segmentation_id": None}


def plan(d: desired_.Desired, names: Names) -> Plan:
    hosts = {h: list(p) for h, p in d.hosts.items()}
    for server in d.servers.values():
        if server.get("host") and server["host"] not in hosts:
            hosts[server["host"]] = []  # a host compute knows and the network does not
    segments: dict[str, dict[str, Any]] = {}
    for net_id in d.networks:
        for seg in network_segments(d, net_id):
            segments[seg["id"]] = seg
    physnets = sorted({p for ps in hosts.values() for p in ps} |
                      {s["physical_network"] for s in segments.values()
                       if s["network_type"] in PHYSICAL and s.get("physical_network")})
    out = Plan(hosts, physnets, segments=segments)
    out._host_by_ns = {names.host(h): h for h in hosts}
    out.nodes[names.fabric] = {s for s in segments}  # the network node carries them all
    for h in hosts:
        out.nodes.setdefault(names.host(h), set())
    for server in d.servers.values():
        if server["state"] == "off" or not server.get("host"):
            continue
        ns = names.host(server["host"])
        for port in d.by_device.get(server["id"], []):
            if not port["device_owner"].startswith("compute:") or \
                    port["network_id"] not in d.networks:
                continue
            seg = port_segment(d, port, hosts[server["host"]])
            if seg is None or not reaches(seg, hosts[server["host"]]):
                out.cuts[port["id"]] = (f"host {server['host']} reaches no segment of network "
                                        f"{port['network_id']} that the port can be on")
                continue
            out.nodes[ns].add(seg["id"])
            out.placement[port["id"]] = (ns, seg["id"])
    # tunnel endpoints: the network node first, then the hosts in name order (every worker
    # computes the same addresses)
    tunnel_nodes = [names.fabric, *[names.host(h) for h in sorted(hosts)]]
    for i, ns in enumerate(tunnel_nodes):
        if any(segments[s]["network_type"] in TUNNEL_LETTER for s in out.nodes.get(ns, ())):
            out.vteps[ns] = str(UNDERLAY.network_address + 1 + i)
    # routed networks: the gateways of each segment's subnets on its physnet's ToR, unless
    # a Neutron router's interface holds that address
    held_by_routers = {ip["ip_address"] for p in d.ports.values()
                       if p["device_owner"] in desired_.ROUTER_INTERFACE_OWNERS
                       for ip in p["fixed_ips"]}
    for net_id in sorted(d.networks):
        if not routed(d, net_id):
            continue
        net = d.networks[net_id]
        by_seg: dict[str, list[tuple[str, str]]] = {}
        for subnet_id in net.get("subnets", []):
            sub = d.subnets.get(subnet_id) or {}
            seg = segments.get(sub.get("segment_id") or "")
            if not seg or seg["network_type"] not in PHYSICAL or sub.get("ip_version") != 4:
                continue
            if sub.get("gateway_ip") and sub["gateway_ip"] not in held_by_routers:
                by_seg.setdefault(seg["id"], []).append((sub["cidr"], sub["gateway_ip"]))
        for seg_id, gateways in by_seg.items():
            seg = segments[seg_id]
            out.tors.setdefault(seg["physical_network"], []).append((seg, gateways))
    for i, physnet in enumerate(sorted(out.tors)):
        out.tor_addresses[physnet] = str(SPINE.network_address + 10 + i)
    return out


class Wire:
    """Applies a plan to the kernel, object by object through the reconciler's `_try`."""

    def __init__(self, names: Names, handles: kernel.Handles, ensure_namespace: Any,
                 attempt: Any, failed: Any = dict) -> None:
        self.names = names
        self.failed = failed  # () -> the pass's failures so far (key -> error)
        self.handles = handles
        self.ensure_namespace = ensure_namespace
        self.attempt = attempt
        self.plan: Plan | None = None
        self.keep: dict[str, set[str]] = {}  # namespace -> links wanted this pass
        self.seen: dict[str, dict[str, dict[str, Any]]] = {}  # namespace -> links read
        self._flood: dict[tuple[str, str], set[str]] = {}
        self.moved: list[tuple[str, str]] = []  # (tap, to namespace) this pass
        self._spined = False
        self._forwarding: set[str] = set()  # ToR namespaces whose forwarding is on
        self._done: Any = None  # the wire's fingerprint when a pass last made all of it
        self.skipped = False  # this pass left the wire alone (nothing of it changed)

    def forget(self) -> None:
        """Check everything again on the next pass (the reconciler's full pass)."""
        self._flood.clear()
        self._forwarding.clear()
        self._done = None

    def _links(self, ns: str) -> dict[str, dict[str, Any]]:
        if ns not in self.seen:
            self.seen[ns] = self.handles.get(ns).links()
        return self.seen[ns]

    def _made(self, ns: str) -> None:
        if self.ensure_namespace(ns):
            self._flood = {k: v for k, v in self._flood.items() if k[0] != ns}
            self._forwarding.discard(ns)

    # ------------------------------------------------------------------ one pass
    def apply(self, d: desired_.Desired) -> Plan:
        names = self.names
        p = self.plan = plan(d, names)
        links = p.links(names)
        self.keep = {ns: set(wanted) for ns, wanted in links.items()}
        self.seen = {}
        self.moved = []
        present = set(kernel.list_namespaces(names.prefix))
        made = False
        for ns in sorted(p.namespaces(names) - {names.fabric} - present):
            made = True
            self.attempt(f"namespace {ns}", self._made, ns)
        mtu = {s_id: (d.networks.get(s["network_id"]) or {}).get("mtu") or 1500
               for s_id, s in p.segments.items()}
        # a pass whose wire is what the last complete one made (a guest more on a segment
        # its host already carries, say) leaves it alone; a full pass checks it all again
        fingerprint = (sorted((ns, sorted(w)) for ns, w in links.items()), sorted(mtu.items()),
                       sorted(p.vteps.items()), sorted(p.tor_addresses.items()),
                       sorted((pn, [(s["id"], g) for s, g in held])
                              for pn, held in p.tors.items()),
                       sorted((ns, sorted(segs)) for ns, segs in p.nodes.items()))
        self.skipped = not made and fingerprint == self._done
        if self.skipped:
            return p
        self._done = None
        ok = all([self.attempt(f"node {ns}", self._node, ns, seg_ids, mtu) is True
                  for ns, seg_ids in sorted(p.nodes.items())]
                 + [self.attempt(f"tor {physnet}", self._tor, physnet, held, mtu) is True
                    for physnet, held in sorted(p.tors.items())]
                 + [self.attempt("spine", self._spine) is True])
        if ok:
            self._done = fingerprint
        return p

    def bridge(self, seg_id: str) -> str:
        assert self.plan is not None
        return self.names.segment_bridge(self.plan.segments[seg_id])

    def _cable(self, ns: str, seg: dict[str, Any], mtu: int, master: bool) -> None:
        """A node's cable into its physnet's switch for one segment."""
        names = self.names
        switch = names.switch(seg["physical_network"])
        sw = self.handles.get(switch)
        bridge = names.segment_bridge(seg)
        if bridge not in self._links(switch):
            sw.ensure_bridge(bridge, max(mtu, 1500))
            self.seen.pop(switch, None)
        self.handles.get(ns).ensure_pair(
            names.channel(seg), sw, names.switch_port(ns, seg), mtu=mtu,
            master=bridge if master else None, remote_master=bridge,
            have=self._links(ns), other_have=self._links(switch))

    def _node(self, ns: str, seg_ids: set[str], mtu: dict[str, int]) -> bool:
        assert self.plan is not None
        names, p = self.names, self.plan
        node = self.handles.get(ns)
        have = self._links(ns)
        for seg_id in sorted(seg_ids):
            bridge = names.segment_bridge(p.segments[seg_id])
            cur = have.get(bridge)
            if cur is None or cur.get("mtu") != mtu[seg_id] or not cur.get("up"):
                node.ensure_bridge(bridge, mtu[seg_id])
        self.seen.pop(ns, None)
        physnets = p.host_physnets(ns)
        flat_here = {p.segments[s]["physical_network"] for s in seg_ids
                     if p.segments[s]["network_type"] == "flat"}
        for physnet in physnets or []:  # every mapped physnet: the host's untagged uplink
            if physnet not in flat_here:
                self._cable(ns, _flat(physnet), 1500, master=False)
        vtep = p.vteps.get(ns)
        if vtep:
            under = self.handles.get(names.underlay)
            if names.underlay_bridge not in self._links(names.underlay):
                under.ensure_bridge(names.underlay_bridge, UNDERLAY_MTU)
                self.seen.pop(names.underlay, None)
            node.ensure_pair(names.vtep, under, names.underlay_port(ns), mtu=UNDERLAY_MTU,
                             remote_master=names.underlay_bridge, have=self._links(ns),
                             other_have=self._links(names.underlay))
            node.ensure_addresses(names.vtep, [f"{vtep}/{UNDERLAY.prefixlen}"])
        ok = True
        for seg_id in sorted(seg_ids):
            seg = p.segments[seg_id]
            kind = seg["network_type"]
            if kind in PHYSICAL:
                self.attempt(f"cable {ns}/{seg_id}", self._cable, ns, seg, mtu[seg_id], True)
                ok &= f"cable {ns}/{seg_id}" not in self.failed()
            elif kind in TUNNEL_LETTER and seg.get("segmentation_id") and vtep:
                self.attempt(f"tunnel {ns}/{seg_id}", self._tunnel, ns, seg, vtep, mtu[seg_id])
                ok &= f"tunnel {ns}/{seg_id}" not in self.failed()
        return ok

    def _tunnel(self, ns: str, seg: dict[str, Any], vtep: str, mtu: int) -> None:
        assert self.plan is not None
        names, p = self.names, self.plan
        node = self.handles.get(ns)
        name = names.vxlan(seg)
        if node.ensure_vxlan(name, int(seg["segmentation_id"]), vtep,
                             TUNNEL_PORT[seg["network_type"]], bridge=names.segment_bridge(seg),
                             mtu=mtu, have=self._links(ns)):
            self._flood[(ns, name)] = set()  # a new device floods nowhere yet
        remotes = {p.vteps[m] for m in p.members(seg["id"]) if m != ns and m in p.vteps}
        known = self._flood.get((ns, name))
        if known != remotes:
            self._flood[(ns, name)] = node.ensure_flood(name, remotes, known)

    def _tor(self, physnet: str, held: list[tuple[dict[str, Any], list[tuple[str, str]]]],
             mtu: dict[str, int]) -> bool:
        assert self.plan is not None
        names, p = self.names, self.plan
        ns = names.tor(physnet)
        tor = self.handles.get(ns)
        for seg, gateways in held:
            self._cable(ns, seg, mtu[seg["id"]], master=False)
            tor.ensure_addresses(names.channel(seg), [
                f"{gw}/{ipaddress.ip_network(cidr).prefixlen}" for cidr, gw in gateways])
        outside = self.handles.get(names.outside)
        if names.spine not in self._links(names.outside):
            outside.ensure_bridge(names.spine, 1500)
            outside.ensure_addresses(names.spine, [f"{SPINE.network_address + 1}/{SPINE.prefixlen}"])
            self.seen.pop(names.outside, None)
        tor.ensure_pair(names.tor_uplink, outside, names.spine_port(physnet), mtu=1500,
                        remote_master=names.spine, have=self._links(ns),
                        other_have=self._links(names.outside))
        tor.ensure_addresses(names.tor_uplink,
                             [f"{p.tor_addresses[physnet]}/{SPINE.prefixlen}"])
        routes = {"0.0.0.0/0": str(SPINE.network_address + 1)}
        for other, others_held in p.tors.items():
            if other != physnet:
                for _, gateways in others_held:
                    for cidr, _gw in gateways:
                        routes[str(ipaddress.ip_network(cidr))] = p.tor_addresses[other]
        tor.ensure_routes(routes)
        if ns not in self._forwarding:  # once per namespace (a new one starts with it off)
            tor.sysctl("net.ipv4.ip_forward", "1")
            self._forwarding.add(ns)
        return True

    def _spine(self) -> bool:
        """The edge (the outside namespace) routes each routed subnet to its rack's ToR."""
        assert self.plan is not None
        names, p = self.names, self.plan
        if not p.tors and not self._spined:
            return True
        self._spined = bool(p.tors)
        outside = self.handles.get(names.outside)
        if p.tors:
            outside.ensure_addresses(names.spine,
                                     [f"{SPINE.network_address + 1}/{SPINE.prefixlen}"])
        routes = {str(ipaddress.ip_network(cidr)): p.tor_addresses[physnet]
                  for physnet, held in p.tors.items() for _, gateways in held
                  for cidr, _ in gateways}
        outside.ensure_routes(routes)
        return True

    # ------------------------------------------------------------------ guests' ports
    def place(self, port_id: str) -> tuple[str, str] | None:
        """(host namespace, bridge there) of a compute port; None when it is cut."""
        assert self.plan is not None
        found = self.plan.placement.get(port_id)
        if found is None:
            return None
        return found[0], self.bridge(found[1])

    def adopt(self, tap: str, ns: str) -> bool:
        """A guest's tap found in another host's namespace moves here (a live migration:
        the guest's side never changes). True when it moved."""
        assert self.plan is not None
        if tap in self._links(ns):
            return False
        for other in self.plan._host_by_ns:
            if other != ns and tap in self._links(other):
                self.handles.get(other).move_link(tap, ns)
                self.seen.pop(other, None)
                self.seen.pop(ns, None)
                self.moved.append((tap, ns))
                return True
        return False

    def finish(self, outside_keep: set[str] | None = None) -> None:
        """Delete every link of the wire's namespaces that nothing wants (the network
        node's and the outside's are the reconciler's)."""
        assert self.plan is not None
        names = self.names
        if self.skipped:
            return  # nothing of the wire changed (a guest's tap goes with its namespace)
        for ns in sorted(self.plan.namespaces(names) - {names.fabric, names.outside}):
            keep = self.keep.get(ns, set()) | {"lo"}
            try:
                links = self.handles.get(ns).links()
            except Exception:  # noqa: BLE001 - a namespace being made or gone
                continue
            for name in set(links) - keep:
                self.attempt(f"link {ns}/{name}", self.handles.get(ns).delete_link, name)
        if names.outside in self.keep or outside_keep is not None:
            try:
                links = self.handles.get(names.outside).links()
            except Exception:  # noqa: BLE001
                return
            keep = self.keep.get(names.outside, set())
            for name in links:
                if names.owns(name) and (name == names.spine or
                                         name.startswith(names._name("s", ""))) \
                        and name not in keep:
                    self.attempt(f"link outside/{name}", self.handles.get(names.outside)
                                 .delete_link, name)
