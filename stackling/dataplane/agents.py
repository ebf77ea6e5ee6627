"""The agents this dataplane really runs, reported as Neutron's agents report themselves:
a heartbeat every `REPORT_INTERVAL` seconds (Neutron's `report_interval`) from the process
that holds the lease, through `network.interface.report_agents`.

- `DHCP agent` (neutron-dhcp-agent): dnsmasq per network in its DHCP namespace;
- `L3 agent` (neutron-l3-agent): the router namespaces, SNAT, floating IPs, forwardings;
- `Metadata agent` (neutron-metadata-agent): the metadata sockets at 169.254.169.254.

Their host is this machine's name; a takeover by another worker reports the same agents
under its host, and the old ones turn dead once their heartbeat is older than Neutron's
`agent_down_time`."""

from __future__ import annotations

import socket
import time
from typing import Any

from stackling.common.db import Database
from stackling.dataplane import desired as desired_
from stackling.dataplane.dhcp import LEASE_SECONDS
from stackling.network import interface as network

REPORT_INTERVAL = 30.0  # seconds, Neutron's report_interval
AVAILABILITY_ZONE = "nova"  # Neutron's default_availability_zone for DHCP and L3 agents


def agents(d: desired_.Desired) -> list[dict[str, Any]]:
    """The three agents with upstream's binaries, topics and configuration counts."""
    served = [n for n in d.networks if d.dhcp_port(n) is not None and d.dhcp_subnets(n)]
    ports = sum(1 for p in d.ports.values() if p["network_id"] in served)
    subnets = sum(len(d.dhcp_subnets(n)) for n in served)
    interfaces = sum(1 for p in d.ports.values()
                     if p["device_owner"] in desired_.ROUTER_INTERFACE_OWNERS)
    gateways = sum(1 for p in d.ports.values() if p["device_owner"] == desired_.GATEWAY_OWNER)
    return [
        {"agent_type": "DHCP agent", "binary": "neutron-dhcp-agent", "topic": "dhcp_agent",
         "availability_zone": AVAILABILITY_ZONE,
         "configurations": {"dhcp_driver": "neutron.agent.linux.dhcp.Dnsmasq",
                            "dhcp_lease_duration": LEASE_SECONDS, "log_agent_heartbeats": False,
                            "networks": len(served), "subnets": subnets, "ports": ports}},
        {"agent_type": "L3 agent", "binary": "neutron-l3-agent", "topic": "l3_agent",
         "availability_zone": AVAILABILITY_ZONE,
         "configurations": {"agent_mode": "legacy", "gateway_external_network_id": "",
                            "handle_internal_only_routers": True,
                            "interface_driver": "linuxbridge", "log_agent_heartbeats": False,
                            "routers": len(d.routers), "ex_gw_ports": gateways,
                            "interfaces": interfaces, "floating_ips": len(d.floating_ips)}},
        {"agent_type": "Metadata agent", "binary": "neutron-metadata-agent", "topic": "N/A",
         "availability_zone": None,
         "configurations": {"log_agent_heartbeats": False, "nova_metadata_host": "in-process",
                            "metadata_proxy_socket": "", "networks": len(served)}},
    ]


class AgentReporter:
    def __init__(self, database: Database) -> None:
        self.database = database
        self.host = socket.gethostname()
        self._last: float | None = None

    def report(self, d: desired_.Desired) -> None:
        """A heartbeat when the last one is `REPORT_INTERVAL` old (the first one at once,
        marking the agents started)."""
        now = time.monotonic()
        if self._last is not None and now - self._last < REPORT_INTERVAL:
            return
        with self.database.transaction() as db:
            network.report_agents(db, self.host, agents(d), start=self._last is None)
        self._last = now
