"""The networking service as a stackling component."""

from __future__ import annotations

from typing import Any

from stackling.common.http import Service
from stackling.network import agents, api, bootstrap
from stackling.network.core import subnetpools
from stackling.network.l3 import policy as l3_policy
from stackling.network.policy import POLICIES
from stackling.network.rbac import address_scopes
from stackling.network.rbac import policies as rbac_policies
from stackling.network.segments import ranges as segment_ranges
from stackling.network.segments import segments
from stackling.runtime import CatalogEntry, Component


def _build(runtime: Any) -> Service:
    # Logic functions find the runtime (settings, policy enforcer) through the session,
    # so in-process callers using the same database get the same rules.
    runtime.db.sessions.kw.setdefault("info", {})["stackling.runtime"] = runtime
    return api.build(runtime)


COMPONENT = Component(
    name="network",
    build=_build,
    policies={**POLICIES, **segment_ranges.POLICIES, **l3_policy.POLICIES,
              **segments.POLICIES, **agents.POLICIES, **rbac_policies.POLICIES,
              **address_scopes.POLICIES, **subnetpools.POLICIES},
    catalog=CatalogEntry(type="network", name="neutron", path="/networking"),
    bootstrap=[("base", bootstrap.bootstrap_network)],
    start=segment_ranges.on_start,  # default segment ranges follow the configuration
)
