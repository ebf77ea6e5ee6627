"""RBAC policies (`rbac-policies`): sharing networks, subnet pools, security groups and
address scopes with chosen projects (or every project, `*`).

Rules, as upstream:
- only an object's owner (or an admin) may grant it (400 otherwise); only an admin may
  grant to `*` (403); one grant per (object, action, target) (409 `DuplicateRbacPolicy`);
- `access_as_external` exists for networks only and makes the network external;
  removing a network's last one makes it internal again;
- a policy whose target still uses the object cannot be removed or re-targeted: 409
  `RbacPolicyInUse` (ports or subnets on a network, subnets from a pool, ports in a
  security group, subnet pools in an address scope, routers' gateways on an external
  network), unless another policy (or ownership) keeps that project's access.

The `shared` flag of networks, subnet pools and address scopes and a network's
`router:external` mirror their wildcard policy: `wildcards.sync_wildcard` keeps the rows in
step when the flags change, and policy writes here set the flags.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import ID, PROJECT, REQUIRED, Attr, one_of, string, uuid_value
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing
from stackling.network.rbac import visibility
from stackling.network.rbac.models import RbacPolicy
from stackling.network.rbac.visibility import EXTERNAL, SHARED, WILDCARD

for _alias, _name, _desc, _updated in (
        ("rbac-policies", "RBAC Policies", "Allows creation and modification of policies "
         "that control tenant access to resources.", "2015-06-17T12:15:12-00:00"),
        ("rbac-address-scope", "Add address_scope type to RBAC",
         "Add address_scope type to RBAC", "2017-06-22T00:00:00-00:00"),
        ("rbac-security-groups", "Add security_group type to network RBAC",
         "Add security_group type to network RBAC", "2018-07-11T00:00:00-00:00"),
        ("rbac-subnetpool", "Add subnetpool type to RBAC",
         "Add subnetpool type to RBAC", "2019-02-12T00:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

ACTIONS: dict[str, tuple[str, ...]] = {
    "network": (SHARED, EXTERNAL),
    "subnetpool": (SHARED,),
    "security_group": (SHARED,),
    "address_scope": (SHARED,),
    "address_group": (SHARED,),
    "qos_policy": (SHARED,),
}
POLICIES: dict[str, str] = {
    # upstream: "(not field:rbac_policy:target_tenant=*) or rule:admin_only"
    "restrict_wildcard": "(not '*':%(rbac_policy:target_tenant)s) or rule:admin_only",
    "create_rbac_policy": pol.MEMBER,
    "create_rbac_policy:target_tenant": "rule:restrict_wildcard",
    "update_rbac_policy": pol.MEMBER,
    "update_rbac_policy:target_tenant": "rule:restrict_wildcard",
    "get_rbac_policy": pol.READER,
    "delete_rbac_policy": pol.MEMBER,
}
ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "object_type": Attr(post=True, default=REQUIRED, convert=one_of(*ACTIONS), filter=True,
                        sort=True),
    "object_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                      sort=True),
    "action": Attr(post=True, default=REQUIRED, convert=one_of(SHARED, EXTERNAL),
                   filter=True, sort=True),
    "target_tenant": Attr(post=True, put=True, default=REQUIRED, convert=string(255),
                          filter=True, sort=True),
}
_P = RbacPolicy
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _P.id, "project_id": _P.project_id, "tenant_id": _P.project_id,
             "object_type": _P.object_type, "object_id": _P.object_id, "action": _P.action,
             "target_tenant": _P.target_tenant},
    id_column=_P.id,
)


def view(p: RbacPolicy) -> dict[str, Any]:
    return {"id": p.id, "project_id": p.project_id, "tenant_id": p.project_id,
            "object_type": p.object_type, "object_id": p.object_id, "action": p.action,
            "target_tenant": p.target_tenant}


# ------------------------------------------------------------------ the shared objects
def _objects() -> dict[str, Callable[[Session, RequestContext, str], Any]]:
    """object_type -> the owner module's `get_visible` (404 when the caller cannot see it)."""
    from stackling.network.address_groups import address_groups
    from stackling.network.core import networks, security_groups, subnetpools
    from stackling.network.qos import policies as qos
    from stackling.network.rbac import address_scopes

    return {"network": networks.get_visible, "subnetpool": subnetpools.get_visible,
            "security_group": security_groups.get_visible,
            "address_scope": address_scopes.get_visible,
            "address_group": address_groups.get_visible,
            "qos_policy": qos.get_visible}


def _set_flags(db: Session, obj: Any, object_type: str) -> None:
    """The object's flags from its policies (after a policy write)."""
    rows = set(db.execute(select(_P.action, _P.target_tenant).where(
        _P.object_type == object_type, _P.object_id == obj.id)).all())
    if object_type in ("network", "subnetpool", "address_scope", "qos_policy"):
        obj.shared = (SHARED, WILDCARD) in rows
    if object_type == "network":
        external = any(action == EXTERNAL for action, _ in rows)
        if obj.router_external and not external:
            obj.is_default = False
            obj.default_marker = None
        obj.router_external = external


# ------------------------------------------------------------------ reads
def _visible(ctx: RequestContext) -> Any:
    if ctx.is_admin or ctx.is_service:
        return None
    return _P.project_id == ctx.project_id


def get_policy(db: Session, ctx: RequestContext, policy_id: str) -> RbacPolicy:
    p = db.get(RbacPolicy, policy_id)
    if p is None or not (ctx.is_admin or ctx.is_service or p.project_id == ctx.project_id) \
            or not pol.allowed(db, ctx, "get_rbac_policy", _target(p)):
        raise errors.RbacPolicyNotFound(object_type="rbac", id=policy_id)
    return p


def list_policies(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(RbacPolicy)
    clause = _visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def _target(p: Any) -> dict[str, Any]:
    return {"project_id": p.project_id, "tenant_id": p.project_id,
            "rbac_policy:target_tenant": p.target_tenant}


# ------------------------------------------------------------------ writes
def _check_target(db: Session, ctx: RequestContext, action: str, target_tenant: str,
                  project_id: str) -> None:
    if not pol.allowed(db, ctx, f"{action}:target_tenant",
                       {"project_id": project_id, "rbac_policy:target_tenant": target_tenant}):
        raise errors.PolicyNotAuthorized(action=f"{action}:target_tenant")


def _owned_object(db: Session, ctx: RequestContext, object_type: str, object_id: str) -> Any:
    """The object, which the caller must own (or be admin). Upstream checks this in an
    RBAC callback whose failures it answers as 400 InvalidInput, a missing or invisible
    object included."""
    try:
        obj = _objects()[object_type](db, ctx, object_id)
    except errors.NotFound as exc:
        raise errors.InvalidInput(error_message=exc.text) from None
    if not (ctx.is_admin or ctx.is_service) and obj.project_id != ctx.project_id:
        what = "networks they do not own" if object_type == "network" else \
            "objects they do not own"
        raise errors.InvalidInput(
            error_message=f"Only admins can manipulate policies on {what}")
    return obj


def create_policy(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> RbacPolicy:
    project_id = attrs["project_id"]
    pol.authorize(db, ctx, "create_rbac_policy", {"project_id": project_id})
    object_type, action = attrs["object_type"], attrs["action"]
    if action not in ACTIONS[object_type]:
        raise errors.InvalidActionForType(action=action, object_type=object_type,
                                        valid_actions=list(ACTIONS[object_type]))
    target_tenant = attrs["target_tenant"]
    _check_target(db, ctx, "create_rbac_policy", target_tenant, project_id)
    obj = _owned_object(db, ctx, object_type, attrs["object_id"])
    quotas.check(db, project_id, "rbac_policy")
    p = RbacPolicy(id=uuid_str(), project_id=project_id, object_type=object_type,
                   object_id=obj.id, action=action, target_tenant=target_tenant)
    try:
        with db.begin_nested():
            db.add(p)
            db.flush()
    except IntegrityError:
        raise errors.DuplicateRbacPolicy() from None
    visibility.forget_grants(db)
    _set_flags(db, obj, object_type)
    _touch(obj)
    db.flush()
    return p


def _touch(obj: Any) -> None:
    """A policy write is a change of the object it shares (its revision_number)."""
    if hasattr(obj, "revision_number"):
        standard.touch(obj)


def update_policy(db: Session, ctx: RequestContext, policy_id: str,
                  attrs: dict[str, Any]) -> RbacPolicy:
    p = get_policy(db, ctx, policy_id)
    pol.authorize(db, ctx, "update_rbac_policy", _target(p))
    new_target = attrs.get("target_tenant", p.target_tenant)
    if new_target == p.target_tenant:
        return p
    _check_target(db, ctx, "update_rbac_policy", new_target, p.project_id)
    obj = _owned_object(db, ctx, p.object_type, p.object_id)
    _check_in_use(db, p, obj, keep=new_target)  # the new target keeps its access
    p.target_tenant = new_target
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        raise errors.DuplicateRbacPolicy() from None
    visibility.forget_grants(db)
    _set_flags(db, obj, p.object_type)
    _touch(obj)
    db.flush()
    return p


def delete_policy(db: Session, ctx: RequestContext, policy_id: str) -> None:
    p = get_policy(db, ctx, policy_id)
    pol.authorize(db, ctx, "delete_rbac_policy", _target(p))
    obj = _objects()[p.object_type](db, ctx.elevated(), p.object_id)
    _check_in_use(db, p, obj)
    db.delete(p)
    db.flush()
    visibility.forget_grants(db)
    _set_flags(db, obj, p.object_type)
    _touch(obj)
    db.flush()


# ------------------------------------------------------------------ in use
def _losing(db: Session, p: RbacPolicy, owner: str, keep: str | None = None
            ) -> tuple[bool, set[str]]:
    """Who loses access when `p` goes: (everyone but `keep`?, keep) for a wildcard, or
    (False, {target}) minus those still covered. Returns (wildcard, projects)."""
    others = set(db.scalars(select(_P.target_tenant).where(
        _P.object_type == p.object_type, _P.object_id == p.object_id, _P.action == p.action,
        _P.id != p.id)))
    if keep is not None:
        others.add(keep)
    if p.target_tenant == WILDCARD:
        return True, others | {owner}  # the projects that keep access
    if WILDCARD in others or p.target_tenant in (owner, keep):
        return False, set()
    return False, {p.target_tenant}


def _check_in_use(db: Session, p: RbacPolicy, obj: Any, keep: str | None = None) -> None:
    from stackling.network.rbac import in_use

    wildcard, projects = _losing(db, p, obj.project_id, keep)
    if not wildcard and not projects:
        return
    reason = in_use.find(db, p.object_type, p.action, obj, projects, wildcard)
    if reason:
        raise errors.RbacPolicyInUse(object_id=p.object_id, details=reason)
