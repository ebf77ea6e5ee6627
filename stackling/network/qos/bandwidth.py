"""What the Open vSwitch agent of each host reports to placement for QoS minimum
bandwidth: an agent provider under the host's compute node provider and, per configured
bandwidth (`compute.hosts[].resource_provider_bandwidths`, Neutron's
`resource_provider_bandwidths`), a bridge provider with `NET_BW_EGR_KILOBIT_PER_SEC`
and `NET_BW_IGR_KILOBIT_PER_SEC` and the traits `CUSTOM_PHYSNET_<PHYSNET>` (or
`CUSTOM_NETWORK_TUNNEL_PROVIDER`) and `CUSTOM_VNIC_TYPE_NORMAL`.

Compute schedules a port's resource request against these providers; the claim is the
server's allocation, so placement's capacity check and provider generations keep
concurrent boots from over-allocating a bridge.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from stackling.network.agents import AGENT_TYPE
from stackling.network.qos.bindings import TUNNEL_TRAIT, custom_trait, physnet_trait

TUNNELLED = "rp_tunnelled"
PPS_SETTING = "resource_provider_packet_processing_without_direction"
_NS = uuid.UUID("5b0a53f6-87b4-4a5e-a51c-0f3d8d7d8c21")


def parse(entries: list[str]) -> dict[str, tuple[int, int]]:
    """`["physnet1:1000:2000", "br-physnet2:5:5", "rp_tunnelled:1:1"]` ->
    {physnet or rp_tunnelled: (egress, ingress)}; a malformed entry is a ValueError."""
    out: dict[str, tuple[int, int]] = {}
    for entry in entries:
        name, egress, ingress = entry.rsplit(":", 2)
        if name.startswith("br-"):
            name = name[3:]
        if not name or int(egress) < 0 or int(ingress) < 0:
            raise ValueError(f"bad resource_provider_bandwidths entry {entry!r}")
        out[name] = (int(egress), int(ingress))
    return out


def provider_uuid(host: str, name: str = "") -> str:
    return str(uuid.uuid5(_NS, f"{host}:{name}"))


def _inventory(total: int) -> dict[str, Any]:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": max(total, 1),
            "step_size": 1, "allocation_ratio": 1.0}


def sync(db: Session, hosts: list[Any]) -> None:
    """Every configured host's bandwidth providers as its settings say (creating them
    or updating their inventories; a host without bandwidths gets none)."""
    from stackling.placement import interface as placement

    for host in hosts:
        wanted = parse(list(getattr(host, "resource_provider_bandwidths", []) or []))
        kpps = int(getattr(host, PPS_SETTING, 0) or 0)
        if not wanted and not kpps:
            continue
        nodes = {n: u for u, n in placement.list_providers_named_like(db, host.name).items()}
        node = nodes.get(host.name)
        if node is None:
            continue  # compute has not reported this host
        agent_name = f"{host.name}:{AGENT_TYPE}"
        agent = provider_uuid(host.name)
        # packet processing is the agent's (the whole host's switch), as upstream
        placement.ensure_child_provider(
            db, agent, agent_name, node,
            {"NET_PACKET_RATE_KILOPACKET_PER_SEC": _inventory(kpps)} if kpps else {},
            [custom_trait("VNIC_TYPE", "normal")] if kpps else [])
        for name, (egress, ingress) in sorted(wanted.items()):
            bridge = "br-tun" if name == TUNNELLED else f"br-{name}"
            trait = TUNNEL_TRAIT if name == TUNNELLED else physnet_trait(name)
            inventory = {}
            if egress:
                inventory["NET_BW_EGR_KILOBIT_PER_SEC"] = _inventory(egress)
            if ingress:
                inventory["NET_BW_IGR_KILOBIT_PER_SEC"] = _inventory(ingress)
            placement.ensure_child_provider(
                db, provider_uuid(host.name, bridge), f"{agent_name}:{bridge}", agent,
                inventory, [trait, custom_trait("VNIC_TYPE", "normal")])


def on_start(runtime: Any) -> None:
    """The component's start hook (after compute reported its hosts)."""
    import logging

    from stackling.common.db import retry_on_conflict

    hosts = list(getattr(getattr(runtime.settings, "compute", None), "hosts", []) or [])
    if not any(getattr(h, "resource_provider_bandwidths", None) or getattr(h, PPS_SETTING, 0)
               for h in hosts):
        return

    def run() -> None:
        with runtime.db.transaction() as db:
            sync(db, hosts)

    try:  # workers of one server start together: a lost race retries and finds the winner's
        retry_on_conflict(run)
    except Exception:  # noqa: BLE001 - never keep a worker from serving
        logging.getLogger(__name__).exception("qos: reporting bandwidth providers failed")
