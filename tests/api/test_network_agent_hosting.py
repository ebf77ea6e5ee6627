"""Network agents that report (the netns dataplane's DHCP, L3 and metadata agents) over
the in-process app: without a dataplane only the Open vSwitch agents are listed and nothing
hosts a network; a heartbeat lists the agents alive, the DHCP agent hosts the networks with
a DHCP port and the L3 agent the routers with ports; an old heartbeat is a dead agent."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from stackling.network import interface as network
from stackling.network.agent_models import ReportedAgent
from tests.api.test_network import N, create, neutron_error

AGENTS = [
    {"agent_type": "DHCP agent", "binary": "neutron-dhcp-agent", "topic": "dhcp_agent",
     "availability_zone": "nova", "configurations": {"networks": 1}},
    {"agent_type": "L3 agent", "binary": "neutron-l3-agent", "topic": "l3_agent",
     "availability_zone": "nova", "configurations": {"routers": 1}},
    {"agent_type": "Metadata agent", "binary": "neutron-metadata-agent", "topic": "N/A",
     "availability_zone": None, "configurations": {}},
]


def _types(api) -> list[str]:
    return sorted({a["agent_type"] for a in api.get(f"{N}/agents").json()["agents"]})


def test_reported_agents_are_listed_and_host_networks_and_routers(api):
    net = create(api, "networks", "network", {"name": "hosted"})
    subnet = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                               "cidr": "10.88.0.0/24"})
    router = create(api, "routers", "router", {"name": "hosted-router"})
    r = api.put(f"{N}/routers/{router['id']}/add_router_interface",
                json={"subnet_id": subnet["id"]})
    assert r.status_code == 200, r.text

    # no dataplane: the compute hosts' L2 agents only, nothing hosts the network
    assert _types(api) == ["Open vSwitch agent"]
    assert api.get(f"{N}/networks/{net['id']}/dhcp-agents").json() == {"agents": []}
    assert api.get(f"{N}/routers/{router['id']}/l3-agents").json() == {"agents": []}
    neutron_error(api.get(f"{N}/networks/{net['id']}/dhcp-agents", user="demo"), 403)
    neutron_error(api.get(f"{N}/networks/nope/dhcp-agents"), 404, "NetworkNotFound")

    # the dataplane's heartbeat (what its lease holder reports) and its DHCP port
    with api.runtime.db.transaction() as db:
        network.report_agents(db, "netnode", AGENTS, start=True)
    create(api, "ports", "port", {"network_id": net["id"], "device_owner": "network:dhcp",
                                  "device_id": "dhcp-test"})
    assert _types(api) == ["DHCP agent", "L3 agent", "Metadata agent", "Open vSwitch agent"]
    agents = {a["agent_type"]: a for a in api.get(f"{N}/agents").json()["agents"]}
    dhcp, l3 = agents["DHCP agent"], agents["L3 agent"]
    assert dhcp["alive"] is True and dhcp["host"] == "netnode" and dhcp["binary"] == \
        "neutron-dhcp-agent" and dhcp["availability_zone"] == "nova"
    assert agents["Metadata agent"]["availability_zone"] is None
    hosting = api.get(f"{N}/networks/{net['id']}/dhcp-agents").json()["agents"]
    assert [a["id"] for a in hosting] == [dhcp["id"]]
    hosted = api.get(f"{N}/agents/{dhcp['id']}/dhcp-networks").json()["networks"]
    assert net["id"] in [n["id"] for n in hosted]
    assert [n["id"] for n in api.get(f"{N}/agents/{l3['id']}/l3-routers").json()["routers"]] \
        == [router["id"]]
    assert [a["id"] for a in api.get(f"{N}/routers/{router['id']}/l3-agents").json()["agents"]
            ] == [l3["id"]]
    # the L3 agent hosts no network, the DHCP agent no router
    assert api.get(f"{N}/agents/{l3['id']}/dhcp-networks").json() == {"networks": []}
    assert api.get(f"{N}/agents/{dhcp['id']}/l3-routers").json() == {"routers": []}
    assert api.get(f"{N}/agents?agent_type=DHCP%20agent&alive=true").json()["agents"][0][
        "id"] == dhcp["id"]

    # a heartbeat older than agent_down_time: dead, as upstream
    with api.runtime.db.transaction() as db:
        db.execute(update(ReportedAgent).where(ReportedAgent.id == dhcp["id"]).values(
            heartbeat_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=120)))
    assert api.get(f"{N}/agents/{dhcp['id']}").json()["agent"]["alive"] is False
    # deleted, it is gone until its next report registers it again
    assert api.delete(f"{N}/agents/{dhcp['id']}").status_code == 204
    neutron_error(api.get(f"{N}/agents/{dhcp['id']}"), 404)
    with api.runtime.db.transaction() as db:
        network.report_agents(db, "netnode", AGENTS[:1])
    assert api.get(f"{N}/agents/{dhcp['id']}").json()["agent"]["alive"] is True
