"""Subnet pools (`subnet_allocation`, `default-subnetpools`) and prefix allocation.

Allocations from one pool are serialised by a row lock taken with
`UPDATE ... SET generation = generation + 1` before reading what is allocated; the free
space is the pool's prefixes minus its subnets (netaddr sets, O(allocated subnets)), and
the smallest free block that fits gives the first aligned prefix of the requested length.

Deliberate deviation: an exhausted pool (or an unavailable requested CIDR) is a 409
`SubnetAllocationError`; neutron answers 500 for the same exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import netaddr
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    REQUIRED,
    STANDARD,
    Attr,
    Invalid,
    boolean,
    cidr,
    integer,
    list_of,
    string,
    uuid_or_none,
)
from stackling.network.core.models import Subnet, SubnetPool, SubnetPoolPrefix
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing

QUOTA_UNIT = {4: 32, 6: 64}


def _name(value: Any) -> str:
    return string(255)(value)


ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": Attr(post=True, put=True, default=REQUIRED, convert=_name, filter=True,
                 sort=True),
    "description": DESCRIPTION,
    "prefixes": Attr(post=True, put=True, default=REQUIRED, convert=list_of(cidr)),
    "ip_version": Attr(filter=True, sort=True, query=integer()),
    "default_prefixlen": Attr(post=True, put=True, convert=integer(0, 128), filter=True,
                              sort=True, query=integer()),
    "min_prefixlen": Attr(post=True, put=True, convert=integer(0, 128), filter=True,
                          sort=True, query=integer()),
    "max_prefixlen": Attr(post=True, put=True, convert=integer(0, 128), filter=True,
                          sort=True, query=integer()),
    "default_quota": Attr(post=True, put=True, convert=integer(0, nullable=True),
                          filter=True, query=integer()),
    "shared": Attr(post=True, default=False, convert=boolean, filter=True),
    "is_default": Attr(post=True, put=True, default=False, convert=boolean, filter=True),
    "address_scope_id": Attr(post=True, put=True, convert=uuid_or_none, filter=True,
                             sort=True),
}

LISTING = Listing(
    attrs=ATTRS,
    columns={"id": SubnetPool.id, "name": SubnetPool.name,
             "description": SubnetPool.description, "ip_version": SubnetPool.ip_version,
             "default_prefixlen": SubnetPool.default_prefixlen,
             "min_prefixlen": SubnetPool.min_prefixlen,
             "max_prefixlen": SubnetPool.max_prefixlen,
             "default_quota": SubnetPool.default_quota, "shared": SubnetPool.shared,
             "is_default": SubnetPool.is_default,
             "address_scope_id": SubnetPool.address_scope_id,
             "project_id": SubnetPool.project_id, "tenant_id": SubnetPool.project_id,
             "revision_number": SubnetPool.revision_number},
    id_column=SubnetPool.id,
)


# ------------------------------------------------------------------ views
def render(db: Session, pools: Sequence[SubnetPool], *, ints: bool = False,
           ctx: RequestContext | None = None) -> list[dict[str, Any]]:
    """Prefix lengths are strings on GET/POST and integers in PUT answers (as neutron);
    `shared` is also true for a pool RBAC-shared with the caller's project."""
    from stackling.network.rbac import visibility

    tags = standard.tags_for(db, [p.id for p in pools])
    targeted = set() if ctx is None else visibility.granted_ids(
        db, "subnetpool", [p.id for p in pools], ctx.project_id)
    conv = int if ints else str
    return [{
        "id": p.id, "name": p.name, "tenant_id": p.project_id, "project_id": p.project_id,
        "prefixes": [c.cidr for c in p.prefixes], "ip_version": p.ip_version,
        "default_prefixlen": conv(p.default_prefixlen),
        "min_prefixlen": conv(p.min_prefixlen), "max_prefixlen": conv(p.max_prefixlen),
        "default_quota": p.default_quota, "shared": p.shared or p.id in targeted,
        "is_default": p.is_default,
        "address_scope_id": p.address_scope_id,
        **standard.standard_view(p, tags[p.id]),
    } for p in pools]


# ------------------------------------------------------------------ reads
def _visible(ctx: RequestContext) -> Any:
    from stackling.network.rbac import visibility

    return visibility.subnetpool_clause(ctx)


def can_see(ctx: RequestContext, pool: SubnetPool) -> bool:
    return ctx.is_admin or ctx.is_service or pool.project_id == ctx.project_id or pool.shared


def get_visible(db: Session, ctx: RequestContext, pool_id: str) -> SubnetPool:
    from stackling.network.rbac import visibility

    pool = db.get(SubnetPool, pool_id)
    if pool is None or not visibility.subnetpool_visible(db, ctx, pool):
        raise errors.SubnetPoolNotFound(subnetpool_id=pool_id)
    return pool


def list_pools(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(SubnetPool)
    clause = _visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def default_pool(db: Session, ip_version: int) -> SubnetPool | None:
    return db.scalar(select(SubnetPool).where(SubnetPool.default_marker == ip_version))


# ------------------------------------------------------------------ create / update
def _prefixes(values: list[str]) -> tuple[int, list[netaddr.IPNetwork]]:
    if not values:
        raise errors.InvalidInput(error_message="No prefixes specified")
    nets = [netaddr.IPNetwork(v).cidr for v in values]
    versions = {n.version for n in nets}
    if len(versions) != 1:
        raise errors.InvalidInput(error_message="Illegal subnetpool prefixes: cannot mix "
                                                "IPv4 and IPv6 prefixes")
    return versions.pop(), netaddr.cidr_merge(nets)


def _bounds(version: int, attrs: dict[str, Any], current: SubnetPool | None = None
            ) -> tuple[int, int, int]:
    top = 32 if version == 4 else 128
    min_len = attrs.get("min_prefixlen", current.min_prefixlen if current else
                        (8 if version == 4 else 64))
    max_len = attrs.get("max_prefixlen", current.max_prefixlen if current else top)
    default = attrs.get("default_prefixlen", current.default_prefixlen if current else min_len)
    for name, value in (("min_prefixlen", min_len), ("max_prefixlen", max_len),
                        ("default_prefixlen", default)):
        if value > top:
            raise errors.InvalidInput(error_message=f"Illegal prefix bounds: {name}={value}, "
                                                    f"maximum is {top}")
    if not min_len <= default <= max_len:
        raise errors.InvalidInput(
            error_message=f"Illegal prefix bounds: min_prefixlen={min_len}, "
                          f"default_prefixlen={default}, max_prefixlen={max_len}")
    return min_len, max_len, default


def create_pool(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> SubnetPool:
    tgt = {"project_id": attrs["project_id"]}
    pol.authorize(db, ctx, "create_subnetpool", tgt)
    pol.authorize_attrs(db, ctx, "create_subnetpool", attrs, ("shared", "is_default"), tgt,
                        {"shared": False, "is_default": False})
    quotas.check(db, attrs["project_id"], "subnetpool")
    if not attrs["name"]:
        raise errors.InvalidInput(error_message="A subnet pool needs a name")
    version, prefixes = _prefixes(attrs["prefixes"])
    min_len, max_len, default = _bounds(version, attrs)
    _check_scope(db, ctx, None, attrs.get("address_scope_id"), prefixes, version)
    is_default = attrs.get("is_default", False)
    if is_default and default_pool(db, version) is not None:
        raise errors.DefaultSubnetPoolExists()
    now = utcnow()
    pool = SubnetPool(project_id=attrs["project_id"], name=attrs["name"],
                      description=attrs.get("description", ""), ip_version=version,
                      default_prefixlen=default, min_prefixlen=min_len, max_prefixlen=max_len,
                      shared=attrs.get("shared", False), is_default=is_default,
                      default_marker=version if is_default else None,
                      address_scope_id=attrs.get("address_scope_id"),
                      default_quota=attrs.get("default_quota"), created_at=now,
                      updated_at=now, revision_number=0)
    pool.prefixes = [SubnetPoolPrefix(cidr=str(p)) for p in prefixes]
    try:
        with db.begin_nested():
            db.add(pool)
            db.flush()
    except IntegrityError:
        if is_default and default_pool(db, version) is not None:
            raise errors.DefaultSubnetPoolExists() from None
        raise
    if attrs.get("tags"):
        standard.set_tags(db, "subnetpool", pool.id, list(dict.fromkeys(attrs["tags"])),
                          new=True)
    if pool.shared:  # `shared` is the wildcard RBAC policy
        from stackling.network.rbac import wildcards as rbac

        rbac.sync_wildcard(db, "subnetpool", pool.id, pool.project_id, "access_as_shared",
                           True)
    return pool


def update_pool(db: Session, ctx: RequestContext, pool_id: str, attrs: dict[str, Any],
                if_match: int | None = None) -> SubnetPool:
    pool = get_visible(db, ctx, pool_id)
    tgt = {"project_id": pool.project_id}
    pol.authorize(db, ctx, "update_subnetpool", tgt)
    pol.authorize_attrs(db, ctx, "update_subnetpool", attrs, ("is_default",), tgt)
    standard.check_revision(pool, if_match)
    if "name" in attrs and not attrs["name"]:
        raise errors.InvalidInput(error_message="A subnet pool needs a name")
    if "prefixes" in attrs:
        version, prefixes = _prefixes(attrs["prefixes"])
        old = netaddr.IPSet(c.cidr for c in pool.prefixes)
        if version != pool.ip_version or not old.issubset(netaddr.IPSet(prefixes)):
            raise errors.IllegalSubnetPoolPrefixUpdate(
                msg="Existing prefixes must be a subset of the new prefixes")
        pool.prefixes = [SubnetPoolPrefix(cidr=str(p)) for p in prefixes]
    if "prefixes" in attrs or attrs.get("address_scope_id") not in (None,
                                                                    pool.address_scope_id):
        _check_scope(db, ctx, pool.id, attrs.get("address_scope_id", pool.address_scope_id),
                     [c.cidr for c in pool.prefixes], pool.ip_version)
    min_len, max_len, default = _bounds(pool.ip_version, attrs, pool)
    pool.min_prefixlen, pool.max_prefixlen, pool.default_prefixlen = min_len, max_len, default
    for key in ("name", "description", "address_scope_id", "default_quota"):
        if key in attrs:
            setattr(pool, key, attrs[key])
    if "is_default" in attrs and attrs["is_default"] != pool.is_default:
        if attrs["is_default"]:
            current = default_pool(db, pool.ip_version)
            if current is not None and current.id != pool.id:
                raise errors.DefaultSubnetPoolExists()
        pool.is_default = attrs["is_default"]
        pool.default_marker = pool.ip_version if pool.is_default else None
    standard.touch(pool)
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        raise errors.DefaultSubnetPoolExists() from None
    return pool


def delete_pool(db: Session, ctx: RequestContext, pool_id: str,
                if_match: int | None = None) -> None:
    pool = get_visible(db, ctx, pool_id)
    pol.authorize(db, ctx, "delete_subnetpool", {"project_id": pool.project_id})
    standard.check_revision(pool, if_match)
    if db.scalar(select(Subnet.id).where(Subnet.subnetpool_id == pool.id).limit(1)):
        raise errors.SubnetPoolDeleteError(reason="Subnets are still allocated")
    standard.delete_tags(db, [pool.id])
    from stackling.network.rbac import wildcards as rbac

    rbac.delete_for(db, "subnetpool", pool.id)
    db.delete(pool)
    db.flush()


# ------------------------------------------------------------------ prefix allocation
def allocate(db: Session, pool: SubnetPool, project_id: str, *, prefixlen: int | None = None,
             requested: str | None = None) -> str:
    """A CIDR from the pool: `requested` exactly, or the first free block of `prefixlen`."""
    if requested is not None:
        net = netaddr.IPNetwork(requested).cidr
        prefixlen = net.prefixlen
    elif prefixlen is None:
        prefixlen = pool.default_prefixlen
    if prefixlen < pool.min_prefixlen:
        raise errors.MinPrefixSubnetAllocationError(prefixlen=prefixlen,
                                                    min_prefixlen=pool.min_prefixlen)
    if prefixlen > pool.max_prefixlen:
        raise errors.MaxPrefixSubnetAllocationError(prefixlen=prefixlen,
                                                    max_prefixlen=pool.max_prefixlen)
    # The row lock: concurrent allocations from this pool wait here, then see our subnet.
    db.execute(update(SubnetPool).where(SubnetPool.id == pool.id)
               .values(generation=SubnetPool.generation + 1))
    allocated = list(db.execute(select(Subnet.cidr, Subnet.project_id)
                                .where(Subnet.subnetpool_id == pool.id)))
    if pool.default_quota is not None:
        unit = QUOTA_UNIT[pool.ip_version]
        used = sum(2 ** max(unit - netaddr.IPNetwork(c).prefixlen, 0)
                   for c, p in allocated if p == project_id)
        if used + 2 ** max(unit - prefixlen, 0) > pool.default_quota:
            raise errors.SubnetPoolQuotaExceeded()
    free = netaddr.IPSet(c.cidr for c in pool.prefixes) - netaddr.IPSet(c for c, _ in allocated)
    if requested is not None:
        if not netaddr.IPSet([net]).issubset(free):
            raise errors.SubnetAllocationError(
                reason="Cannot allocate requested subnet from the available set of prefixes")
        return str(net)
    blocks = sorted((b for b in free.iter_cidrs() if b.prefixlen <= prefixlen),
                    key=lambda b: (-b.prefixlen, b.first))
    if not blocks:
        raise errors.SubnetAllocationError(
            reason="Insufficient prefix space to allocate subnet size "
                   f"/{prefixlen}")
    return str(netaddr.IPNetwork(f"{blocks[0].network}/{prefixlen}"))


# ------------------------------------------------------------------ address scopes
def _check_scope(db: Session, ctx: RequestContext, pool_id: str | None, scope_id: str | None,
                 prefixes: Sequence[Any], version: int) -> None:
    from stackling.network.rbac import address_scopes

    address_scopes.check_pool_association(db, ctx, pool_id, scope_id, list(prefixes), version)


# ------------------------------------------------------------------ prefix operations
EXTENSIONS.append(Extension(
    "subnetpool-prefix-ops", "Subnet Pool Prefix Operations",
    "Provides support for adjusting the prefix list of subnet pools",
    "2019-09-16T00:00:00-00:00"))
POLICIES: dict[str, str] = {"add_prefixes": pol.MEMBER, "remove_prefixes": pol.MEMBER}


def operation_prefixes(body: Any) -> list[str]:
    """The `{"prefixes": [...]}` of add_prefixes/remove_prefixes: a non-empty list of CIDRs
    (upstream: 400 "Request body contains invalid data" otherwise)."""
    prefixes = body.get("prefixes") if isinstance(body, dict) else None
    if not prefixes or not isinstance(prefixes, list):
        raise errors.BadRequest("Request body contains invalid data")
    try:
        return [cidr(p) for p in prefixes]
    except Invalid as exc:
        raise errors.InvalidInput(error_message=f"Invalid input for prefixes. Reason: {exc}"
                                  ) from None


def _lock(db: Session, pool: SubnetPool) -> None:
    """The pool's row lock that allocations take too (see `allocate`)."""
    db.execute(update(SubnetPool).where(SubnetPool.id == pool.id)
               .values(generation=SubnetPool.generation + 1))


def add_prefixes(db: Session, ctx: RequestContext, pool_id: str, prefixes: list[str]
                 ) -> list[str]:
    """Grow the pool (merged and compacted), with update's checks (one IP version, the
    address scope's pools must not overlap: 409 `AddressScopePrefixConflict`)."""
    pool = get_visible(db, ctx, pool_id)
    pol.authorize(db, ctx, "add_prefixes", {"project_id": pool.project_id})
    _lock(db, pool)
    db.refresh(pool)
    pool = update_pool(db, ctx, pool.id, {"prefixes": [c.cidr for c in pool.prefixes]
                                          + prefixes})
    return [c.cidr for c in pool.prefixes]


def remove_prefixes(db: Session, ctx: RequestContext, pool_id: str, prefixes: list[str]
                    ) -> list[str]:
    """Shrink the pool; 400 `IllegalSubnetPoolPrefixUpdate` if a subnet of the pool lies
    in what is removed. Removing what the pool does not hold changes nothing."""
    pool = get_visible(db, ctx, pool_id)
    pol.authorize(db, ctx, "remove_prefixes", {"project_id": pool.project_id})
    _lock(db, pool)
    db.refresh(pool)
    current = netaddr.IPSet(c.cidr for c in pool.prefixes)
    removal = netaddr.IPSet(netaddr.IPNetwork(p).cidr for p in prefixes)
    if current.isdisjoint(removal):
        return [c.cidr for c in pool.prefixes]
    allocated = netaddr.IPSet(db.scalars(select(Subnet.cidr).where(
        Subnet.subnetpool_id == pool.id)))
    if not allocated.isdisjoint(removal):
        raise errors.IllegalSubnetPoolPrefixUpdate(
            msg="One or more the prefixes to be removed is in use by a subnet")
    remaining = current - removal
    remaining.compact()
    keep = [str(c) for c in remaining.iter_cidrs()]
    pool.prefixes = [c for c in pool.prefixes if c.cidr in keep] + [
        SubnetPoolPrefix(cidr=c) for c in keep if c not in {p.cidr for p in pool.prefixes}]
    standard.touch(pool)
    db.flush()
    return keep


standard.register_taggable("subnetpools", standard.Taggable(
    "subnetpool", get_visible,
    lambda db, ctx, pool: pol.authorize(db, ctx, "update_subnetpool",
                                        {"project_id": pool.project_id})))
