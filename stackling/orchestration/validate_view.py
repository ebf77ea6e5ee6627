"""`POST /validate`'s answer beyond the root parameters: `NestedParameters` for
`show_nested` (each template resource's own template, its parameters with the `Value` the
parent passes, recursively) and upstream's `ignore_errors` codes."""

from __future__ import annotations

from typing import Any

from stackling.orchestration.definition import Definition, Spec
from stackling.orchestration.errors import BadRequest
from stackling.orchestration.nested_stacks import TemplateResource
from stackling.orchestration.parameters import validate_view
from stackling.orchestration.properties import UNKNOWN, contains_unknown
from stackling.orchestration.template import parse_document

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


def nested_parameters(defn: Definition, depth: int = 0) -> dict[str, Any]:
    """`{"NestedParameters": {resource: {...}}}` for the template resources of `defn`
    (empty when it has none)."""
    if depth >= MAX_DEPTH:
        return {}
    resolver = defn.resolver(lambda n: UNKNOWN, lambda n, a: UNKNOWN)
    defaults = defn.env.get("parameter_defaults") or {}
    out: dict[str, Any] = {}
    for name in defn.active:
        if not issubclass(defn.classes[name], TemplateResource):
            continue
        snippet = defn.snippet(name)
        files = defn.spec.files or {}
        if defn.types[name] not in files:
            continue
        child = parse_document(files[defn.types[name]])
        props = resolver.resolve(snippet.get("properties") or {})
        declared = child.get("parameters") if isinstance(child, dict) else None
        # only what the child declares gives a Value (the create would refuse the rest)
        given = {k: v for k, v in (props if isinstance(props, dict) else {}).items()
                 if v is not None and not contains_unknown(v) and k in (declared or {})}
        child_defn = Definition(Spec(child, {"parameter_defaults": defaults}, files, given),
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
        entry.update(nested_parameters(child_defn, depth + 1))
        out[name] = entry
    return {"NestedParameters": out} if out else {}
