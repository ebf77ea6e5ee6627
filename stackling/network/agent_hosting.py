"""Which reported agent hosts what (`dhcp_agent_scheduler`, `l3_agent_scheduler`):
`/agents/{id}/dhcp-networks`, `/networks/{id}/dhcp-agents`, `/agents/{id}/l3-routers`,
`/routers/{id}/l3-agents`, admin-only (403 otherwise), as upstream.

The dataplane runs one DHCP and one L3 agent at a time (in the lease holder), so there are
no bindings to store: the DHCP agent with the latest heartbeat hosts every network with a
DHCP port (the port the dataplane's DHCP agent asks for), and the L3 agent with the latest
heartbeat every router with an interface or a gateway. A dead holder's agents host
nothing once another has reported (upstream's automatic failover to a live agent).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import agents
from stackling.network import policy as pol
from stackling.network.agent_models import ReportedAgent
from stackling.network.core import networks
from stackling.network.core.models import Network, Port
from stackling.network.l3 import routers as l3
from stackling.network.l3.models import Router

DHCP_OWNER = "network:dhcp"
ROUTER_OWNERS = ("network:router_interface", "network:router_gateway",
                 "network:ha_router_replicated_interface",
                 "network:router_interface_distributed")


def _current(db: Session, agent_type: str) -> str | None:
    """The id of the agent of this type with the latest heartbeat (the one that runs)."""
    return db.scalars(select(ReportedAgent.id).where(ReportedAgent.agent_type == agent_type)
                      .order_by(ReportedAgent.heartbeat_at.desc(), ReportedAgent.id)
                      .limit(1)).first()


def _hosted_networks(db: Session) -> list[str]:
    return sorted(set(db.scalars(select(Port.network_id).where(Port.device_owner == DHCP_OWNER))))


def _hosted_routers(db: Session) -> list[str]:
    ids = set(db.scalars(select(Port.device_id).where(Port.device_owner.in_(ROUTER_OWNERS))))
    return sorted(ids)


def dhcp_networks(db: Session, ctx: RequestContext, agent_id: str) -> list[dict[str, Any]]:
    pol.authorize(db, ctx, "get_dhcp-networks", {})
    agents.get_agent(db, ctx, agent_id)
    if agent_id != _current(db, agents.DHCP_AGENT):
        return []
    ids = _hosted_networks(db)
    nets = list(db.scalars(select(Network).where(Network.id.in_(ids)).order_by(Network.id))) \
        if ids else []
    return networks.render(db, ctx, nets)


def dhcp_agents(db: Session, ctx: RequestContext, network_id: str) -> list[dict[str, Any]]:
    pol.authorize(db, ctx, "get_dhcp-agents", {})
    networks.get_visible(db, ctx, network_id)
    current = _current(db, agents.DHCP_AGENT)
    if current is None or network_id not in _hosted_networks(db):
        return []
    return [agents.get_agent(db, ctx, current)]


def l3_routers(db: Session, ctx: RequestContext, agent_id: str) -> list[dict[str, Any]]:
    pol.authorize(db, ctx, "get_l3-routers", {})
    agents.get_agent(db, ctx, agent_id)
    if agent_id != _current(db, agents.L3_AGENT):
        return []
    ids = _hosted_routers(db)
    found = list(db.scalars(select(Router).where(Router.id.in_(ids)).order_by(Router.id))) \
        if ids else []
    return l3.render(db, ctx, found)


def l3_agents(db: Session, ctx: RequestContext, router_id: str) -> list[dict[str, Any]]:
    pol.authorize(db, ctx, "get_l3-agents", {})
    l3.get_visible(db, ctx, router_id)
    current = _current(db, agents.L3_AGENT)
    if current is None or router_id not in _hosted_routers(db):
        return []
    return [agents.get_agent(db, ctx, current)]
