"""Network agents (`agent`, `dhcp_agent_scheduler`, `l3_agent_scheduler`).

Two kinds, both admin-only as upstream (a non-admin lists nothing and shows 404):

- one Open vSwitch agent per configured compute host. Stackling binds ports without
  agents, so these are a view of the host configuration (`compute.hosts`), not rows: each
  is always alive, and its `bridge_mappings` come from the host's `physical_networks` —
  the host-to-physnet mapping upstream's routed networks read from exactly this field.
- the agents that really run: with `dataplane.driver: netns` the process holding the
  dataplane's lease reports its DHCP, L3 and metadata agents (`report`, every
  `REPORT_INTERVAL` s); as upstream's, each is alive while its last heartbeat is younger
  than Neutron's `agent_down_time` (75 s). The live DHCP agent hosts every network that
  has a DHCP port, the live L3 agent every router with a port (upstream's automatic
  failover moves them off a dead agent the same way).
"""

from __future__ import annotations

import datetime as dt
import json
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
from stackling.network.agent_models import AgentState, ReportedAgent
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.netconfig import get_config

EXTENSIONS.append(Extension("agent", "agent", "The agent management extension.",
                            "2013-02-03T10:00:00-00:00"))
EXTENSIONS.append(Extension("dhcp_agent_scheduler", "DHCP Agent Scheduler",
                            "Schedule networks among dhcp agents",
                            "2013-02-07T10:00:00-00:00"))
EXTENSIONS.append(Extension("l3_agent_scheduler", "L3 Agent Scheduler",
                            "Schedule routers among l3 agents", "2013-02-07T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "get_agent": pol.ADMIN,
    "update_agent": pol.ADMIN,
    "delete_agent": pol.ADMIN,
    "get_dhcp-networks": pol.ADMIN,
    "get_dhcp-agents": pol.ADMIN,
    "get_l3-routers": pol.ADMIN,
    "get_l3-agents": pol.ADMIN,
}
AGENT_DOWN_TIME = 75  # Neutron's agent_down_time (s)
REPORT_INTERVAL = 30  # Neutron's report_interval (s)
DHCP_AGENT, L3_AGENT, METADATA_AGENT = "DHCP agent", "L3 agent", "Metadata agent"
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


def reported_id(agent_type: str, host: str) -> str:
    return str(uuid.uuid5(_NS, f"{agent_type}:{host}"))


def report(db: Session, host: str, agents: list[dict[str, Any]], start: bool = False) -> None:
    """A heartbeat of the agents running on `host` (`agent_type`, `binary`, `topic`,
    `availability_zone`, `configurations`): registered at their first report, `started_at`
    moved when `start` (a process that starts them anew)."""
    now = utcnow()
    for agent in agents:
        aid = reported_id(agent["agent_type"], host)
        row = db.get(ReportedAgent, aid, with_for_update=True)
        if row is None:
            row = ReportedAgent(id=aid, host=host, created_at=now, started_at=now)
            db.add(row)
        elif start:
            row.started_at = now
        row.agent_type, row.binary, row.topic = (agent["agent_type"], agent["binary"],
                                                 agent["topic"])
        row.availability_zone = agent.get("availability_zone")
        row.configurations = json.dumps(agent.get("configurations") or {}, sort_keys=True)
        row.heartbeat_at = now
    db.flush()


def _stamp(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


def _reported_view(row: ReportedAgent, state: AgentState | None) -> dict[str, Any]:
    heartbeat = row.heartbeat_at.replace(tzinfo=row.heartbeat_at.tzinfo or dt.UTC)
    alive = (dt.datetime.now(dt.UTC) - heartbeat).total_seconds() <= AGENT_DOWN_TIME
    return {
        "id": row.id, "agent_type": row.agent_type, "binary": row.binary, "topic": row.topic,
        "host": row.host, "alive": alive, "availability_zone": row.availability_zone,
        "admin_state_up": state.admin_state_up if state is not None else True,
        "description": state.description if state is not None else None,
        "configurations": json.loads(row.configurations or "{}"),
        "created_at": _stamp(row.created_at), "started_at": _stamp(row.started_at),
        "heartbeat_timestamp": _stamp(row.heartbeat_at), "resources_synced": None,
    }


def _all(db: Session) -> dict[str, dict[str, Any]]:
    states = _states(db)
    out = {agent_id(h.name): _view(db, h, states.get(agent_id(h.name))) for h in _hosts(db)}
    for row in db.scalars(select(ReportedAgent)):
        out[row.id] = _reported_view(row, states.get(row.id))
    return out


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
    agents = sorted(_all(db).values(), key=lambda a: a["id"])
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


def _find(db: Session, ctx: RequestContext, agent: str) -> dict[str, Any]:
    if pol.allowed(db, ctx, "get_agent", {}):
        found = _all(db).get(agent)
        if found is not None:
            return found
    raise AgentNotFound(id=agent)


def get_agent(db: Session, ctx: RequestContext, agent: str) -> dict[str, Any]:
    return _find(db, ctx, agent)


def update_agent(db: Session, ctx: RequestContext, agent: str,
                 attrs: dict[str, Any]) -> dict[str, Any]:
    """An admin's `description` and `admin_state_up` (stored; nothing is bound by agents
    here, so an agent set down changes no binding)."""
    _find(db, ctx, agent)
    pol.authorize(db, ctx, "update_agent", {})
    state = db.get(AgentState, agent, with_for_update=True)
    if state is None:
        state = AgentState(id=agent, admin_state_up=True, created_at=_started_at())
        db.add(state)
    for key in ("description", "admin_state_up"):
        if key in attrs:
            setattr(state, key, attrs[key])
    db.flush()
    return _all(db)[agent]


def delete_agent(db: Session, ctx: RequestContext, agent: str) -> None:
    """Upstream drops the agent's row and a live agent registers anew at its next report;
    stackling's agents are always alive, so the agent is back at once, registered now, with
    an admin's description and admin state gone. A reported agent's row goes, as upstream's:
    it registers anew at its next heartbeat."""
    _find(db, ctx, agent)
    pol.authorize(db, ctx, "delete_agent", {})
    db.execute(delete(AgentState).where(AgentState.id == agent))
    if db.get(ReportedAgent, agent) is not None:
        db.execute(delete(ReportedAgent).where(ReportedAgent.id == agent))
    else:
        db.add(AgentState(id=agent, admin_state_up=True, created_at=utcnow()))
    db.flush()


def _started_at() -> dt.datetime:
    return dt.datetime.strptime(_STARTED, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC)
