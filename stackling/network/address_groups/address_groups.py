"""Address groups: named sets of CIDRs that security group rules name as their remote
(`remote_address_group_id`), shared with other projects by RBAC policies
(`access_as_shared`, object type `address_group`), as Neutron's address group plugin."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import netaddr
from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import insert_absent, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.address_groups.models import AddressGroup, AddressGroupAddress
from stackling.network.attributes import ID, PROJECT, Attr, Invalid, string
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing
from stackling.network.rbac import visibility
from stackling.network.rbac import wildcards as rbac

for _alias, _name, _desc, _updated in (
        ("address-group", "Address group", "Support address group",
         "2020-07-15T10:00:00-00:00"),
        ("rbac-address-group", "Add address_group type to RBAC",
         "Add address_group type to network RBAC", "2021-01-20T00:00:00-00:00"),
        ("security-groups-remote-address-group", "Remote address group id field for "
         "security group rules", "Add new field of remote address group id in security "
         "group rules", "2020-11-01T00:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

POLICIES: dict[str, str] = {
    "create_address_group": pol.MEMBER,
    "get_address_group": pol.READER,  # plus groups shared with the caller: `visibility`
    "update_address_group": pol.MEMBER,
    "delete_address_group": pol.MEMBER,
    "add_addresses": pol.MEMBER,
    "remove_addresses": pol.MEMBER,
}


class AddressGroupNotFound(errors.NotFound):
    message = "Address group %(address_group_id)s could not be found."


class AddressGroupInUse(errors.InUse):
    message = "Address group %(address_group_id)s is in use on one or more security group rules."


class AddressesNotFound(errors.NotFound):
    message = "Addresses %(addresses)s not found in the address group %(address_group_id)s."


class AddressesAlreadyExist(errors.BadRequest):
    message = "Addresses %(addresses)s already exist in the address group %(address_group_id)s."


class SecurityGroupMultipleRemoteEntites(errors.InvalidInput):  # upstream's spelling
    message = ("Only one of remote_ip_prefix or remote_group_id or remote_address_group_id "
               "may be provided.")


def _subnet(value: Any) -> str:
    """neutron-lib's `type:subnet`: a CIDR with its prefix length, written as netaddr
    writes it (so `10.1/16` is refused)."""
    if not isinstance(value, str):
        raise Invalid(f"'{value}' is not a valid IP subnet")
    try:
        net = netaddr.IPNetwork(value)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise Invalid(f"'{value}' is not a valid IP subnet") from None
    if "/" not in value or (net.version == 4 and str(net) != value):
        raise Invalid(f"'{value}' isn't a recognized IP subnet cidr, '{net.cidr}' is "
                      "recommended")
    return value


def _subnet_list(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"'{value}' is not a list")
    for item in value:
        _subnet(item)
    dups = sorted({v for v in value if value.count(v) > 1})
    if dups:
        raise Invalid(f"Duplicate items in the list: '{', '.join(dups)}'")
    return value


ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": Attr(post=True, put=True, default="", convert=string(255), filter=True, sort=True),
    "description": Attr(post=True, put=True, default="", convert=string(1024), filter=True,
                        sort=True),
    "addresses": Attr(post=True, convert=_subnet_list),
    "created_at": Attr(),
    "updated_at": Attr(),
    "revision_number": Attr(),
}
_G = AddressGroup
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _G.id, "name": _G.name, "description": _G.description,
             "project_id": _G.project_id, "tenant_id": _G.project_id},
    id_column=_G.id,
)


# ------------------------------------------------------------------ reads
def _clause(ctx: RequestContext) -> Any:
    if ctx.is_admin or ctx.is_service:
        return None
    return or_(AddressGroup.project_id == ctx.project_id,
               visibility.granted("address_group", AddressGroup.id, ctx.project_id))


def visible_to(db: Session, ctx: RequestContext, group: AddressGroup,
               project_id: str | None = None) -> bool:
    project = project_id or ctx.project_id
    if ctx.is_admin or ctx.is_service or group.project_id == project:
        return True
    return bool(visibility.granted_ids(db, "address_group", [group.id], project))


def get_visible(db: Session, ctx: RequestContext, group_id: str) -> AddressGroup:
    group = db.get(AddressGroup, group_id)
    if group is None or not visible_to(db, ctx, group):
        raise AddressGroupNotFound(address_group_id=group_id)
    return group


def list_groups(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(AddressGroup)
    clause = _clause(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def render(db: Session, groups: Sequence[AddressGroup]) -> list[dict[str, Any]]:
    addresses: dict[str, list[str]] = {g.id: [] for g in groups}
    for chunk in standard.chunks(list(addresses), 500):
        for gid, address in db.execute(
                select(AddressGroupAddress.address_group_id, AddressGroupAddress.address)
                .where(AddressGroupAddress.address_group_id.in_(chunk))
                .order_by(AddressGroupAddress.address)):
            addresses[gid].append(address)
    return [{"id": g.id, "name": g.name, "description": g.description,
             "project_id": g.project_id, "tenant_id": g.project_id,
             "addresses": addresses[g.id], "created_at": standard.iso(g.created_at),
             "updated_at": standard.iso(g.updated_at), "revision_number": g.revision_number}
            for g in groups]


# ------------------------------------------------------------------ writes
def _target(group: AddressGroup) -> dict[str, Any]:
    return {"project_id": group.project_id, "tenant_id": group.project_id}


def _normalized(addresses: list[str]) -> list[str]:
    out = []
    for value in addresses:
        net = netaddr.IPNetwork(value)
        out.append(f"{net.network}/{net.prefixlen}")
    return list(dict.fromkeys(out))


def _current(db: Session, group_id: str) -> set[str]:
    return set(db.scalars(select(AddressGroupAddress.address)
                          .where(AddressGroupAddress.address_group_id == group_id)))


def create_group(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> AddressGroup:
    pol.authorize(db, ctx, "create_address_group", {"project_id": attrs["project_id"]})
    group = AddressGroup(id=uuid_str(), project_id=attrs["project_id"],
                         name=attrs.get("name", ""), description=attrs.get("description", ""))
    db.add(group)
    db.flush()
    if attrs.get("addresses"):
        insert_absent(db, AddressGroupAddress, [
            {"address_group_id": group.id, "address": a}
            for a in _normalized(attrs["addresses"])])
    return group


def update_group(db: Session, ctx: RequestContext, group_id: str, attrs: dict[str, Any]
                 ) -> AddressGroup:
    group = get_visible(db, ctx, group_id)
    pol.authorize(db, ctx, "update_address_group", _target(group))
    for key in ("name", "description"):
        if key in attrs:
            setattr(group, key, attrs[key])
    standard.touch(group)
    db.flush()
    return group


def _lock(db: Session, group_id: str) -> None:
    """Address and rule changes of one group take turns on its row."""
    db.execute(select(AddressGroup.id).where(AddressGroup.id == group_id).with_for_update())


def delete_group(db: Session, ctx: RequestContext, group_id: str) -> None:
    from stackling.network.core.models import SecurityGroupRule

    group = get_visible(db, ctx, group_id)
    pol.authorize(db, ctx, "delete_address_group", _target(group))
    _lock(db, group.id)  # a rule naming it now waits, or is seen below
    if db.scalar(select(SecurityGroupRule.id).where(
            SecurityGroupRule.remote_address_group_id == group.id).limit(1)
            .with_for_update()) is not None:
        raise AddressGroupInUse(address_group_id=group.id)
    rbac.delete_for(db, "address_group", group.id)
    db.execute(delete(AddressGroupAddress).where(
        AddressGroupAddress.address_group_id == group.id))
    db.delete(group)
    db.flush()


def _addresses_body(body: Any) -> list[str]:
    if not isinstance(body, dict) or "addresses" not in body:
        raise errors.BadRequest("Failed to parse request. Required attribute 'addresses' "
                                "not specified")
    try:
        return _normalized(_subnet_list(body["addresses"]))
    except Invalid as exc:
        raise errors.BadRequest(f"Invalid input for addresses. Reason: {exc}.") from None


def add_addresses(db: Session, ctx: RequestContext, group_id: str, body: Any) -> AddressGroup:
    group = get_visible(db, ctx, group_id)
    pol.authorize(db, ctx, "add_addresses", _target(group))
    wanted = _addresses_body(body)
    _lock(db, group.id)
    present = [a for a in wanted if a in _current(db, group.id)]
    if present:
        raise AddressesAlreadyExist(addresses=present, address_group_id=group.id)
    try:
        with db.begin_nested():
            db.add_all(AddressGroupAddress(address_group_id=group.id, address=a)
                       for a in wanted)
            db.flush()
    except IntegrityError:  # added meanwhile (SQLite without the row lock)
        raise AddressesAlreadyExist(addresses=wanted, address_group_id=group.id) from None
    standard.touch(group)
    db.flush()
    return group


def remove_addresses(db: Session, ctx: RequestContext, group_id: str, body: Any
                     ) -> AddressGroup:
    group = get_visible(db, ctx, group_id)
    pol.authorize(db, ctx, "remove_addresses", _target(group))
    wanted = _addresses_body(body)
    _lock(db, group.id)
    current = _current(db, group.id)
    missing = [a for a in wanted if a not in current]
    if missing:
        raise AddressesNotFound(addresses=missing, address_group_id=group.id)
    if wanted:
        db.execute(delete(AddressGroupAddress).where(
            AddressGroupAddress.address_group_id == group.id,
            AddressGroupAddress.address.in_(wanted)))
    standard.touch(group)
    db.flush()
    return group


# ------------------------------------------------------------------ rules naming a group
def check_remote(db: Session, ctx: RequestContext, group_id: str, project_id: str) -> None:
    """A security group rule of `project_id` names `group_id` as its remote: the group
    must be one that project sees (404 otherwise, as upstream's check_address_group).
    Its row lock keeps a concurrent delete from missing the new rule."""
    group = db.get(AddressGroup, group_id)
    if group is None or not visible_to(db, ctx, group, project_id):
        raise AddressGroupNotFound(address_group_id=group_id)
    locked = db.scalar(select(AddressGroup.id).where(AddressGroup.id == group_id)
                       .with_for_update())
    if locked is None:  # deleted since it was read
        raise AddressGroupNotFound(address_group_id=group_id)
