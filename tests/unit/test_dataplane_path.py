"""The path tracer's nftables evaluation (dataplane/path.py): a probe against rules as
`nft -j list ruleset` prints them (the shapes firewall.py writes)."""

from __future__ import annotations

from typing import Any

from stackling.dataplane.path import Probe, evaluate


def _match(left: dict[str, Any], right: Any, op: str = "==") -> dict[str, Any]:
    return {"match": {"op": op, "left": left, "right": right}}


META_IIF = {"meta": {"key": "iifname"}}
SADDR = {"payload": {"protocol": "ip", "field": "saddr"}}
DPORT = {"payload": {"protocol": "th", "field": "dport"}}
L4 = {"meta": {"key": "l4proto"}}
CT = {"ct": {"key": "state"}}


def guest_table(*rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An `inet` table with an input hook jumping to ingress0 for eth0, as firewall.py's."""
    base = {"family": "inet", "table": "sl1", "name": "input", "hook": "input", "prio": 0,
            "policy": "accept", "type": "filter"}
    chain = {"family": "inet", "table": "sl1", "name": "ingress0"}
    out: list[dict[str, Any]] = [{"chain": base}, {"chain": chain},
                                 {"rule": {"family": "inet", "table": "sl1", "chain": "input",
                                           "expr": [_match(META_IIF, "eth0"),
                                                    {"jump": {"target": "ingress0"}}]}}]
    for expr in [[_match(CT, ["established", "related"], "in"), {"accept": None}], *rules,
                 [{"drop": None}]]:
        out.append({"rule": {"family": "inet", "table": "sl1", "chain": "ingress0",
                             "expr": expr}})
    return out


def verdict(rules: list[dict[str, Any]], probe: Probe, iif: str = "eth0") -> str:
    return evaluate(rules, "input", probe.fields(iif, None))[0]


def test_a_rule_for_the_port_range_and_prefix_lets_it_in_and_nothing_else_does() -> None:
    rules = guest_table([_match({"meta": {"key": "nfproto"}}, "ipv4"), _match(L4, 6),
                         _match(SADDR, {"prefix": {"addr": "10.0.0.0", "len": 24}}),
                         _match(DPORT, {"range": [20, 25]}), {"accept": None}])
    assert verdict(rules, Probe("10.0.0.5", "10.0.0.9", "tcp", 22)) == "accept"
    assert verdict(rules, Probe("10.0.1.5", "10.0.0.9", "tcp", 22)) == "drop"  # prefix
    assert verdict(rules, Probe("10.0.0.5", "10.0.0.9", "tcp", 80)) == "drop"  # port
    assert verdict(rules, Probe("10.0.0.5", "10.0.0.9", "udp", 22)) == "drop"  # protocol
    assert verdict(rules, Probe("10.0.0.5", "10.0.0.9", "icmp")) == "drop"
    # another NIC: not this chain's, the base policy accepts
    assert verdict(rules, Probe("10.0.1.5", "10.0.0.9", "tcp", 22), iif="eth1") == "accept"


def test_remote_group_sets_icmp_types_and_where_it_was_dropped() -> None:
    rules = guest_table(
        [_match(SADDR, {"set": ["10.0.0.7", "10.0.0.8"]}), {"accept": None}],
        [_match({"payload": {"protocol": "icmp", "field": "type"}}, "echo-request"),
         _match(SADDR, {"prefix": {"addr": "192.168.0.0", "len": 16}}), {"accept": None}])
    assert verdict(rules, Probe("10.0.0.8", "10.0.0.9", "tcp", 5000)) == "accept"
    assert verdict(rules, Probe("192.168.3.4", "10.0.0.9", "icmp")) == "accept"
    assert verdict(rules, Probe("192.168.3.4", "10.0.0.9", "tcp", 22)) == "drop"
    result, where = evaluate(rules, "input", Probe("10.9.9.9", "10.0.0.9").fields("eth0", None))
    assert (result, where) == ("drop", "sl1/ingress0 rule 4")


def test_a_router_forward_policy_drop() -> None:
    rules = [{"chain": {"family": "ip", "table": "sl1", "name": "forward", "hook": "forward",
                        "prio": 0, "policy": "drop", "type": "filter"}}]
    assert evaluate(rules, "forward", Probe("10.0.0.1", "10.0.1.1").fields("qr-a", "qr-b")) \
        == ("drop", "sl1/forward policy")
    assert evaluate(rules, "input", Probe("10.0.0.1", "10.0.1.1").fields("qr-a", None)) \
        == ("accept", None)
