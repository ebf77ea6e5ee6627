"""Port forwardings of floating IPs, as Neutron's port forwarding plugin: a floating IP not
associated with a port forwards one of its external ports (per protocol) to an internal
IPv4 address and port of a port behind a router that has the floating IP's network as
gateway.

- A floating IP with a port is refused (409 `FloatingIPPortAlreadyAssociated`), and a
  floating IP with forwardings cannot be associated with a port (409
  `FipInUseByPortForwarding`).
- The internal address must be one of the internal port's IPv4 addresses (400); the
  router is found as for an association (400 when none links the subnet to the floating
  IP's network); the floating IP takes that router (`router_id`) with its first forwarding
  and drops it with its last; every forwarding of one floating IP goes through one router.
- Duplicates (the same external port and protocol on the floating IP, or the same internal
  socket) are Neutron's 400, decided by unique keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    ID,
    REQUIRED,
    Attr,
    integer,
    ip_address,
    one_of,
    string,
    uuid_value,
)
from stackling.network.core import ports
from stackling.network.core.models import IPAllocation
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import floatingips
from stackling.network.l3.models import FloatingIP
from stackling.network.port_forwarding.models import PortForwarding
from stackling.network.querying import Listing

for _alias, _name, _desc, _updated in (
        ("floating-ip-port-forwarding", "Floating IP Port Forwarding",
         "Provide port forwarding to floating IP.", "2018-01-01T01:01:00-00:00"),
        ("floating-ip-port-forwarding-description", "Floating IP Port Forwarding description",
         "Add a description field to Port Forwarding rules", "2019-11-01T10:00:00-00:00"),
        ("floating-ip-port-forwarding-detail", "Floating IP Port Forwarding detail",
         "Add internal_port_id to port forwarding list shown in a floating IP",
         "2019-06-27T10:00:00-00:00"),
        ("expose-port-forwarding-in-fip", "Expose port forwardings in a floating IP",
         "Expose port forwardings in a floating IP", "2018-11-06T10:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

POLICIES: dict[str, str] = {
    "create_floatingip_port_forwarding": pol.MEMBER,
    "get_floatingip_port_forwarding": pol.READER,
    "update_floatingip_port_forwarding": pol.MEMBER,
    "delete_floatingip_port_forwarding": pol.MEMBER,
}
PROTOCOLS = ("tcp", "udp", "udplite", "dccp", "sctp")
_PORT = integer(1, 65535)


class PortForwardingNotFound(errors.NotFound):
    message = "Port Forwarding %(id)s could not be found."


class FipInUseByPortForwarding(errors.InUse):
    message = "Floating IP %(id)s in use by Port Forwarding resources."


def _bad(msg: str) -> errors.BadResourceRequest:
    return errors.BadResourceRequest(msg, "port_forwarding")


ATTRS: dict[str, Attr] = {
    "id": ID,
    "external_port": Attr(post=True, put=True, default=REQUIRED, convert=_PORT, filter=True,
                          sort=True),
    "internal_port": Attr(post=True, put=True, default=REQUIRED, convert=_PORT, filter=True,
                          sort=True),
    # optional: the port's first IPv4 address
    "internal_ip_address": Attr(post=True, put=True, convert=ip_address, filter=True,
                                sort=True),
    "protocol": Attr(post=True, put=True, default=REQUIRED, convert=one_of(*PROTOCOLS),
                     filter=True, sort=True),
    "internal_port_id": Attr(post=True, put=True, default=REQUIRED, convert=uuid_value,
                             filter=True, sort=True),
    "description": Attr(post=True, put=True, default="", convert=string(255), filter=True,
                        sort=True),
}
_PF = PortForwarding
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _PF.id, "external_port": _PF.external_port,
             "internal_port": _PF.internal_port,
             "internal_ip_address": _PF.internal_ip_address, "protocol": _PF.protocol,
             "internal_port_id": _PF.internal_port_id, "description": _PF.description},
    id_column=_PF.id,
)


def view(pf: PortForwarding) -> dict[str, Any]:
    return {"id": pf.id, "external_port": pf.external_port, "internal_port": pf.internal_port,
            "internal_ip_address": pf.internal_ip_address, "protocol": pf.protocol,
            "internal_port_id": pf.internal_port_id, "description": pf.description}


# ------------------------------------------------------------------ reads
def _fip(db: Session, ctx: RequestContext, fip_id: str, action: str) -> FloatingIP:
    fip = floatingips.get_visible(db, ctx, fip_id)
    pol.authorize(db, ctx, action, floatingips.target(fip))
    return fip


def list_forwardings(db: Session, ctx: RequestContext, fip_id: str, params: ListParams) -> Page:
    fip = _fip(db, ctx, fip_id, "get_floatingip_port_forwarding")
    return LISTING.page(db, select(PortForwarding).where(
        PortForwarding.floatingip_id == fip.id), params)


def get_forwarding(db: Session, ctx: RequestContext, fip_id: str, pf_id: str,
                   action: str = "get_floatingip_port_forwarding") -> PortForwarding:
    fip = _fip(db, ctx, fip_id, action)
    pf = db.get(PortForwarding, pf_id)
    if pf is None or pf.floatingip_id != fip.id:
        raise PortForwardingNotFound(id=pf_id)
    return pf


# ------------------------------------------------------------------ writes
def _lock(db: Session, fip: FloatingIP) -> None:
    """Forwarding writes of one floating IP take turns on its row (its router_id)."""
    db.execute(select(FloatingIP.id).where(FloatingIP.id == fip.id).with_for_update())
    db.refresh(fip)


def _router_for(db: Session, ctx: RequestContext, fip: FloatingIP, port_id: str,
                address: str | None) -> tuple[str, str]:
    """(router id, internal address) for a forwarding to `port_id`, as upstream finds them."""
    port = ports.get_visible(db, ctx, port_id)
    v4 = [(subnet, ip) for subnet, ip in db.execute(
        select(IPAllocation.subnet_id, IPAllocation.ip_address)
        .where(IPAllocation.port_id == port.id).order_by(IPAllocation.ordinal)) if ":" not in ip]
    if not v4:
        raise _bad(f"Requested internal port {port.id} must allocate an IPv4 address at least.")
    if address is None:
        subnet_id, address = v4[0]
    else:
        subnet_id = next((s for s, ip in v4 if ip == address), None)
        if subnet_id is None:
            fixed = [{"subnet_id": s, "ip_address": ip} for s, ip in v4]
            raise _bad(f"Requested internal IP address {address} is not suitable for internal "
                       f"neutron port {port.id}, as its fixed_ips are {fixed}")
    try:
        router_id = floatingips.router_for(db, port, subnet_id, fip.floating_network_id)
    except errors.ExternalGatewayForFloatingIPNotFound:
        raise _bad(f"External network {fip.floating_network_id} is not reachable from subnet "
                   f"{subnet_id}. Cannot set Port forwarding for port {port.id} with Floating "
                   f"IP {fip.id}") from None
    if fip.router_id and fip.router_id != router_id:
        raise _bad(f"The Floating IP {fip.id} had been set on router {fip.router_id}, the "
                   f"internal Neutron port {port.id} can not reach it")
    return router_id, address


def _duplicate(db: Session, fip_id: str, pf: PortForwarding) -> errors.BadResourceRequest:
    for params in ({"floatingip_id": fip_id, "external_port": pf.external_port},
                   {"internal_port_id": pf.internal_port_id,
                    "internal_ip_address": pf.internal_ip_address,
                    "internal_port": pf.internal_port}):
        clash = db.scalar(select(PortForwarding.id).where(
            PortForwarding.protocol == pf.protocol, PortForwarding.id != pf.id,
            *[getattr(PortForwarding, k) == v for k, v in params.items()]).limit(1))
        if clash is not None:
            return _bad("A duplicate port forwarding entry with same attributes already "
                        f"exists, conflicting values are {params}")
    return _bad("A duplicate port forwarding entry with same attributes already exists")


def _write(db: Session, fip: FloatingIP, pf: PortForwarding) -> None:
    with db.no_autoflush:
        clash = _duplicate(db, fip.id, pf) if _clashes(db, pf) else None
    if clash is not None:
        raise clash
    try:
        with db.begin_nested():
            db.add(pf)
            db.flush()
    except IntegrityError:  # written concurrently (the keys decide)
        raise _bad("A duplicate port forwarding entry with same attributes already "
                   "exists") from None


def _clashes(db: Session, pf: PortForwarding) -> bool:
    return db.scalar(select(func.count()).select_from(PortForwarding).where(
        PortForwarding.id != pf.id, PortForwarding.protocol == pf.protocol,
        ((PortForwarding.floatingip_id == pf.floatingip_id)
         & (PortForwarding.external_port == pf.external_port))
        | ((PortForwarding.internal_port_id == pf.internal_port_id)
           & (PortForwarding.internal_ip_address == pf.internal_ip_address)
           & (PortForwarding.internal_port == pf.internal_port)))) > 0


def create_forwarding(db: Session, ctx: RequestContext, fip_id: str, attrs: dict[str, Any]
                      ) -> PortForwarding:
    fip = _fip(db, ctx, fip_id, "create_floatingip_port_forwarding")
    _lock(db, fip)
    if fip.fixed_port_id:
        raise errors.FloatingIPPortAlreadyAssociated(
            port_id=attrs["internal_port_id"], fip_id=fip.id,
            floating_ip_address=fip.floating_ip_address,
            fixed_ip=attrs.get("internal_ip_address"), net_id=fip.floating_network_id)
    router_id, address = _router_for(db, ctx, fip, attrs["internal_port_id"],
                                     attrs.get("internal_ip_address"))
    pf = PortForwarding(floatingip_id=fip.id, external_port=attrs["external_port"],
                        internal_port_id=attrs["internal_port_id"], internal_ip_address=address,
                        internal_port=attrs["internal_port"], protocol=attrs["protocol"],
                        description=attrs.get("description", ""))
    from stackling.common.db import uuid_str

    pf.id = uuid_str()
    _write(db, fip, pf)
    if fip.router_id is None:
        fip.router_id = router_id
        standard.touch(fip)
        db.flush()
    return pf


def update_forwarding(db: Session, ctx: RequestContext, fip_id: str, pf_id: str,
                      attrs: dict[str, Any]) -> PortForwarding:
    pf = get_forwarding(db, ctx, fip_id, pf_id, "update_floatingip_port_forwarding")
    fip = db.get_one(FloatingIP, pf.floatingip_id)
    _lock(db, fip)
    port_id = attrs.get("internal_port_id", pf.internal_port_id)
    if port_id != pf.internal_port_id or "internal_ip_address" in attrs:
        _, address = _router_for(db, ctx, fip, port_id,
                                 attrs.get("internal_ip_address", pf.internal_ip_address
                                           if port_id == pf.internal_port_id else None))
        attrs = {**attrs, "internal_ip_address": address}
    with db.no_autoflush:
        for key in ("external_port", "internal_port", "internal_ip_address", "protocol",
                    "internal_port_id", "description"):
            if key in attrs:
                setattr(pf, key, attrs[key])
        clash = _duplicate(db, fip.id, pf) if _clashes(db, pf) else None
    if clash is not None:
        raise clash
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        raise _bad("A duplicate port forwarding entry with same attributes already "
                   "exists") from None
    return pf


def delete_forwarding(db: Session, ctx: RequestContext, fip_id: str, pf_id: str) -> None:
    pf = get_forwarding(db, ctx, fip_id, pf_id, "delete_floatingip_port_forwarding")
    fip = db.get_one(FloatingIP, pf.floatingip_id)
    _lock(db, fip)
    db.delete(pf)
    db.flush()
    left = db.scalar(select(PortForwarding.id).where(
        PortForwarding.floatingip_id == fip.id).limit(1))
    if left is None and fip.fixed_port_id is None and fip.router_id is not None:
        fip.router_id = None  # the last forwarding took its router with it
        standard.touch(fip)
        db.flush()


# ------------------------------------------------------------------ floating IP side
def check_association(db: Session, fip: FloatingIP) -> None:
    """A floating IP with forwardings is not associated with a port (upstream's 409)."""
    if db.scalar(select(PortForwarding.id).where(
            PortForwarding.floatingip_id == fip.id).limit(1)) is not None:
        raise FipInUseByPortForwarding(id=fip.id)


def render_floatingips(db: Session, views: list[dict[str, Any]]) -> None:
    """`port_forwardings` of each floating IP (`expose-port-forwarding-in-fip`, with the
    internal port id of `floating-ip-port-forwarding-detail`)."""
    found: dict[str, list[dict[str, Any]]] = {v["id"]: [] for v in views}
    for chunk in standard.chunks(list(found), 500):
        for pf in db.scalars(select(PortForwarding).where(
                PortForwarding.floatingip_id.in_(chunk)).order_by(
                PortForwarding.external_port, PortForwarding.protocol)):
            found[pf.floatingip_id].append({
                "protocol": pf.protocol, "internal_ip_address": pf.internal_ip_address,
                "internal_port": pf.internal_port, "external_port": pf.external_port,
                "internal_port_id": pf.internal_port_id, "id": pf.id,
                "description": pf.description})
    for v in views:
        v["port_forwardings"] = found[v["id"]]


def render(pfs: Sequence[PortForwarding]) -> list[dict[str, Any]]:
    return [view(pf) for pf in pfs]


floatingips.RENDER_EXTENSIONS.append(render_floatingips)
floatingips.ASSOCIATE_CHECKS.append(check_association)
