"""Stack logic: create, look up, list, update (and preview), delete, actions, outputs.

Plain functions over a session and a request context; the API renders their results.
Validation is synchronous (a 400 and nothing stored); the actions themselves run in the
workers after the request commits.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError
from stackling.common.quota_lock import lock_project
from stackling.orchestration import abandon_data, engine, environment, limits
from stackling.orchestration.definition import Definition, Spec, check_name
from stackling.orchestration.errors import (
    ActionInProgress,
    BadRequest,
    EntityNotFound,
    StackExists,
    StackValidationFailed,
)
from stackling.orchestration.models import Event, QuotaLock, Resource, Stack, StackAction
from stackling.orchestration.nested_stacks import TreeCount, nested_type
from stackling.orchestration.parameters import check_immutable
from stackling.orchestration.properties import UNKNOWN, validate_properties
from stackling.orchestration.resources.base import StackScope
from stackling.orchestration.template import parse_document

UUID_LEN = 36


def _is_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


# ------------------------------------------------------------------ lookup
def lookup(db: Session, ctx: RequestContext, name_or_id: str) -> Stack:
    """By id (deleted ones too) or by live name, in the caller's project."""
    stack = None
    if _is_uuid(name_or_id):
        stack = db.get(Stack, name_or_id)
        if stack is not None and stack.project_id != ctx.project_id:
            stack = None
    if stack is None:
        stack = db.scalars(select(Stack).where(
            Stack.project_id == ctx.project_id, Stack.live_name == name_or_id)).first()
    if stack is None:
        raise EntityNotFound(entity="Stack", name=name_or_id)
    return stack


def get_stack(db: Session, ctx: RequestContext, name: str, stack_id: str,
              any_project: bool = False) -> Stack:
    """`any_project`: an admin's read, of any project's stack (as Heat's stack_get)."""
    stack = db.get(Stack, stack_id)
    if stack is None or (stack.project_id != ctx.project_id and not any_project) \
            or stack.name != name:
        raise EntityNotFound(entity="Stack", name=name)
    return stack


# ------------------------------------------------------------------ request bodies
def spec_from_body(body: dict[str, Any], base: Spec | None = None) -> tuple[Spec, list[str]]:
    """The definition a create/update body asks for; with `base` (PATCH) the omitted
    parts are the stack's current ones. Also returns `clear_parameters`."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    files = body.get("files")
    if files is not None and not isinstance(files, dict):
        raise BadRequest("files must be a map")
    if base is not None and files is not None:
        files = {**base.files, **files}
    files = files if files is not None else (base.files if base is not None else {})
    if "template" in body and body["template"] not in (None, ""):
        template = parse_document(body["template"])
    elif body.get("template_url"):
        raise BadRequest("template_url is not supported: send the template itself")
    elif base is not None:
        template = base.template
    else:
        raise BadRequest("No template specified")
    env_given = "environment" in body or body.get("environment_files")
    env = environment.build(body.get("environment"), files, body.get("environment_files"))
    if base is not None:
        env = environment.merge(base.environment, env) if env_given else base.environment
    params = body.get("parameters") or {}
    if not isinstance(params, dict):
        raise BadRequest("parameters must be a map")
    clear = body.get("clear_parameters") or []
    if isinstance(clear, str):
        clear = [clear]
    if base is not None:
        params = {**{k: v for k, v in base.parameters.items() if k not in clear}, **params}
    return Spec(template, env, files, params), list(clear)


def validate_spec(db: Session, ctx: RequestContext, runtime: Any, spec: Spec, *,
                  stack_name: str, stack_id: str, strict: bool = True) -> Definition:
    """Everything that can be checked before the run: structure, parameters, types,
    properties (references unknown) and custom constraints."""
    from stackling.orchestration import constraints

    checker = constraints.checker(db, ctx)
    defn = Definition(spec, stack_name=stack_name, stack_id=stack_id,
                      project_id=ctx.project_id or "", checker=checker, strict=strict)
    defn.tmpl.validate_structure()
    if len(defn.tmpl.resources) > limits.MAX_RESOURCES_PER_STACK:
        raise limits.RequestLimitExceeded(message=limits.RESOURCES_EXCEEDED)
    resolver = defn.resolver(lambda n: UNKNOWN, lambda n, a: UNKNOWN)
    tree = TreeCount(spec.environment, spec.files)
    fake_stack = Stack(id=stack_id, name=stack_name, project_id=ctx.project_id or "",
                       files=spec.files, environment=spec.environment)
    scope = StackScope(db, ctx, runtime, fake_stack, lambda n: None)
    for name in defn.active:
        snippet = defn.snippet(name)
        props = resolver.resolve(snippet.get("properties") or {})
        resolver.resolve(snippet.get("metadata") or {})
        cls = defn.classes[name]
        path = f"resources.{name}.properties"
        if cls.accepts_any_properties:
            values = props if isinstance(props, dict) else {}
        else:
            values = validate_properties(cls.properties_schema, props, path, checker)
        row = Resource(uuid=str(uuid.uuid4()), name=name, type=defn.types[name], data={},
                       properties=values)
        cls(scope, row, values).validate()
        tree.add(defn.types[name], values, name)
    for name, output in defn.tmpl.outputs.items():
        try:
            resolver.resolve(output.get("value"))
        except ApiError as err:
            if "Referenced Attribute" not in err.text:
                raise StackValidationFailed(f"Output {name}: {err.text}") from None
    _check_attributes(defn)
    return defn


def _check_attributes(defn: Definition) -> None:
    """A `get_attr` naming an attribute its resource type lacks is a 400."""
    from stackling.orchestration.errors import InvalidTemplateAttribute

    def walk(v: Any) -> None:
        fn = defn.tmpl.is_function(v)
        if fn == "get_attr" and isinstance(v[fn], list) and len(v[fn]) >= 2 and isinstance(
                v[fn][0], str) and isinstance(v[fn][1], str):
            cls = defn.classes.get(v[fn][0])
            if cls is not None and not cls.accepts_any_properties and v[fn][1] != "show" \
                    and v[fn][1] not in cls.attributes_schema and not getattr(
                    cls, "dynamic_attributes", False):
                raise InvalidTemplateAttribute(resource=v[fn][0], key=v[fn][1])
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(defn.tmpl.resources)
    walk(defn.tmpl.outputs)


def _tags(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        return [t for t in value.split(",") if t]
    if isinstance(value, list):
        return [str(t) for t in value]
    raise BadRequest("tags must be a list or a comma-separated string")


def _bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    from stackling.orchestration.properties import to_bool

    try:
        return to_bool(value)
    except ValueError as err:
        raise BadRequest(str(err)) from None


def _timeout(value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        minutes = int(value)
    except (TypeError, ValueError, OverflowError):
        raise BadRequest(f"Invalid timeout value {value}") from None
    if not 0 <= minutes <= 2**31 - 1:  # an INTEGER column on every database
        raise BadRequest(f"Invalid timeout value {value}")
    return minutes


# ------------------------------------------------------------------ create
def create_stack(db: Session, ctx: RequestContext, runtime: Any, body: dict[str, Any],
                 adopt: dict[str, Any] | None = None) -> Stack:
    """`adopt`: the resources' abandon data of a stack adopt (`abandon.adopt_body`)."""
    name = body.get("stack_name") if isinstance(body, dict) else None
    if name is None:
        raise BadRequest("No stack name specified")
    check_name(name)
    if body.get("adopt_stack_data") is not None:
        raise BadRequest("adopt_stack_data is read by abandon.adopt_body")
    spec, _ = spec_from_body(body)
    stack_id = str(uuid.uuid4())
    validate_spec(db, ctx, runtime, spec, stack_name=name, stack_id=stack_id)
    if db.scalars(select(Stack.id).where(Stack.project_id == ctx.project_id,
                                         Stack.live_name == name)).first():
        raise StackExists(stack_name=name)
    lock_project(db, QuotaLock, ctx.project_id or "")
    limits.check_stack_count(db, ctx.project_id or "")
    stack = Stack(id=stack_id, name=name, live_name=name, project_id=ctx.project_id,
                  user_id=ctx.user_id, context=engine.stored_context(ctx),
                  template=spec.template, environment=spec.environment, files=spec.files,
                  parameters=spec.parameters, tags=_tags(body.get("tags")),
                  disable_rollback=_bool(body.get("disable_rollback"), True),
                  timeout_mins=_timeout(body.get("timeout_mins")), generation=0,
                  action="CREATE", status="IN_PROGRESS", status_reason="")
    try:
        with db.begin_nested():
            db.add(stack)
            db.flush()
    except IntegrityError:
        raise StackExists(stack_name=name) from None
    if adopt is not None:  # each resource takes its object from the abandon data
        engine.begin(db, stack, "ADOPT", {"adopt": adopt})
    else:
        engine.begin(db, stack, "CREATE")
    return stack


def preview_create(db: Session, ctx: RequestContext, runtime: Any, body: dict[str, Any]
                   ) -> dict[str, Any]:
    name = body.get("stack_name") if isinstance(body, dict) else None
    if name is None:
        raise BadRequest("No stack name specified")
    check_name(name)
    spec, _ = spec_from_body(body)
    stack_id = "None"
    defn = validate_spec(db, ctx, runtime, spec, stack_name=name, stack_id=stack_id)
    from stackling.orchestration.preview import preview_resources

    resources = preview_resources(db, ctx, runtime, defn, name)
    return {"stack_name": name, "id": stack_id, "description": defn.tmpl.description,
            "template_description": defn.tmpl.description,
            "parameters": _display_params(defn), "resources": resources,
            "disable_rollback": _bool(body.get("disable_rollback"), True),
            "timeout_mins": _timeout(body.get("timeout_mins")),
            "stack_owner": ctx.user_name, "links": [], "capabilities": [],
            "notification_topics": [], "tags": _tags(body.get("tags")) or None,
            "creation_time": None, "updated_time": None, "deletion_time": None,
            "parent": None, "stack_user_project_id": ctx.project_id}


def _display_params(defn: Definition) -> dict[str, str]:
    from stackling.orchestration.parameters import display

    return {**display(defn.tmpl.parameters, defn.params), **defn.pseudo}


# ------------------------------------------------------------------ update
def lock_stack(db: Session, stack: Stack) -> None:
    """Hold the stack's row until the request ends, re-read: requests that begin actions
    on one stack run one after another, each seeing the last one's outcome (an action
    finished inside its own request leaves no action row for the next one to trip on).
    SQLite's write transactions are exclusive already."""
    db.scalars(select(Stack).where(Stack.id == stack.id).with_for_update()
               .execution_options(populate_existing=True)).one()  # rows refresh as read
    if stack.deleted_at is not None:
        raise EntityNotFound(entity="Stack", name=stack.name)


def _check_idle(db: Session, stack: Stack) -> None:
    if db.get(StackAction, stack.id) is not None or stack.status == "IN_PROGRESS":
        raise ActionInProgress(stack_name=stack.name, action=stack.action)


def _update_target(db: Session, ctx: RequestContext, runtime: Any, stack: Stack,
                   body: dict[str, Any], patch: bool) -> tuple[Spec, Definition]:
    if stack.deleted_at is not None or stack.action == "DELETE" and stack.status == "COMPLETE":
        raise EntityNotFound(entity="Stack", name=stack.name)
    existing = patch or bool(body.get("existing")) if isinstance(body, dict) else patch
    current = engine.spec_of(stack)
    spec, _ = spec_from_body(body, base=current if existing else None)
    defn = validate_spec(db, ctx, runtime, spec, stack_name=stack.name, stack_id=stack.id)
    old_defn = Definition(current, stack_name=stack.name, stack_id=stack.id,
                          project_id=stack.project_id, strict=False)
    check_immutable(defn.tmpl.parameters, old_defn.params, defn.params)
    return spec, defn


def update_stack(db: Session, ctx: RequestContext, runtime: Any, stack: Stack,
                 body: dict[str, Any], patch: bool) -> None:
    lock_stack(db, stack)
    spec, _ = _update_target(db, ctx, runtime, stack, body, patch)
    _check_idle(db, stack)
    previous = engine.spec_of(stack).to_dict()
    stack.template, stack.environment = spec.template, spec.environment
    stack.files, stack.parameters = spec.files, spec.parameters
    if "tags" in body:
        stack.tags = _tags(body.get("tags"))
    if "timeout_mins" in body:
        stack.timeout_mins = _timeout(body.get("timeout_mins"))
    if "disable_rollback" in body:
        stack.disable_rollback = _bool(body.get("disable_rollback"), stack.disable_rollback)
    engine.begin(db, stack, "UPDATE", {"previous": previous})


def preview_update(db: Session, ctx: RequestContext, runtime: Any, stack: Stack,
                   body: dict[str, Any], patch: bool) -> dict[str, Any]:
    """`resource_changes`: what an update would do, per resource, without doing it."""
    spec, defn = _update_target(db, ctx, runtime, stack, body, patch)
    runner = engine.Runner(db, runtime, stack, defn)
    changed_names: set[str] = set()
    changes: dict[str, list[dict[str, Any]]] = {k: [] for k in (
        "added", "deleted", "replaced", "unchanged", "updated")}

    def get_resource(name: str) -> Any:
        if name in changed_names:
            return UNKNOWN
        return runner.get_resource(name)

    def get_attr(name: str, attr: str | None) -> Any:
        if name in changed_names:
            return UNKNOWN
        return runner.get_attr(name, attr)

    runner.resolver = lambda: defn.resolver(get_resource, get_attr)  # type: ignore[method-assign]
    for name in defn.order:
        row = runner.current(name)
        if row is None:
            changes["added"].append(_change(stack, name, defn.types[name]))
            changed_names.add(name)
            continue
        kind, _, _ = engine.diff(runner, row, name, defn)
        changes[kind].append(_change(stack, name, defn.types[name], row))
        if kind == "replaced":
            changed_names.add(name)
    for row in runner.rows:
        if row.role == "current" and row.name not in defn.active:
            changes["deleted"].append(_change(stack, row.name, row.type, row))
    return {"resource_changes": changes}


def _change(stack: Stack, name: str, rtype: str, row: Resource | None = None) -> dict[str, Any]:
    return {"resource_name": name, "resource_type": rtype,
            "resource_action": row.action if row else "INIT",
            "resource_status": row.status if row else "COMPLETE",
            "resource_status_reason": row.status_reason if row else "",
            "physical_resource_id": (row.physical_resource_id or "") if row else "",
            "resource_identity": {"stack_name": stack.name, "stack_id": stack.id,
                                  "tenant": stack.project_id, "path": f"/resources/{name}"},
            "stack_name": stack.name, "description": "", "required_by": [],
            "metadata": {}, "properties": {}}


# ------------------------------------------------------------------ delete and actions
def delete_stack(db: Session, ctx: RequestContext, stack: Stack) -> None:
    lock_stack(db, stack)
    running = db.get(StackAction, stack.id)
    if running is not None:
        if running.action == "DELETE":
            return
        # Upstream cancels the running action and deletes: the delete takes it over
        # (the workers', also when a resource was driving it).
        running.action, running.work = "DELETE", {}
        if (running.owner or "").startswith(engine.DRIVEN):
            running.owner, running.lease_until = None, None
        stack.generation += 1
        engine.set_stack_state(db, stack, "DELETE", "IN_PROGRESS", "Stack DELETE started")
        return
    engine.begin(db, stack, "DELETE")


def stack_action(db: Session, ctx: RequestContext, stack: Stack, body: Any) -> None:
    if not isinstance(body, dict) or len(body) != 1:
        raise BadRequest("Multiple actions specified" if isinstance(body, dict) and body
                         else "No action specified")
    action = next(iter(body))
    lock_stack(db, stack)
    if action in ("cancel_update", "cancel_without_rollback"):
        running = db.get(StackAction, stack.id)
        if running is None or running.action != "UPDATE":
            raise BadRequest(f"Cancelling update when stack is "
                             f"{stack.action}_{stack.status}")
        if action == "cancel_update":
            # Fails the update; with rollback enabled the action becomes the rollback.
            engine._fail(db, engine.Runner(db, None, stack), running, "UPDATE",
                         "Stack UPDATE cancelled")
            return
        engine.set_stack_state(db, stack, "UPDATE", "FAILED", "Stack UPDATE cancelled")
        db.delete(running)
        return
    kinds = {"suspend": "SUSPEND", "resume": "RESUME", "check": "CHECK"}
    if action not in kinds:
        raise BadRequest(f"Invalid action {action} specified")
    _check_idle(db, stack)
    engine.begin(db, stack, kinds[action])


# ------------------------------------------------------------------ list
SORT_KEYS = {"stack_name": Stack.name, "stack_status": Stack.status,
             "creation_time": Stack.created_at, "updated_time": Stack.updated_at,
             "created_at": Stack.created_at, "updated_at": Stack.updated_at,
             "name": Stack.name, "status": Stack.status}


def list_stacks(db: Session, ctx: RequestContext, filters: dict[str, list[str]], *,
                limit: int | None, marker: str | None, sort_keys: list[str],
                sort_dir: str, show_deleted: bool, show_nested: bool,
                all_projects: bool, with_count: bool = False) -> tuple[list[Stack], int | None]:
    q = select(Stack)
    if not all_projects:
        q = q.where(Stack.project_id == ctx.project_id)
    if not show_deleted:
        q = q.where(Stack.deleted_at.is_(None))
    if not show_nested:
        q = q.where(Stack.parent_id.is_(None))
    for key, values in filters.items():
        if key in ("name", "stack_name"):
            q = q.where(Stack.name.in_(values))
        elif key == "id":
            q = q.where(Stack.id.in_(values))
        elif key in ("status", "stack_status"):
            conds = []
            for v in values:
                if "_" in v and v.split("_", 1)[0] in engine_actions():
                    a, s = v.split("_", 1)
                    conds.append((Stack.action == a) & (Stack.status == s))
                else:
                    conds.append(Stack.status == v)
            q = q.where(or_(*conds))
        elif key == "action":
            q = q.where(Stack.action.in_(values))
        elif key in ("tenant", "project_id"):
            q = q.where(Stack.project_id.in_(values))
        elif key == "parent":
            q = q.where(Stack.parent_id.in_(values))
    count = None
    if with_count:
        count = db.scalar(select(func.count()).select_from(q.subquery()))
    rows = list(db.scalars(q))
    tag_filters = {k: v for k, v in filters.items() if k.startswith("tags") or k.startswith(
        "not_tags")}
    for key, values in tag_filters.items():
        wanted = [t for v in values for t in v.split(",") if t]
        if key == "tags":
            rows = [s for s in rows if all(t in (s.tags or []) for t in wanted)]
        elif key == "tags_any":
            rows = [s for s in rows if any(t in (s.tags or []) for t in wanted)]
        elif key == "not_tags":
            rows = [s for s in rows if not all(t in (s.tags or []) for t in wanted)]
        elif key == "not_tags_any":
            rows = [s for s in rows if not any(t in (s.tags or []) for t in wanted)]
    keys = [k for k in sort_keys if k in SORT_KEYS] or ["creation_time"]
    reverse = sort_dir == "desc"

    def sort_key(s: Stack) -> tuple[Any, ...]:
        out = []
        for k in keys:
            v = getattr(s, SORT_KEYS[k].key)
            out.append((v is None, v if v is not None else ""))
        out.append((False, s.id))
        return tuple(out)

    rows.sort(key=sort_key, reverse=reverse)
    if marker:
        ids = [s.id for s in rows]
        if marker not in ids:
            raise EntityNotFound(entity="Stack", name=marker)
        rows = rows[ids.index(marker) + 1:]
    if limit is not None:
        rows = rows[:limit]
    return rows, count


def engine_actions() -> set[str]:
    return {"CREATE", "UPDATE", "DELETE", "ROLLBACK", "SUSPEND", "RESUME", "CHECK",
            "ADOPT", "SNAPSHOT", "RESTORE", "INIT"}


# ------------------------------------------------------------------ outputs
def outputs(db: Session, runtime: Any, stack: Stack) -> list[dict[str, Any]]:
    """The stack's outputs with their values (or errors), resolved by the engine."""
    return engine.stack_outputs(db, runtime, stack)


def output_list(stack: Stack) -> list[dict[str, Any]]:
    tmpl = stack.template or {}
    return [{"output_key": k, "description": (v or {}).get("description",
                                                           "No description given")}
            for k, v in (tmpl.get("outputs") or {}).items()]


# ------------------------------------------------------------------ resources and events
def resources_of(db: Session, stack: Stack) -> list[Resource]:
    return list(db.scalars(select(Resource).where(
        Resource.stack_id == stack.id, Resource.role == "current").order_by(Resource.id)))


def export_stack(db: Session, stack: Stack) -> dict[str, Any]:
    """Upstream's abandon data, without abandoning: the stack, its definition and each
    resource's id, state and data (a nested stack's resources inside its owner's)."""
    if stack.status == "IN_PROGRESS":
        raise ActionInProgress(stack_name=stack.name, action=stack.action)
    return abandon_data.stack_data(db, stack)


def has_nested(stack: Stack) -> bool:
    """Whether the stack's template makes nested stacks (groups, template resources)."""
    env, files = stack.environment or {}, stack.files or {}
    for name, snippet in (stack.template.get("resources") or {}).items():
        try:
            if nested_type(env, files, snippet.get("type") if isinstance(snippet, dict)
                           else None, name):
                return True
        except ApiError:
            return True  # unknown here: the careful answer
    return False


def nested_stacks(db: Session, stack: Stack) -> list[Stack]:
    return list(db.scalars(select(Stack).where(Stack.parent_id == stack.id)))


def get_resource(db: Session, stack: Stack, name: str) -> Resource:
    row = db.scalars(select(Resource).where(
        Resource.stack_id == stack.id, Resource.name == name,
        Resource.role == "current")).first()
    if row is None:
        raise EntityNotFound(entity="Resource", name=name)
    return row


def mark_unhealthy(db: Session, stack: Stack, name: str, body: Any) -> None:
    if not isinstance(body, dict) or "mark_unhealthy" not in body:
        raise BadRequest('"mark_unhealthy" is required')
    for key in body:
        if key not in ("mark_unhealthy", "resource_status_reason"):
            raise BadRequest(f'"{key}" is not a valid keyword inside a resource update')
    from stackling.orchestration.properties import to_bool

    try:
        flag = to_bool(body["mark_unhealthy"])
    except ValueError:
        raise BadRequest(f'Unrecognized value "{body["mark_unhealthy"]}" for '
                         f'"mark_unhealthy"') from None
    row = None
    for candidate in resources_of(db, stack):
        if name in (candidate.name, candidate.physical_resource_id):
            row = candidate
    if row is None:
        raise EntityNotFound(entity="Resource", name=name)
    reason = body.get("resource_status_reason") or ""
    if flag:
        row.action, row.status = "CHECK", "FAILED"
        row.status_reason = reason or "Marked unhealthy by user"
    elif row.status == "FAILED" and row.action == "CHECK":
        row.action, row.status, row.status_reason = "CHECK", "COMPLETE", reason
    else:
        return
    engine.add_event(db, stack, row.name, row.type, row.physical_resource_id, row.action,
                     row.status, row.status_reason)


def events_of(db: Session, stacks: list[Stack], resource_name: str | None = None
              ) -> list[Event]:
    q = select(Event).where(Event.stack_id.in_([s.id for s in stacks])).order_by(Event.seq)
    if resource_name is not None:
        q = q.where(Event.resource_name == resource_name)
    return list(db.scalars(q))


def get_event(db: Session, stack: Stack, resource_name: str, event_id: str) -> Event:
    event = db.scalars(select(Event).where(Event.id == event_id,
                                           Event.stack_id == stack.id)).first()
    if event is None or event.resource_name != resource_name:
        raise EntityNotFound(entity="Event", name=event_id)
    return event
