"""Security groups and anti-spoofing as nftables rulesets, each written whole.

- Anti-spoofing (stateless, where the guest cannot reach it): a `bridge` table in the
  fabric namespace drops what a port sends from a MAC or IP that is not its own or an
  allowed address pair's (DHCP from 0.0.0.0 excepted).
- Security groups (stateful): an `inet` table in each guest's network namespace, whose
  processes hold no CAP_NET_ADMIN after boot. Per NIC an ingress and an egress chain:
  established/related accepted, invalid dropped, DHCP and IPv6 neighbour discovery
  allowed as Neutron's firewall drivers allow them, then one accept per rule, then drop.
  (The fabric's bridges have no conntrack: the kernel lacks nf_conntrack_bridge.)
`port_security_enabled: false` leaves a port out of both.
"""

from __future__ import annotations

from typing import Any

import netaddr

PROTOCOL_NUMBERS = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58, "ipv6-icmp": 58, "sctp": 132}


def _allowed(port: dict[str, Any]) -> tuple[set[str], set[str], set[str], set[str]]:
    """(MACs, IPv4 networks, IPv6 networks, ...) a port may send from."""
    macs = {port["mac_address"].lower()}
    v4 = {ip["ip_address"] for ip in port["fixed_ips"] if ":" not in ip["ip_address"]}
    v6 = {ip["ip_address"] for ip in port["fixed_ips"] if ":" in ip["ip_address"]}
    for pair in port.get("allowed_address_pairs") or []:
        macs.add((pair.get("mac_address") or port["mac_address"]).lower())
        net = str(netaddr.IPNetwork(pair["ip_address"]).cidr)
        (v6 if ":" in net else v4).add(net)
    return macs, v4, v6, set()


def _targets(networks: set[str]) -> str:
    """IPv6 addresses/networks as 128-bit integers or ranges (this nft has no `icmpv6
    taddr`: the neighbour advertisement's target is matched as raw payload)."""
    out = []
    for net in sorted(networks):
        n = netaddr.IPNetwork(net)
        out.append(f"0x{n.first:032x}" if n.size == 1 else f"0x{n.first:032x}-0x{n.last:032x}")
    return ", ".join(out)


def secured(port: dict[str, Any]) -> bool:
    return bool(port.get("port_security_enabled", True)) and \
        port["device_owner"].startswith("compute:")


def anti_spoofing(table: str, taps: dict[str, dict[str, Any]]) -> str:
    """The fabric's bridge table: taps (link name -> port) of secured ports."""
    chains, jumps = [], []
    for i, (tap, port) in enumerate(sorted(taps.items())):
        macs, v4, v6, _ = _allowed(port)
        chain = f"spoof{i}"
        jumps.append(f'    iifname "{tap}" jump {chain}')
        rules = [f"ether saddr != {{ {', '.join(sorted(macs))} }} drop"]
        v4s = ", ".join(sorted(v4)) or "255.255.255.255"
        rules.append(f"ether type arp arp saddr ip != {{ {v4s}, 0.0.0.0 }} drop")
        rules.append("ether type ip ip saddr 0.0.0.0 udp sport 68 udp dport 67 accept")
        rules.append(f"ether type ip ip saddr != {{ {v4s} }} drop")
        # IPv6: the link-local addresses of its MACs (EUI-64, the kernel's default), no
        # router advertisements and no DHCPv6 server replies (as Neutron's drivers drop
        # them), neighbour advertisements only for its own addresses
        v6 |= {str(netaddr.EUI(mac).ipv6_link_local()) for mac in macs}
        rules.append("ether type ip6 meta l4proto ipv6-icmp icmpv6 type nd-router-advert drop")
        rules.append("ether type ip6 meta l4proto udp udp sport 547 drop")
        rules.append("ether type ip6 meta l4proto ipv6-icmp icmpv6 type nd-neighbor-advert "
                     f"@th,64,128 != {{ {_targets(v6)} }} drop")  # the target address
        v6s = ", ".join(sorted(v6 | {"::"}))
        rules.append(f"ether type ip6 ip6 saddr != {{ {v6s} }} drop")
        chains.append(f"  chain {chain} {{\n" + "".join(f"    {r}\n" for r in rules) + "  }\n")
    return (f"table bridge {table} {{}}\ndelete table bridge {table}\n"
            f"table bridge {table} {{\n"
            "  chain prerouting {\n"
            "    type filter hook prerouting priority -300; policy accept;\n"
            + "".join(j + "\n" for j in jumps) + "  }\n" + "".join(chains) + "}\n")


def _rule(rule: dict[str, Any], group_members: dict[str, dict[str, set[str]]]) -> list[str]:
    """One Neutron rule as nftables matches (several lines when a remote group spans both
    address families); [] when it can match nothing."""
    v6 = rule.get("ethertype") == "IPv6"
    family = "ip6" if v6 else "ip"
    parts = [f"meta nfproto {'ipv6' if v6 else 'ipv4'}"]
    ingress = rule["direction"] == "ingress"
    field = f"{family} {'saddr' if ingress else 'daddr'}"
    if rule.get("remote_ip_prefix"):
        parts.append(f"{field} {netaddr.IPNetwork(rule['remote_ip_prefix']).cidr}")
    elif rule.get("remote_group_id"):
        members = group_members.get(rule["remote_group_id"], {}).get(family, set())
        if not members:
            return []
        parts.append(f"{field} {{ {', '.join(sorted(members))} }}")
    proto = rule.get("protocol")
    if proto not in (None, "", "any"):
        number = PROTOCOL_NUMBERS.get(str(proto).lower())
        if number is None:
            number = int(proto)
        if number == 1 and v6:
            number = 58
        parts.append(f"meta l4proto {number}")
        low, high = rule.get("port_range_min"), rule.get("port_range_max")
        if number in (6, 17, 132) and low is not None:
            parts.append(f"th dport {low}" if high in (None, low) else f"th dport {low}-{high}")
        elif number in (1, 58) and low is not None:
            icmp = "icmpv6" if number == 58 else "icmp"
            parts.append(f"{icmp} type {low}")
            if high is not None:
                parts.append(f"{icmp} code {high}")
    return [" ".join(parts) + " accept"]


def group_members(ports: list[dict[str, Any]]) -> dict[str, dict[str, set[str]]]:
    """Security group id -> {"ip": addresses, "ip6": addresses} of its member ports."""
    out: dict[str, dict[str, set[str]]] = {}
    for port in ports:
        for group in port.get("security_groups") or []:
            fam = out.setdefault(group, {"ip": set(), "ip6": set()})
            _, v4, v6, _ = _allowed(port)
            fam["ip"] |= v4
            fam["ip6"] |= v6
    return out


def guest_rules(table: str, nics: list[tuple[str, dict[str, Any]]],
                groups: dict[str, dict[str, Any]],
                members: dict[str, dict[str, set[str]]]) -> str:
    """The guest namespace's inet table: nics are (interface, port)."""
    hooks, chains = [], []
    for i, (ifname, port) in enumerate(nics):
        if not secured(port):
            continue
        port_groups = [groups[g] for g in port.get("security_groups") or [] if g in groups]
        stateful = all(g.get("stateful", True) for g in port_groups)
        ingress = ["ct state established,related accept", "ct state invalid drop"] \
            if stateful else []
        egress = list(ingress)
        ingress += ["udp sport 67 udp dport 68 accept",
                    "udp sport 547 udp dport 546 accept",  # DHCPv6 replies (to a multicast ask)
                    "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-advert, "
                    "mld-listener-query } accept"]
        # a guest is no router and no DHCP server, whatever its rules say (as upstream)
        egress[:0] = ["icmpv6 type nd-router-advert drop", "udp sport 547 drop"]
        egress += ["udp sport 68 udp dport 67 accept",
                   "udp sport 546 udp dport 547 accept",
                   "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, "
                   "mld2-listener-report, 131, 132 } accept"]
        for group in port_groups:
            for rule in group.get("security_group_rules") or []:
                (ingress if rule["direction"] == "ingress" else egress).extend(
                    _rule(rule, members))
        ingress.append("drop")
        egress.append("drop")
        hooks.append((f'    iifname "{ifname}" jump ingress{i}', f'    oifname "{ifname}" jump egress{i}'))
        chains.append(f"  chain ingress{i} {{\n" + "".join(f"    {r}\n" for r in ingress) + "  }\n")
        chains.append(f"  chain egress{i} {{\n" + "".join(f"    {r}\n" for r in egress) + "  }\n")
    return (f"table inet {table} {{}}\ndelete table inet {table}\n"
            f"table inet {table} {{\n"
            "  chain input {\n    type filter hook input priority filter; policy accept;\n"
            + "".join(h[0] + "\n" for h in hooks) + "  }\n"
            "  chain output {\n    type filter hook output priority filter; policy accept;\n"
            + "".join(h[1] + "\n" for h in hooks) + "  }\n" + "".join(chains) + "}\n")
