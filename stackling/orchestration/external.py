"""Resources adopted by `external_id`: an existing physical object that the stack refers
to but does not manage. Creating one records the id after the plugin's `handle_check`
finds the object (events ADOPT, as upstream's adopt action); an update that keeps the id
leaves it alone, one that adds, drops or changes it fails as upstream's NotSupported; a
delete retains the object."""

from __future__ import annotations

from typing import Any

from stackling.orchestration.errors import NotSupported, StackValidationFailed
from stackling.orchestration.models import Resource

KEY = "external_id"


def declared(definition: dict[str, Any] | None) -> bool:
    return (definition or {}).get(KEY) is not None


def resolved(runner: Any, snippet: dict[str, Any]) -> str | None:
    """The snippet's external id with its functions resolved (e.g. `get_param`)."""
    if not declared(snippet):
        return None
    value = runner.resolver().resolve(snippet[KEY])
    if not isinstance(value, str) or not value:
        raise StackValidationFailed("external_id must be a non-empty string")
    return value


def adopt(plugin: Any, physical_id: str) -> None:
    """The handler an adopted resource runs instead of handle_create."""
    plugin.set_resource_id(physical_id)
    plugin.handle_check()  # a missing object fails the create (rolled back with it)


def current_id(row: Resource) -> str | None:
    return row.physical_resource_id if declared(row.definition) else None


def check_update(row: Resource, new_id: str | None) -> bool:
    """True when the update must leave the resource alone (the same external id);
    raises upstream's refusal when the id is added, dropped or changed."""
    if new_id is None and not declared(row.definition):
        return False
    if new_id != current_id(row):
        raise NotSupported(feature=f"Update to property {KEY} of {row.name} ({row.type})")
    return True
