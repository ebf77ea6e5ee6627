"""Heat v1 routes (one table) and their thin handlers."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from stackling.common.http import ApiRequest, Service, json_response
from stackling.orchestration import stacks as logic
from stackling.orchestration import views
from stackling.orchestration.api.common import authorize, body, resource_class
from stackling.orchestration.api.common import path_stack as _stack
from stackling.orchestration.api.common import start_action as _start
from stackling.orchestration.errors import BadRequest

LOOKUP_WORDS = {"resources", "events", "template", "environment", "files", "outputs",
                "actions", "preview", "abandon", "export", "snapshots"}
T = "/v1/{tenant_id}"
S = T + "/stacks/{stack_name}/{stack_id}"


def base(rq: ApiRequest) -> str:
    return rq.service_url


def _redirect(rq: ApiRequest, rest: str = "") -> Response:
    stack = logic.lookup(rq.db, rq.ctx, rq.path_params["stack_name"])
    location = views.stack_url(base(rq), stack) + (f"/{rest}" if rest else "")
    if rq.request.url.query:
        location += "?" + rq.request.url.query
    return Response(status_code=302, headers={"Location": location})


# ------------------------------------------------------------------ discovery & misc
def versions(rq: ApiRequest) -> Any:
    return json_response({"versions": [{"id": "v1.0", "status": "CURRENT", "links": [
        {"rel": "self", "href": f"{base(rq)}/v1/"}]}]}, 300)


def build_info(rq: ApiRequest) -> Any:
    authorize(rq, "build_info:build_info")
    return {"api": {"revision": "stackling"}, "engine": {"revision": "stackling"}}


# ------------------------------------------------------------------ stacks
def list_stacks(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:index")
    q = rq.query
    allowed = {"id", "name", "status", "action", "tenant", "username", "owner_id",
               "stack_name", "stack_status", "tags", "tags_any", "not_tags", "not_tags_any",
               "limit", "marker", "sort_keys", "sort_dir", "show_deleted", "show_nested",
               "show_hidden", "global_tenant", "with_count", "parent", "stack_status_reason"}
    filters: dict[str, list[str]] = {}
    for key, value in q.multi_items():
        if key not in allowed:
            continue
        if key in ("id", "name", "status", "action", "tenant", "tags", "tags_any", "not_tags",
                   "not_tags_any", "stack_name", "stack_status", "parent"):
            filters.setdefault(key, []).append(value)
    global_tenant = _flag(q.get("global_tenant"))
    if global_tenant:
        authorize(rq, "stacks:global_index")
    limit = q.get("limit")
    try:
        limit_n = int(limit) if limit not in (None, "") else None
        if limit_n is not None and limit_n < 0:
            raise ValueError
    except ValueError:
        raise BadRequest("Only integer is acceptable by 'limit'.") from None
    sort_dir = q.get("sort_dir") or "desc"
    if sort_dir not in ("asc", "desc"):
        raise BadRequest("Unknown sort direction, must be one of: asc, desc")
    sort_keys = [k for v in q.getlist("sort_keys") for k in v.split(",") if k]
    rows, count = logic.list_stacks(
        rq.db, rq.ctx, filters, limit=limit_n, marker=q.get("marker"), sort_keys=sort_keys,
        sort_dir=sort_dir, show_deleted=_flag(q.get("show_deleted")),
        show_nested=_flag(q.get("show_nested")), all_projects=global_tenant,
        with_count=_flag(q.get("with_count")))
    out: dict[str, Any] = {"stacks": [views.stack_summary(base(rq), s) for s in rows]}
    if global_tenant:
        for view, s in zip(out["stacks"], rows, strict=True):
            view["project"] = s.project_id
    if count is not None:
        out["count"] = count
    if limit_n is not None and len(rows) == limit_n and rows:
        query = [(k, v) for k, v in q.multi_items() if k != "marker"] + [("marker", rows[-1].id)]
        out["links"] = [{"href": f"{base(rq)}/v1/{rq.ctx.project_id}/stacks?" + "&".join(
            f"{k}={v}" for k, v in query), "rel": "next"}]
    return out


def _flag(value: Any) -> bool:
    return str(value).lower() in ("1", "true", "yes", "on", "t", "y") if value else False


def create_stack(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:create")
    data, adopt = body(rq), None
    if isinstance(data, dict) and data.get("adopt_stack_data") is not None:
        from stackling.orchestration.abandon import adopt_body

        data, adopt = adopt_body(data)
    stack = logic.create_stack(rq.db, rq.ctx, rq.runtime, data, adopt)
    _start(rq, stack)
    url = views.stack_url(base(rq), stack)
    return 201, {"stack": {"id": stack.id, "links": [{"href": url, "rel": "self"}]}}, {
        "Location": url}


def preview_create(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:preview")
    return {"stack": logic.preview_create(rq.db, rq.ctx, rq.runtime, body(rq))}


def lookup(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:lookup")
    return _redirect(rq)


def lookup_path(rq: ApiRequest) -> Any:
    """`/stacks/{name}/{sub-path}`: a 302 to the stack's own URL; anything else (e.g. an
    unknown path below `/stacks/{name}/{id}`) is not a route."""
    rest = rq.path_params["rest"]
    if rest.split("/", 1)[0] not in LOOKUP_WORDS:
        from stackling.orchestration.errors import NotFound

        raise NotFound("The resource could not be found.")
    authorize(rq, "stacks:lookup")
    return _redirect(rq, rest)


def show_stack(rq: ApiRequest) -> Any:
    if rq.path_params["stack_id"] in LOOKUP_WORDS:
        authorize(rq, "stacks:lookup")
        return _redirect(rq, rq.path_params["stack_id"])
    authorize(rq, "stacks:show")
    stack = _stack(rq)
    from stackling.orchestration import engine
    from stackling.orchestration.definition import Definition
    from stackling.orchestration.parameters import display

    defn = Definition(engine.spec_of(stack), stack_name=stack.name, stack_id=stack.id,
                      project_id=stack.project_id, strict=False)
    params = {**display(defn.tmpl.parameters, defn.params), **defn.pseudo}
    resolve = rq.query.get("resolve_outputs", "true").lower() not in ("false", "0", "no")
    outputs = None
    if resolve and stack.deleted_at is None:
        outputs = logic.outputs(rq.db, rq.runtime, stack)
    return {"stack": views.stack_detail(base(rq), stack, params, outputs)}


def _redirect_or(rq: ApiRequest, fn: Any) -> Any:
    if rq.path_params["stack_id"] in LOOKUP_WORDS:
        authorize(rq, "stacks:lookup")
        return _redirect(rq, rq.path_params["stack_id"])
    return fn(rq)


def update_stack(rq: ApiRequest) -> Any:
    return _redirect_or(rq, lambda rq: _update(rq, patch=False))


def patch_stack(rq: ApiRequest) -> Any:
    return _redirect_or(rq, lambda rq: _update(rq, patch=True))


def _update(rq: ApiRequest, patch: bool) -> Any:
    authorize(rq, "stacks:update_patch" if patch else "stacks:update")
    stack = _stack(rq)
    logic.update_stack(rq.db, rq.ctx, rq.runtime, stack, body(rq), patch)
    _start(rq, stack)
    return json_response({"code": "202 Accepted", "title": "Accepted", "message":
                          "The request is accepted for processing."}, 202)


def delete_stack(rq: ApiRequest) -> Any:
    def run(rq: ApiRequest) -> Any:
        authorize(rq, "stacks:delete")
        stack = _stack(rq)
        logic.delete_stack(rq.db, rq.ctx, stack)
        _start(rq, stack)
        return Response(status_code=204)

    return _redirect_or(rq, run)


def preview_update(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:preview_update")
    return logic.preview_update(rq.db, rq.ctx, rq.runtime, _stack(rq), body(rq), False)


def preview_update_patch(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:preview_update_patch")
    return logic.preview_update(rq.db, rq.ctx, rq.runtime, _stack(rq), body(rq), True)


def template(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:template")
    return _stack(rq).template


def environment(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:environment")
    env = dict(_stack(rq).environment or {})
    for key in ("parameters", "parameter_defaults", "resource_registry"):
        env.setdefault(key, {})
    env.setdefault("event_sinks", [])
    env.setdefault("encrypted_param_names", [])
    return env


def files(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:files")
    return _stack(rq).files or {}


def list_outputs(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:list_outputs")
    return {"outputs": logic.output_list(_stack(rq))}


def show_output(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:show_output")
    stack = _stack(rq)
    key = rq.path_params["output_key"]
    for item in logic.outputs(rq.db, rq.runtime, stack):
        if item["output_key"] == key:
            return {"output": item}
    from stackling.orchestration.errors import NotFound

    raise NotFound(message=f"Specified output key {key} not found.")


def action(rq: ApiRequest) -> Any:
    data = body(rq)
    name = next(iter(data), "") if isinstance(data, dict) else ""
    known = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")
    authorize(rq, f"actions:{name}" if name in known else "actions:action")
    stack = _stack(rq)
    logic.stack_action(rq.db, rq.ctx, stack, data)
    _start(rq, stack)
    return Response(status_code=200)


def validate(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:validate_template")
    from stackling.orchestration import validate_view as nested_view
    from stackling.orchestration.parameters import validate_view

    data = body(rq)
    nested_view.ignorable_errors(rq.query.get("ignore_errors") or (
        data.get("ignore_errors") if isinstance(data, dict) else None))
    spec, _ = logic.spec_from_body(data)
    defn = logic.validate_spec(rq.db, rq.ctx, rq.runtime, spec, stack_name="validate",
                               stack_id="None", strict=False)
    out: dict[str, Any] = {"Description": defn.tmpl.description or "No description",
                           "Parameters": validate_view(defn.tmpl.parameters,
                                                       spec.environment.get(
                                                           "parameter_defaults") or {})}
    groups = defn.tmpl.t.get("parameter_groups")
    if groups:
        out["ParameterGroups"] = groups
    if _flag(rq.query.get("show_nested") or (data.get("show_nested") if isinstance(
            data, dict) else None)):
        out.update(nested_view.nested_parameters(rq.db, rq.ctx, rq.runtime, defn))
    out["Environment"] = {"parameters": spec.environment.get("parameters") or {},
                          "parameter_defaults": spec.environment.get(
                              "parameter_defaults") or {},
                          "resource_registry": spec.environment.get(
                              "resource_registry") or {}, "event_sinks": []}
    return out


# ------------------------------------------------------------------ resources
def _required_by(rows: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {r.name: [] for r in rows}
    for r in rows:
        for dep in r.requires or []:
            if dep in out:
                out[dep].append(r.name)
    return out


RESOURCE_FILTERS = {"type", "status", "name", "action", "id", "physical_resource_id"}


def list_resources(rq: ApiRequest) -> Any:
    authorize(rq, "resource:index")
    stack = _stack(rq)
    for key in rq.query.keys():
        if key not in RESOURCE_FILTERS | {"nested_depth", "with_detail"}:
            raise BadRequest(f"Invalid filter parameters {[key]}")
    try:
        depth = int(rq.query.get("nested_depth") or 0)
    except ValueError:
        raise BadRequest("Only integer is acceptable by 'nested_depth'.") from None
    out: list[dict[str, Any]] = []
    _resources_into(rq, stack, depth, None, out)
    return {"resources": out}


def _resources_into(rq: ApiRequest, stack: Any, depth: int, parent_resource: str | None,
                    out: list[dict[str, Any]]) -> None:
    """A stack's resources, then (down to `depth`) those of its nested stacks, each with
    its `parent_resource`, as Heat's `nested_depth`."""
    rows = logic.resources_of(rq.db, stack)
    required = _required_by(rows)
    children = {c.owner_resource: c for c in logic.nested_stacks(rq.db, stack)
                if c.deleted_at is None}
    for row in rows:
        child = children.get(row.name)
        view = views.resource_view(base(rq), stack, row, required[row.name], nested=child,
                                   parent_resource=parent_resource)
        if parent_resource is not None:
            view["stack_name"] = stack.name
        if _matches(rq, row, view):
            out.append(view)
        if child is not None and depth > 0:
            _resources_into(rq, child, depth - 1, row.name, out)


def _matches(rq: ApiRequest, row: Any, view: dict[str, Any]) -> bool:
    q = rq.query
    checks = {"type": row.type, "name": row.name, "action": row.action,
              "status": row.status, "id": row.uuid,
              "physical_resource_id": row.physical_resource_id}
    for key, actual in checks.items():
        wanted = q.getlist(key)
        if wanted and actual not in wanted and not (
                key == "status" and view["resource_status"] in wanted):
            return False
    return True


def show_resource(rq: ApiRequest) -> Any:
    authorize(rq, "resource:show")
    stack = _stack(rq)
    row = logic.get_resource(rq.db, stack, rq.path_params["resource_name"])
    rows = logic.resources_of(rq.db, stack)
    nested = next((c for c in logic.nested_stacks(rq.db, stack)
                   if c.owner_resource == row.name and c.deleted_at is None), None)
    view = views.resource_view(base(rq), stack, row, _required_by(rows).get(row.name, []),
                               nested=nested)
    from stackling.orchestration import engine

    runner = engine.Runner(rq.db, rq.runtime, stack)
    plugin = runner.plugin(row)
    attrs: dict[str, Any] = {}
    for name in plugin.attributes_schema:
        try:
            attrs[name] = plugin.get_attribute(name)
        except Exception:  # noqa: BLE001 - an attribute failing must not fail the show
            attrs[name] = None
    for extra in rq.query.getlist("with_attr"):
        try:
            attrs[extra] = plugin.get_attribute(extra)
        except Exception:  # noqa: BLE001
            attrs[extra] = None
    view["attributes"] = attrs
    view["description"] = str((row.definition or {}).get("description") or "")
    return {"resource": view}


def resource_metadata(rq: ApiRequest) -> Any:
    authorize(rq, "resource:metadata")
    row = logic.get_resource(rq.db, _stack(rq), rq.path_params["resource_name"])
    return {"metadata": row.rsrc_metadata or {}}


def mark_unhealthy(rq: ApiRequest) -> Any:
    authorize(rq, "resource:mark_unhealthy")
    logic.mark_unhealthy(rq.db, _stack(rq), rq.path_params["resource_name"], body(rq))
    return Response(status_code=200)


# ------------------------------------------------------------------ events
EVENT_FILTERS = {"resource_action", "resource_status", "resource_name", "resource_type"}


def _events(rq: ApiRequest, resource_name: str | None) -> Any:
    authorize(rq, "events:index")
    stack = _stack(rq)
    q = rq.query
    for key in q.keys():
        if key not in EVENT_FILTERS | {"limit", "marker", "sort_keys", "sort_dir",
                                       "nested_depth"}:
            raise BadRequest(f"Invalid filter parameters {[key]}")
    if resource_name is not None:
        logic.get_resource(rq.db, stack, resource_name) if resource_name != stack.name else None
    events = logic.events_of(rq.db, [stack], resource_name)
    for key in EVENT_FILTERS:
        wanted = q.getlist(key)
        if not wanted:
            continue
        attr = {"resource_action": "action", "resource_status": "status",
                "resource_name": "resource_name", "resource_type": "resource_type"}[key]
        events = [e for e in events if getattr(e, attr) in wanted]
    if (q.get("sort_dir") or "asc") == "desc":
        events.reverse()
    marker = q.get("marker")
    if marker:
        ids = [e.id for e in events]
        if marker not in ids:
            from stackling.orchestration.errors import EntityNotFound

            raise EntityNotFound(entity="Event", name=marker)
        events = events[ids.index(marker) + 1:]
    limit = q.get("limit")
    if limit not in (None, ""):
        try:
            events = events[:int(limit)]
        except ValueError:
            raise BadRequest("Only integer is acceptable by 'limit'.") from None
    return {"events": [views.event_view(base(rq), stack, e) for e in events]}


def list_events(rq: ApiRequest) -> Any:
    return _events(rq, None)


def list_resource_events(rq: ApiRequest) -> Any:
    return _events(rq, rq.path_params["resource_name"])


def show_event(rq: ApiRequest) -> Any:
    authorize(rq, "events:show")
    stack = _stack(rq)
    event = logic.get_event(rq.db, stack, rq.path_params["resource_name"],
                            rq.path_params["event_id"])
    return {"event": views.event_view(base(rq), stack, event, detail=True)}


# ------------------------------------------------------------------ introspection
def list_resource_types(rq: ApiRequest) -> Any:
    authorize(rq, "resource_types:index")
    from stackling.orchestration.resources import load_all

    names = sorted(load_all())
    name_filter = rq.query.get("name")
    if name_filter:
        from stackling.common.patterns import PatternError, UserPattern

        try:
            pattern = UserPattern(name_filter)
            names = [n for n in names if pattern.search(n)]
        except PatternError as err:
            raise BadRequest(f"Invalid name filter {name_filter!r}: {err}") from None
    if _flag(rq.query.get("with_description")):
        return {"resource_types": [{"resource_type": n, "description": (
            load_all()[n].__doc__ or "").strip()} for n in names]}
    return {"resource_types": names}


def show_resource_type(rq: ApiRequest) -> Any:
    authorize(rq, "resource_types:show")
    name = rq.path_params["type_name"]
    cls = resource_class(rq)
    attrs = {k: {"description": v} for k, v in cls.attributes_schema.items()}
    attrs["show"] = {"description": "Detailed information about resource.", "type": "map"}
    return {"resource_type": name,
            "properties": {k: p.to_dict() for k, p in cls.properties_schema.items()},
            "attributes": attrs,
            "support_status": {"status": "SUPPORTED", "message": None, "version": None,
                               "previous_status": None},
            "description": (cls.__doc__ or "").strip()}


def template_versions(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:list_template_versions")
    from stackling.orchestration.template import ALIASES, VERSIONS

    out = []
    for v in VERSIONS:
        aliases = [a for a, t in ALIASES.items() if t == v]
        out.append({"version": f"heat_template_version.{v}", "type": "hot",
                    "aliases": [f"heat_template_version.{a}" for a in aliases]})
    return {"template_versions": out}


def template_functions(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:list_template_functions")
    from stackling.orchestration import function_docs

    cond = function_docs.query_bool("with_condition_func", rq.query.get("with_condition_func"))
    return {"template_functions": function_docs.template_functions(
        rq.path_params["template_version"], cond)}


def build(runtime: Any) -> Service:
    svc = Service(name="orchestration", prefix="/orchestration", family="orchestration")
    svc.add("/", public=True, get=versions)
    svc.add(T + "/build_info", get=build_info)
    svc.add(T + "/validate", post=validate)
    svc.add(T + "/resource_types", get=list_resource_types)
    svc.add(T + "/resource_types/{type_name}", get=show_resource_type)
    svc.add(T + "/template_versions", get=template_versions)
    svc.add(T + "/template_versions/{template_version}/functions", get=template_functions)
    svc.add(T + "/stacks", get=list_stacks, post=create_stack)
    svc.add(T + "/stacks/preview", post=preview_create)
    svc.add(T + "/stacks/{stack_name}", get=lookup, post=lookup, put=lookup, patch=lookup,
            delete=lookup)
    svc.add(S, get=show_stack, put=update_stack, patch=patch_stack, delete=delete_stack,
            post=lambda rq: _redirect_or(rq, lambda rq: (_ for _ in ()).throw(
                BadRequest("POST is not supported here"))))
    svc.add(S + "/preview", put=preview_update, patch=preview_update_patch)
    svc.add(S + "/template", get=template)
    svc.add(S + "/environment", get=environment)
    svc.add(S + "/files", get=files)
    svc.add(S + "/outputs", get=list_outputs)
    svc.add(S + "/outputs/{output_key}", get=show_output)
    svc.add(S + "/actions", post=action)
    svc.add(S + "/events", get=list_events)
    svc.add(S + "/resources", get=list_resources)
    svc.add(S + "/resources/{resource_name}", get=show_resource, patch=mark_unhealthy)
    svc.add(S + "/resources/{resource_name}/metadata", get=resource_metadata)
    from stackling.orchestration.api import signals as signal_api

    svc.add(S + "/resources/{resource_name}/signal", public=True, post=signal_api.signal)
    svc.add(S + "/resources/{resource_name}/events", get=list_resource_events)
    svc.add(S + "/resources/{resource_name}/events/{event_id}", get=show_event)
    from stackling.orchestration.api import introspection, stack_data

    svc.add(T + "/services", get=introspection.services)
    svc.add(T + "/resource_types/{type_name}/template", get=introspection.type_template)
    svc.add(S + "/export", get=stack_data.export)
    svc.add(S + "/abandon", delete=stack_data.abandon)
    svc.add(S + "/snapshots", get=stack_data.list_snapshots, post=stack_data.snapshot)
    svc.add(S + "/snapshots/{snapshot_id}", get=stack_data.show_snapshot,
            delete=stack_data.delete_snapshot)
    svc.add(S + "/snapshots/{snapshot_id}/restore", post=stack_data.restore_snapshot)
    from stackling.orchestration.api import software as software_api

    software_api.add_routes(svc)
    svc.add(T + "/stacks/{stack_name}/{rest:path}", get=lookup_path, post=lookup_path,
            put=lookup_path, patch=lookup_path, delete=lookup_path)
    return svc
