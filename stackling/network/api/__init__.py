"""The Networking route table, assembled from one module per resource.

Each module in `RESOURCE_MODULES` has `register(s: Service)`; adding a resource is a new
module and one line here. Paths are registered with Neutron's underscore collection
names; `rewrite_path` maps the hyphenated spellings and a trailing `.json` onto them.
"""

from __future__ import annotations

import importlib
from typing import Any

from stackling.common.http import Service

RESOURCE_MODULES = [
    "stackling.network.api.discovery",
    "stackling.network.api.extensions",
    "stackling.network.api.networks",
    "stackling.network.api.subnets",
    "stackling.network.api.subnetpools",
    "stackling.network.api.ports",
    "stackling.network.api.security_groups",
    "stackling.network.api.availability_zones",
    "stackling.network.api.network_segment_ranges",
    "stackling.network.api.segments",
    "stackling.network.api.routers",
    "stackling.network.api.floatingips",
    "stackling.network.api.ip_availability",
    "stackling.network.api.quotas",
    "stackling.network.api.auto_allocated_topology",
    "stackling.network.api.tags",
    "stackling.network.api.agents",
    "stackling.network.api.rbac_policies",
    "stackling.network.api.address_scopes",
    "stackling.network.api.trunks",
    "stackling.network.api.address_groups",
    "stackling.network.api.default_security_group_rules",
    "stackling.network.api.qos",
    "stackling.network.api.port_forwardings",
    "stackling.network.api.conntrack_helpers",
    "stackling.network.api.metering",
    "stackling.network.api.flavors",
    "stackling.network.api.logs",
    "stackling.network.api.local_ips",
    "stackling.network.api.floatingip_pools",
    "stackling.network.api.ndp_proxies",
    "stackling.network.api.port_bindings",
    "stackling.network.api.router_gateways",
]


def rewrite_path(path: str) -> str:
    """`/v2.0/security-groups/x.json` -> `/v2.0/security_groups/x` (only the collection
    segment is rewritten: ids, tags and extension aliases keep their hyphens)."""
    if path.endswith(".json"):
        path = path[:-5]
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "v2.0" and parts[2] != "extensions":
        parts[2] = parts[2].replace("-", "_")
        path = "/".join(parts)
    return path


def build(runtime: Any) -> Service:
    s = Service(name="network", prefix="/networking", family="network",
                rewrite_path=rewrite_path)
    for name in RESOURCE_MODULES:
        importlib.import_module(name).register(s)
    return s
