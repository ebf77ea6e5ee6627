"""The desired state of the network features beyond desired.py: floating IP port
forwardings, the QoS rules that apply to each port, trunks. Read through
`network.interface` in the pass's read transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import admin_context
from stackling.network import interface as network


@dataclass
class Extras:
    port_forwardings: list[dict[str, Any]] = field(default_factory=list)
    qos: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # port id -> rules
    trunks: list[dict[str, Any]] = field(default_factory=list)


def read(db: Session, ports: list[dict[str, Any]] | None = None) -> Extras:
    if ports is None:
        ports = network.list_ports(db, admin_context())
    vm_ports = [p for p in ports if (p.get("device_owner") or "").startswith("compute:")]
    return Extras(port_forwardings=network.port_forwardings_all(db),
                  qos=network.qos_rules_by_port(db, vm_ports),
                  trunks=network.trunks_all(db))
