"""Breakpoints: `hooks` (pre-create, pre-update, pre-delete) on resources in the
environment's resource_registry. A resource that meets its hook stays `*_IN_PROGRESS`
(a persisted wait: the marker is in its row's data) until a signal `{"unset_hook":
<hook>}` clears it; the engine then goes on with the operation."""

from __future__ import annotations

import fnmatch
from typing import Any

from stackling.orchestration.errors import HeatError
from stackling.orchestration.models import Resource, Stack

HOOKS = ("pre-create", "pre-update", "pre-delete")
ALL_HOOKS = ("pre-create", "pre-update", "pre-delete", "pre-suspend", "post-create",
             "post-update", "post-delete", "post-suspend")
MARK = "__hook__"  # resource data: {"hook", "generation", "state": waiting|cleared|passed}


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


def _set(row: Resource, hook: str, generation: int, state: str) -> None:
    row.data = {**(row.data or {}), MARK: {"hook": hook, "generation": generation,
                                           "state": state}}


def gate(stack: Stack, row: Resource, generation: int, hook: str) -> str | None:
    """Where the operation `hook` guards stands in this action: "pause" (met now: the
    caller marks the row IN_PROGRESS with its event), "wait" (not cleared yet),
    "resume" (cleared: go on, once) or None (no hook, or already passed)."""
    m = mark(row)
    if m is not None and m.get("generation") == generation and m.get("hook") == hook:
        if m.get("state") == "waiting":
            return "wait"
        if m.get("state") == "cleared":
            _set(row, hook, generation, "passed")
            return "resume"
        return None
    # A nested stack's environment holds its own part of the registry (the parent's
    # `resources: {<its resource>: {...}}`); a nested action that pauses here is left
    # waiting and its parent resource polls it (nested_stacks.drive_stack).
    if matches(stack.environment, row.name, hook):
        _set(row, hook, generation, "waiting")
        return "pause"
    return None


def held(row: Resource, generation: int) -> str | None:
    """For a row IN_PROGRESS in this action: "wait" while its hook is set, the hook's
    name once it was cleared (marked passed now: the caller goes on with it), else None."""
    m = mark(row)
    if m is None or m.get("generation") != generation:
        return None
    if m.get("state") == "waiting":
        return "wait"
    if m.get("state") == "cleared":
        _set(row, m["hook"], generation, "passed")
        return str(m["hook"])
    return None


def reason(action: str, hook: str) -> str:
    return f"{action} paused until Hook {hook} is cleared"


def clear(row: Resource, hook: Any) -> str:
    """The signal `{"unset_hook": hook}`: marks the hook cleared and returns the event's
    reason (the caller records it: the engine imports this module)."""
    if hook not in ALL_HOOKS:
        raise InvalidBreakPointHook(message=f'Invalid hook type "{hook}" for resource '
                                    f"breakpoint, acceptable hook types are: "
                                    f"{list(ALL_HOOKS)}")
    m = mark(row)
    if m is None or m.get("hook") != hook or m.get("state") != "waiting":
        raise InvalidBreakPointHook(message=f"The {hook} hook is not defined on "
                                    f"{row.type} \"{row.name}\"")
    row.data = {**(row.data or {}), MARK: {**m, "state": "cleared"}}
    return f"Hook {hook} is cleared"
