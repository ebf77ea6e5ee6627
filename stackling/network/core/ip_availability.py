"""Network IP availability (`network-ip-availability`, admin only): per network and per
subnet, how many addresses the allocation pools hold and how many are taken.

Totals are arithmetic on the pools (an IPv6 /64 is 2^64 - 1 without enumerating
anything); usage is one aggregate query (`count(*) ... GROUP BY subnet_id`) for the whole
page, whatever the number of addresses.
"""

from __future__ import annotations

from typing import Any

import netaddr
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.core.models import IPAllocation, Network, Subnet

# Query keys that filter; others are ignored (as upstream).
FILTERS = ("network_id", "network_name", "project_id", "tenant_id", "ip_version")


def _allowed(db: Session, ctx: RequestContext) -> bool:
    return pol.allowed(db, ctx, "get_network_ip_availability", {})


def subnet_total(subnet: Subnet) -> int:
    pools = subnet.allocation_pools or []
    if not pools:
        return netaddr.IPNetwork(subnet.cidr).size
    return sum(int(netaddr.IPAddress(p["end"])) - int(netaddr.IPAddress(p["start"])) + 1
               for p in pools)


def _availabilities(db: Session, filters: dict[str, list[str]]) -> list[dict[str, Any]]:
    nets = select(Network)
    if filters.get("network_id"):
        nets = nets.where(Network.id.in_(filters["network_id"]))
    if filters.get("network_name"):
        nets = nets.where(Network.name.in_(filters["network_name"]))
    projects = filters.get("project_id", []) + filters.get("tenant_id", [])
    if projects:
        nets = nets.where(Network.project_id.in_(projects))
    versions = []
    for v in filters.get("ip_version", []):
        try:
            versions.append(int(v))
        except ValueError:
            raise errors.InvalidInput(
                error_message=f"'{v}' is not a valid IP version") from None
    net_rows = list(db.scalars(nets.order_by(Network.id)))
    if not net_rows:
        return []
    net_ids = select(nets.order_by(None).subquery().c.id)
    subs = select(Subnet).where(Subnet.network_id.in_(net_ids))
    used_q = (select(IPAllocation.subnet_id, func.count())
              .join(Subnet, Subnet.id == IPAllocation.subnet_id)
              .where(Subnet.network_id.in_(net_ids)))
    if versions:
        subs = subs.where(Subnet.ip_version.in_(versions))
        used_q = used_q.where(Subnet.ip_version.in_(versions))
    used = dict(db.execute(used_q.group_by(IPAllocation.subnet_id)).all())
    by_net: dict[str, list[dict[str, Any]]] = {n.id: [] for n in net_rows}
    for s in db.scalars(subs.order_by(Subnet.created_at, Subnet.id)):
        by_net[s.network_id].append({
            "subnet_id": s.id, "subnet_name": s.name, "cidr": s.cidr,
            "ip_version": s.ip_version, "total_ips": subnet_total(s),
            "used_ips": int(used.get(s.id, 0))})
    out = []
    for n in net_rows:
        items = by_net[n.id]
        if versions and not items:
            continue  # filtered on IP version: only networks with such subnets
        out.append({"network_id": n.id, "network_name": n.name, "project_id": n.project_id,
                    "tenant_id": n.project_id,
                    "total_ips": sum(i["total_ips"] for i in items),
                    "used_ips": sum(i["used_ips"] for i in items),
                    "subnet_ip_availability": items})
    return out


def list_availabilities(db: Session, ctx: RequestContext, query: Any) -> list[dict[str, Any]]:
    """Non-admins see an empty list (upstream filters every item out by policy)."""
    if not _allowed(db, ctx):
        return []
    filters = {k: query.getlist(k) for k in FILTERS if query.getlist(k)}
    return _availabilities(db, filters)


def get_availability(db: Session, ctx: RequestContext, network_id: str) -> dict[str, Any]:
    items = _availabilities(db, {"network_id": [network_id]}) if _allowed(db, ctx) else []
    if not items:
        raise errors.NetworkNotFound(net_id=network_id)
    return items[0]
