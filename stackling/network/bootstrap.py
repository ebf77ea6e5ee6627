"""What DevStack's neutron setup creates, once per database: the external network
`public` (flat on physnet `public`, default external, owned by the admin project) with
an IPv4 subnet without DHCP, and shared default subnet pools for IPv4 and IPv6."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import admin_context
from stackling.network.core import networks, subnetpools, subnets


def _admin_project(db: Session) -> str | None:
    from stackling.identity import interface as identity

    return identity.admin_project_id(db)


def bootstrap_network(db: Session, runtime: Any) -> None:
    settings = runtime.settings.network
    project = _admin_project(db)
    ctx = admin_context(project)
    net = networks.create_network(db, ctx, {
        "project_id": project, "name": "public", "router:external": True,
        "is_default": True, "shared": False, "provider:network_type": "flat",
        "provider:physical_network": "public", "description": ""})
    subnets.create_subnet(db, ctx, {
        "project_id": project, "network_id": net.id, "name": "public-subnet",
        "ip_version": 4, "cidr": settings.public_cidr, "enable_dhcp": False})
    for version, prefix, prefixlen in (
            (4, settings.default_subnetpool_v4, settings.default_subnetpool_v4_prefixlen),
            (6, settings.default_subnetpool_v6, settings.default_subnetpool_v6_prefixlen)):
        subnetpools.create_pool(db, ctx, {
            "project_id": project, "name": f"shared-default-subnetpool-v{version}",
            "prefixes": [prefix], "default_prefixlen": prefixlen, "shared": True,
            "is_default": True, "description": ""})
