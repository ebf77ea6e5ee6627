"""The auto-allocated topology ("Get Me a Network", `auto-allocated-topology`): on a
project's first request, a network with one subnet per default subnet pool and a router
from those subnets to the default external network; afterwards, the same network.

Single flight per project, from the database: the request inserts the project's
`network_auto_allocated_topology` row (the project id is the primary key) *before*
building, in the same transaction, then builds everything and fills the row in. A
concurrent request for the same project blocks on that key until the builder commits,
gets the duplicate-key error, and reads the finished row; if the builder fails, its
transaction rolls back whole (row, network, subnets, router, ports) and the waiter
builds instead. Nothing half-built is ever visible, and a failure leaves nothing
behind. The upstream flow (build, then insert the row last, delete the loser's
resources on collision) reaches the same result with more work per race.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.core import networks, subnetpools, subnets
from stackling.network.core.models import Network, Port, SubnetPool
from stackling.network.l3 import routers as l3
from stackling.network.l3.models import AutoAllocatedTopology, RouterPort

DRY_RUN = "dry-run"
NETWORK_NAME = "auto_allocated_network"
ROUTER_NAME = "auto_allocated_router"


def _project(ctx: RequestContext, project_id: str | None) -> str:
    """'None' (as clients send it) is the caller's project; another project needs admin."""
    if project_id in (None, "", "None"):
        project_id = ctx.project_id or ""
    if project_id != ctx.project_id and not (ctx.is_admin or ctx.is_service):
        raise errors.NotAuthorized()
    return project_id


def _response(network_id: str, project_id: str) -> dict[str, Any]:
    return {"id": network_id, "project_id": project_id, "tenant_id": project_id}


def default_external_network(db: Session) -> Network:
    net = db.scalar(select(Network).where(Network.router_external.is_(True),
                                          Network.is_default.is_(True))
                    .order_by(Network.created_at, Network.id).limit(1))
    if net is None:
        raise errors.AutoAllocationFailure(reason="No default router:external network")
    return net


def default_pools(db: Session) -> list[SubnetPool]:
    return [p for p in (subnetpools.default_pool(db, v) for v in (4, 6)) if p is not None]


# ------------------------------------------------------------------ the API
def get_topology(db: Session, ctx: RequestContext, project_id: str | None, *,
                 dry_run: bool = False) -> dict[str, Any]:
    """The project's topology `{"id": network_id, "project_id", "tenant_id"}`, built on
    the first call; with `dry_run`, only whether it could be built (409 if not)."""
    project_id = _project(ctx, project_id)
    pol.authorize(db, ctx, "get_auto_allocated_topology", {"project_id": project_id})
    if dry_run:
        default_external_network(db)
        if not default_pools(db):
            raise errors.AutoAllocationFailure(reason="No default subnetpools defined")
        return _response("dry-run=pass", project_id)
    row = db.get(AutoAllocatedTopology, project_id)
    if row is not None and row.network_id is not None:
        return _response(row.network_id, project_id)
    external = default_external_network(db)  # fail fast, before taking the key
    for _ in range(3):
        try:
            with db.begin_nested():
                row = AutoAllocatedTopology(project_id=project_id)
                db.add(row)
                db.flush()
            break
        except IntegrityError:
            # Another request built (and committed) this project's topology meanwhile.
            winner = db.get(AutoAllocatedTopology, project_id, populate_existing=True)
            if winner is not None and winner.network_id is not None:
                return _response(winner.network_id, project_id)
            # ...and it was deleted again before we could read it: take the key again
    else:
        raise errors.Conflict(f"The auto-allocated topology of project {project_id} is "
                              "changing concurrently; retry")
    network_id, router_id = _build(db, ctx.elevated(), project_id, external)
    row.network_id, row.router_id = network_id, router_id
    db.flush()
    return _response(network_id, project_id)


def _cause(err: ApiError) -> str:
    return err.text.rstrip(".")


def _build(db: Session, admin: RequestContext, project_id: str, external: Network
           ) -> tuple[str, str]:
    """Network, subnets, router (all the project's); raises with the precise cause."""
    pools = default_pools(db)
    if not pools:
        raise errors.AutoAllocationFailure(
            reason="Unable to provide project private network: No default subnetpools "
                   "defined")
    net = networks.create_network(db, admin, {
        "project_id": project_id, "name": NETWORK_NAME, "admin_state_up": False,
        "shared": False, "description": ""})
    created = []
    for pool in pools:
        try:
            created.append(subnets.create_subnet(db, admin, {
                "project_id": project_id, "network_id": net.id, "description": "",
                "name": f"auto_allocated_subnet_v{pool.ip_version}",
                "ip_version": pool.ip_version, "subnetpool_id": pool.id}))
        except ApiError as err:
            if err.status not in (400, 404, 409):
                raise
            raise errors.AutoAllocationFailure(
                reason=f"Unable to provide project private network: IPv{pool.ip_version} "
                       f"default subnet pool {pool.id}: {_cause(err)}") from None
    try:
        router = l3.create_router(db, admin, {
            "project_id": project_id, "name": ROUTER_NAME, "admin_state_up": True,
            "description": "", "external_gateway_info": {"network_id": external.id}})
        for subnet in created:
            l3.add_router_interface(db, admin, router.id, {"subnet_id": subnet.id})
    except ApiError as err:
        if err.status != 400:
            raise
        raise errors.AutoAllocationFailure(
            reason=f"Unable to provide external connectivity: {_cause(err)}") from None
    net.admin_state_up = True
    db.flush()
    return net.id, router.id


def delete_topology(db: Session, ctx: RequestContext, project_id: str | None) -> None:
    """Remove the router's interfaces, the router and the network (with its subnets);
    409 (and nothing removed) while other ports use the network."""
    project_id = _project(ctx, project_id)
    pol.authorize(db, ctx, "delete_auto_allocated_topology", {"project_id": project_id})
    row = db.get(AutoAllocatedTopology, project_id, with_for_update=True)
    if row is None or row.network_id is None:
        return
    network_id, router_id = row.network_id, row.router_id
    router_ports = select(RouterPort.port_id)
    busy = db.scalar(select(Port.id).where(Port.network_id == network_id,
                                           Port.device_owner.not_in(networks.AUTO_DELETE_OWNERS),
                                           Port.id.not_in(router_ports)).limit(1))
    if busy is not None:
        raise errors.NetworkInUse(net_id=network_id)
    admin = ctx.elevated()
    db.delete(row)
    db.flush()
    if router_id is not None:
        for (port_id,) in db.execute(
                select(RouterPort.port_id).join(Port, Port.id == RouterPort.port_id)
                .where(RouterPort.router_id == router_id, Port.network_id == network_id,
                       RouterPort.port_type == l3.INTERFACE)).all():
            l3.remove_router_interface(db, admin, router_id, {"port_id": port_id})
        if l3.interface_count(db, router_id) == 0:
            l3.delete_router(db, admin, router_id)
    # Interfaces of other routers on this network (added by the user) go too.
    for (port_id, other) in db.execute(
            select(RouterPort.port_id, RouterPort.router_id).join(Port, Port.id == RouterPort.port_id)
            .where(Port.network_id == network_id)).all():
        l3.remove_router_interface(db, admin, other, {"port_id": port_id})
    networks.delete_network(db, admin, network_id)
