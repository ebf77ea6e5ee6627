"""The placement service as a stackling component."""

from __future__ import annotations

import gc
from typing import Any

from stackling.placement import api
from stackling.runtime import CatalogEntry, Component

# Upstream's defaults: an admin/service API; a project reader may read its own usages.
_ADMIN = "rule:placement_admin_or_service"
POLICIES = {
    "placement_admin_or_service": "role:admin or role:service",
    **{f"placement:{action}": _ADMIN for action in (
        "resource_providers:list", "resource_providers:create", "resource_providers:show",
        "resource_providers:update", "resource_providers:delete",
        "resource_providers:inventories:list", "resource_providers:inventories:create",
        "resource_providers:inventories:show", "resource_providers:inventories:update",
        "resource_providers:inventories:delete", "resource_providers:aggregates:list",
        "resource_providers:aggregates:update", "resource_providers:usages",
        "resource_providers:traits:list", "resource_providers:traits:update",
        "resource_providers:traits:delete", "resource_providers:allocations:list",
        "resource_classes:list", "resource_classes:create", "resource_classes:show",
        "resource_classes:update", "resource_classes:delete", "traits:list", "traits:show",
        "traits:update", "traits:delete", "allocations:list", "allocations:manage",
        "allocations:update", "allocations:delete", "allocation_candidates:list",
        "reshaper:reshape")},
    "placement:usages": f"{_ADMIN} or (role:reader and project_id:%(project_id)s)",
}

def _start(runtime: Any) -> None:
    # Large answers (10,000 candidates) make tens of thousands of short-lived objects; a
    # full collection then also walks everything imported at start. Freezing what exists
    # now (modules, settings, the route tables) keeps those walks proportional to the
    # request's own objects. Process-wide, idempotent, and it changes no behaviour.
    gc.freeze()


COMPONENT = Component(
    name="placement",
    build=api.build,
    policies=POLICIES,
    catalog=CatalogEntry(type="placement", name="placement", path="/placement"),
    start=_start,
)
