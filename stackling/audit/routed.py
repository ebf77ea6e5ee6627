"""Routed networks: segment providers, their IPv4 inventories and aggregates, host
mappings and aggregate membership, IPv4 usage by port, and port bindings. The network
service recomputes them and compares (`network.interface.check_routed_segments` and
`check_routed_ports`); the rules are in `stackling/network/README.md` ("Routed networks")."""

from __future__ import annotations

from sqlalchemy.orm import Session

from stackling.audit.findings import Finding, register


def check_segments(db: Session) -> list[Finding]:
    from stackling.network import interface as network

    return [Finding(*d) for d in network.check_routed_segments(db)]


def check_ports(db: Session) -> list[Finding]:
    from stackling.network import interface as network

    return [Finding(*d) for d in network.check_routed_ports(db)]


register("routed.segments", check_segments)
register("routed.ports", check_ports)
