"""Floating IP pools (`floatingip-pools`): one per IPv4 subnet of an external network, as
Neutron's L3 plugin computes them (`GET /v2.0/floatingip_pools`, read-only).

As upstream, every external network counts whoever asks (the external-network rows are
not project-scoped, and the subnets are read elevated), IPv6 subnets are left out (no
`fip64`), and `project_id`/`tenant_id` name the caller's own project, so the policy
(`get_floatingip_pool`, a project reader) passes for any reader of a project.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.listing import ListParams
from stackling.network import policy as pol
from stackling.network.attributes import PROJECT, Attr, string, uuid_value
from stackling.network.core.models import Network, Subnet
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing

EXTENSIONS.append(Extension("floatingip-pools", "Floating IP Pools Extension",
                            "Provides a floating IP pools API.",
                            "2018-03-21T10:00:00-00:00"))

ATTRS: dict[str, Attr] = {
    "subnet_id": Attr(filter=True, sort=True, query=str),
    "subnet_name": Attr(filter=True, sort=True, convert=string(255)),
    "network_id": Attr(filter=True, sort=True, convert=uuid_value),
    "cidr": Attr(filter=True, sort=True, query=str),
    "project_id": PROJECT,
    "tenant_id": PROJECT,
}
# project_id/tenant_id are accepted as filters and change nothing (they are the caller's)
LISTING = Listing(attrs=ATTRS, columns={
    "subnet_id": Subnet.id, "subnet_name": Subnet.name, "network_id": Subnet.network_id,
    "cidr": Subnet.cidr}, id_column=Subnet.id)


def list_pools(db: Session, ctx: RequestContext, params: ListParams
               ) -> list[dict[str, Any]]:
    """The pools of one page (none when the policy filters them out)."""
    if not pol.allowed(db, ctx, "get_floatingip_pool",
                       {"project_id": ctx.project_id, "tenant_id": ctx.project_id}):
        return []
    stmt = (select(Subnet).join(Network, Network.id == Subnet.network_id)
            .where(Network.router_external.is_(True), Subnet.ip_version == 4))
    page = LISTING.page(db, stmt, params)
    return [{"subnet_id": s.id, "subnet_name": s.name, "network_id": s.network_id,
             "cidr": s.cidr, "project_id": ctx.project_id, "tenant_id": ctx.project_id}
            for s in page.rows]
