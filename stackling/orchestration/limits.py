"""Heat's engine limits, with upstream's defaults, and the bounds on template evaluation.

Upstream's `heat.conf` options and their defaults: `max_template_size` 524288 bytes,
`max_resources_per_stack` 1000 (all resources of a stack's tree), `max_nested_stack_depth`
5, `max_stacks_per_tenant` 512. Exceeding one is Heat's `RequestLimitExceeded`, a 400.
`max_events_per_stack` 1000: older events are purged; `stack_action_timeout` 3600 s: a
create or update of a stack without `timeout_mins` fails "Timed out" after it. All but the
first are settings
here (`orchestration:` in the configuration file, `STACKLING_ORCHESTRATION__*` in the
environment).

Upstream has no bound on what a template's functions may produce (`repeat` over three
lists of 300 is 27 million items) or on a YAML document's aliases; here both are bounded
(deviation: stricter), so that no request or stack action can exhaust memory or time.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.orm import Session

from stackling.common.limits import check_text
from stackling.orchestration.errors import HeatError, StackValidationFailed
from stackling.orchestration.models import Event, Resource, Stack

MAX_TEMPLATE_SIZE = 524288
MAX_RESOURCES_PER_STACK = 1000
MAX_NESTED_STACK_DEPTH = 5
MAX_STACKS_PER_TENANT = 512
MAX_EVENTS_PER_STACK = 1000
STACK_ACTION_TIMEOUT = 3600  # seconds: a create or update without `timeout_mins`
MAX_SNAPSHOTS_PER_STACK = 32  # a non-admin's; -1: no limit
ENABLE_STACK_ABANDON = True  # upstream's default is off (deviation: see the README)
ENABLE_STACK_ADOPT = True

# A parsed template or environment: nesting depth (as HttpSettings.max_json_depth for
# bodies) and nodes counted with repetition, so YAML aliases cannot multiply the work
# of every later walk ("billion laughs").
MAX_DOCUMENT_DEPTH = 64
MAX_DOCUMENT_NODES = 1_000_000
# One function's result (characters of a string, items of a list) and everything one
# resolution produces, counted the same way.
MAX_VALUE_SIZE = 1 << 20
MAX_RESOLUTION_WORK = 1 << 24

RESOURCES_EXCEEDED = "Maximum resources per stack exceeded."


def configure(settings: Any) -> None:
    """The process's limits from its settings (`orchestration:` in the configuration)."""
    global MAX_STACKS_PER_TENANT, MAX_RESOURCES_PER_STACK, MAX_NESTED_STACK_DEPTH
    global MAX_EVENTS_PER_STACK, STACK_ACTION_TIMEOUT, MAX_SNAPSHOTS_PER_STACK
    global ENABLE_STACK_ABANDON, ENABLE_STACK_ADOPT
    MAX_SNAPSHOTS_PER_STACK = getattr(settings, "max_snapshots_per_stack", 32)
    ENABLE_STACK_ABANDON = getattr(settings, "enable_stack_abandon", True)
    ENABLE_STACK_ADOPT = getattr(settings, "enable_stack_adopt", True)
    MAX_STACKS_PER_TENANT = settings.max_stacks_per_tenant
    STACK_ACTION_TIMEOUT = settings.stack_action_timeout
    MAX_EVENTS_PER_STACK = settings.max_events_per_stack
    MAX_RESOURCES_PER_STACK = settings.max_resources_per_stack
    MAX_NESTED_STACK_DEPTH = settings.max_nested_stack_depth


class RequestLimitExceeded(HeatError):
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(f"Request limit exceeded: {message}")


def depth_message() -> str:
    return f"Recursion depth exceeds {MAX_NESTED_STACK_DEPTH}."


def check_template_size(template: str | dict[str, Any]) -> None:
    """Text is measured as sent; a JSON object as its serialized text (upstream measures
    the object's text too), counted chunk by chunk (no copy of the whole text)."""
    if isinstance(template, str):
        size = len(template.encode())
    else:
        size = sum(len(chunk.encode()) for chunk in
                   json.JSONEncoder(ensure_ascii=False).iterencode(template))
    if size > MAX_TEMPLATE_SIZE:
        raise RequestLimitExceeded(message=f"Template size ({size} bytes) exceeds maximum "
                                           f"allowed size ({MAX_TEMPLATE_SIZE} bytes).")


def check_document(doc: Any, what: str) -> None:
    """A parsed document nests at most MAX_DOCUMENT_DEPTH deep and has at most
    MAX_DOCUMENT_NODES nodes, an alias counted at every use (iterative: no recursion)."""
    nodes = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_DOCUMENT_NODES:
            raise RequestLimitExceeded(message=f"The {what} has more than "
                                               f"{MAX_DOCUMENT_NODES} values.")
        if isinstance(value, dict):
            children: Any = value.values()
            for key in value:
                if isinstance(key, str):
                    check_text(key, f"the {what}")
        elif isinstance(value, list):
            children = value
        else:
            if isinstance(value, str):
                # YAML's and JSON's escapes make NULs and lone surrogates the body never had
                check_text(value, f"the {what}")
            continue
        if depth >= MAX_DOCUMENT_DEPTH and children:
            raise RequestLimitExceeded(message=f"The {what} nests deeper than "
                                               f"{MAX_DOCUMENT_DEPTH} levels.")
        stack.extend((child, depth + 1) for child in children)


_EVENT_COUNT: Any = None
_NTH_NEWEST: Any = None


def purge_events(db: Session, stack_id: str) -> None:
    """Keeps a stack's newest MAX_EVENTS_PER_STACK events, as upstream's event purge."""
    global _EVENT_COUNT, _NTH_NEWEST
    if MAX_EVENTS_PER_STACK <= 0:
        return
    if _EVENT_COUNT is None:  # every step asks: built once
        _EVENT_COUNT = select(func.count()).select_from(Event).where(
            Event.stack_id == bindparam("stack"))
        _NTH_NEWEST = select(Event.seq).where(Event.stack_id == bindparam("stack")).order_by(
            Event.seq.desc()).offset(bindparam("keep")).limit(1)
    if (db.scalar(_EVENT_COUNT, {"stack": stack_id}) or 0) <= MAX_EVENTS_PER_STACK:
        return
    oldest_kept = db.scalar(_NTH_NEWEST, {"stack": stack_id, "keep": MAX_EVENTS_PER_STACK - 1})
    db.execute(delete(Event).where(Event.stack_id == stack_id, Event.seq < oldest_kept)
               .execution_options(synchronize_session=False))


def check_stack_count(db: Session, project_id: str) -> None:
    """Upstream's max_stacks_per_tenant: top-level stacks not deleted. The caller holds
    the project's lock row, so concurrent creates count one after another."""
    count = db.scalar(select(func.count()).select_from(Stack).where(
        Stack.project_id == project_id, Stack.parent_id.is_(None),
        Stack.deleted_at.is_(None)))
    if (count or 0) >= MAX_STACKS_PER_TENANT:
        raise RequestLimitExceeded(message=f"You have reached the maximum stacks per "
                                           f"tenant, {MAX_STACKS_PER_TENANT}. Please delete "
                                           f"some stacks.")


class Budget:
    """What one resolution may produce; functions charge it before they build."""

    __slots__ = ("spent",)

    def __init__(self) -> None:
        self.spent = 0

    def charge(self, size: int, fn: str) -> None:
        if size > MAX_VALUE_SIZE:
            raise StackValidationFailed(f'The result of "{fn}" would have {size} '
                                        f"characters or items: the limit is "
                                        f"{MAX_VALUE_SIZE}.")
        self.work(size)

    def work(self, size: int) -> None:
        """Work without a single large result (comparisons, copies of a template)."""
        self.spent += size
        if self.spent > MAX_RESOLUTION_WORK:
            raise StackValidationFailed(f"The template's functions would produce more than "
                                        f"{MAX_RESOLUTION_WORK} characters or items.")


def nodes(value: Any) -> int:
    """Values in a snippet (every list item and map value, the snippet itself)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


# ------------------------------------------------------------------ stack trees
def ancestry(db: Session, stack: Stack) -> tuple[Stack, int]:
    """The root of `stack`'s tree and how deep `stack` is below it (0: top-level)."""
    root, depth = stack, 0
    while root.parent_id is not None:
        root, depth = db.get(Stack, root.parent_id), depth + 1
    return root, depth


def resource_count(db: Session, stack_ids: list[str]) -> int:
    """Current resources of these stacks."""
    return db.scalar(select(func.count()).select_from(Resource).where(
        Resource.stack_id.in_(stack_ids), Resource.role == "current")) or 0


def tree_resources(db: Session, root: Stack) -> int:
    """Current resources in the tree below `root`, `root`'s own included."""
    ids, level = [root.id], [root.id]
    for _ in range(MAX_NESTED_STACK_DEPTH + 1):
        level = list(db.scalars(select(Stack.id).where(Stack.parent_id.in_(level),
                                                       Stack.deleted_at.is_(None))))
        if not level:
            break
        ids += level
    return resource_count(db, ids)
