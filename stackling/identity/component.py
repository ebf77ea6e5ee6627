"""The identity service as a stackling component."""

from __future__ import annotations

from typing import Any

from stackling.identity import (
    access_rules_api,
    api,
    app_credentials_api,
    bootstrap,
    catalog_api,
    credentials_api,
    domains_api,
    groups_api,
    policies_api,
    project_tags_api,
    roles_api,
    tokens,
    trusts_api,
)
from stackling.runtime import CatalogEntry, Component

ROUTE_MODULES = (groups_api, app_credentials_api, catalog_api, domains_api, roles_api,
                 project_tags_api, credentials_api, trusts_api, policies_api, access_rules_api)
ROUTE_MODULE_POLICIES = tuple(p for m in ROUTE_MODULES[2:] for p in m.POLICIES)

# Keystone's defaults, reduced to what stackling serves: admin for writes and for
# reading other people's things; the self-service reads are checked in the handlers.
_ADMIN = "rule:admin_required"
POLICIES = {
    "admin_required": "role:admin",
    **{f"identity:{action}": _ADMIN for action in (
        "list_domains", "get_domain", "list_projects", "get_project", "create_project",
        "update_project", "delete_project", "list_users", "get_user", "create_user",
        "update_user", "delete_user", "change_password", "list_user_projects", "list_roles",
        "get_role", "create_role", "delete_role", "list_role_inference_rules",
        "create_implied_role", "create_grant", "check_grant", "revoke_grant", "list_grants",
        "list_role_assignments", "list_services", "get_service", "list_endpoints",
        *groups_api.POLICIES, *app_credentials_api.POLICIES, *ROUTE_MODULE_POLICIES)},
}


def _start(runtime: Any) -> None:
    keys = runtime.state.setdefault("identity.keys", tokens.KeyRing())
    runtime.set_authenticator(tokens.authenticator(keys))


def _build(runtime: Any) -> Any:
    _start(runtime)
    service = api.build(runtime)
    for module in ROUTE_MODULES:
        module.add_routes(service)
    return service


COMPONENT = Component(
    name="identity",
    build=_build,
    policies=POLICIES,
    catalog=CatalogEntry(type="identity", name="keystone", path="/identity"),
    bootstrap=[("base", bootstrap.bootstrap_identity)],
    on_catalog_entry=bootstrap.add_catalog_entry,
)
