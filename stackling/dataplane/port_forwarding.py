"""Floating IP port forwardings in the router's namespace, as Neutron's L3 agent's
port-forwarding extension applies them: the floating IP's address on the router's
gateway interface, and per forwarding a DNAT of `floating IP:external port` (protocol) to
`internal IP:internal port`; the replies are translated back by connection tracking.

The rules are a table of their own (`<prefix>-pf`) written in the same transaction as the
router's NAT table. A forwarding with port ranges (`external_port_range`,
`internal_port_range`, should the API serve them) maps the range 1:1 when both ranges are
the same length, and to the one internal port otherwise, as upstream.
"""

from __future__ import annotations

from typing import Any

PROTOCOLS = ("tcp", "udp", "udplite", "dccp", "sctp")


def of_router(forwardings: list[dict[str, Any]], router_id: str) -> list[dict[str, Any]]:
    return [pf for pf in forwardings if pf.get("router_id") == router_id
            and pf.get("protocol") in PROTOCOLS and ":" not in pf["floating_ip_address"]]


def addresses(forwardings: list[dict[str, Any]], router_id: str) -> list[str]:
    """The floating IPs the router answers for on its gateway (/32 each)."""
    return sorted({f"{pf['floating_ip_address']}/32" for pf in of_router(forwardings, router_id)})


def _ports(pf: dict[str, Any], prefix: str) -> tuple[int, int] | None:
    text = pf.get(f"{prefix}_port_range")
    if text:
        lo, _, hi = str(text).partition(":")
        return int(lo), int(hi or lo)
    value = pf.get(f"{prefix}_port")
    return (int(value), int(value)) if value is not None else None


def _rule(pf: dict[str, Any]) -> list[str]:
    ext, inner = _ports(pf, "external"), _ports(pf, "internal")
    if ext is None or inner is None:
        return []
    head = f"ip daddr {pf['floating_ip_address']} {pf['protocol']} dport"
    to = pf["internal_ip_address"]
    if ext[0] == ext[1]:
        return [f"{head} {ext[0]} dnat to {to}:{inner[0]}"]
    if inner[1] - inner[0] == ext[1] - ext[0]:  # 1:1 over the range
        return [f"{head} {e} dnat to {to}:{inner[0] + i}"
                for i, e in enumerate(range(ext[0], ext[1] + 1))]
    return [f"{head} {ext[0]}-{ext[1]} dnat to {to}:{inner[0]}"]


def ruleset(prefix: str, forwardings: list[dict[str, Any]], router_id: str) -> str:
    """The router's forwarding table, whole (an empty one when it has none)."""
    table = f"{prefix}-pf"
    rules = [r for pf in of_router(forwardings, router_id) for r in _rule(pf)]
    return (f"table ip {table} {{}}\ndelete table ip {table}\n"
            f"table ip {table} {{\n"
            "  chain prerouting { type nat hook prerouting priority dstnat; policy accept;\n"
            + "".join(f"    {r}\n" for r in rules) + "  }\n}\n")
