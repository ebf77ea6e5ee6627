"""Resource types: one module per family, each class registered with `@register`."""

from __future__ import annotations

import importlib
from typing import Any

from stackling.orchestration.resources.base import REGISTRY, Resource, register

__all__ = ["REGISTRY", "Resource", "register", "load_all", "resource_class",
           "register_template_resource"]

# The modules that define resource types (imported once, on first use).
MODULES = [
    "stackling.orchestration.resources.misc",
    "stackling.orchestration.resources.neutron",
    "stackling.orchestration.resources.server",
    "stackling.orchestration.resources.nova_extra",
    "stackling.orchestration.resources.neutron_extra",
    "stackling.orchestration.resources.neutron_more",
    "stackling.orchestration.resources.wait_condition",
    "stackling.orchestration.resources.software",
    "stackling.orchestration.resources.cinder",
    "stackling.orchestration.nested_stacks",  # beside the types: it drives the engine
    "stackling.orchestration.remote_stack",  # likewise, and the stack logic
]

_loaded = False
# The class of template resources (a type naming a template in the stack's `files`), set
# by nested_stacks.py when load_all imports it.
_template_resource: list[type[Resource]] = []


def register_template_resource(cls: type[Resource]) -> None:
    _template_resource[:] = [cls]


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
        return _template_resource[0]
    return cls
