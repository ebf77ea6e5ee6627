"""Address scopes (`address-scope`): named IPv4 or IPv6 spaces whose subnet pools may not
overlap; networks show the scope of their subnets' pools (`ipv4_address_scope`,
`ipv6_address_scope`). Shared with every project by `shared` (admin-only, a wildcard
RBAC policy) or with chosen projects by RBAC policies. No standard attributes, as
upstream (no description, tags, timestamps or revision)."""

from __future__ import annotations

from typing import Any

import netaddr
from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import ID, PROJECT, REQUIRED, Attr, boolean, ip_version, string
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing
from stackling.network.rbac import visibility
from stackling.network.rbac import wildcards as rbac
from stackling.network.rbac.models import AddressScope

EXTENSIONS.append(Extension("address-scope", "Address scope", "Address scopes extension.",
                            "2015-07-26T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "create_address_scope": pol.MEMBER,
    "create_address_scope:shared": pol.ADMIN,
    "get_address_scope": pol.READER,  # plus shared scopes: see `visibility`
    "update_address_scope": pol.MEMBER,
    "update_address_scope:shared": pol.ADMIN,
    "delete_address_scope": pol.MEMBER,
}
ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": Attr(post=True, put=True, default=REQUIRED, convert=string(255), filter=True,
                 sort=True),
    "shared": Attr(post=True, put=True, default=False, convert=boolean, filter=True),
    "ip_version": Attr(post=True, default=REQUIRED, convert=ip_version, filter=True,
                       sort=True, query=ip_version),
}
_S = AddressScope
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _S.id, "name": _S.name, "project_id": _S.project_id,
             "tenant_id": _S.project_id, "ip_version": _S.ip_version, "shared": _S.shared},
    id_column=_S.id,
)


def render(db: Session, ctx: RequestContext, scopes: list[AddressScope]
           ) -> list[dict[str, Any]]:
    """`shared` reads true when shared with every project or with the caller's."""
    targeted = visibility.granted_ids(db, "address_scope", [s.id for s in scopes],
                                      ctx.project_id)
    return [{"id": s.id, "name": s.name, "project_id": s.project_id,
             "tenant_id": s.project_id, "ip_version": s.ip_version,
             "shared": bool(s.shared) or s.id in targeted} for s in scopes]


def _target(s: AddressScope) -> dict[str, Any]:
    return {"project_id": s.project_id, "tenant_id": s.project_id}


def get_visible(db: Session, ctx: RequestContext, scope_id: str) -> AddressScope:
    scope = db.get(AddressScope, scope_id)
    if scope is None or not visibility.address_scope_visible(db, ctx, scope):
        raise errors.AddressScopeNotFound(address_scope_id=scope_id)
    return scope


def list_scopes(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(AddressScope)
    clause = visibility.address_scope_clause(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def create_scope(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> AddressScope:
    tgt = {"project_id": attrs["project_id"]}
    pol.authorize(db, ctx, "create_address_scope", tgt)
    pol.authorize_attrs(db, ctx, "create_address_scope", attrs, ("shared",), tgt,
                        {"shared": False})
    scope = AddressScope(id=uuid_str(), project_id=attrs["project_id"], name=attrs["name"],
                         shared=attrs.get("shared", False), ip_version=attrs["ip_version"])
    db.add(scope)
    db.flush()
    if scope.shared:
        rbac.sync_wildcard(db, "address_scope", scope.id, scope.project_id,
                           visibility.SHARED, True)
    return scope


def update_scope(db: Session, ctx: RequestContext, scope_id: str, attrs: dict[str, Any]
                 ) -> AddressScope:
    scope = get_visible(db, ctx, scope_id)
    pol.authorize(db, ctx, "update_address_scope", _target(scope))
    pol.authorize_attrs(db, ctx, "update_address_scope", attrs, ("shared",), _target(scope))
    if "shared" in attrs and attrs["shared"] != scope.shared:
        if not attrs["shared"]:
            raise errors.AddressScopeUpdateError(address_scope_id=scope.id,
                                               reason="Shared address scope can't be unshared")
        scope.shared = True
        rbac.sync_wildcard(db, "address_scope", scope.id, scope.project_id,
                           visibility.SHARED, True)
    if "name" in attrs:
        scope.name = attrs["name"]
    db.flush()
    return scope


def delete_scope(db: Session, ctx: RequestContext, scope_id: str) -> None:
    from stackling.network.core.models import SubnetPool

    scope = get_visible(db, ctx, scope_id)
    pol.authorize(db, ctx, "delete_address_scope", _target(scope))
    if db.scalar(select(SubnetPool.id).where(SubnetPool.address_scope_id == scope.id)
                 .limit(1)) is not None:
        raise errors.AddressScopeInUse(address_scope_id=scope.id)
    rbac.delete_for(db, "address_scope", scope.id)
    db.delete(scope)
    db.flush()


def check_pool_association(db: Session, ctx: RequestContext, pool_id: str | None,
                           scope_id: str | None, prefixes: list[Any], ip_version: int) -> None:
    """A subnet pool joining (or growing inside) a scope, as upstream's
    `_validate_address_scope_id`: the scope is the caller's (or the caller is admin; a
    scope merely shared with it is not enough), of the pool's IP version, and no other
    pool in it overlaps the pool's prefixes (409 `AddressScopePrefixConflict`)."""
    from stackling.network.core.models import SubnetPool, SubnetPoolPrefix

    if not scope_id:
        return
    scope = get_visible(db, ctx, scope_id)
    if not (ctx.is_admin or ctx.is_service) and scope.project_id != ctx.project_id:
        raise errors.IllegalSubnetPoolAssociationToAddressScope(
            subnetpool_id=pool_id or "", address_scope_id=scope_id)
    if scope.ip_version != ip_version:
        raise errors.IllegalSubnetPoolIpVersionAssociationToAddressScope(
            subnetpool_id=pool_id or "", address_scope_id=scope_id,
            ip_version=scope.ip_version)
    mine = netaddr.IPSet(str(p) for p in prefixes)
    others = db.scalars(select(SubnetPoolPrefix.cidr).join(
        SubnetPool, SubnetPool.id == SubnetPoolPrefix.subnetpool_id).where(
        SubnetPool.address_scope_id == scope_id,
        SubnetPool.id != (pool_id or "")))
    if not mine.isdisjoint(netaddr.IPSet(others)):
        raise errors.AddressScopePrefixConflict()
