"""Resource types: one module per family, each class registered with `@register`."""

from __future__ import annotations

import importlib
from typing import Any

from stackling.orchestration.resources.base import REGISTRY, Resource, register

__all__ = ["REGISTRY", "Resource", "register", "load_all", "resource_class"]

# The modules that define resource types (imported once, on first use).
MODULES = [
    "stackling.orchestration.resources.misc",
    "stackling.orchestration.resources.neutron",
    "stackling.orchestration.resources.server",
    "stackling.orchestration.resources.nova_extra",
    "stackling.orchestration.resources.neutron_extra",
    "stackling.orchestration.resources.stack_resource",
]

_loaded = False


def load_all() -> dict[str, type[Resource]]:
    global _loaded
    if not _loaded:
        for module in MODULES:
            importlib.import_module(module)
        _loaded = True
    return REGISTRY


def resource_class(type_name: str, files: dict[str, Any] | None) -> type[Resource] | None:
    """The class for a (registry-resolved) type: a registered type, or a template
    resource when the type names a template in the stack's `files`."""
    cls = load_all().get(type_name)
    if cls is None and type_name in (files or {}):
        from stackling.orchestration.resources.stack_resource import TemplateResource

        return TemplateResource
    return cls
