"""Resource types: one module per family, each class registered with `@register`."""

from __future__ import annotations

import importlib

from stackling.orchestration.resources.base import REGISTRY, Resource, register

__all__ = ["REGISTRY", "Resource", "register", "load_all"]

# The modules that define resource types (imported once, on first use).
MODULES = [
    "stackling.orchestration.resources.misc",
    "stackling.orchestration.resources.neutron",
    "stackling.orchestration.resources.server",
    "stackling.orchestration.resources.nova_extra",
    "stackling.orchestration.resources.neutron_extra",
]

_loaded = False


def load_all() -> dict[str, type[Resource]]:
    global _loaded
    if not _loaded:
        for module in MODULES:
            importlib.import_module(module)
        _loaded = True
    return REGISTRY
