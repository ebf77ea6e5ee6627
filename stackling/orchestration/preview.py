"""`POST /stacks/preview`'s resources as upstream shapes them: each resource with its
resolved properties (what depends on other resources is unknown, so absent), and a nested
stack (a template resource, a ResourceGroup) replaced by the list of its own resources'
previews, named `<stack>-<resource>`, recursively."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.orchestration.definition import Definition, Spec
from stackling.orchestration.models import Resource, Stack
from stackling.orchestration.nested_stacks import StackResource
from stackling.orchestration.properties import UNKNOWN, contains_unknown, validate_properties
from stackling.orchestration.resources.base import StackScope

MAX_DEPTH = 5


def _known(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items() if not contains_unknown(v) or
                isinstance(v, (dict, list))}
    if isinstance(value, list):
        return [_known(v) for v in value]
    return None if contains_unknown(value) else value


def preview_resources(db: Session, ctx: RequestContext, runtime: Any, defn: Definition,
                      stack_name: str, depth: int = 0) -> list[Any]:
    resolver = defn.resolver(lambda n: UNKNOWN, lambda n, a: UNKNOWN)
    stack = Stack(id="None", name=stack_name, project_id=ctx.project_id or "",
                  files=defn.spec.files, environment=defn.env)
    scope = StackScope(db, ctx, runtime, stack, lambda n: None)
    required_by = defn.required_by()
    identity = {"stack_name": stack_name, "stack_id": "None", "tenant": ctx.project_id,
                "path": ""}
    out: list[Any] = []
    for name in defn.order:
        cls = defn.classes[name]
        snippet = defn.snippet(name)
        props = resolver.resolve(snippet.get("properties") or {})
        if cls.accepts_any_properties:
            values = props if isinstance(props, dict) else {}
        else:
            values = validate_properties(cls.properties_schema, props,
                                         f"resources.{name}.properties", None)
        if issubclass(cls, StackResource) and depth < MAX_DEPTH:
            nested = _nested(db, ctx, runtime, scope, cls, name, defn, values, stack_name,
                             depth)
            if nested is not None:
                out.append(nested)
                continue
        out.append({
            "resource_name": name, "resource_identity": {**identity,
                                                         "path": f"/resources/{name}"},
            "description": snippet.get("description") or "", "resource_type": defn.types[name],
            "resource_action": "INIT", "resource_status": "COMPLETE",
            "resource_status_reason": "", "physical_resource_id": "",
            "required_by": required_by[name], "metadata": _known(
                resolver.resolve(snippet.get("metadata") or {})) or {},
            "properties": _known(values), "stack_name": stack_name,
            "stack_identity": identity, "updated_time": None, "creation_time": None})
    return out


def _nested(db: Session, ctx: RequestContext, runtime: Any, scope: StackScope, cls: Any,
            name: str, defn: Definition, values: dict[str, Any], stack_name: str,
            depth: int) -> list[Any] | None:
    """The child stack's previews, or None when its shape depends on other resources."""
    row = Resource(uuid=str(uuid.uuid4()), name=name, type=defn.types[name], data={},
                   properties=values)
    plugin = cls(scope, row, values)
    if contains_unknown(values.get("count")) or contains_unknown(
            values.get("resource_def")):
        return None
    template = plugin.child_template()
    params = dict(plugin.child_parameters())  # unknown values stay unknown in the child
    child = Definition(Spec(template, plugin.child_environment(), plugin.child_files(), params),
                       stack_name=f"{stack_name}-{name}", stack_id="None",
                       project_id=ctx.project_id or "", strict=False)
    return preview_resources(db, ctx, runtime, child, f"{stack_name}-{name}", depth + 1)
