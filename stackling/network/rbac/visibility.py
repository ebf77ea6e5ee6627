"""Who sees which shareable object: the one place list, show and marker checks ask.

An object is visible to its owner, to admins and services, and to every project an RBAC
policy grants it to (`target_tenant` = the project or `*`). Which actions reveal what
follows upstream's query hooks:

- networks: `access_as_shared` or `access_as_external` (the `shared` / `router:external`
  flags mirror the wildcard rows and are honoured too, e.g. for rows older than RBAC);
- subnets: through their network, `access_as_shared` only (an external network's subnets
  stay its owner's);
- subnet pools, security groups, address scopes: `access_as_shared`.

Each kind has a SQL clause (None for admins: no filter) and a per-object check that
costs one indexed query only when ownership and flags do not decide.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, exists, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from stackling.common import memo
from stackling.common.context import RequestContext
from stackling.network.rbac.models import AddressScope, RbacPolicy

SHARED = "access_as_shared"
EXTERNAL = "access_as_external"
WILDCARD = "*"


def _sees_all(ctx: RequestContext) -> bool:
    return bool(ctx.is_admin or ctx.is_service)


def granted(object_type: str, id_column: Any, project_id: str | None,
            actions: Iterable[str] = (SHARED,)) -> ColumnElement[bool]:
    """EXISTS a policy granting the object to `project_id` (or to every project)."""
    r = RbacPolicy
    return exists(select(r.id).where(
        r.object_type == object_type, r.object_id == id_column, r.action.in_(list(actions)),
        r.target_tenant.in_([WILDCARD, project_id or ""])))


def granted_ids(db: Session, object_type: str, ids: Iterable[str], project_id: str | None,
                actions: Iterable[str] = (SHARED,)) -> set[str]:
    """Which of `ids` are granted to `project_id` (or to every project)."""
    ids = list(ids)
    if not ids:
        return set()
    r = RbacPolicy
    return set(db.scalars(select(r.object_id).where(
        r.object_type == object_type, r.object_id.in_(ids), r.action.in_(list(actions)),
        r.target_tenant.in_([WILDCARD, project_id or ""]))))


_MEMO = "rbac.granted"


def _is_granted(db: Session, ctx: RequestContext, object_type: str, object_id: str,
                actions: Iterable[str] = (SHARED,)) -> bool:
    # Memoized for the transaction: one request (a Heat stack's step above all) checks
    # the same shared or external network again and again; policy writers forget it.
    actions = tuple(actions)
    known = memo.table(db).setdefault(_MEMO, {})
    key = (object_type, object_id, ctx.project_id, actions)
    found = known.get(key)
    if found is None:
        stmt = _GRANTED_ONE.get(actions)
        if stmt is None:
            r = RbacPolicy
            stmt = _GRANTED_ONE[actions] = select(r.id).where(
                r.object_type == bindparam("t"), r.object_id == bindparam("o"),
                r.action.in_(list(actions)),
                r.target_tenant.in_([WILDCARD, bindparam("p")])).limit(1)
        found = known[key] = db.execute(stmt, {"t": object_type, "o": object_id,
                                               "p": ctx.project_id or ""}).first() is not None
    return found


# The single-object check, built once per set of actions (requests run it often).
_GRANTED_ONE: dict[tuple[str, ...], Any] = {}


def forget_grants(db: Session) -> None:
    """After an RBAC policy write in this transaction."""
    memo.forget(db, _MEMO)


# ------------------------------------------------------------------ networks
def network_clause(ctx: RequestContext) -> ColumnElement[bool] | None:
    from stackling.network.core.models import Network

    if _sees_all(ctx):
        return None
    return or_(Network.project_id == ctx.project_id, Network.shared.is_(True),
               granted("network", Network.id, ctx.project_id, (SHARED, EXTERNAL)))


def network_visible(db: Session, ctx: RequestContext, net: Any) -> bool:
    if _sees_all(ctx) or net.project_id == ctx.project_id or net.shared:
        return True
    return _is_granted(db, ctx, "network", net.id, (SHARED, EXTERNAL))


def network_shared_to(db: Session, ctx: RequestContext, net: Any) -> bool:
    """Whether the caller may plug into the network as a non-owner (`access_as_shared`)."""
    return bool(net.shared) or _is_granted(db, ctx, "network", net.id)


def networks_shared_clause(ctx: RequestContext, shared: bool) -> ColumnElement[bool]:
    """The `shared` filter as upstream reads it: shared with the caller's project."""
    from stackling.network.core.models import Network

    clause = or_(Network.shared.is_(True), granted("network", Network.id, ctx.project_id))
    return clause if shared else ~clause


# ------------------------------------------------------------------ subnets
def subnet_clause(ctx: RequestContext) -> ColumnElement[bool] | None:
    from stackling.network.core.models import Network, Subnet

    if _sees_all(ctx):
        return None
    return or_(Subnet.project_id == ctx.project_id, Subnet.network_id.in_(
        select(Network.id).where(or_(Network.project_id == ctx.project_id,
                                     Network.shared.is_(True),
                                     granted("network", Network.id, ctx.project_id)))))


def subnet_visible(db: Session, ctx: RequestContext, subnet: Any, net: Any | None) -> bool:
    if _sees_all(ctx) or subnet.project_id == ctx.project_id:
        return True
    if net is None:
        return False
    return (net.project_id == ctx.project_id or bool(net.shared)
            or _is_granted(db, ctx, "network", net.id))


# ------------------------------------------------------------------ subnet pools
def subnetpool_clause(ctx: RequestContext) -> ColumnElement[bool] | None:
    from stackling.network.core.models import SubnetPool

    if _sees_all(ctx):
        return None
    return or_(SubnetPool.project_id == ctx.project_id, SubnetPool.shared.is_(True),
               granted("subnetpool", SubnetPool.id, ctx.project_id))


def subnetpool_visible(db: Session, ctx: RequestContext, pool: Any) -> bool:
    if _sees_all(ctx) or pool.project_id == ctx.project_id or pool.shared:
        return True
    return _is_granted(db, ctx, "subnetpool", pool.id)


# ------------------------------------------------------------------ security groups
def security_group_clause(ctx: RequestContext) -> ColumnElement[bool] | None:
    from stackling.network.core.models import SecurityGroup

    if _sees_all(ctx):
        return None
    return or_(SecurityGroup.project_id == ctx.project_id,
               granted("security_group", SecurityGroup.id, ctx.project_id))


def security_group_visible(db: Session, ctx: RequestContext, sg: Any) -> bool:
    if _sees_all(ctx) or sg.project_id == ctx.project_id:
        return True
    return _is_granted(db, ctx, "security_group", sg.id)


# ------------------------------------------------------------------ address scopes
def address_scope_clause(ctx: RequestContext) -> ColumnElement[bool] | None:
    if _sees_all(ctx):
        return None
    return or_(AddressScope.project_id == ctx.project_id, AddressScope.shared.is_(True),
               granted("address_scope", AddressScope.id, ctx.project_id))


def address_scope_visible(db: Session, ctx: RequestContext, scope: Any) -> bool:
    if _sees_all(ctx) or scope.project_id == ctx.project_id or scope.shared:
        return True
    return _is_granted(db, ctx, "address_scope", scope.id)


def shared_ids(db: Session, object_type: str, ids: Iterable[str]) -> set[str]:
    """Which of `ids` any `access_as_shared` policy grants to some project."""
    ids = list(ids)
    if not ids:
        return set()
    r = RbacPolicy
    return set(db.scalars(select(r.object_id).where(
        r.object_type == object_type, r.object_id.in_(ids), r.action == SHARED)))


def networks_shared_filter(ctx: RequestContext, values: list[str]) -> ColumnElement[bool]:
    """Networks' `shared` filter as upstream reads it: shared with the caller's project
    (by `shared` or an RBAC policy); several values OR."""
    from stackling.common.listing import to_bool
    from stackling.network import errors

    try:
        wanted = {to_bool(v) for v in values}
    except ValueError as exc:
        raise errors.BadRequest(f"Invalid input for shared. Reason: {exc}.") from None
    clause = networks_shared_clause(ctx, True)
    if wanted == {True}:
        return clause
    if wanted == {False}:
        return ~clause
    return or_(clause, ~clause)
