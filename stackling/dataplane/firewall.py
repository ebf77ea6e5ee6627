"""Security groups, anti-spoofing and QoS marks as nftables rulesets, each written whole,
in the namespace where the ports' taps are (a compute host's; the network node's for trunk
sub-ports): no process of a guest reaches them, whatever it holds in its own network
namespace, and they match the taps' names there, which the guest cannot rename.

- `bridge <table>`, prerouting (every frame a port sends): the port's QoS egress limit
  (policed, as upstream's tc police), its DSCP mark; then, for a secured port,
  anti-spoofing: what it sends from a MAC or IP that is not its own or an allowed address
  pair's is dropped (DHCP from 0.0.0.0 excepted), and so is whatever only a DHCP server or a
  router sends (DHCPv4 and DHCPv6 replies, router advertisements), as Neutron's firewall
  drivers drop them whatever the rules say. Its forward chain marks each frame with the
  ports it goes from and to (`meta mark`: from << 16 | to).
- `inet <table>`: bridged traffic passes the inet hooks (the kernel's br_netfilter; this
  kernel has no nf_conntrack_bridge), so conntrack keeps the state: a zone per bridge (a
  segment) so that equal addresses on two networks never meet, then per secured port an
  egress chain (from the port; an accept returns to let the destination's ingress chain
  judge too) and an ingress chain: established/related accepted, invalid dropped (stateful
  groups), DHCP and IPv6 neighbour discovery allowed as Neutron allows them, one accept per
  rule, then drop.
`port_security_enabled: false` leaves a port out of both (its QoS still applies).
"""

from __future__ import annotations

import zlib
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


def _spoofing(port: dict[str, Any]) -> list[str]:
    """A secured port's anti-spoofing rules (the frames it sends)."""
    macs, v4, v6, _ = _allowed(port)
    rules = [f"ether saddr != {{ {', '.join(sorted(macs))} }} drop"]
    v4s = ", ".join(sorted(v4)) or "255.255.255.255"
    rules.append(f"ether type arp arp saddr ip != {{ {v4s}, 0.0.0.0 }} drop")
    # no DHCPv4 server replies from an instance, whatever its rules (a rogue udhcpd's
    # offers never reach a neighbour)
    rules.append("ether type ip meta l4proto udp udp sport 67 drop")
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
    return rules


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


def _port_chains(port: dict[str, Any], groups: dict[str, dict[str, Any]],
                 members: dict[str, dict[str, set[str]]]) -> tuple[list[str], list[str]]:
    """(ingress, egress) rules of a secured port: an egress allow returns (the frame's
    destination, when it is a port here too, is judged by its own ingress chain next)."""
    port_groups = [groups[g] for g in port.get("security_groups") or [] if g in groups]
    stateful = all(g.get("stateful", True) for g in port_groups)
    ingress = ["ct state established,related accept", "ct state invalid drop"] \
        if stateful else []
    egress = ["ct state established,related return", "ct state invalid drop"] \
        if stateful else []
    ingress += ["udp sport 67 udp dport 68 accept",
                "udp sport 547 udp dport 546 accept",  # DHCPv6 replies (to a multicast ask)
                "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-advert, "
                "mld-listener-query } accept"]
    egress += ["udp sport 68 udp dport 67 return",
               "udp sport 546 udp dport 547 return",
               "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, "
               "mld2-listener-report, 131, 132 } return"]
    for group in port_groups:
        for rule in group.get("security_group_rules") or []:
            if rule["direction"] == "ingress":
                ingress.extend(_rule(rule, members))
            else:
                egress.extend(r[:-len("accept")] + "return" for r in _rule(rule, members))
    return ingress + ["drop"], egress + ["drop"]


def zone(bridge: str) -> int:
    """A bridge's conntrack zone (stable whatever else is on the host: a zone that changed
    would cut every connection through it)."""
    return 1 + zlib.crc32(bridge.encode()) % 65000


def host_rules(table: str, taps: list[tuple[str, dict[str, Any]]], bridges: set[str],
               groups: dict[str, dict[str, Any]], members: dict[str, dict[str, set[str]]],
               qos: dict[str, list[str]] | None = None) -> str:
    """A namespace's two tables (module docstring): `taps` are (tap, port) of the ports
    plugged there, `bridges` its bridges, `qos` tap -> its QoS statements (qos.py)."""
    qos = qos or {}
    pre, marks, chains = [], [], []
    fwd_from, fwd_to, inet_from, inet_to, inet_chains = [], [], [], [], []
    for i, (tap, port) in enumerate(sorted(taps, key=lambda t: t[0]), start=1):
        sends = list(qos.get(tap, []))
        if secured(port):
            sends += _spoofing(port)
        # (chains named by the tap: `ingress-<tap>` is what path.py reads, and a person)
        if sends:
            pre.append(f'"{tap}" : jump from-{tap}')
            chains.append(f"  chain from-{tap} {{\n" + "".join(f"    {r}\n" for r in sends)
                          + "  }\n")
        if not secured(port):
            continue
        fwd_from.append(f'"{tap}" : jump markfrom-{tap}')
        fwd_to.append(f'"{tap}" : jump markto-{tap}')
        marks.append(f"  chain markfrom-{tap} {{\n    meta mark set meta mark | 0x{i << 16:x}\n"
                     f"  }}\n  chain markto-{tap} {{\n    meta mark set meta mark | 0x{i:x}\n  }}\n")
        ingress, egress = _port_chains(port, groups, members)
        inet_from.append(f"0x{i << 16:x} : jump egress-{tap}")
        inet_to.append(f"0x{i:x} : jump ingress-{tap}")
        inet_chains.append(f"  chain ingress-{tap} {{\n" +
                           "".join(f"    {r}\n" for r in ingress) + "  }\n")
        inet_chains.append(f"  chain egress-{tap} {{\n" +
                           "".join(f"    {r}\n" for r in egress) + "  }\n")

    def vmap(key: str, items: list[str]) -> str:
        return f"    {key} vmap {{ {', '.join(items)} }}\n" if items else ""

    zones = [f'"{b}" : {zone(b)}' for b in sorted(bridges)]
    return (f"table bridge {table} {{}}\ndelete table bridge {table}\n"
            f"table bridge {table} {{\n"
            "  chain prerouting {\n"
            "    type filter hook prerouting priority -300; policy accept;\n"
            + vmap("iifname", pre) + "  }\n"
            # before br_netfilter hands the frame to the inet hooks (its priority is 0)
            "  chain forward {\n"
            "    type filter hook forward priority -100; policy accept;\n"
            + vmap("iifname", fwd_from) + vmap("oifname", fwd_to) + "  }\n"
            + "".join(chains) + "".join(marks) + "}\n"
            f"table inet {table} {{}}\ndelete table inet {table}\n"
            f"table inet {table} {{\n"
            "  chain prerouting {\n"
            "    type filter hook prerouting priority raw; policy accept;\n"
            + (f"    ct zone set iifname map {{ {', '.join(zones)} }}\n"
               if zones and inet_from else "") + "  }\n"
            "  chain forward {\n"
            "    type filter hook forward priority filter; policy accept;\n"
            + vmap("meta mark and 0xffff0000", inet_from)
            + vmap("meta mark and 0xffff", inet_to) + "  }\n"
            + "".join(inet_chains) + "}\n")
