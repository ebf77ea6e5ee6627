"""Breakpoints: `hooks` (pre-create, pre-update, pre-delete) on resources in the
environment's resource_registry. A resource that meets its hook stays `*_IN_PROGRESS`
(a persisted wait: the marker is in its row's data) until a signal `{"unset_hook":
<hook>}` clears it; the engine then goes on with the operation."""

from __future__ import annotations

import fnmatch
from typing import Any

from sqlalchemy.orm import Session

from stackling.orchestration.errors import HeatError
from stackling.orchestration.models import Resource, Stack

HOOKS = ("pre-create", "pre-update", "pre-delete")
ALL_HOOKS = ("pre-create", "pre-update", "pre-delete", "pre-suspend", "post-create",
             "post-update", "post-delete", "post-suspend")
MARK = "__hook__"  # resource data: {"hook": ..., "generation": ..., "cleared": bool}


class InvalidBreakPointHook(HeatError):
    status = 400
    message = "%(message)s"


def matches(environment: dict[str, Any] | None, name: str, hook: str) -> bool:
    """Whether the registry puts `hook` on the resource `name` (names may be globs)."""
    per_resource = ((environment or {}).get("resource_registry") or {}).get("resources") or {}
    for pattern, entry in per_resource.items():
        if not isinstance(entry, dict) or not fnmatch.fnmatchcase(name, str(pattern)):
            continue
        hooks = entry.get("hooks")
        if hooks == hook or (isinstance(hooks, list) and hook in hooks):
            return True
    return False


def mark(row: Resource) -> dict[str, Any] | None:
    value = (row.data or {}).get(MARK)
    return value if isinstance(value, dict) else None


def waiting(row: Resource, generation: int) -> bool:
    m = mark(row)
    return m is not None and m.get("generation") == generation and not m.get("cleared")


def cleared(row: Resource, generation: int, hook: str) -> bool:
    """The hook was met and cleared in this action: go on (and forget the mark)."""
    m = mark(row)
    if m is None or m.get("generation") != generation or m.get("hook") != hook \
            or not m.get("cleared"):
        return False
    row.data = {k: v for k, v in (row.data or {}).items() if k != MARK}
    return True


def pause(row: Resource, generation: int, hook: str) -> None:
    row.data = {**(row.data or {}), MARK: {"hook": hook, "generation": generation,
                                           "cleared": False}}


def reason(action: str, hook: str) -> str:
    return f"{action} paused until Hook {hook} is cleared"


def clear(db: Session, stack: Stack, row: Resource, hook: Any) -> None:
    """The signal `{"unset_hook": hook}`."""
    from stackling.orchestration import engine

    if hook not in ALL_HOOKS:
        raise InvalidBreakPointHook(message=f'Invalid hook type "{hook}" for resource '
                                    f"breakpoint, acceptable hook types are: "
                                    f"{list(ALL_HOOKS)}")
    m = mark(row)
    if m is None or m.get("hook") != hook or m.get("cleared"):
        raise InvalidBreakPointHook(message=f"The {hook} hook is not defined on "
                                    f"{row.type} \"{row.name}\"")
    row.data = {**(row.data or {}), MARK: {**m, "cleared": True}}
    engine.add_event(db, stack, row.name, row.type, row.physical_resource_id, row.action,
                     row.status, f"Hook {hook} is cleared", row.properties)
