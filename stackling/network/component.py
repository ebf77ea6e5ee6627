"""The networking service as a stackling component."""

from __future__ import annotations

from typing import Any

from stackling.common.http import Service
from stackling.network import agents, api, bootstrap
from stackling.network.address_groups import address_groups
from stackling.network.conntrack import helpers as conntrack_helpers
from stackling.network.core import subnetpools
from stackling.network.default_rules import rules as default_sg_rules
from stackling.network.flavors import flavors as network_flavors
from stackling.network.flavors import routers as router_flavors  # noqa: F401  (l3-flavors hooks)
from stackling.network.l3 import gateways as router_gateways
from stackling.network.l3 import policy as l3_policy
from stackling.network.local_ips import local_ips
from stackling.network.logapi import logs as network_logs
from stackling.network.metering import labels as metering_labels
from stackling.network.ndp_proxies import ndp_proxies
from stackling.network.policy import POLICIES
from stackling.network.port_bindings import bindings as port_bindings
from stackling.network.port_extras import dhcp_dns  # noqa: F401  (its hooks on ports, networks)
from stackling.network.port_forwarding import forwardings as port_forwardings
from stackling.network.qos import bandwidth as qos_bandwidth
from stackling.network.qos import policies as qos_policies
from stackling.network.rbac import address_scopes
from stackling.network.rbac import policies as rbac_policies
from stackling.network.segments import ranges as segment_ranges
from stackling.network.segments import segments
from stackling.network.trunks import trunks
from stackling.runtime import CatalogEntry, Component


def _build(runtime: Any) -> Service:
    # Logic functions find the runtime (settings, policy enforcer) through the session,
    # so in-process callers using the same database get the same rules.
    runtime.db.sessions.kw.setdefault("info", {})["stackling.runtime"] = runtime
    return api.build(runtime)


def _start(runtime: Any) -> None:
    segment_ranges.on_start(runtime)  # default segment ranges follow the configuration
    # A host's segments come from the host records that compute's start hook writes (hosts
    # are configuration). Network requests wait for them, so a port bound right after a
    # start never finds its host "not connected to any segment".
    ready = runtime.ready.get("compute")
    if ready is not None:
        ready.wait(timeout=120)
    qos_bandwidth.on_start(runtime)  # bandwidth providers under the compute nodes


COMPONENT = Component(
    name="network",
    build=_build,
    policies={**POLICIES, **segment_ranges.POLICIES, **l3_policy.POLICIES,
              **segments.POLICIES, **agents.POLICIES, **rbac_policies.POLICIES,
              **address_scopes.POLICIES, **subnetpools.POLICIES,
              **trunks.POLICIES, **address_groups.POLICIES,
              **default_sg_rules.POLICIES, **qos_policies.POLICIES,
              **port_forwardings.POLICIES, **conntrack_helpers.POLICIES,
              **metering_labels.POLICIES, **network_flavors.POLICIES,
              **network_logs.POLICIES, **local_ips.POLICIES,
              **ndp_proxies.POLICIES, **port_bindings.POLICIES,
              **router_gateways.POLICIES},
    catalog=CatalogEntry(type="network", name="neutron", path="/networking"),
    # the rule templates first: the base step's groups start with them
    bootstrap=[("default_sg_rules", default_sg_rules.seed),
               ("base", bootstrap.bootstrap_network)],
    start=_start,
)
