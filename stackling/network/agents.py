"""Network agents (`agent`): one Open vSwitch agent per configured compute host.

Stackling binds ports without agents, so the agents are a view of the host configuration
(`compute.hosts`), not rows: each is always alive, and its `bridge_mappings` come from the
host's `physical_networks` — the host-to-physnet mapping upstream's routed networks read
from exactly this field. Admin-only, as upstream: a non-admin lists nothing and shows 404.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.listing import ListParams, to_bool
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.agent_models import AgentState
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.netconfig import get_config

EXTENSIONS.append(Extension("agent", "agent", "The agent management extension.",
                            "2013-02-03T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "get_agent": pol.ADMIN,
    "update_agent": pol.ADMIN,
    "delete_agent": pol.ADMIN,
}
AGENT_TYPE = "Open vSwitch agent"
BINARY = "neutron-openvswitch-agent"
TUNNEL_TYPES = ("vxlan", "gre", "geneve")
FILTERS = ("id", "agent_type", "binary", "topic", "host", "admin_state_up", "alive",
           "availability_zone", "description")
_NS = uuid.UUID("0b6f3f7e-6a43-4c4e-9d1f-3a2f3b5f8a61")
# Upstream's agent timestamps are naive UTC "YYYY-MM-DD HH:MM:SS"; a process "starts" its
# agents when it starts.
_STARTED = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


class AgentNotFound(errors.NotFound):
    message = "Agent %(id)s could not be found."


def agent_id(host: str) -> str:
    """Stable per host, so every process and restart agree on it."""
    return str(uuid.uuid5(_NS, f"ovs-agent:{host}"))


def _hosts(db: Session) -> Sequence[Any]:
    runtime = pol.runtime_of(db)
    return runtime.settings.compute.hosts if runtime is not None else ()


def _states(db: Session) -> dict[str, AgentState]:
    return {st.id: st for st in db.scalars(select(AgentState))}


def _view(db: Session, host: Any, state: AgentState | None = None) -> dict[str, Any]:
    cfg = get_config(db)
    physnets = list(dict.fromkeys(host.physical_networks))
    created = state.created_at.strftime("%Y-%m-%d %H:%M:%S") if state is not None else _STARTED
    return {
        "id": agent_id(host.name), "agent_type": AGENT_TYPE, "binary": BINARY,
        "topic": "N/A", "host": host.name, "alive": True, "availability_zone": None,
        "admin_state_up": state.admin_state_up if state is not None else True,
        "description": state.description if state is not None else None,
        "configurations": {
            "bridge_mappings": {p: f"br-{p}" for p in physnets},
            "tunnel_types": [t for t in TUNNEL_TYPES if t in cfg.type_drivers],
            "integration_bridge": "br-int", "devices": 0,
        },
        "created_at": created, "started_at": created,
        "heartbeat_timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "resources_synced": None,
    }


def _matches(agent: dict[str, Any], key: str, values: list[str]) -> bool:
    value = agent[key]
    if isinstance(value, bool):
        try:
            return value in {to_bool(v) for v in values}
        except ValueError:
            raise errors.BadRequest(f"Invalid input for {key}. Reason: '{values[0]}' "
                                    "cannot be converted to boolean.") from None
    return ("" if value is None else value) in values


def list_agents(db: Session, ctx: RequestContext, params: ListParams) -> list[dict[str, Any]]:
    """Every agent the caller may see, filtered, in id order, paged by limit/marker."""
    if not pol.allowed(db, ctx, "get_agent", {}):
        return []
    states = _states(db)
    agents = sorted((_view(db, h, states.get(agent_id(h.name))) for h in _hosts(db)),
                    key=lambda a: a["id"])
    for key, values in params.filters.items():
        agents = [a for a in agents if _matches(a, key, values)]
    for key, asc in reversed(params.sorts):
        agents.sort(key=lambda a, k=key: (a[k] is not None, a[k]), reverse=not asc)
    if params.limit:
        ids = [a["id"] for a in agents]
        at = ids.index(params.marker) if params.marker in ids else None
        if params.page_reverse:
            end = at if at is not None else len(agents)
            agents = agents[max(0, end - params.limit):end]
        else:
            start = at + 1 if at is not None else 0
            agents = agents[start:start + params.limit]
    return agents


def _host(db: Session, ctx: RequestContext, agent: str) -> Any:
    if pol.allowed(db, ctx, "get_agent", {}):
        for host in _hosts(db):
            if agent_id(host.name) == agent:
                return host
    raise AgentNotFound(id=agent)


def get_agent(db: Session, ctx: RequestContext, agent: str) -> dict[str, Any]:
    return _view(db, _host(db, ctx, agent), db.get(AgentState, agent))


def update_agent(db: Session, ctx: RequestContext, agent: str,
                 attrs: dict[str, Any]) -> dict[str, Any]:
    """An admin's `description` and `admin_state_up` (stored; nothing is bound by agents
    here, so an agent set down changes no binding)."""
    host = _host(db, ctx, agent)
    pol.authorize(db, ctx, "update_agent", {})
    state = db.get(AgentState, agent, with_for_update=True)
    if state is None:
        state = AgentState(id=agent, admin_state_up=True, created_at=_started_at())
        db.add(state)
    for key in ("description", "admin_state_up"):
        if key in attrs:
            setattr(state, key, attrs[key])
    db.flush()
    return _view(db, host, state)


def delete_agent(db: Session, ctx: RequestContext, agent: str) -> None:
    """Upstream drops the agent's row and a live agent registers anew at its next report;
    stackling's agents are always alive, so the agent is back at once, registered now, with
    an admin's description and admin state gone."""
    _host(db, ctx, agent)
    pol.authorize(db, ctx, "delete_agent", {})
    db.execute(delete(AgentState).where(AgentState.id == agent))
    db.add(AgentState(id=agent, admin_state_up=True, created_at=utcnow()))
    db.flush()


def _started_at() -> dt.datetime:
    return dt.datetime.strptime(_STARTED, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC)
