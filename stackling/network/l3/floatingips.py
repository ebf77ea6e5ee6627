"""Floating IPs (`router`'s floatingips, `fip-port-details`): an address of an external
network, held by a core port (`network:floatingip`, owned by no project), optionally
associated with a fixed IP of an internal port that a router connects to that external
network (a router with its gateway there and an interface on the port's subnet).

One fixed IP has at most one floating IP per external network: a unique constraint,
so two concurrent associations cannot both win.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import netaddr
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    REQUIRED,
    STANDARD,
    Attr,
    ip_address,
    ip_or_none,
    uuid_or_none,
    uuid_value,
)
from stackling.network.core import networks, ports
from stackling.network.core.models import IPAllocation, Port, Subnet
from stackling.network.l3.models import FloatingIP, Router, RouterPort
from stackling.network.l3.routers import INTERFACE, port_ips
from stackling.network.querying import Listing

OWNER = "network:floatingip"

# What extension modules (DNS, ...) add: (db, rendered views) -> None adds attributes;
# (db, ctx, obj, attrs, created) -> None stores theirs on a create or an update.
RENDER_EXTENSIONS: list[Callable[[Session, list[dict[str, Any]]], None]] = []
ATTR_WRITERS: list[Callable[[Session, RequestContext, Any, dict[str, Any], bool], None]] = []
# (db, floating IP) -> None before it is associated with a port; raises to refuse
# (port forwardings: a floating IP that forwards ports takes no port).
ASSOCIATE_CHECKS: list[Callable[[Session, Any], None]] = []

ATTRS: dict[str, Attr] = {
    **STANDARD,
    "description": DESCRIPTION,
    "floating_ip_address": Attr(post=True, convert=ip_address, filter=True, sort=True),
    "floating_network_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                                sort=True),
    "subnet_id": Attr(post=True, convert=uuid_or_none),
    "router_id": Attr(filter=True, sort=True),
    "port_id": Attr(post=True, put=True, convert=uuid_or_none, filter=True, sort=True),
    "fixed_ip_address": Attr(post=True, put=True, convert=ip_or_none, filter=True,
                             sort=True),
    "status": Attr(filter=True, sort=True),
    "port_details": Attr(),
}

LISTING = Listing(
    attrs=ATTRS,
    columns={"id": FloatingIP.id, "description": FloatingIP.description,
             "floating_ip_address": FloatingIP.floating_ip_address,
             "floating_network_id": FloatingIP.floating_network_id,
             "router_id": FloatingIP.router_id, "port_id": FloatingIP.fixed_port_id,
             "fixed_ip_address": FloatingIP.fixed_ip_address, "status": FloatingIP.status,
             "project_id": FloatingIP.project_id, "tenant_id": FloatingIP.project_id,
             "revision_number": FloatingIP.revision_number},
    id_column=FloatingIP.id,
)


# ------------------------------------------------------------------ visibility and views
def get_visible(db: Session, ctx: RequestContext, fip_id: str) -> FloatingIP:
    fip = db.get(FloatingIP, fip_id)
    if fip is None or not (ctx.is_admin or ctx.is_service or fip.project_id == ctx.project_id):
        raise errors.FloatingIPNotFound(floatingip_id=fip_id)
    return fip


def target(fip: FloatingIP) -> dict[str, Any]:
    return {"project_id": fip.project_id, "tenant_id": fip.project_id}


def list_floatingips(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(FloatingIP)
    if not (ctx.is_admin or ctx.is_service):
        stmt = stmt.where(FloatingIP.project_id == ctx.project_id)
    return LISTING.page(db, stmt, params)


def render(db: Session, fips: Sequence[FloatingIP]) -> list[dict[str, Any]]:
    if not fips:
        return []
    known = standard.take_known(fips)
    held = [f.__dict__.pop("known_port", None) for f in fips]  # just associated
    port_ids = [f.fixed_port_id for f in fips if f.fixed_port_id]
    given = {p.id: p for p in held if p is not None}
    details: dict[str, dict[str, Any]] = {}
    if port_ids:
        rows = [given[i] for i in port_ids] if all(i in given for i in port_ids) else \
            db.scalars(select(Port).where(Port.id.in_(port_ids)))
        for p in rows:
            details[p.id] = {"name": p.name, "network_id": p.network_id,
                             "mac_address": p.mac_address, "admin_state_up": p.admin_state_up,
                             "status": p.status, "device_id": p.device_id,
                             "device_owner": p.device_owner}
    tags = standard.tags_for(db, [f.id for f in fips]) if known is None else \
        {f.id: k[0] for f, k in zip(fips, known, strict=True)}
    out = [view(f, details.get(f.fixed_port_id or ""), tags[f.id]) for f in fips]
    for extend in RENDER_EXTENSIONS:
        extend(db, out)
    return out


def view(f: FloatingIP, port_details: dict[str, Any] | None, tags: list[str]
         ) -> dict[str, Any]:
    return {
        "id": f.id, "tenant_id": f.project_id, "project_id": f.project_id,
        "floating_ip_address": f.floating_ip_address,
        "floating_network_id": f.floating_network_id, "router_id": f.router_id,
        "port_id": f.fixed_port_id, "fixed_ip_address": f.fixed_ip_address,
        "status": f.status, "port_details": port_details,
        **standard.standard_view(f, tags),
    }


# ------------------------------------------------------------------ association
def _admin(ctx: RequestContext) -> RequestContext:
    return ctx if ctx.is_service else ctx.elevated()


def _internal_ip(db: Session, ctx: RequestContext, fip: FloatingIP, port_id: str,
                 fixed_ip: str | None) -> tuple[Port, str, str]:
    """The internal port, the subnet and the IPv4 address the floating IP maps to."""
    port = ports.get_visible(db, ctx, port_id)
    if port.project_id != fip.project_id and not (ctx.is_admin or ctx.is_service):
        raise errors.bad_floatingip(f"Cannot process floating IP association with Port {port_id}, "
                                 "since that port is owned by a different project")
    if fixed_ip is not None:
        if netaddr.IPAddress(fixed_ip).version != 4:
            raise errors.bad_floatingip(f"Cannot process floating IP association with "
                                     f"{fixed_ip}, since that is not an IPv4 address")
        match = next((s for s, ip in port_ips(db, port.id) if ip == fixed_ip), None)
        if match is None:
            raise errors.bad_floatingip(f"Port {port.id} does not have fixed ip {fixed_ip}")
        return port, match, fixed_ip
    v4 = [(s, ip) for s, ip in port_ips(db, port.id) if ":" not in ip]
    if not v4:
        raise errors.bad_floatingip(f"Cannot add floating IP to port {port.id} that has no "
                                 "fixed IPv4 addresses")
    if len(v4) > 1:
        raise errors.bad_floatingip(f"Port {port.id} has multiple fixed IPv4 addresses.  Must "
                                 "provide a specific IPv4 address when assigning a floating "
                                 "IP")
    return port, v4[0][0], v4[0][1]


def router_for(db: Session, port: Port, subnet_id: str, external_network_id: str) -> str:
    """The router linking `subnet_id` to the external network; the one whose interface
    holds the subnet's gateway IP first (neutron's get_router_for_floatingip)."""
    rows = db.execute(
        select(RouterPort.router_id, IPAllocation.ip_address)
        .join(IPAllocation, IPAllocation.port_id == RouterPort.port_id)
        .join(Router, Router.id == RouterPort.router_id)
        .where(RouterPort.port_type == INTERFACE, IPAllocation.subnet_id == subnet_id,
               Router.gw_network_id == external_network_id)
        .order_by(RouterPort.router_id)).all()
    if not rows:
        raise errors.ExternalGatewayForFloatingIPNotFound(
            subnet_id=subnet_id, external_network_id=external_network_id, port_id=port.id)
    if len({r for r, _ in rows}) == 1:  # one candidate: no tie to break by gateway IP
        return rows[0][0]
    gateway = db.scalar(select(Subnet.gateway_ip).where(Subnet.id == subnet_id))
    return next((r for r, ip in rows if ip == gateway), rows[0][0])


def _associate(db: Session, ctx: RequestContext, fip: FloatingIP, port_id: str,
               fixed_ip: str | None) -> None:
    for check in ASSOCIATE_CHECKS:
        check(db, fip)
    port, subnet_id, ip = _internal_ip(db, ctx, fip, port_id, fixed_ip)
    router_id = router_for(db, port, subnet_id, fip.floating_network_id)
    taken = db.scalar(select(FloatingIP.id).where(
        FloatingIP.floating_network_id == fip.floating_network_id,
        FloatingIP.fixed_port_id == port.id, FloatingIP.fixed_ip_address == ip,
        FloatingIP.id != fip.id))
    if taken is not None:
        raise _already(fip, port.id, ip)
    fip.fixed_port_id = port.id
    fip.fixed_ip_address = ip
    fip.router_id = router_id
    fip.status = "ACTIVE"
    fip.known_port = port  # type: ignore[attr-defined]  # for render's port_details, once


def _already(fip: FloatingIP, port_id: str, ip: str) -> errors.FloatingIPPortAlreadyAssociated:
    return errors.FloatingIPPortAlreadyAssociated(
        port_id=port_id, fip_id=fip.id, floating_ip_address=fip.floating_ip_address,
        fixed_ip=ip, net_id=fip.floating_network_id)


def _disassociate(fip: FloatingIP) -> None:
    fip.fixed_port_id = None
    fip.fixed_ip_address = None
    fip.router_id = None
    fip.status = "DOWN"


def _flush(db: Session, fip: FloatingIP) -> None:
    """Flush in a savepoint: a concurrent association of the same fixed IP loses here."""
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        raise _already(fip, fip.fixed_port_id or "", fip.fixed_ip_address or "") from None


# ------------------------------------------------------------------ create / update / delete
def create_floatingip(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> FloatingIP:
    tgt = {"project_id": attrs["project_id"]}
    pol.authorize(db, ctx, "create_floatingip", tgt)
    if attrs.get("floating_ip_address") is not None:
        pol.authorize(db, ctx, "create_floatingip:floating_ip_address", tgt)
    net = networks.get_visible(db, ctx, attrs["floating_network_id"])
    if not net.router_external:
        raise errors.bad_floatingip(f"Network {net.id} is not a valid external network")
    on_net = ports.network_subnets(db, net.id)  # the floating port's candidates too
    if not any(s.ip_version == 4 for s in on_net):
        raise errors.bad_floatingip(f"Network {net.id} does not contain any IPv4 subnet")
    if attrs.get("fixed_ip_address") and not attrs.get("port_id"):
        raise errors.bad_floatingip("fixed_ip_address cannot be specified without a port_id")
    quotas.check(db, attrs["project_id"], "floatingip")
    fip_id = uuid_str()
    port_attrs: dict[str, Any] = {"project_id": "", "network_id": net.id,
                                  "device_id": fip_id, "device_owner": OWNER,
                                  "admin_state_up": True, "name": ""}
    wanted: dict[str, str] = {}
    if attrs.get("floating_ip_address"):
        wanted["ip_address"] = attrs["floating_ip_address"]
    if attrs.get("subnet_id"):
        wanted["subnet_id"] = attrs["subnet_id"]
    if wanted:
        port_attrs["fixed_ips"] = [wanted]
    port = ports.create_port(db, _admin(ctx), port_attrs, subnets=on_net, status="N/A")
    made = port.__dict__["known_parts"][0]  # its fixed IPs, in order
    v4 = [(a["subnet_id"], a["ip_address"]) for a in made if ":" not in a["ip_address"]]
    if not v4:
        raise errors.ExternalIpAddressExhausted(net_id=net.id)
    now = utcnow()
    fip = FloatingIP(id=fip_id, project_id=attrs["project_id"], floating_network_id=net.id,
                     floating_port_id=port.id, floating_ip_address=v4[0][1],
                     floating_subnet_id=v4[0][0],
                     description=attrs.get("description", ""), status="DOWN",
                     created_at=now, updated_at=now, revision_number=0)
    if attrs.get("port_id"):
        _associate(db, ctx, fip, attrs["port_id"], attrs.get("fixed_ip_address"))
    db.add(fip)
    _flush(db, fip)
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "floatingip", fip.id, tags, new=True)
    for write in ATTR_WRITERS:
        write(db, ctx, fip, attrs, True)
    fip.known_parts = (sorted(tags),)  # type: ignore[attr-defined]  # render's tag read
    return fip


def update_floatingip(db: Session, ctx: RequestContext, fip_id: str, attrs: dict[str, Any],
                      if_match: int | None = None) -> FloatingIP:
    fip = get_visible(db, ctx, fip_id)
    pol.authorize(db, ctx, "update_floatingip", target(fip))
    standard.check_revision(fip, if_match)
    if not attrs and fip.fixed_port_id is not None:  # a blank update disassociates it, as
        # Neutron's does (the fix of its bug 1610045 keeps a port only for a non-empty body)
        _disassociate(fip)
    elif "port_id" in attrs:
        if attrs["port_id"] is None:
            if attrs.get("fixed_ip_address"):
                raise errors.bad_floatingip("fixed_ip_address cannot be specified without a "
                                         "port_id")
            _disassociate(fip)
        else:
            _associate(db, ctx, fip, attrs["port_id"], attrs.get("fixed_ip_address"))
    elif attrs.get("fixed_ip_address") is not None:
        if fip.fixed_port_id is None:
            raise errors.bad_floatingip("fixed_ip_address cannot be specified without a port_id")
        _associate(db, ctx, fip, fip.fixed_port_id, attrs["fixed_ip_address"])
    if "description" in attrs:
        fip.description = attrs["description"]
    standard.touch(fip)
    _flush(db, fip)
    return fip


def delete_floatingip(db: Session, ctx: RequestContext, fip_id: str,
                      if_match: int | None = None) -> None:
    fip = get_visible(db, ctx, fip_id)
    pol.authorize(db, ctx, "delete_floatingip", target(fip))
    standard.check_revision(fip, if_match)
    port_id = fip.floating_port_id
    standard.delete_tags(db, [fip.id])
    db.delete(fip)
    db.flush()
    ports.delete_port(db, _admin(ctx), port_id, l3_port_check=False)


standard.register_taggable("floatingips", standard.Taggable(
    "floatingip", get_visible,
    lambda db, ctx, f: pol.authorize(db, ctx, "update_floatingip", target(f))))
