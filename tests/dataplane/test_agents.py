"""The agents the dataplane really runs are Neutron's agents to the clients: a live DHCP
agent hosts the network it serves, a live L3 agent the router it builds, and a metadata
agent is there (issue 23, "Agents")."""

from __future__ import annotations

import pytest

from tests.dataplane.conftest import DataplaneCloud, eventually


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_dhcp_l3_and_metadata_agents_are_listed_and_host_what_they_serve(
        dataplane_clouds, backend: str) -> None:
    dp: DataplaneCloud = dataplane_clouds(backend)
    net, sub = dp.network("dp-agents", "10.71.0.0/24")
    router = dp.sdk.network.create_router(name="dp-agents-router")
    dp.sdk.network.add_interface_to_router(router, subnet=sub.id)

    def by_type() -> dict[str, dict]:
        rows = dp.cloud.cli("network", "agent", "list", "-f", "json")
        return {a["Agent Type"]: a for a in rows}

    assert eventually(lambda: {"DHCP agent", "L3 agent", "Metadata agent"} <= set(by_type()),
                      timeout=60)
    agents = by_type()
    assert agents["DHCP agent"]["Binary"] == "neutron-dhcp-agent"
    assert agents["DHCP agent"]["Alive"] in (True, ":-)")
    assert agents["DHCP agent"]["Availability Zone"] == "nova"
    assert agents["L3 agent"]["Binary"] == "neutron-l3-agent"
    assert agents["Metadata agent"]["Binary"] == "neutron-metadata-agent"
    assert "Open vSwitch agent" in agents  # the compute hosts' L2 agents stay

    # the DHCP agent hosts the network once the dataplane made its DHCP port
    def hosting() -> list[dict]:
        return dp.cloud.cli("network", "agent", "list", "--network", net.id, "-f", "json")

    assert eventually(lambda: [a["Agent Type"] for a in hosting()] == ["DHCP agent"], timeout=60)
    dhcp = dp.sdk.network.get_agent(agents["DHCP agent"]["ID"])
    assert dhcp.is_alive and dhcp.binary == "neutron-dhcp-agent" and dhcp.topic == "dhcp_agent"
    assert dhcp.configuration["dhcp_driver"] == "neutron.agent.linux.dhcp.Dnsmasq"
    hosted = [n.id for n in dp.sdk.network.dhcp_agent_hosting_networks(dhcp)]
    assert net.id in hosted
    shown = dp.cloud.cli("network", "agent", "show", dhcp.id, "-f", "json")
    assert shown["agent_type"] == "DHCP agent" and shown["alive"] in (True, ":-)")

    # the L3 agent hosts the router
    rows = dp.cloud.cli("network", "agent", "list", "--router", router.id, "-f", "json")
    assert [a["Agent Type"] for a in rows] == ["L3 agent"]
    l3 = dp.sdk.network.get_agent(agents["L3 agent"]["ID"])
    assert router.id in [r.id for r in dp.sdk.network.agent_hosted_routers(l3)]
    assert [a.id for a in dp.sdk.network.routers_hosting_l3_agents(router)] == [l3.id]
    # the Open vSwitch agents host nothing
    ovs = agents["Open vSwitch agent"]["ID"]
    assert list(dp.sdk.network.dhcp_agent_hosting_networks(ovs)) == []
