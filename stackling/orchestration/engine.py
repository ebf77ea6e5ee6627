"""The stack engine: runs a stack action as steps, each inside the caller's transaction.

`advance(db, runtime, stack_id, budget)` does as much of the stack's pending action as
fits in `budget` seconds and returns whether the action finished. Resource progress lives
in the resource rows (`generation` = the stack action that last handled them), so a step
lost to a crash is simply done again by whichever process claims the action next.

Actions: CREATE, UPDATE, DELETE, ROLLBACK (of a create: delete everything; of an update:
back to the previous definition, restoring replaced resources), SUSPEND, RESUME, CHECK.
Update diffs each resource's new definition against its stored one: unchanged, updated
in place, replaced (new created first, old deleted in the cleanup phase), added, deleted.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import is_deadlock, utcnow
from stackling.common.errors import ApiError
from stackling.observability import logs
from stackling.orchestration import abandon_data, external, hooks, limits
from stackling.orchestration.definition import Definition, Spec
from stackling.orchestration.errors import ResourceFailure, ResourceFailureKeep
from stackling.orchestration.models import Event, Resource, Stack, StackAction
from stackling.orchestration.properties import validate_properties
from stackling.orchestration.resources.base import Resource as Plugin
from stackling.orchestration.resources.base import StackScope

LOG = logging.getLogger(__name__)
TOKEN = "__poll__"  # resource data key: what check_*_complete polls


def context_of(stack: Stack) -> RequestContext:
    c = stack.context or {}
    return RequestContext(user_id=c.get("user_id"), user_name=c.get("user_name"),
                          project_id=stack.project_id, project_name=c.get("project_name"),
                          user_domain_id=c.get("user_domain_id"),
                          project_domain_id=c.get("project_domain_id"),
                          roles=tuple(c.get("roles") or ()))


def stored_context(ctx: RequestContext) -> dict[str, Any]:
    return {"user_id": ctx.user_id, "user_name": ctx.user_name,
            "project_name": ctx.project_name, "user_domain_id": ctx.user_domain_id,
            "project_domain_id": ctx.project_domain_id, "roles": list(ctx.roles)}


def spec_of(stack: Stack) -> Spec:
    return Spec(stack.template, stack.environment or {}, stack.files or {},
                stack.parameters or {})


def _event_values(stack: Stack, name: str, rtype: str, physical_id: str | None,
                  action: str, status: str, reason: str, properties: Any) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "stack_id": stack.id, "resource_name": name,
            "physical_resource_id": physical_id, "resource_type": rtype, "action": action,
            "status": status, "status_reason": reason, "properties": properties or {},
            "created_at": utcnow()}


def add_event(db: Session, stack: Stack, name: str, rtype: str, physical_id: str | None,
              action: str, status: str, reason: str, properties: Any = None) -> None:
    db.add(Event(**_event_values(stack, name, rtype, physical_id, action, status, reason,
                                 properties)))


def stack_event(db: Session, stack: Stack) -> None:
    add_event(db, stack, stack.name, "OS::Heat::Stack", stack.id, stack.action, stack.status,
              stack.status_reason)


def set_stack_state(db: Session, stack: Stack, action: str, status: str, reason: str) -> None:
    stack.action, stack.status, stack.status_reason = action, status, reason
    if action != "CREATE" or status != "IN_PROGRESS":
        stack.updated_at = utcnow() if action not in ("CREATE",) else stack.updated_at
    stack_event(db, stack)


def transient(err: BaseException) -> bool:
    """A lost lock race or a lost connection: the whole transaction is retried (nothing
    of it committed). Any other error is the step's own and fails it."""
    return is_deadlock(err) or (isinstance(err, DBAPIError) and err.connection_invalidated)


def failure_reason(name: str, err: BaseException) -> str:
    if isinstance(err, ResourceFailure):
        kind = "ResourceFailure" if type(err) in (ResourceFailure, ResourceFailureKeep) \
            else type(err).__name__
        return f"{kind}: resources.{name}: {err.message}"
    if isinstance(err, ApiError):
        return f"{err.type_name}: resources.{name}: {err.text}"
    return f"{type(err).__name__}: resources.{name}: {err}"


class Runner:
    """One stack's resources in one transaction: builds plugins, resolves references."""

    def __init__(self, db: Session, runtime: Any, stack: Stack,
                 defn: Definition | None = None) -> None:
        self.db = db
        self.runtime = runtime
        self.stack = stack
        self.ctx = context_of(stack)
        self.defn = defn
        self.rows: list[Resource] = list(db.scalars(
            select(Resource).where(Resource.stack_id == stack.id).order_by(Resource.id)))
        self.scope = StackScope(db, self.ctx, runtime, stack, self._lookup)
        # The resources' events, inserted together by `flush_events` (one statement, not
        # one per event between the handlers' flushes) before the stack's own event and
        # before the step ends: in the same transaction, so in the same order.
        self.events: list[dict[str, Any]] = []

    def current(self, name: str) -> Resource | None:
        return next((r for r in self.rows if r.name == name and r.role == "current"), None)

    def backup(self, name: str) -> Resource | None:
        return next((r for r in self.rows if r.name == name and r.role == "backup"), None)

    def plugin(self, row: Resource, properties: dict[str, Any] | None = None) -> Plugin:
        from stackling.orchestration.resources import resource_class

        cls = resource_class(row.type, self.stack.files)
        if cls is None:
            cls = Plugin
        return cls(self.scope, row, dict(row.properties if properties is None else properties))

    def _lookup(self, name: str) -> Plugin | None:
        row = self.current(name)
        return self.plugin(row) if row is not None else None

    # --- references for the resolver
    def _created(self, row: Resource | None) -> bool:
        return row is not None and row.action not in ("INIT",) and not (
            row.action == "CREATE" and row.status != "COMPLETE") and not (
            row.action == "DELETE" and row.status == "COMPLETE")

    def get_resource(self, name: str) -> Any:
        row = self.current(name)
        if not self._created(row):
            return None
        return self.plugin(row).get_reference_id()  # type: ignore[arg-type]

    def get_attr(self, name: str, attr: str | None) -> Any:
        row = self.current(name)
        if not self._created(row):
            return None
        plugin = self.plugin(row)  # type: ignore[arg-type]
        if attr is None:
            return {a: plugin.get_attribute(a) for a in plugin.attributes_schema}
        return plugin.get_attribute(attr)

    def resolver(self) -> Any:
        assert self.defn is not None
        return self.defn.resolver(self.get_resource, self.get_attr)

    def resolve_properties(self, name: str, strict: bool = True) -> dict[str, Any]:
        assert self.defn is not None
        snippet = self.defn.snippet(name)
        raw = self.resolver().resolve(snippet.get("properties") or {})
        cls = self.defn.classes[name]
        if cls.accepts_any_properties:
            return raw if isinstance(raw, dict) else {}
        return validate_properties(cls.properties_schema, raw,
                                   f"resources.{name}.properties", None, strict)

    def event(self, row: Resource, action: str, status: str, reason: str) -> None:
        row.action, row.status, row.status_reason = action, status, reason
        row.updated_at = utcnow() if action != "CREATE" else row.updated_at
        self.events.append(_event_values(self.stack, row.name, row.type,
                                         row.physical_resource_id, action, status, reason,
                                         row.properties))

    def flush_events(self) -> None:
        if self.events:
            self.db.execute(insert(Event.__table__), self.events)  # Core: one executemany
            for stack_id in {e["stack_id"] for e in self.events}:
                limits.purge_events(self.db, stack_id)
            self.events = []


# ------------------------------------------------------------------ steps
class Step:
    """What one `advance` call does; `deadline` bounds it."""

    def __init__(self, runner: Runner, action: StackAction, deadline: float) -> None:
        self.r = runner
        self.action = action
        self.deadline = deadline
        self.waiting = False  # a resource is being polled

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline


def _run_handler(step: Step, row: Resource, fn: Any, action: str,
                 complete: bool = True, new: bool = False) -> str:
    """Run a handler in a savepoint. Returns COMPLETE (with `complete`, the row and its
    event say so already), IN_PROGRESS (to be polled) or FAILED (the row's state says
    why). A `new` row is added to the session only now, with the handler's outcome (one
    INSERT, not an INSERT before and an UPDATE after): the same transaction commits it
    with whatever the handler made, so no physical id can be lost."""
    db = step.r.db
    before = (row.physical_resource_id, row.data)
    savepoint = db.begin_nested()
    try:
        token = fn()
        if not token and complete:  # flushed with the handler's changes: one UPDATE
            step.r.event(row, action, "COMPLETE", "state changed")
        if new:
            db.add(row)
        db.flush()
        savepoint.commit()
    except ResourceFailureKeep as err:
        if new:
            db.add(row)
        db.flush()
        savepoint.commit()
        step.r.event(row, action, "FAILED", failure_reason(row.name, err))
        return "FAILED"
    except Exception as err:  # noqa: BLE001 - any error fails the resource, once
        if transient(err):
            raise
        savepoint.rollback()
        if not isinstance(err, ResourceFailure | ApiError):
            LOG.exception("resource %s: %s failed", row.name, action)
        if new:  # what the handler recorded was rolled back with it
            row.physical_resource_id, row.data = before
            db.add(row)
        step.r.event(row, action, "FAILED", failure_reason(row.name, err))
        return "FAILED"
    if token:
        row.data = {**(row.data or {}), TOKEN: {"action": action, "token": token}}
        return "IN_PROGRESS"
    return "COMPLETE"


def _poll(step: Step, row: Resource) -> str:
    """A resource IN_PROGRESS: ask its plugin whether it is done yet."""
    poll = (row.data or {}).get(TOKEN) or {}
    plugin = step.r.plugin(row)
    action = poll.get("action", row.action)
    check = {"CREATE": plugin.check_create_complete, "UPDATE": plugin.check_update_complete,
             "DELETE": plugin.check_delete_complete, "ADOPT": plugin.check_create_complete,
             "SUSPEND": plugin.check_suspend_complete,
             "RESUME": plugin.check_resume_complete, "CHECK": plugin.check_check_complete,
             "SNAPSHOT": plugin.check_snapshot_complete}.get(action, lambda t: True)
    try:
        done = check(poll.get("token"))
    except Exception as err:  # noqa: BLE001 - any error fails the resource, once
        if transient(err):
            raise
        row.data = {k: v for k, v in (row.data or {}).items() if k != TOKEN}
        step.r.event(row, action, "FAILED", failure_reason(row.name, err))
        return "FAILED"
    if not done:
        step.waiting = True
        return "IN_PROGRESS"
    row.data = {k: v for k, v in (row.data or {}).items() if k != TOKEN}
    return "COMPLETE"


def _create_resource(step: Step, name: str, replaces: Resource | None = None,
                     paused: Resource | None = None) -> str:
    r = step.r
    assert r.defn is not None
    gen = r.stack.generation
    snippet = r.defn.snippet(name)
    if paused is not None:  # its pre-create hook was cleared
        return _create_row(step, name, paused, new=False)
    row = Resource(uuid=str(uuid.uuid4()), stack_id=r.stack.id, name=name,
                   type=r.defn.types[name], role="current", action="INIT", status="COMPLETE",
                   status_reason="", definition=snippet, properties={},
                   requires=sorted(r.defn.deps[name]), data={},
                   rsrc_metadata=r.resolver().resolve(snippet.get("metadata") or {}),
                   generation=gen, replaces=replaces.id if replaces is not None else None,
                   created_at=utcnow())
    r.rows.append(row)
    return _create_row(step, name, row, new=True)


def _create_row(step: Step, name: str, row: Resource, new: bool) -> str:
    r = step.r
    try:
        row.properties = r.resolve_properties(name)
        plugin = r.plugin(row)
        plugin.validate()
        adopted = external.resolved(r, row.definition or {})
    except ApiError as err:
        if new:
            r.db.add(row)
        r.event(row, "CREATE", "FAILED", failure_reason(name, err))
        return "FAILED"
    if new and row.replaces is None and hooks.gate(
            r.stack, row, r.stack.generation, "pre-create") == "pause":
        r.db.add(row)
        r.event(row, "CREATE", "IN_PROGRESS", hooks.reason("CREATE", "pre-create"))
        step.waiting = True
        return "IN_PROGRESS"
    action, handler = ("ADOPT", lambda: external.adopt(plugin, adopted)) if adopted \
        else ("CREATE", plugin.handle_create)
    if step.action.action == "ADOPT":  # the abandon data of this resource, as upstream
        data = ((step.action.work or {}).get("adopt") or {}).get(name)
        action, handler = "ADOPT", lambda: plugin.handle_adopt(data)
    r.event(row, action, "IN_PROGRESS", "state changed")
    result = _run_handler(step, row, handler, action, new=new)
    if result == "IN_PROGRESS":
        step.waiting = True
    return result


def _delete_resource(step: Step, row: Resource) -> str:
    r = step.r
    gate = hooks.gate(r.stack, row, r.stack.generation, "pre-delete") \
        if row.role == "current" else None
    if gate in ("pause", "wait"):
        if gate == "pause":
            r.event(row, "DELETE", "IN_PROGRESS", hooks.reason("DELETE", "pre-delete"))
        step.waiting = True
        return "IN_PROGRESS"
    if row.action == "DELETE" and row.status == "IN_PROGRESS" and gate != "resume":
        result = _poll(step, row)
    else:
        r.event(row, "DELETE", "IN_PROGRESS", "state changed")
        policy = str((row.definition or {}).get("deletion_policy") or "Delete").lower()
        if policy == "retain" or external.declared(row.definition) or \
                row.physical_resource_id is None and row.action == "INIT":
            result = "COMPLETE"
        else:
            # no COMPLETE written to a row about to be deleted (its event is added below)
            result = _run_handler(step, row, r.plugin(row).handle_delete, "DELETE",
                                  complete=False)
    if result == "COMPLETE":
        r.event(row, "DELETE", "COMPLETE", "state changed")
        r.rows.remove(row)
        r.db.delete(row)
        r.db.flush()
    return result


def _done(row: Resource, gen: int) -> bool:
    return row.generation == gen and row.status == "COMPLETE"


def _failed(row: Resource | None, gen: int) -> bool:
    return row is not None and row.generation == gen and row.status == "FAILED"


def _delete_all(step: Step, rows: list[Resource]) -> str:
    """Delete `rows` in reverse dependency order. COMPLETE, IN_PROGRESS or FAILED."""
    pending = list(rows)
    while pending:
        if step.out_of_time():
            return "IN_PROGRESS"
        ready = [r for r in pending if not any(
            r.name in (x.requires or []) for x in pending if x.name != r.name)]
        if not ready:
            ready = pending[:1]
        progressed = False
        for row in ready:
            if row.status == "IN_PROGRESS" and row.action == "DELETE" and \
                    hooks.mark(row) is None:
                result = _poll(step, row)
                if result == "COMPLETE":
                    step.r.event(row, "DELETE", "COMPLETE", "state changed")
                    step.r.rows.remove(row)
                    step.r.db.delete(row)
            elif _failed(row, step.r.stack.generation) and row.action == "DELETE":
                return "FAILED"
            else:
                row.generation = step.r.stack.generation
                result = _delete_resource(step, row)
            if result == "FAILED":
                return "FAILED"
            if result == "COMPLETE":
                pending.remove(row)
                progressed = True
        if not progressed:
            return "IN_PROGRESS"
    return "COMPLETE"


def _forward(step: Step, target: Definition, rollback: bool) -> str:
    """Bring every resource of `target` to its definition, in dependency order:
    create (absent), restore (rollback of a replacement), update in place, replace or
    leave unchanged. COMPLETE, IN_PROGRESS (more to do) or FAILED."""
    r = step.r
    gen = r.stack.generation
    blocked: set[str] = set()
    for name in target.order:
        if step.out_of_time():
            return "IN_PROGRESS"
        if any(d in blocked for d in target.deps[name]):
            blocked.add(name)
            continue
        row = r.current(name)
        if row is not None and _done(row, gen):
            continue
        if _failed(row, gen):
            return "FAILED"
        if row is not None and row.status == "IN_PROGRESS" and row.generation == gen:
            hook = hooks.held(row, gen)
            if hook is not None:
                if hook == "wait":
                    step.waiting = True
                    result = "IN_PROGRESS"
                elif hook == "pre-create":
                    result = _create_resource(step, name, paused=row)
                else:
                    result = _update_resource(step, row, name, target)
                if result == "FAILED":
                    return "FAILED"
                if result == "IN_PROGRESS":
                    blocked.add(name)
                continue
            result = _poll(step, row)
            if result == "COMPLETE":
                r.event(row, row.action, "COMPLETE", "state changed")
                continue
            if result == "FAILED":
                return "FAILED"
            blocked.add(name)
            continue
        old = r.backup(name)
        if rollback and old is not None:
            # Undo a replacement: the new resource goes, the old one comes back.
            if row is not None:
                row.role = "discard"
                result = _delete_resource(step, row)
                if result != "COMPLETE":
                    if result == "IN_PROGRESS":
                        blocked.add(name)
                        continue
                    return "FAILED"
            old.role = "current"
            old.generation = gen
            try:
                r.plugin(old).restore_prev_rsrc()
            except (ResourceFailure, ApiError) as err:
                r.event(old, "ROLLBACK", "FAILED", failure_reason(name, err))
                return "FAILED"
            r.db.flush()
            continue
        if row is None:
            result = _create_resource(step, name)
        else:
            result = _update_resource(step, row, name, target)
        if result == "FAILED":
            return "FAILED"
        if result == "IN_PROGRESS":
            blocked.add(name)
    return "IN_PROGRESS" if blocked else "COMPLETE"


def diff(runner: Runner, row: Resource, name: str, target: Definition
         ) -> tuple[str, dict[str, Any], set[str]]:
    """How `row` must change to match the target's `name`: unchanged | updated |
    replaced, the new properties, and the changed property names."""
    new_props = runner.resolve_properties(name)
    snippet = target.snippet(name)
    if row.type != target.types[name]:
        return "replaced", new_props, set(new_props)
    if row.action == "INIT" or (row.status == "FAILED" and row.action in ("CREATE", "ADOPT")):
        return "replaced", new_props, set(new_props)
    if external.check_update(row, external.resolved(runner, snippet)):
        return "unchanged", new_props, set()  # adopted: the object is not Heat's to change
    old_props = row.properties or {}
    changed = {k for k in set(new_props) | set(old_props)
               if new_props.get(k) != old_props.get(k)}
    meta_changed = (snippet.get("metadata") or {}) != ((row.definition or {}).get(
        "metadata") or {})
    if not changed:
        return ("updated" if meta_changed else "unchanged"), new_props, changed
    plugin = runner.plugin(row, new_props)
    if plugin.needs_replace(old_props, changed):
        return "replaced", new_props, changed
    return "updated", new_props, changed


def _update_resource(step: Step, row: Resource, name: str, target: Definition) -> str:
    r = step.r
    gen = r.stack.generation
    try:
        kind, new_props, changed = diff(r, row, name, target)
    except ApiError as err:
        r.event(row, "UPDATE", "FAILED", failure_reason(name, err))
        row.generation = gen
        return "FAILED"
    snippet = target.snippet(name)
    if kind == "unchanged":
        row.generation = gen
        row.definition = snippet
        row.requires = sorted(target.deps[name])
        return "COMPLETE"
    if hooks.gate(r.stack, row, gen, "pre-update") == "pause":
        row.generation = gen
        r.event(row, "UPDATE", "IN_PROGRESS", hooks.reason("UPDATE", "pre-update"))
        step.waiting = True
        return "IN_PROGRESS"
    if kind == "replaced":
        old_plugin = r.plugin(row)
        row.role = "backup"
        try:
            if row.physical_resource_id is not None:
                old_plugin.prepare_for_replace()
        except (ResourceFailure, ApiError) as err:
            row.role = "current"
            row.generation = gen
            r.event(row, "UPDATE", "FAILED", failure_reason(name, err))
            return "FAILED"
        r.db.flush()
        return _create_resource(step, name, replaces=row)
    old_props = dict(row.properties or {})
    row.properties = new_props
    row.definition = snippet
    row.requires = sorted(target.deps[name])
    row.rsrc_metadata = r.resolver().resolve(snippet.get("metadata") or {})
    row.generation = gen
    plugin = r.plugin(row, new_props)
    r.event(row, "UPDATE", "IN_PROGRESS", "state changed")
    return _run_handler(step, row, lambda: plugin.handle_update(old_props, changed),
                        "UPDATE")


def _cleanup(step: Step, target: Definition) -> str:
    """After an update: delete the replaced resources and those the target lacks."""
    r = step.r
    keep = set(target.active)
    doomed = [row for row in r.rows if row.role in ("backup", "discard")
              or (row.role == "current" and row.name not in keep)]
    return _delete_all(step, doomed)


# ------------------------------------------------------------------ the action driver
def advance(db: Session, runtime: Any, stack_id: str, budget: float = 0.1) -> tuple[bool, bool]:
    """Run the stack's pending action for about `budget` seconds; (finished, waiting)."""
    action = db.get(StackAction, stack_id)
    stack = db.get(Stack, stack_id)
    if action is None or stack is None:
        return True, False
    runner = Runner(db, runtime, stack)
    step = Step(runner, action, time.monotonic() + budget)
    work = dict(action.work or {})
    kind = action.action
    if kind in FORWARD and utcnow() > action.started_at + timeout_of(stack):
        for row in runner.rows:  # as upstream's aborted tasks: no resource left waiting
            if row.status == "IN_PROGRESS":
                row.data = {k: v for k, v in (row.data or {}).items() if k != TOKEN}
                runner.event(row, row.action, "FAILED", f"{row.action} aborted (Timed out)")
        runner.flush_events()
        return _fail(db, runner, action, kind, "Timed out"), False
    try:
        if kind in FORWARD or (kind == "ROLLBACK" and work.get("target")):
            if kind == "ROLLBACK":
                spec = Spec.from_dict(work["target"])
            else:
                spec = spec_of(stack)
            runner.defn = Definition(spec, stack_name=stack.name, stack_id=stack.id,
                                     project_id=stack.project_id)
            result = _forward(step, runner.defn, rollback=kind == "ROLLBACK")
            if result == "COMPLETE":
                result = _cleanup(step, runner.defn)
        elif kind in ("DELETE",) or kind == "ROLLBACK":
            result = _delete_all(step, list(runner.rows))
        else:
            result = _simple(step, kind)
    except ApiError as err:
        LOG.info("stack %s %s failed: %s", stack.id, kind, err.text)
        runner.flush_events()
        return _fail(db, runner, action, kind, f"{err.type_name}: {err.text}"), False
    runner.flush_events()
    if result == "IN_PROGRESS":
        return False, step.waiting
    if result == "FAILED":
        failed = next((row for row in runner.rows if row.status == "FAILED"
                       and row.generation == stack.generation), None)
        reason = (f"Resource {failed.action} failed: {failed.status_reason}"
                  if failed is not None else f"{kind} failed")
        return _fail(db, runner, action, kind, reason), False
    _complete(db, runner, action, kind)
    return True, False


# Actions that bring the resources to the stack's definition (RESTORE: a snapshot's;
# ADOPT: creating each resource from its abandon data).
FORWARD = ("CREATE", "UPDATE", "RESTORE", "ADOPT")


def timeout_of(stack: Stack) -> dt.timedelta:
    """The stack's `timeout_mins`, else upstream's `stack_action_timeout` (a setting)."""
    if stack.timeout_mins:
        return dt.timedelta(minutes=stack.timeout_mins)
    return dt.timedelta(seconds=limits.STACK_ACTION_TIMEOUT)


def _complete(db: Session, runner: Runner, action: StackAction, kind: str) -> None:
    stack = runner.stack
    if kind == "DELETE":
        stack.deleted_at = utcnow()
        stack.live_name = None
        abandon_data.delete_snapshots(db, stack)
    reason = f"Stack {kind} completed successfully"
    if kind == "SNAPSHOT":  # saved before the stack's state, as upstream
        abandon_data.finish_snapshot(db, stack, action.work or {}, "COMPLETE", reason)
    set_stack_state(db, stack, kind, "COMPLETE", reason)
    db.delete(action)


def _fail(db: Session, runner: Runner, action: StackAction, kind: str, reason: str) -> bool:
    """Record the failure; start the rollback when the stack allows it."""
    stack = runner.stack
    if kind == "SNAPSHOT":
        abandon_data.finish_snapshot(db, stack, action.work or {}, "FAILED", reason)
    set_stack_state(db, stack, kind, "FAILED", reason)
    if kind in ("CREATE", "UPDATE") and not stack.disable_rollback:
        work: dict[str, Any] = {}
        if kind == "UPDATE":
            work["target"] = (action.work or {}).get("previous")
            prev = Spec.from_dict(work["target"])
            stack.template, stack.environment = prev.template, prev.environment
            stack.files, stack.parameters = prev.files, prev.parameters
        stack.generation += 1
        action.action, action.work = "ROLLBACK", work
        action.started_at = utcnow()
        set_stack_state(db, stack, "ROLLBACK", "IN_PROGRESS", "Stack ROLLBACK started")
        return False
    db.delete(action)
    return True


def fail_action(db: Session, runtime: Any, stack_id: str, err: BaseException) -> bool:
    """A step raised (its work already rolled back): the action fails with the error as
    its reason, once (a rollback starts when the stack allows it); True when it ended."""
    action = db.get(StackAction, stack_id)
    stack = db.get(Stack, stack_id)
    if action is None or stack is None:
        return True
    reason = f"{err.type_name}: {err.text}" if isinstance(err, ApiError) else (
        f"{type(err).__name__}: {err}")
    try:
        with db.begin_nested():
            return _fail(db, Runner(db, runtime, stack), action, action.action, reason)
    except Exception as again:  # noqa: BLE001 - the last resort: end it without a rollback
        if transient(again):
            raise
        LOG.exception("stack %s: failing the action failed", stack_id)
        set_stack_state(db, stack, action.action, "FAILED", reason)
        db.delete(action)
        return True


def _simple(step: Step, kind: str) -> str:
    """SUSPEND (reverse order), RESUME, CHECK and SNAPSHOT (forward order) of every
    resource, one after another (a handler may return a token: it is polled)."""
    r = step.r
    gen = r.stack.generation
    rows = [row for row in r.rows if row.role == "current"]
    order = sorted(rows, key=lambda row: row.id, reverse=kind == "SUSPEND")
    for row in order:
        if row.generation == gen:
            if row.status == "FAILED":
                return "FAILED"
            if row.status == "IN_PROGRESS":
                result = _poll(step, row)
                if result == "COMPLETE":
                    r.event(row, kind, "COMPLETE", "state changed")
                    continue
                return result
            continue
        if step.out_of_time():
            return "IN_PROGRESS"
        row.generation = gen
        plugin = r.plugin(row)
        fn = {"SUSPEND": plugin.handle_suspend, "RESUME": plugin.handle_resume,
              "CHECK": plugin.handle_check, "SNAPSHOT": plugin.handle_snapshot}[kind]
        r.event(row, kind, "IN_PROGRESS", "state changed")
        result = _run_handler(step, row, fn, kind)
        if result == "FAILED":
            return "FAILED"
        if result == "IN_PROGRESS":
            step.waiting = True
            return "IN_PROGRESS"
    return "COMPLETE"


def begin(db: Session, stack: Stack, kind: str, work: dict[str, Any] | None = None) -> None:
    """Start an action on the stack (the caller checked none is running): the stack goes
    `<kind>_IN_PROGRESS` and a worker will run it after the commit."""
    stack.generation += 1
    set_stack_state(db, stack, kind, "IN_PROGRESS", f"Stack {kind} started")
    work = dict(work or {})
    request_id = logs.current_request_id()
    if request_id:  # the worker tags the action's log lines with the requester's id
        work["request_id"] = request_id
    try:
        with db.begin_nested():
            db.add(StackAction(stack_id=stack.id, action=kind, work=work, owner=None,
                               lease_until=None, started_at=utcnow()))
            db.flush()
    except IntegrityError:
        # Another process began an action on this stack after our check (one action row
        # per stack): that request won, this one is Heat's 409.
        from stackling.orchestration.errors import ActionInProgress

        running = db.scalar(select(StackAction.action).where(StackAction.stack_id == stack.id))
        raise ActionInProgress(stack_name=stack.name, action=running or kind) from None


# `heat_stack_action.owner` of an action its owner resource drives (a nested stack's, or
# a remote stack's the resource started): no worker claims it (the lease never ends);
# the resource's own steps advance it (`drive`, `poll_driven`).
DRIVEN = "driven-by:"
_NEVER = dt.datetime(9999, 1, 1, tzinfo=dt.UTC)


def begin_driven(db: Session, stack: Stack, kind: str, driver: str,
                 work: dict[str, Any] | None = None) -> None:
    """Start an action on `stack` that the resource `driver` (its id) runs itself."""
    begin(db, stack, kind, work)
    take_over(db, stack.id, driver)


def take_over(db: Session, stack_id: str, driver: str) -> None:
    """The stack's pending action becomes driven by `driver` (a worker that held it
    stops at its next lease renewal)."""
    action = db.get(StackAction, stack_id)
    if action is not None:
        action.owner, action.lease_until = DRIVEN + driver, _NEVER


def drive(db: Session, runtime: Any, stack_id: str) -> bool:
    """Run a driven action in this transaction until it ends (True) or must wait for
    something outside it (a hook, a signal, a poll): False, the rest is `poll_driven`'s."""
    while True:
        finished, waiting = advance(db, runtime, stack_id, budget=3600)
        if finished:
            return True
        if waiting:
            return False


def poll_driven(db: Session, runtime: Any, stack_id: str, driver: str,
                budget: float = 0.1) -> bool:
    """One step of a driven action, if `driver` still drives it (a delete of the stack
    itself hands it to the workers); True when no action is left on the stack."""
    action = db.get(StackAction, stack_id)
    if action is None:
        return True
    if action.owner == DRIVEN + driver:
        finished, _ = advance(db, runtime, stack_id, budget=budget)
        return finished
    return False


def run_inline(db: Session, runtime: Any, stack_id: str) -> None:
    """Run a stack's action to the end in this transaction (nested stacks, tests)."""
    while True:
        finished, waiting = advance(db, runtime, stack_id, budget=3600)
        if finished:
            return
        if waiting:
            time.sleep(0.05)


def purge_actions(db: Session, stack_id: str) -> None:
    db.execute(delete(StackAction).where(StackAction.stack_id == stack_id))



def stack_outputs(db: Session, runtime: Any, stack: Stack) -> list[dict[str, Any]]:
    """The stack's outputs: `output_key`, `description` and `output_value` (None with an
    `output_error` when its value cannot be resolved)."""
    defn = Definition(spec_of(stack), stack_name=stack.name, stack_id=stack.id,
                      project_id=stack.project_id, strict=False)
    resolver = Runner(db, runtime, stack, defn).resolver()
    out = []
    for key, output in defn.active_outputs(resolver).items():
        item: dict[str, Any] = {"output_key": key,
                                "description": output.get("description", "No description given")}
        try:
            item["output_value"] = resolver.resolve(output.get("value"))
        except ApiError as err:
            item["output_value"] = None
            item["output_error"] = err.text
        out.append(item)
    return out
