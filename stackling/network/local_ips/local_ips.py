"""Local IPs (`local_ip`), as Neutron's local IP plugin: a local IP takes its address
from a port the caller names (`local_port_id`) or from a new `network:local_ip` port on a
network (`network_id`), and is associated with internal ports (`port_associations`), each
at one of its fixed IPs. A local IP with associations is not deleted (409 `LocalIPInUse`);
its own port goes with it; a port a local IP uses is not deleted through `/ports` (409
`ServicePortInUse`). No dataplane: nothing answers on a local IP (README)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    ID,
    PROJECT,
    REQUIRED,
    Attr,
    ip_or_none,
    one_of,
    string,
    uuid_value,
)
from stackling.network.core import networks, ports
from stackling.network.core.models import IPAllocation, Port
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.local_ips.models import LocalIP, LocalIPAssociation
from stackling.network.querying import Listing

EXTENSIONS.append(Extension("local_ip", "Local IP", "Support Node Local Virtual IP",
                            "2021-07-26T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "create_local_ip": pol.MEMBER,
    "get_local_ip": pol.READER,
    "update_local_ip": pol.MEMBER,
    "delete_local_ip": pol.MEMBER,
    # the parent local IP's project (neutron-lib's ADMIN_OR_PARENT_OWNER_*): checked
    # against the local IP's project
    "create_local_ip_port_association": pol.MEMBER,
    "get_local_ip_port_association": pol.READER,
    "delete_local_ip_port_association": pol.MEMBER,
}
OWNER = "network:local_ip"


class LocalIPNotFound(errors.NotFound):
    message = "Local IP %(id)s could not be found."


class LocalIPInUse(errors.InUse):
    message = "Local IP %(id)s is still associated with one or more ports."


class LocalIPNoIP(errors.InvalidInput):
    message = "Specified Port %(port_id)s has no fixed IPs configured."


class LocalIPRequestedIPNotFound(errors.InvalidInput):
    message = "Specified Port %(port_id)s does not have requested IP address: %(ip)s."


class LocalIPNoRequestedIP(errors.InvalidInput):
    message = ("Specified Port %(port_id)s has several IPs, should specify exact IP address "
               "to use for Local IP.")


class LocalIPPortOrNetworkRequired(errors.InvalidInput):
    message = "Either Port ID or Network ID must be specified for Local IP create."


class LocalIPAssociationNotFound(errors.NotFound):
    message = "Local IP %(local_ip_id)s association with port %(port_id)s could not be found."


class LocalIPAssociationExists(errors.Conflict):
    message = "Local IP %(local_ip_id)s is already associated with port %(port_id)s."


ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": Attr(post=True, put=True, default="", convert=string(255), filter=True, sort=True),
    "description": Attr(post=True, put=True, default="", convert=string(255), filter=True,
                        sort=True),
    "local_port_id": Attr(post=True, convert=uuid_value, filter=True, sort=True),
    "network_id": Attr(post=True, convert=uuid_value, filter=True, sort=True),
    "local_ip_address": Attr(post=True, convert=ip_or_none, filter=True, sort=True),
    "ip_mode": Attr(post=True, default="translate", convert=one_of("translate", "passthrough"),
                    filter=True, sort=True),
    "created_at": Attr(),
    "updated_at": Attr(),
    "revision_number": Attr(),
}
ASSOC_ATTRS: dict[str, Attr] = {
    "local_ip_id": Attr(),
    "local_ip_address": Attr(filter=True, sort=True),
    "fixed_port_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                          sort=True),
    "fixed_ip": Attr(post=True, default=None, convert=ip_or_none, filter=True, sort=True),
    "host": Attr(filter=True, sort=True),
    "project_id": PROJECT,
    "tenant_id": PROJECT,
}
_L, _A = LocalIP, LocalIPAssociation
LISTING = Listing(attrs=ATTRS, columns={
    "id": _L.id, "project_id": _L.project_id, "tenant_id": _L.project_id, "name": _L.name,
    "description": _L.description, "local_port_id": _L.local_port_id,
    "network_id": _L.network_id, "local_ip_address": _L.local_ip_address,
    "ip_mode": _L.ip_mode}, id_column=_L.id)
ASSOC_LISTING = Listing(attrs=ASSOC_ATTRS, columns={
    "local_ip_address": _L.local_ip_address, "fixed_port_id": _A.fixed_port_id,
    "fixed_ip": _A.fixed_ip, "host": Port.binding_host_id}, id_column=_A.fixed_port_id)


def view(lip: LocalIP) -> dict[str, Any]:
    return {"id": lip.id, "name": lip.name, "description": lip.description,
            "project_id": lip.project_id, "tenant_id": lip.project_id,
            "local_port_id": lip.local_port_id, "network_id": lip.network_id,
            "local_ip_address": lip.local_ip_address, "ip_mode": lip.ip_mode,
            "created_at": standard.iso(lip.created_at),
            "updated_at": standard.iso(lip.updated_at),
            "revision_number": lip.revision_number}


def _target(lip: LocalIP) -> dict[str, Any]:
    return {"project_id": lip.project_id, "tenant_id": lip.project_id}


# ------------------------------------------------------------------ local IPs
def list_local_ips(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(LocalIP)
    if not (ctx.is_admin or ctx.is_service):
        stmt = stmt.where(_L.project_id == ctx.project_id)
        if not pol.allowed(db, ctx, "get_local_ip", {"project_id": ctx.project_id}):
            stmt = stmt.where(_L.id.is_(None))
    return LISTING.page(db, stmt, params)


def get_local_ip(db: Session, ctx: RequestContext, lip_id: str,
                 action: str = "get_local_ip") -> LocalIP:
    lip = db.get(LocalIP, lip_id)
    if lip is None or not pol.allowed(db, ctx, "get_local_ip", _target(lip)):
        raise LocalIPNotFound(id=lip_id)
    if action != "get_local_ip":
        pol.authorize(db, ctx, action, _target(lip))
    return lip


def _addresses(db: Session, port_id: str) -> list[str]:
    return list(db.scalars(select(IPAllocation.ip_address).where(
        IPAllocation.port_id == port_id).order_by(IPAllocation.ordinal)))


def _pick_address(port_id: str, addresses: list[str], requested: str | None) -> str:
    """Neutron's choice of a port's address for a local IP or an association."""
    if not addresses:
        raise LocalIPNoIP(port_id=port_id)
    if requested is not None:
        if requested not in addresses:
            raise LocalIPRequestedIPNotFound(port_id=port_id, ip=requested)
        return requested
    if len(addresses) > 1:
        raise LocalIPNoRequestedIP(port_id=port_id)
    return addresses[0]


def _admin(ctx: RequestContext) -> RequestContext:
    return ctx if ctx.is_service else ctx.elevated()


def create_local_ip(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> LocalIP:
    project_id = attrs["project_id"]
    pol.authorize(db, ctx, "create_local_ip", {"project_id": project_id})
    lip_id = uuid_str()
    requested = attrs.get("local_ip_address")
    if attrs.get("local_port_id"):
        try:
            port = ports.get_visible(db, ctx, attrs["local_port_id"])
        except errors.PortNotFound:
            raise errors.BadResourceRequest(f"Port {attrs['local_port_id']} not found",
                                            "local_ip") from None
        address = _pick_address(port.id, _addresses(db, port.id), requested)
    elif attrs.get("network_id"):
        net = networks.get_visible(db, ctx, attrs["network_id"])
        if not any(s.ip_version == 4 for s in ports.network_subnets(db, net.id)):
            raise errors.BadResourceRequest(
                f"Network {net.id} does not contain any IPv4 subnet", "local_ip")
        # a port for the local IP alone: upstream makes it with no project and then gives
        # it the local IP's project and id; here it is made so at once
        port_attrs: dict[str, Any] = {"project_id": project_id, "network_id": net.id,
                                      "device_id": lip_id, "device_owner": OWNER,
                                      "admin_state_up": True, "name": ""}
        if requested is not None:
            port_attrs["fixed_ips"] = [{"ip_address": requested}]
        port = ports.create_port(db, _admin(ctx), port_attrs, status="N/A")
        address = port.__dict__["known_parts"][0][0]["ip_address"]
    else:
        raise LocalIPPortOrNetworkRequired()
    now = utcnow()
    lip = LocalIP(id=lip_id, project_id=project_id, name=attrs.get("name", ""),
                  description=attrs.get("description", ""), local_port_id=port.id,
                  network_id=port.network_id, local_ip_address=address,
                  ip_mode=attrs.get("ip_mode", "translate"), created_at=now, updated_at=now,
                  revision_number=0)
    db.add(lip)
    db.flush()
    return lip


def update_local_ip(db: Session, ctx: RequestContext, lip_id: str,
                    attrs: dict[str, Any]) -> LocalIP:
    lip = get_local_ip(db, ctx, lip_id, "update_local_ip")
    for key in ("name", "description"):
        if key in attrs:
            setattr(lip, key, attrs[key])
    standard.touch(lip)
    db.flush()
    return lip


def delete_local_ip(db: Session, ctx: RequestContext, lip_id: str) -> None:
    lip = get_local_ip(db, ctx, lip_id, "delete_local_ip")
    db.execute(select(_L.id).where(_L.id == lip.id).with_for_update())
    if db.scalar(select(_A.fixed_port_id).where(_A.local_ip_id == lip.id).limit(1)):
        raise LocalIPInUse(id=lip.id)
    port = db.get(Port, lip.local_port_id)
    try:
        with db.begin_nested():
            db.delete(lip)
    except IntegrityError:  # associated meanwhile: the foreign key refuses
        raise LocalIPInUse(id=lip_id) from None
    if port is not None and port.device_owner == OWNER:
        ports.delete_port(db, _admin(ctx), port.id, l3_port_check=False)


def check_port_delete(db: Session, port: Port, facts: Any) -> None:
    """ports.DELETE_CHECKS: a local IP's port is not deleted through /ports."""
    if facts["local_ip"]:
        raise errors.ServicePortInUse(port_id=port.id, reason="still referenced by Local IPs")


ports.DELETE_CHECKS.append(check_port_delete)
ports.DELETE_FACTS["local_ip"] = exists(select(_L.id).where(_L.local_port_id == Port.id)
                                        ).correlate(Port)


# ------------------------------------------------------------------ port associations
def assoc_views(db: Session, lip: LocalIP, rows: list[LocalIPAssociation]
                ) -> list[dict[str, Any]]:
    hosts: dict[str, str] = {}
    if rows:
        hosts = dict(db.execute(select(Port.id, Port.binding_host_id).where(
            Port.id.in_([r.fixed_port_id for r in rows]))).all())
    return [{"local_ip_id": lip.id, "local_ip_address": lip.local_ip_address,
             "fixed_port_id": r.fixed_port_id, "fixed_ip": r.fixed_ip,
             "host": hosts.get(r.fixed_port_id) or ""} for r in rows]


def list_associations(db: Session, ctx: RequestContext, lip_id: str,
                      params: ListParams) -> tuple[LocalIP, Page]:
    lip = get_local_ip(db, ctx, lip_id)
    if not pol.allowed(db, ctx, "get_local_ip_port_association", _target(lip)):
        raise LocalIPNotFound(id=lip_id)
    stmt = (select(LocalIPAssociation).join(LocalIP, _L.id == _A.local_ip_id)
            .join(Port, Port.id == _A.fixed_port_id).where(_A.local_ip_id == lip.id))
    return lip, ASSOC_LISTING.page(db, stmt, params)


def create_association(db: Session, ctx: RequestContext, lip_id: str,
                       attrs: dict[str, Any]) -> tuple[LocalIP, LocalIPAssociation]:
    lip = get_local_ip(db, ctx, lip_id, "create_local_ip_port_association")
    port_id = attrs["fixed_port_id"]
    try:
        port = ports.get_visible(db, ctx, port_id)
    except errors.PortNotFound:
        raise errors.BadResourceRequest(f"Port {port_id} not found",
                                        "local_ip_port_association") from None
    address = _pick_address(port.id, _addresses(db, port.id), attrs.get("fixed_ip"))
    assoc = LocalIPAssociation(local_ip_id=lip.id, fixed_port_id=port.id, fixed_ip=address)
    try:
        with db.begin_nested():
            db.add(assoc)
    except IntegrityError:  # the key: one association per (local IP, port)
        raise LocalIPAssociationExists(local_ip_id=lip.id, port_id=port.id) from None
    return lip, assoc


def delete_association(db: Session, ctx: RequestContext, lip_id: str, port_id: str) -> None:
    lip = get_local_ip(db, ctx, lip_id, "delete_local_ip_port_association")
    assoc = db.get(LocalIPAssociation, (lip.id, port_id))
    if assoc is None:
        raise LocalIPAssociationNotFound(local_ip_id=lip.id, port_id=port_id)
    db.delete(assoc)
    db.flush()
