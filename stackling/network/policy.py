"""Neutron's policy defaults (new-style: admin, project member/reader, service) and the
checks the network logic makes with them.

Visibility of whole objects (own + shared + external, admin sees all) is applied in the
queries; these rules decide writes and per-attribute access. Per-attribute rules are
named as upstream (`create_network:provider:network_type`, `get_port:binding:host_id`).
Logic reaches the runtime's enforcer through the session (`runtime_of`), so in-process
callers (compute, orchestration) are checked exactly like HTTP callers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.policy import Enforcer
from stackling.network import errors

ADMIN = "rule:admin_only"
MEMBER = "rule:admin_or_project_member"
READER = "rule:admin_or_project_reader"
# Writes as the owner of the network need the member role there (upstream's
# NET_OWNER_MEMBER); reads as its owner need the reader role.
NET_OWNER = "rule:context_is_admin or rule:network_owner_member"
NET_OWNER_READER = "rule:context_is_admin or rule:network_owner_reader"
SERVICE = "rule:admin_only or rule:service_api"
NET_OWNER_OR_SERVICE = NET_OWNER + " or rule:service_api"

PROVIDER = ("provider:network_type", "provider:physical_network", "provider:segmentation_id")
BINDING_READ = ("binding:host_id", "binding:profile", "binding:vif_type", "binding:vif_details")

POLICIES: dict[str, str] = {
    "network_owner": "tenant_id:%(network:tenant_id)s",
    "admin_or_network_owner": "rule:context_is_admin or rule:network_owner",
    "network_owner_member": "role:member and rule:network_owner",
    "network_owner_reader": "role:reader and rule:network_owner",
    "sg_owner_member": "role:member and rule:sg_owner",
    "sg_owner_reader": "role:reader and rule:sg_owner",
    # networks
    "create_network": MEMBER,
    "create_network:shared": ADMIN,
    "create_network:router:external": ADMIN,
    "create_network:is_default": ADMIN,
    "create_network:segments": ADMIN,
    "get_network": READER,
    "get_network:segments": ADMIN,
    "get_network:router:external": "@",
    "update_network": MEMBER,
    "update_network:shared": ADMIN,
    "update_network:router:external": ADMIN,
    "update_network:is_default": ADMIN,
    "update_network:segments": ADMIN,
    "delete_network": MEMBER,
    # subnets
    "create_subnet": NET_OWNER,
    "create_subnet:segment_id": ADMIN,
    "create_subnet:service_types": ADMIN,
    "get_subnet": READER,
    "get_subnet:segment_id": ADMIN,
    "update_subnet": NET_OWNER,
    "update_subnet:segment_id": ADMIN,
    "update_subnet:service_types": ADMIN,
    "delete_subnet": NET_OWNER,
    # subnet pools
    "create_subnetpool": MEMBER,
    "create_subnetpool:shared": ADMIN,
    "create_subnetpool:is_default": ADMIN,
    "get_subnetpool": READER,
    "update_subnetpool": MEMBER,
    "update_subnetpool:is_default": ADMIN,
    "delete_subnetpool": MEMBER,
    # ports
    "create_port": MEMBER,
    # device_owner rules are checked only for `network:*` owners; fixed_ips:subnet_id
    # only on networks that are not shared (the engine has no `field:` checks).
    "create_port:device_owner": NET_OWNER_OR_SERVICE,
    "create_port:mac_address": NET_OWNER_OR_SERVICE,
    "create_port:fixed_ips:ip_address": NET_OWNER_OR_SERVICE,
    "create_port:fixed_ips:subnet_id": NET_OWNER_OR_SERVICE,
    "create_port:port_security_enabled": NET_OWNER_OR_SERVICE,
    "create_port:binding:host_id": SERVICE,
    "create_port:binding:profile": SERVICE,
    "create_port:binding:vnic_type": MEMBER,
    "create_port:allowed_address_pairs": NET_OWNER_OR_SERVICE,
    "get_port": READER + " or rule:network_owner_reader or rule:service_api",
    "get_port:binding:vif_type": SERVICE,
    "get_port:binding:vif_details": SERVICE,
    "get_port:binding:host_id": SERVICE,
    "get_port:binding:profile": SERVICE,
    "update_port": MEMBER + " or rule:network_owner_member or rule:service_api",
    "update_port:device_owner": NET_OWNER_OR_SERVICE,
    "update_port:mac_address": SERVICE,
    "update_port:fixed_ips:ip_address": NET_OWNER_OR_SERVICE,
    "update_port:fixed_ips:subnet_id": NET_OWNER_OR_SERVICE,
    "update_port:port_security_enabled": NET_OWNER_OR_SERVICE,
    "update_port:binding:host_id": SERVICE,
    "update_port:binding:profile": SERVICE,
    "update_port:binding:vnic_type": MEMBER + " or rule:service_api",
    "update_port:allowed_address_pairs": NET_OWNER_OR_SERVICE,
    "delete_port": MEMBER + " or rule:network_owner_member or rule:service_api",
    # security groups
    "create_security_group": MEMBER,
    "get_security_group": READER,
    "update_security_group": MEMBER,
    "delete_security_group": MEMBER,
    "create_security_group_rule": MEMBER,
    "get_security_group_rule": READER + " or rule:sg_owner_reader",
    "sg_owner": "tenant_id:%(security_group:tenant_id)s",
    "delete_security_group_rule": MEMBER + " or rule:sg_owner_member",
}
for _attr in PROVIDER:
    POLICIES[f"create_network:{_attr}"] = ADMIN
    POLICIES[f"update_network:{_attr}"] = ADMIN
    POLICIES[f"get_network:{_attr}"] = ADMIN


def runtime_of(db: Session) -> Any:
    """The runtime the session belongs to (set by the component), or None."""
    return db.info.get("stackling.runtime")


_FALLBACK: Enforcer | None = None


def enforcer(db: Session) -> Enforcer:
    runtime = runtime_of(db)
    if runtime is not None:
        return runtime.enforcer
    global _FALLBACK
    if _FALLBACK is None:
        _FALLBACK = Enforcer()
        _FALLBACK.register(POLICIES)
    return _FALLBACK


def allowed(db: Session, ctx: RequestContext, action: str,
            target: Mapping[str, Any] | None = None) -> bool:
    data = dict(target or {})
    data.setdefault("project_id", ctx.project_id)
    data.setdefault("tenant_id", data["project_id"])
    return enforcer(db).enforce(action, data, _creds(ctx))


def _creds(ctx: RequestContext) -> dict[str, Any]:
    creds = ctx.policy_creds()
    if ctx.is_service and "service" not in creds["roles"]:  # type: ignore[operator]
        creds["roles"] = [*creds["roles"], "service"]  # type: ignore[misc]
    return creds


def authorize(db: Session, ctx: RequestContext, action: str,
              target: Mapping[str, Any] | None = None) -> None:
    """403 PolicyNotAuthorized unless allowed."""
    if not allowed(db, ctx, action, target):
        raise errors.PolicyNotAuthorized(action=action)


def authorize_attrs(db: Session, ctx: RequestContext, action: str, attrs: Mapping[str, Any],
                    names: tuple[str, ...] | list[str], target: Mapping[str, Any],
                    defaults: Mapping[str, Any] | None = None) -> None:
    """Per-attribute write rules (`create_network:shared`) for the attributes given.

    As neutron, an attribute counts only when set to something other than its default."""
    for name in names:
        if name in attrs and not (defaults and name in defaults
                                  and attrs[name] == defaults[name]):
            authorize(db, ctx, f"{action}:{name}", target)


class ReadFilter:
    """Which admin-only attributes a caller may read, decided once per transaction and
    caller (the rules read only the caller's credentials)."""

    def __init__(self, db: Session, ctx: RequestContext, action: str,
                 names: tuple[str, ...]) -> None:
        from stackling.common import memo

        creds = _creds(ctx)
        key = ("read_filter", action, names, ctx.project_id,
               tuple(sorted((k, repr(v)) for k, v in creds.items())))
        known = memo.table(db)
        hidden = known.get(key)
        if hidden is None:
            hidden = known[key] = frozenset(
                n for n in names if not allowed(db, ctx, f"{action}:{n}", {}))
        self.hidden = hidden

    def apply(self, item: dict[str, Any]) -> dict[str, Any]:
        for name in self.hidden:
            item.pop(name, None)
        return item


def ignore_unreadable(db: Session, ctx: RequestContext, action: str, names: tuple[str, ...],
                      params: Any) -> None:
    """A list's filters and sort keys on attributes the caller may not read (`get_port:
    binding:host_id`, `get_network:provider:segmentation_id`) are ignored, as Nova ignores
    a non-admin's admin-only server filters: applied, they would tell a member which rows
    hold a value the member cannot see. (Neutron itself applies them.)"""
    hidden = ReadFilter(db, ctx, action, names).hidden
    if hidden:
        for name in hidden:
            params.filters.pop(name, None)
        params.sorts = [(key, asc) for key, asc in params.sorts if key not in hidden]
