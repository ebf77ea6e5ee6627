"""Trunks and their sub-ports, as Neutron's trunk plugin with its Open vSwitch driver
(segmentation type `vlan`, ids 1-4094; bound parents may be trunked and untrunked).

A trunk's `status` follows its parent port: `ACTIVE` while the parent is bound to a host,
else `DOWN` (upstream's driver moves it there once the agent wired the parent). Sub-ports
are owned by their trunk (`device_owner` `trunk:subport`, `device_id` the trunk) and are
bound to their parent's host, as upstream's plugin and agent leave them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case, delete, exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    NAME,
    REQUIRED,
    STANDARD,
    Attr,
    boolean,
    one_of,
    uuid_value,
)
from stackling.network.core import ports
from stackling.network.core.models import Network, Port
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing
from stackling.network.trunks.models import SubPort, Trunk

EXTENSIONS.append(Extension("trunk", "Trunk Extension", "Provides support for trunk ports",
                            "2016-01-01T10:00:00-00:00"))
EXTENSIONS.append(Extension("trunk-details", "Trunk port details",
                            "Expose trunk port details", "2016-01-01T10:00:00-00:00"))

SUBPORT_OWNER = "trunk:subport"
# segmentation type -> valid ids (the Open vSwitch driver's only type)
SEGMENTATION_TYPES = {"vlan": range(1, 4095)}

POLICIES: dict[str, str] = {
    "create_trunk": pol.MEMBER,
    "get_trunk": pol.READER,
    "update_trunk": pol.MEMBER,
    "delete_trunk": pol.MEMBER,
    "get_subports": pol.READER,
    "add_subports": pol.MEMBER,
    "remove_subports": pol.MEMBER,
}


# ------------------------------------------------------------------ errors (neutron's)
class TrunkNotFound(errors.NotFound):
    message = "Trunk %(trunk_id)s could not be found."


class SubPortNotFound(errors.NotFound):
    message = "SubPort on trunk %(trunk_id)s with parent port %(port_id)s could not be found."


class DuplicateSubPort(errors.InUse):
    message = ("segmentation_type %(segmentation_type)s and segmentation_id %(segmentation_id)s "
               "already in use on trunk %(trunk_id)s.")


class ParentPortInUse(errors.InUse):
    message = ("Port %(port_id)s is currently in use and is not eligible for use as a parent "
               "port.")


class TrunkPortInUse(errors.InUse):
    message = "Port %(port_id)s is in use by another trunk."


class PortInUseAsTrunkParent(errors.InUse):
    message = "Port %(port_id)s is currently a parent port for trunk %(trunk_id)s."


class PortInUseAsSubPort(errors.InUse):
    message = "Port %(port_id)s is currently a subport for trunk %(trunk_id)s."


class TrunkDisabled(errors.Conflict):
    message = "Trunk %(trunk_id)s is currently disabled."


class SubPortMtuGreaterThanTrunkPortMtu(errors.Conflict):
    message = ("MTU %(port_mtu)s of subport %(port_id)s cannot be greater than MTU "
               "%(trunk_mtu)s of trunk %(trunk_id)s.")


# ------------------------------------------------------------------ attributes
def _sub_ports(value: Any) -> list[dict[str, Any]]:
    """neutron-lib's `type:subports` check (the body's shape; ranges come later)."""
    if not isinstance(value, list):
        raise _invalid(f"Invalid data format for subports: '{value}' is not a list")
    seen: set[str] = set()
    segmentations: dict[Any, set[Any]] = {}
    for sub in value:
        if not isinstance(sub, dict):
            raise _invalid(f"Invalid data format for subport: '{sub}' is not a dict")
        if "port_id" not in sub:
            raise _invalid("A valid port UUID must be specified")
        try:
            uuid_value(sub["port_id"])
        except Exception:
            raise _invalid(f"Invalid UUID for subport: '{sub['port_id']}'") from None
        if sub["port_id"] in seen:
            raise _invalid(f"Non unique UUID for subport: '{sub['port_id']}'")
        seen.add(sub["port_id"])
        seg_type, seg_id = sub.get("segmentation_type"), sub.get("segmentation_id")
        if (not seg_type or seg_id is None) and len(sub) > 1:
            raise _invalid(f"Invalid subport details '{sub}': missing segmentation "
                           "information. Must specify both segmentation_id and "
                           "segmentation_type")
        key = seg_type if isinstance(seg_type, str) else repr(seg_type)
        if _hashable(seg_id) and seg_id in segmentations.get(key, set()):
            raise _invalid(f"Segmentation ID '{seg_id}' for '{sub['port_id']}' is not unique")
        if seg_id and _hashable(seg_id):
            segmentations.setdefault(key, set()).add(seg_id)
    return value


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _invalid(msg: str) -> errors.InvalidInput:
    return errors.InvalidInput(error_message=msg)


ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": NAME,
    "description": DESCRIPTION,
    "port_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True, sort=True),
    "admin_state_up": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                           sort=True),
    "status": Attr(filter=True, query=one_of("ACTIVE", "DOWN", "BUILD", "DEGRADED", "ERROR")),
    "sub_ports": Attr(post=True, default=list),
}


def _status_column() -> Any:
    bound = exists(select(Port.id).where(Port.id == Trunk.port_id, Port.binding_host_id != ""))
    return case((bound, "ACTIVE"), else_="DOWN")


_T = Trunk
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _T.id, "name": _T.name, "project_id": _T.project_id,
             "tenant_id": _T.project_id, "description": _T.description,
             "port_id": _T.port_id, "admin_state_up": _T.admin_state_up,
             "revision_number": _T.revision_number, "status": _status_column()},
    id_column=_T.id,
)


# ------------------------------------------------------------------ reads
def _target(trunk: Trunk) -> dict[str, Any]:
    return {"project_id": trunk.project_id, "tenant_id": trunk.project_id}


def get_visible(db: Session, ctx: RequestContext, trunk_id: str) -> Trunk:
    trunk = db.get(Trunk, trunk_id)
    if trunk is None or not (ctx.is_admin or ctx.is_service
                             or trunk.project_id == ctx.project_id):
        raise TrunkNotFound(trunk_id=trunk_id)
    return trunk


def list_trunks(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Trunk)
    if not (ctx.is_admin or ctx.is_service):
        stmt = stmt.where(Trunk.project_id == ctx.project_id)
    return LISTING.page(db, stmt, params)


def sub_ports_of(db: Session, trunk_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {i: [] for i in trunk_ids}
    for chunk in standard.chunks(list(trunk_ids), 500):
        for s in db.scalars(select(SubPort).where(SubPort.trunk_id.in_(chunk))
                            .order_by(SubPort.segmentation_type, SubPort.segmentation_id)):
            out[s.trunk_id].append({"segmentation_id": s.segmentation_id,
                                    "segmentation_type": s.segmentation_type,
                                    "port_id": s.port_id})
    return out


def render(db: Session, trunks: Sequence[Trunk]) -> list[dict[str, Any]]:
    if not trunks:
        return []
    ids = [t.id for t in trunks]
    subs = sub_ports_of(db, ids)
    tags = standard.tags_for(db, ids)
    bound = set(db.scalars(select(Port.id).where(
        Port.id.in_([t.port_id for t in trunks]), Port.binding_host_id != "")))
    return [{"id": t.id, "name": t.name, "project_id": t.project_id,
             "tenant_id": t.project_id, "port_id": t.port_id,
             "admin_state_up": t.admin_state_up,
             "status": "ACTIVE" if t.port_id in bound else "DOWN",
             "sub_ports": subs[t.id], **standard.standard_view(t, tags[t.id])}
            for t in trunks]


# ------------------------------------------------------------------ port rules
def _lock_ports(db: Session, port_ids: Sequence[str]) -> None:
    """Claims of ports take turns on their rows (sorted: no deadlock between two claims):
    a port cannot become a parent and a sub-port at once in two transactions."""
    if port_ids:
        db.execute(select(Port.id).where(Port.id.in_(sorted(set(port_ids))))
                   .order_by(Port.id).with_for_update())


def _trunk_of_parent(db: Session, port_id: str) -> str | None:
    # a locking read: on MariaDB a plain read would see the snapshot of the transaction
    return db.scalar(select(Trunk.id).where(Trunk.port_id == port_id).with_for_update())


def _trunk_of_subport(db: Session, port_id: str) -> str | None:
    return db.scalar(select(SubPort.trunk_id).where(SubPort.port_id == port_id)
                     .with_for_update())


def _check_free(db: Session, port: Port, *, parent: bool) -> None:
    """neutron's TrunkPortValidator: a sub-port of a trunk (409 TrunkPortInUse) or the
    parent of one (409 ParentPortInUse) is taken; a sub-port must have no device."""
    if _trunk_of_subport(db, port.id) is not None:
        raise TrunkPortInUse(port_id=port.id)
    if _trunk_of_parent(db, port.id) is not None:
        raise ParentPortInUse(port_id=port.id)
    if not parent and port.device_id:
        raise errors.PortInUse(port_id=port.id, net_id=port.network_id,
                               device_id=port.device_id)


def _mtu(db: Session, port: Port) -> int | None:
    return db.scalar(select(Network.mtu).where(Network.id == port.network_id))


def _validate_sub_ports(db: Session, ctx: RequestContext, parent: Port,
                        subs: list[dict[str, Any]]) -> list[tuple[Port, str, int]]:
    """neutron's SubPortsValidator, in its order: each port visible (404), not the parent,
    its MTU not above the parent's, its segmentation complete and in range, free."""
    parent_mtu = _mtu(db, parent)
    out: list[tuple[Port, str, int]] = []
    for sub in subs:
        port = ports.get_visible(db, ctx, sub["port_id"])
        if port.id == parent.id:
            raise ParentPortInUse(port_id=port.id)
        mtu = _mtu(db, port)
        if parent_mtu and mtu and mtu > parent_mtu:
            # upstream names the parent port where the message says "trunk"
            raise SubPortMtuGreaterThanTrunkPortMtu(port_id=port.id, port_mtu=mtu,
                                                    trunk_id=parent.id, trunk_mtu=parent_mtu)
        if "segmentation_type" not in sub or "segmentation_id" not in sub:
            raise _invalid(f"Invalid subport details '{sub}': missing segmentation "
                           "information. Must specify both segmentation_id and "
                           "segmentation_type")
        seg_type, seg_id = sub["segmentation_type"], _to_int(sub["segmentation_id"])
        if seg_type not in SEGMENTATION_TYPES:
            raise _invalid(f"Unknown segmentation_type '{seg_type}'")
        if seg_id not in SEGMENTATION_TYPES[seg_type]:
            raise _invalid(f"Segmentation ID '{seg_id}' is not in range")
        _check_free(db, port, parent=False)
        out.append((port, seg_type, seg_id))
    return out


def _to_int(value: Any) -> int:
    """oslo's convert_to_int: ints and integer strings (not bools of JSON)."""
    try:
        if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
            raise ValueError
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise _invalid(f"Invalid subport details: segmentation_id '{value}' is not an "
                       "integer") from None


def _can_be_managed(trunk: Trunk) -> None:
    if not trunk.admin_state_up:
        raise TrunkDisabled(trunk_id=trunk.id)


def _insert_sub_ports(db: Session, trunk: Trunk, subs: list[tuple[Port, str, int]]) -> None:
    for port, seg_type, seg_id in subs:
        try:
            with db.begin_nested():
                db.add(SubPort(port_id=port.id, trunk_id=trunk.id, segmentation_type=seg_type,
                               segmentation_id=seg_id))
                db.flush()
        except IntegrityError:
            if _trunk_of_subport(db, port.id) is not None:
                raise TrunkPortInUse(port_id=port.id) from None
            raise DuplicateSubPort(segmentation_type=seg_type, segmentation_id=seg_id,
                                   trunk_id=trunk.id) from None


def _own_sub_ports(db: Session, trunk_id: str, port_ids: list[str], host: str | None) -> None:
    """Sub-ports added: owned by the trunk, bound where the parent is (`host`: None
    leaves the binding as it is, as upstream on a trunk create)."""
    for port in db.scalars(select(Port).where(Port.id.in_(port_ids))):
        port.device_id, port.device_owner = trunk_id, SUBPORT_OWNER
        if host is not None:
            ports.bind(port, host)
        standard.touch(port)


def _release_sub_ports(db: Session, port_ids: list[str]) -> None:
    """Sub-ports removed (or their trunk deleted): no device, unbound."""
    for port in db.scalars(select(Port).where(Port.id.in_(port_ids))):
        port.device_id, port.device_owner = "", ""
        ports.bind(port, "")
        standard.touch(port)


# ------------------------------------------------------------------ writes
def create_trunk(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Trunk:
    pol.authorize(db, ctx, "create_trunk", {"project_id": attrs["project_id"]})
    subs = _sub_ports(attrs.get("sub_ports") or [])
    _lock_ports(db, [attrs["port_id"], *(s["port_id"] for s in subs)])
    parent = ports.get_visible(db, ctx, attrs["port_id"])
    _check_free(db, parent, parent=True)
    checked = _validate_sub_ports(db, ctx, parent, subs)
    trunk = Trunk(id=uuid_str(), project_id=attrs["project_id"], name=attrs.get("name", ""),
                  description=attrs.get("description", ""),
                  admin_state_up=attrs.get("admin_state_up", True), port_id=parent.id)
    try:
        with db.begin_nested():
            db.add(trunk)
            db.flush()
    except IntegrityError:
        if _trunk_of_parent(db, parent.id) is not None:  # took the parent since the check
            raise ParentPortInUse(port_id=parent.id) from None
        raise
    _insert_sub_ports(db, trunk, checked)
    _own_sub_ports(db, trunk.id, [p.id for p, _, _ in checked], None)
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "trunk", trunk.id, tags, new=True)
    db.flush()
    return trunk


def update_trunk(db: Session, ctx: RequestContext, trunk_id: str, attrs: dict[str, Any],
                 if_match: int | None = None) -> Trunk:
    trunk = get_visible(db, ctx, trunk_id)
    pol.authorize(db, ctx, "update_trunk", _target(trunk))
    standard.check_revision(trunk, if_match)
    for key in ("name", "description", "admin_state_up"):
        if key in attrs:
            setattr(trunk, key, attrs[key])
    standard.touch(trunk)
    db.flush()
    return trunk


def delete_trunk(db: Session, ctx: RequestContext, trunk_id: str,
                 if_match: int | None = None) -> None:
    trunk = get_visible(db, ctx, trunk_id)
    pol.authorize(db, ctx, "delete_trunk", _target(trunk))
    standard.check_revision(trunk, if_match)
    _can_be_managed(trunk)
    # Open vSwitch trunks a bound parent and untrunks it again: no TrunkInUse here
    subs = list(db.scalars(select(SubPort.port_id).where(SubPort.trunk_id == trunk.id)))
    db.execute(delete(SubPort).where(SubPort.trunk_id == trunk.id))
    _release_sub_ports(db, subs)
    standard.delete_tags(db, [trunk.id])
    db.delete(trunk)
    db.flush()


def _sub_ports_body(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict) or "sub_ports" not in body:
        raise errors.BadRequest("Failed to parse request. Required attribute 'sub_ports' "
                                "not specified")
    return _sub_ports(body["sub_ports"])


def add_sub_ports(db: Session, ctx: RequestContext, trunk_id: str, body: Any) -> Trunk:
    trunk = get_visible(db, ctx, trunk_id)
    pol.authorize(db, ctx, "add_subports", _target(trunk))
    subs = _sub_ports_body(body)
    _lock_ports(db, [s["port_id"] for s in subs])
    parent = db.get_one(Port, trunk.port_id)
    checked = _validate_sub_ports(db, ctx, parent, subs)
    _can_be_managed(trunk)
    _insert_sub_ports(db, trunk, checked)
    _own_sub_ports(db, trunk.id, [p.id for p, _, _ in checked], parent.binding_host_id)
    standard.touch(trunk)
    db.flush()
    return trunk


def remove_sub_ports(db: Session, ctx: RequestContext, trunk_id: str, body: Any) -> Trunk:
    trunk = get_visible(db, ctx, trunk_id)
    pol.authorize(db, ctx, "remove_subports", _target(trunk))
    _can_be_managed(trunk)
    subs = _sub_ports_body(body)
    current = set(db.scalars(select(SubPort.port_id).where(SubPort.trunk_id == trunk.id)))
    for sub in subs:
        if sub["port_id"] not in current:
            raise SubPortNotFound(trunk_id=trunk.id, port_id=sub["port_id"])
    ids = [s["port_id"] for s in subs]
    if ids:
        db.execute(delete(SubPort).where(SubPort.trunk_id == trunk.id,
                                         SubPort.port_id.in_(ids)))
        _release_sub_ports(db, ids)
    standard.touch(trunk)
    db.flush()
    return trunk


def get_sub_ports(db: Session, ctx: RequestContext, trunk_id: str) -> list[dict[str, Any]]:
    trunk = get_visible(db, ctx, trunk_id)
    pol.authorize(db, ctx, "get_subports", _target(trunk))
    return sub_ports_of(db, [trunk.id])[trunk.id]


# ------------------------------------------------------------------ port hooks
def trunk_details(db: Session, views: list[dict[str, Any]]) -> None:
    """`trunk-details`: a parent port shows its trunk and sub-ports (with their MACs)."""
    if not views:
        return
    by_port: dict[str, dict[str, Any]] = {}
    for chunk in standard.chunks([v["id"] for v in views], 500):
        for trunk_id, port_id in db.execute(select(Trunk.id, Trunk.port_id)
                                            .where(Trunk.port_id.in_(chunk))):
            by_port[port_id] = {"trunk_id": trunk_id, "sub_ports": []}
    if not by_port:
        return
    by_trunk = {d["trunk_id"]: d for d in by_port.values()}
    rows = db.execute(select(SubPort.trunk_id, SubPort.port_id, SubPort.segmentation_type,
                             SubPort.segmentation_id, Port.mac_address)
                      .join(Port, Port.id == SubPort.port_id)
                      .where(SubPort.trunk_id.in_(list(by_trunk)))
                      .order_by(SubPort.segmentation_type, SubPort.segmentation_id))
    for trunk_id, port_id, seg_type, seg_id, mac in rows:
        by_trunk[trunk_id]["sub_ports"].append({
            "segmentation_id": seg_id, "segmentation_type": seg_type, "port_id": port_id,
            "mac_address": mac})
    for v in views:
        if v["id"] in by_port:
            v["trunk_details"] = by_port[v["id"]]


def check_port_delete(db: Session, port: Port, facts: Any) -> None:
    """neutron's enforce_port_deletion_rules: a parent or sub-port of a trunk stays
    (409). From the delete's read (ports.DELETE_FACTS); a trunk claiming the port after
    it is refused by the trunk tables' foreign keys (ports.delete_port)."""
    if facts["trunk_of_parent"] is not None:
        raise PortInUseAsTrunkParent(port_id=port.id, trunk_id=facts["trunk_of_parent"])
    if facts["trunk_of_subport"] is not None:
        raise PortInUseAsSubPort(port_id=port.id, trunk_id=facts["trunk_of_subport"])


def follow_parent_binding(db: Session, port: Port) -> None:
    """A parent port bound to a host (or unbound) takes its sub-ports along, as
    upstream's agent binds them where the trunk is."""
    trunk_id = db.scalar(select(Trunk.id).where(Trunk.port_id == port.id))
    if trunk_id is None:
        return
    subs = list(db.scalars(select(SubPort.port_id).where(SubPort.trunk_id == trunk_id)))
    for sub in db.scalars(select(Port).where(Port.id.in_(subs),
                                             Port.binding_host_id != port.binding_host_id)):
        ports.bind(sub, port.binding_host_id)
        standard.touch(sub)


ports.RENDER_EXTENSIONS.append(trunk_details)
ports.RENDER_NEW[trunk_details] = lambda db, views, written: None  # no trunk's parent yet
ports.DELETE_CHECKS.append(check_port_delete)
ports.DELETE_FACTS["trunk_of_parent"] = (select(Trunk.id).where(Trunk.port_id == Port.id)
                                         .correlate(Port).scalar_subquery())
ports.DELETE_FACTS["trunk_of_subport"] = (
    select(SubPort.trunk_id).where(SubPort.port_id == Port.id).correlate(Port)
    .scalar_subquery())
ports.AFTER_UPDATE.append(follow_parent_binding)
standard.register_taggable("trunks", standard.Taggable(
    "trunk", get_visible,
    lambda db, ctx, t: pol.authorize(db, ctx, "update_trunk", _target(t))))
