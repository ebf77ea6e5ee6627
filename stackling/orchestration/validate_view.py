"""`POST /validate`'s answer beyond the root parameters: `NestedParameters` for
`show_nested` (each template resource's own template, its parameters with the `Value` the
parent passes, recursively) and upstream's `ignore_errors` codes."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.orchestration.definition import Definition, Spec
from stackling.orchestration.errors import BadRequest, StackValidationFailed
from stackling.orchestration.models import Resource, Stack
from stackling.orchestration.nested_stacks import StackResource
from stackling.orchestration.parameters import validate_view
from stackling.orchestration.properties import UNKNOWN, contains_unknown, validate_properties
from stackling.orchestration.resources.base import StackScope

# upstream's ERROR_CODE_MAP: the only error a validation may be told to ignore
IGNORABLE_CODES = {"99001"}
MAX_DEPTH = 5


def ignorable_errors(value: Any) -> list[str]:
    """The codes of `ignore_errors` (a comma-separated string or a list); unknown codes are
    upstream's 400."""
    if not value:
        return []
    codes = [c.strip() for c in (value.split(",") if isinstance(value, str) else value)
             if str(c).strip()]
    invalid = sorted(set(codes) - IGNORABLE_CODES)
    if invalid:
        raise BadRequest(f"Invalid codes in ignore_errors : {invalid}")
    return codes


def nested_parameters(db: Session, ctx: RequestContext, runtime: Any, defn: Definition,
                      depth: int = 0) -> dict[str, Any]:
    """`{"NestedParameters": {resource: {...}}}` for the nested stacks of `defn` (template
    resources; a ResourceGroup as a group of one, as upstream validates it); empty when
    it has none."""
    if depth >= MAX_DEPTH:
        return {}
    resolver = defn.resolver(lambda n: UNKNOWN, lambda n, a: UNKNOWN)
    defaults = defn.env.get("parameter_defaults") or {}
    stack = Stack(id="None", name="validate", project_id=ctx.project_id or "",
                  files=defn.spec.files, environment=defn.env)
    scope = StackScope(db, ctx, runtime, stack, lambda n: None)
    out: dict[str, Any] = {}
    for name in defn.active:
        cls = defn.classes[name]
        if not issubclass(cls, StackResource):
            continue
        snippet = defn.snippet(name)
        props = resolver.resolve(snippet.get("properties") or {})
        props = props if isinstance(props, dict) else {}
        if cls.accepts_any_properties:
            values = props
        else:
            values = validate_properties(cls.properties_schema, props,
                                         f"resources.{name}.properties", None)
        if contains_unknown(values.get("count")) or contains_unknown(values.get("resource_def")):
            continue
        if "count" in cls.properties_schema:
            values = {**values, "count": 1}
        row = Resource(uuid=str(uuid.uuid4()), name=name, type=defn.types[name], data={},
                       properties=values)
        plugin = cls(scope, row, values)
        try:
            child = plugin.child_template()
        except StackValidationFailed:
            continue
        declared = child.get("parameters") if isinstance(child, dict) else None
        # only what the child declares gives a Value (the create would refuse the rest)
        given = {k: v for k, v in plugin.child_parameters().items()
                 if v is not None and not contains_unknown(v) and k in (declared or {})}
        child_defn = Definition(Spec(child, {**plugin.child_environment(),
                                             "parameter_defaults": defaults},
                                     plugin.child_files(), given),
                                stack_name=name, stack_id="None", project_id="",
                                strict=False)
        view = validate_view(child_defn.tmpl.parameters, defaults)
        for key, value in given.items():
            if key in view:
                view[key]["Value"] = value
        entry: dict[str, Any] = {"Type": snippet["type"],
                                 "Description": child_defn.tmpl.description or "No description",
                                 "Parameters": view}
        groups = child_defn.tmpl.t.get("parameter_groups")
        if groups:
            entry["ParameterGroups"] = groups
        entry.update(nested_parameters(db, ctx, runtime, child_defn, depth + 1))
        out[name] = entry
    return {"NestedParameters": out} if out else {}
