"""`/v2.0/agents[/{agent_id}]` (`agent`): list, show, update and delete, admin-only; what
the DHCP and L3 agents host (`dhcp_agent_scheduler`, `l3_agent_scheduler`), read-only."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import Page, parse_list_params
from stackling.network import agent_hosting, agents, errors
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.attributes import Attr, boolean, string

RESOURCES.append(("agent", "agents"))

SORT_KEYS = ("id", "agent_type", "binary", "topic", "host", "availability_zone")


def list_agents(rq: ApiRequest) -> Any:
    params = parse_list_params(rq.query, filterable=agents.FILTERS, sortable=SORT_KEYS,
                               error=errors.BadRequest,
                               max_limit=rq.settings.network.pagination_max_limit)
    items = agents.list_agents(rq.db, rq.ctx, params)
    return common.list_body(rq, "agents", items, params, Page(items, False))


def show_agent(rq: ApiRequest) -> Any:
    return common.show_body(rq, "agent", agents.get_agent(rq.db, rq.ctx,
                                                          rq.path_params["agent_id"]))


UPDATABLE = {"description": Attr(put=True, convert=string(255, nullable=True)),
             "admin_state_up": Attr(put=True, convert=boolean)}


def update_agent(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "agent", UPDATABLE)
    return {"agent": agents.update_agent(rq.db, rq.ctx, rq.path_params["agent_id"], attrs)}


def delete_agent(rq: ApiRequest) -> Any:
    agents.delete_agent(rq.db, rq.ctx, rq.path_params["agent_id"])


def dhcp_networks(rq: ApiRequest) -> Any:
    return {"networks": agent_hosting.dhcp_networks(rq.db, rq.ctx, rq.path_params["agent_id"])}


def dhcp_agents(rq: ApiRequest) -> Any:
    return {"agents": agent_hosting.dhcp_agents(rq.db, rq.ctx, rq.path_params["network_id"])}


def l3_routers(rq: ApiRequest) -> Any:
    return {"routers": agent_hosting.l3_routers(rq.db, rq.ctx, rq.path_params["agent_id"])}


def l3_agents(rq: ApiRequest) -> Any:
    return {"agents": agent_hosting.l3_agents(rq.db, rq.ctx, rq.path_params["router_id"])}


def register(s: Service) -> None:
    s.add("/v2.0/agents", get=list_agents)
    s.add("/v2.0/agents/{agent_id}", get=show_agent, put=update_agent, delete=delete_agent)
    s.add("/v2.0/agents/{agent_id}/dhcp-networks", get=dhcp_networks)
    s.add("/v2.0/networks/{network_id}/dhcp-agents", get=dhcp_agents)
    s.add("/v2.0/agents/{agent_id}/l3-routers", get=l3_routers)
    s.add("/v2.0/routers/{router_id}/l3-agents", get=l3_agents)
