"""A security group rule change takes effect on existing connections as upstream's does:
Neutron's agents delete the connection tracking entries a removed rule allowed, so an
established flow it let in stops (its next packet is new, and nothing accepts it now);
flows another rule still allows go on (the kernel picks a TCP flow up mid-stream).

A guest's stateful filter lives in its own network namespace, so its conntrack table holds
only its own flows. Each pass knows what each guest's rules allowed (`allowances`); what a
guest's rules no longer allow is flushed there through ctnetlink (pyroute2's Conntrack).
A process started afresh knows nothing of earlier rules: it flushes nothing for them.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

from stackling.dataplane import firewall, kernel

PORTED = (6, 17, 132)  # tcp, udp, sctp
ICMP = (1, 58)
# (port addresses, direction, family, protocol, min, max, remote networks or None),
# or ("open", port addresses) for a port without port security
Allowance = tuple[Any, ...]


def _addresses(port: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(ip["ip_address"] for ip in port.get("fixed_ips") or []))


def allowances(nics: Iterable[tuple[str, dict[str, Any]]], groups: dict[str, dict[str, Any]],
               members: dict[str, dict[str, set[str]]]) -> frozenset[Allowance]:
    """What a guest's ports let through statefully: one item per (port, rule), with its
    remote group's members resolved (a member leaving the group is a removal too)."""
    out: set[Allowance] = set()
    for _ifname, port in nics:
        addresses = _addresses(port)
        if not firewall.secured(port):
            out.add(("open", addresses))
            continue
        for group_id in port.get("security_groups") or []:
            group = groups.get(group_id)
            if group is None or not group.get("stateful", True):
                continue
            for rule in group.get("security_group_rules") or []:
                v6 = rule.get("ethertype") == "IPv6"
                proto = rule.get("protocol")
                number = None
                if proto not in (None, "", "any"):
                    number = firewall.PROTOCOL_NUMBERS.get(str(proto).lower())
                    number = int(proto) if number is None else number
                    if number == 1 and v6:
                        number = 58
                remote: tuple[str, ...] | None = None
                if rule.get("remote_ip_prefix"):
                    remote = (rule["remote_ip_prefix"],)
                elif rule.get("remote_group_id"):
                    fam = members.get(rule["remote_group_id"], {}).get("ip6" if v6 else "ip")
                    remote = tuple(sorted(fam or ()))
                out.add((addresses, rule["direction"], 6 if v6 else 4, number,
                         rule.get("port_range_min"), rule.get("port_range_max"), remote))
    return frozenset(out)


def _within(address: str | None, networks: tuple[str, ...] | None) -> bool:
    if networks is None:
        return True
    if address is None:
        return False
    ip = ipaddress.ip_address(address)
    return any(ip in ipaddress.ip_network(n, strict=False) for n in networks)


def matches(item: Allowance, family: int, proto: int | None, saddr: str | None,
            daddr: str | None, dport: int | None, icmp_type: int | None) -> bool:
    """Whether an entry (its original direction's tuple) is one `item` allowed."""
    if item[0] == "open":
        return saddr in item[1] or daddr in item[1]
    addresses, direction, version, number, low, high, remote = item
    if (family == socket.AF_INET6) != (version == 6):
        return False
    mine, theirs = (daddr, saddr) if direction == "ingress" else (saddr, daddr)
    if mine not in addresses or not _within(theirs, remote):
        return False
    if number is not None:
        if proto != number:
            return False
        if number in PORTED and low is not None:
            return dport is not None and low <= dport <= (high if high is not None else low)
        if number in ICMP and low is not None:
            return icmp_type == low
    return True


def flush(namespace: str, removed: Iterable[Allowance]) -> int:
    """Delete the namespace's conntrack entries that a removed allowance let through; how
    many were deleted."""
    removed = list(removed)
    if not removed:
        return 0

    def run() -> int:
        from pyroute2 import Conntrack

        deleted = 0
        for family in (socket.AF_INET, socket.AF_INET6):
            with Conntrack(nfgen_family=family) as ct:  # made here: the namespace's ctnetlink
                for entry in list(ct.dump_entries()):
                    t = entry.tuple_orig
                    if not any(matches(item, t.family, t.proto, t.saddr, t.daddr, t.dport,
                                       t.icmp_type) for item in removed):
                        continue
                    try:  # (in its zone: the hosts' filters keep one per bridge)
                        ct.entry("del", tuple_orig=entry.tuple_orig,
                                 **({"zone": entry.zone} if entry.zone else {}))
                        deleted += 1
                    except Exception:  # noqa: BLE001 - gone meanwhile (it timed out)
                        continue
        return deleted

    return kernel.in_namespace(namespace, run)
