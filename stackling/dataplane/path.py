"""The path a packet takes between two servers, read from the live kernel (`live.py`):
the hops (guest, host, segment, physnet switch, ToR, router) and, where it stops, why
(no route, a security group, a port down, forwarding off, nobody holding the next hop).

The tracer does what the kernel would: a route look-up in each namespace it reaches, the
link the route leaves by, then across the L2 domain (bridges, veth pairs, VXLAN devices
of one id) to whoever holds the next hop's address; the ports' security groups (in their
hosts' namespaces, firewall.py) and the routers' rules on the way are evaluated for the
probe (a new connection: protocol, port).
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from stackling.dataplane import live
from stackling.dataplane.names import Names

MAX_HOPS = 16
ICMP_TYPES = {"echo-request": 8, "echo-reply": 0, "destination-unreachable": 3}
L4 = {"tcp": 6, "udp": 17, "icmp": 1, "sctp": 132}


@dataclass
class Probe:
    src: str
    dst: str
    protocol: str = "icmp"  # icmp (an echo request), tcp or udp
    port: int | None = None

    def fields(self, iif: str | None, oif: str | None) -> dict[str, Any]:
        return {"iifname": iif, "oifname": oif, "nfproto": "ipv4", "l4proto": self.protocol,
                "saddr": self.src, "daddr": self.dst, "dport": self.port,
                "icmp type": 8 if self.protocol == "icmp" else None, "ct state": "new"}


@dataclass
class Trace:
    hops: list[dict[str, Any]] = field(default_factory=list)
    reached: bool = False
    cut: dict[str, Any] | None = None  # {"at", "reason", "detail"}

    def hop(self, kind: str, namespace: str, name: str, **detail: Any) -> None:
        last = self.hops[-1] if self.hops else None
        if last and last["namespace"] == namespace and last["kind"] == kind:
            for key, value in detail.items():  # the same place again: merge the detail
                if isinstance(value, list):
                    last.setdefault(key, [])
                    last[key] += [v for v in value if v not in last[key]]
            return
        self.hops.append({"kind": kind, "namespace": namespace, "name": name, **detail})

    def stop(self, at: str, reason: str, detail: str) -> Trace:
        self.cut = {"at": at, "reason": reason, "detail": detail}
        return self

    def as_dict(self) -> dict[str, Any]:
        return {"reached": self.reached, "hops": self.hops, "cut": self.cut}


# ------------------------------------------------------------------ nftables
def ruleset(ns: str) -> list[dict[str, Any]]:
    out = subprocess.run(["nsenter", f"--net=/run/netns/{ns}", "--", "nft", "-j", "list",
                          "ruleset"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0 or not out.stdout.strip():
        return []
    return json.loads(out.stdout).get("nftables", [])


def _value(right: Any) -> Any:
    if isinstance(right, dict) and "set" in right:
        return [_value(v) for v in right["set"]]
    return right


def _matches(have: Any, right: Any) -> bool | None:
    """Whether a packet field matches the rule's right-hand side (None: cannot say)."""
    if isinstance(right, list):
        results = [_matches(have, r) for r in right]
        return True if any(results) else (None if None in results else False)
    if isinstance(right, dict):
        if "set" in right:
            return _matches(have, right["set"])
        if "prefix" in right:
            try:
                net = ipaddress.ip_network(f"{right['prefix']['addr']}/{right['prefix']['len']}",
                                           strict=False)
                return have is not None and ipaddress.ip_address(have) in net
            except ValueError:
                return False
        if "range" in right:
            low, high = right["range"]
            return have is not None and isinstance(have, int) and low <= have <= high
        return None
    if have is None:
        return False
    if isinstance(right, str) and isinstance(have, int):  # named ICMP types
        return ICMP_TYPES.get(right) == have
    if isinstance(right, int) and isinstance(have, str):  # l4proto by number
        return L4.get(have) == right
    if isinstance(right, str) and "/" not in right and isinstance(have, str) and \
            ":" not in right and right.count(".") == 3:
        return right == have
    return right == have


def _field(packet: dict[str, Any], left: dict[str, Any]) -> tuple[bool, Any]:
    """(known, value) of the field the rule reads, and the implied protocol checks."""
    if "meta" in left:
        key = left["meta"]["key"]
        if key in ("iifname", "oifname", "nfproto", "l4proto"):
            return True, packet[key]
        return False, None
    if "ct" in left and left["ct"].get("key") == "state":
        return True, packet["ct state"]
    if "payload" in left:
        proto, name = left["payload"].get("protocol"), left["payload"].get("field")
        if proto == "ip" and name in ("saddr", "daddr"):
            return True, packet[name]
        if proto in ("ip6", "icmpv6"):
            return True, None  # an IPv4 probe: never matches
        if proto in ("th", "tcp", "udp", "sctp") and name in ("sport", "dport"):
            if proto != "th" and packet["l4proto"] != proto:
                return True, None
            return True, packet["dport"] if name == "dport" else None
        if proto == "icmp" and name == "type":
            return True, packet["icmp type"] if packet["l4proto"] == "icmp" else None
        if proto == "icmp" and name == "code":
            return True, 0 if packet["l4proto"] == "icmp" else None
    return False, None


def _rule_verdict(packet: dict[str, Any], expr: list[dict[str, Any]]
                  ) -> tuple[str | None, str | None]:
    """(verdict, jump target) when every match holds; (None, None) otherwise."""
    for item in expr:
        if "match" in item:
            m = item["match"]
            known, have = _field(packet, m["left"])
            if not known:
                return None, None  # a match the tracer does not model: not taken
            result = _matches(have, _value(m["right"]))
            if m["op"] == "!=":
                result = None if result is None else not result
            if not result:
                return None, None
        elif "accept" in item:
            return "accept", None
        elif "drop" in item or "reject" in item:
            return "drop", None
        elif "jump" in item or "goto" in item:
            return "jump", (item.get("jump") or item.get("goto"))["target"]
        elif "return" in item:
            return "return", None
    return None, None


def _chains(rules: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(family, table, name) -> the chain with its rules' expressions, from `nft -j`."""
    chains = {}
    for item in rules:
        if "chain" in item:
            c = item["chain"]
            chains[(c["family"], c["table"], c["name"])] = dict(c, rules=[])
    for item in rules:
        if "rule" in item:
            r = item["rule"]
            chain = chains.get((r["family"], r["table"], r["chain"]))
            if chain is not None:
                chain["rules"].append(r["expr"])
    return chains


def evaluate(rules: list[dict[str, Any]], hook: str, packet: dict[str, Any]
             ) -> tuple[str, str | None]:
    """The verdict of every base chain on `hook` for the packet, in priority order:
    ("accept" | "drop", the chain and rule that dropped it)."""
    chains = _chains(rules)
    bases = sorted((c for c in chains.values() if c.get("hook") == hook and
                    c["family"] in ("ip", "inet")), key=lambda c: c.get("prio", 0))
    for base in bases:
        verdict, where = _walk(chains, base, packet, 0)
        if verdict is None:
            verdict = base.get("policy", "accept")
            where = f"{base['table']}/{base['name']} policy"
        if verdict == "drop":
            return "drop", where
    return "accept", None


def port_verdict(rules: list[dict[str, Any]], tap: str, direction: str,
                 packet: dict[str, Any]) -> tuple[str, str | None]:
    """A port's security groups, as its host's namespace applies them (firewall.py: the
    chain `ingress-<tap>` or `egress-<tap>` of the `inet` table): ("accept" | "drop", where).
    A port without one (port security off) lets everything through."""
    chains = _chains(rules)
    name = f"{direction}-{tap}"
    chain = next((c for (family, _, n), c in chains.items() if family == "inet" and n == name),
                 None)
    if chain is None:
        return "accept", None
    verdict, where = _walk(chains, chain, packet, 0)
    return ("drop", where) if verdict == "drop" else ("accept", None)


def _walk(chains: dict, chain: dict[str, Any], packet: dict[str, Any], depth: int
          ) -> tuple[str | None, str | None]:
    if depth > 8:
        return None, None
    for i, expr in enumerate(chain["rules"]):
        verdict, target = _rule_verdict(packet, expr)
        if verdict == "jump":
            sub = chains.get((chain["family"], chain["table"], target))
            if sub is not None:
                v, where = _walk(chains, sub, packet, depth + 1)
                if v in ("accept", "drop"):
                    return v, where
            continue
        if verdict == "return":
            return None, None
        if verdict in ("accept", "drop"):
            return verdict, f"{chain['table']}/{chain['name']} rule {i + 1}"
    return None, None


# ------------------------------------------------------------------ L2
def _l2_neighbours(wire: live.Wire, link: live.Link) -> list[live.Link]:
    out = []
    space = wire.spaces[link.ns]
    if link.master is not None and link.master in space.links:
        out.append(space.links[link.master])
    if link.kind == "bridge":
        out += wire.ports(link)
    peer = wire.peer(link)
    if peer is not None:
        out.append(peer)
    if link.kind == "vxlan" and link.vni is not None:  # one id and port: one segment
        out += [lk for s in wire.spaces.values() for lk in s.links.values()
                if lk.kind == "vxlan" and (lk.vni, lk.udp_port) == (link.vni, link.udp_port)
                and lk.key != link.key]
    return out


def across(wire: live.Wire, start: live.Link, address: str
           ) -> tuple[live.Link | None, list[live.Link], live.Link | None]:
    """From a namespace's outgoing link across its L2 domain to the link holding
    `address`: (that link, the links on the way, the first link down that stopped it)."""
    for respect_state in (True, False):
        parents: dict[tuple[str, int], live.Link | None] = {start.key: None}
        todo = deque([start])
        found = None
        while todo:
            link = todo.popleft()
            if link is not start and any(a.split("/")[0] == address for a in link.addresses):
                found = link
                break
            for nxt in _l2_neighbours(wire, link):
                if nxt.key in parents:
                    continue
                if respect_state and not (nxt.up and (nxt.carrier or nxt.kind == "bridge")):
                    continue
                parents[nxt.key] = link
                todo.append(nxt)
        if found is not None:
            way, cur = [], found
            while cur is not None:
                way.append(cur)
                cur = parents[cur.key]
            way.reverse()
            down = next((lk for lk in way if not lk.up or not (lk.carrier or lk.kind == "bridge")),
                        None)
            return (found if respect_state else None), way, down
    return None, [], None


# ------------------------------------------------------------------ the trace
def trace(names: Names, src_server: str, dst_server: str, protocol: str = "icmp",
          port: int | None = None, dst_address: str | None = None) -> dict[str, Any]:
    src_ns, dst_ns = names.guest(src_server), names.guest(dst_server)
    wire = live.read(names, also={src_ns, dst_ns})
    out = Trace()
    src, dst = wire.spaces.get(src_ns), wire.spaces.get(dst_ns)
    if src is None:
        return out.stop(src_ns, "not running", "the source server has no guest on the wire "
                                               "(stopped, shelved or not plugged)").as_dict()
    if dst is None:
        return out.stop(dst_ns, "not running", "the destination server has no guest on the "
                                               "wire (stopped, shelved or not plugged)").as_dict()
    targets = [a.split("/")[0] for lk in dst.links.values() if lk.name != "lo"
               for a in lk.addresses]
    if dst_address:
        targets = [dst_address]
    if not targets:
        return out.stop(dst_ns, "no address", "the destination guest holds no IPv4 address "
                                              "(DHCP has not answered it)").as_dict()
    result = None
    for target in targets:  # the first address that is reached, else the first cut
        attempt = _trace_to(wire, names, src, dst, target, protocol, port)
        attempt_dict = attempt.as_dict()
        attempt_dict["destination"] = target
        if attempt.reached:
            return attempt_dict
        result = result or attempt_dict
    return result  # type: ignore[return-value]


def _trace_to(wire: live.Wire, names: Names, src: live.Namespace, dst: live.Namespace,
              target: str, protocol: str, port: int | None) -> Trace:
    out = Trace()
    here = src
    source_ip: str | None = None
    rules: dict[str, list[dict[str, Any]]] = {}

    def nft(ns: str) -> list[dict[str, Any]]:
        if ns not in rules:
            rules[ns] = ruleset(ns)
        return rules[ns]

    iif: str | None = None
    arrived: live.Link | None = None
    for _ in range(MAX_HOPS):
        out.hop(here.role, here.name, here.label)
        if here is dst or here.holds(target):
            if here is not dst:
                return out.stop(here.name, "wrong holder", f"{target} is held by {here.name}, "
                                                           "not by the destination guest")
            probe = Probe(source_ip or "0.0.0.0", target, protocol, port)
            tap = wire.peer(arrived) if arrived is not None else None  # its host's end
            verdict, where = port_verdict(nft(tap.ns), tap.name, "ingress", probe.fields(
                iif, None)) if tap is not None else ("accept", None)
            if verdict == "drop":
                return out.stop(here.name, "security group",
                                f"the destination's security groups let no {_what(probe)} in "
                                f"from {probe.src} on {iif} ({where})")
            out.reached = True
            return out
        route = here.route(target)
        if route is None or route.oif not in here.links:
            return out.stop(here.name, "no route", f"{here.name} has no route to {target}")
        link = here.links[route.oif]
        if not link.up:
            return out.stop(here.name, "port down", f"{link.name} in {here.name} is down")
        if source_ip is None:
            source_ip = next((a.split("/")[0] for a in link.addresses), None)
            if source_ip is None:
                return out.stop(here.name, "no address", f"{link.name} of the source has no "
                                                          "IPv4 address")
            probe = Probe(source_ip, target, protocol, port)
            tap = wire.peer(link)
            verdict, where = port_verdict(nft(tap.ns), tap.name, "egress", probe.fields(
                None, link.name)) if tap is not None else ("accept", None)
            if verdict == "drop":
                return out.stop(here.name, "security group",
                                f"the source's security groups let no {_what(probe)} out to "
                                f"{target} ({where})")
        else:
            if not here.forwarding:
                return out.stop(here.name, "forwarding off",
                                f"{here.name} does not forward (a router with "
                                "admin_state_up false)")
            probe = Probe(source_ip, target, protocol, port)
            verdict, where = evaluate(nft(here.name), "forward", probe.fields(iif, link.name))
            if verdict == "drop":
                return out.stop(here.name, "filtered", f"{here.name} drops it ({where})")
        hop_ip = route.gateway or target
        holder, way, down = across(wire, link, hop_ip)
        for lk in way[1:-1]:
            space = wire.spaces[lk.ns]
            if lk.kind == "bridge":
                out.hop(space.role, space.name, space.label, segments=[_segment(names, lk)],
                        bridges=[lk.name])
            elif lk.kind == "vxlan":
                kind = TUNNEL_PORTS.get(lk.udp_port or 0, "VXLAN")
                out.hop(space.role, space.name, space.label, segments=[f"{kind} {lk.vni}"])
            elif space.role not in ("guest", "dhcp"):
                out.hop(space.role, space.name, space.label)
        if holder is None:
            if down is not None:
                return out.stop(down.ns, "port down", f"{down.name} in {down.ns} is down: the "
                                                       f"path to {hop_ip} crosses it")
            return out.stop(here.name, "unreachable", f"nothing on the segment of {link.name} "
                                                      f"holds {hop_ip}")
        iif, arrived = holder.name, holder
        here = wire.spaces[holder.ns]
    return out.stop(here.name, "too long", f"more than {MAX_HOPS} hops")


SEGMENT_KINDS = (("bx", "VXLAN"), ("bg", "GRE"), ("be", "Geneve"))
TUNNEL_PORTS = {4789: "VXLAN", 4790: "GRE", 6081: "Geneve"}  # names.TUNNEL_PORT's


def _segment(names: Names, bridge: live.Link) -> str:
    """A segment's bridge as an operator says it (names.py's segment_bridge)."""
    rest = bridge.name[len(names.prefix) + 1:] if names.owns(bridge.name) else ""
    try:
        for start, kind in SEGMENT_KINDS:
            if rest.startswith(start):
                return f"{kind} {int(rest[2:], 16)}"
        if rest.startswith("v") and len(rest) == 8:
            return f"VLAN {int(rest[5:], 16)}"
    except ValueError:
        pass
    if rest.startswith("f"):
        return "flat"
    return bridge.name


def _what(probe: Probe) -> str:
    if probe.protocol == "icmp":
        return "ICMP echo"
    return f"{probe.protocol} port {probe.port}" if probe.port else probe.protocol
