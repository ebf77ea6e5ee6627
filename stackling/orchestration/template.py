"""HOT templates: parsing, structure checks, versions, and the intrinsic functions.

`Template` wraps a parsed template; `Resolver` evaluates a snippet's functions against a
stack (parameters, files, and callbacks for `get_resource` / `get_attr`). Functions are
keyed by the template version that introduced them: a function of a later version is a
400, as upstream.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import yaml

from stackling.orchestration.errors import (
    BadRequest,
    InvalidTemplateReference,
    InvalidTemplateSection,
    InvalidTemplateVersion,
    StackValidationFailed,
    UserParameterMissing,
)
from stackling.orchestration.limits import Budget, check_document, check_template_size, nodes
from stackling.orchestration.properties import UNKNOWN, contains_unknown, to_bool

# Every version upstream's clients send, with its release alias.
VERSIONS = ["2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08",
            "2016-10-14", "2017-02-24", "2017-09-01", "2018-03-02", "2018-08-31",
            "2021-04-16"]
ALIASES = {"newton": "2016-10-14", "ocata": "2017-02-24", "pike": "2017-09-01",
           "queens": "2018-03-02", "rocky": "2018-08-31", "wallaby": "2021-04-16"}

# function -> (first version, last version or None)
FUNCTIONS: dict[str, tuple[str, str | None]] = {
    "get_param": ("2013-05-23", None),
    "get_resource": ("2013-05-23", None),
    "get_attr": ("2013-05-23", None),
    "get_file": ("2013-05-23", None),
    "str_replace": ("2013-05-23", None),
    "list_join": ("2014-10-16", None),
    "resource_facade": ("2013-05-23", None),
    "Fn::Select": ("2013-05-23", "2015-10-15"),
    "Fn::Join": ("2013-05-23", "2013-05-23"),
    "Fn::Split": ("2013-05-23", "2013-05-23"),
    "Fn::Replace": ("2013-05-23", "2013-05-23"),
    "Fn::Base64": ("2013-05-23", "2013-05-23"),
    "Fn::MemberListToMap": ("2013-05-23", "2013-05-23"),
    "digest": ("2015-04-30", None),
    "repeat": ("2015-04-30", None),
    "str_split": ("2015-10-15", None),
    "map_merge": ("2016-04-08", None),
    "map_replace": ("2016-10-14", None),
    "if": ("2016-10-14", None),
    "yaql": ("2016-10-14", None),
    "equals": ("2016-10-14", None),
    "not": ("2016-10-14", None),
    "and": ("2016-10-14", None),
    "or": ("2016-10-14", None),
    "filter": ("2017-02-24", None),
    "str_replace_strict": ("2017-02-24", None),
    "make_url": ("2017-09-01", None),
    "list_concat": ("2017-09-01", None),
    "str_replace_vstrict": ("2017-09-01", None),
    "contains": ("2017-09-01", None),
    "list_concat_unique": ("2018-03-02", None),
}
CONDITION_FUNCTIONS = {"equals", "not", "and", "or", "contains", "get_param", "if"}
TOP_KEYS = {"heat_template_version", "description", "parameter_groups", "parameters",
            "resources", "outputs", "conditions"}
RESOURCE_KEYS = {"type", "properties", "metadata", "depends_on", "deletion_policy",
                 "update_policy", "description", "condition", "external_id"}
OUTPUT_KEYS = {"description", "value", "condition"}
PSEUDO_PARAMS = ("OS::stack_name", "OS::stack_id", "OS::project_id")
# upstream's field types of a resource definition (`_rsrc_defn_args`); a map may be a function
RESOURCE_FIELD_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "type": (str, "string"), "properties": (dict, "object"), "metadata": (dict, "object"),
    "depends_on": ((list, str), "list or string"), "deletion_policy": ((str, dict), "string"),
    "update_policy": (dict, "object"), "description": (str, "string"),
    "external_id": ((str, dict), "string"), "condition": ((str, bool, dict), "string_or_boolean"),
}
NAME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")


def canonical_version(value: Any) -> str:
    text = str(value) if value is not None else ""
    if hasattr(value, "isoformat"):
        text = value.isoformat()
    text = ALIASES.get(text, text)
    if text not in VERSIONS:
        valid = ", ".join(f'"heat_template_version.{v}"' for v in VERSIONS)
        raise InvalidTemplateVersion(explanation=(
            f'"heat_template_version: {value}". "heat_template_version" should be one of: '
            f"{valid}"))
    return text


class _Loader(yaml.SafeLoader):
    """YAML as Heat reads it: dates stay strings (`heat_template_version: 2018-08-31`)."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.copy().items()
}


def parse_document(text: Any, what: str = "template") -> dict[str, Any]:
    """A template or environment given as a JSON object or YAML/JSON text."""
    if isinstance(text, dict):
        check_document(text, what)
        if what == "template":
            check_template_size(text)
        return text
    if not isinstance(text, str):
        raise BadRequest(f"The {what} is not a JSON object or YAML mapping.")
    if what == "template":
        check_template_size(text)
    try:
        doc = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, _Loader)  # noqa: S506
    except (ValueError, yaml.YAMLError) as err:
        raise BadRequest(f"Error parsing {what}: {err}") from None
    except RecursionError:  # the parsers recurse per nesting level
        raise BadRequest(f"Error parsing {what}: it nests too deeply") from None
    check_document(doc, what)
    if doc is None and what == "environment":
        return {}
    if not isinstance(doc, dict):
        raise BadRequest(f"The {what} is not a JSON object or YAML mapping.")
    return doc


class Template:
    def __init__(self, tmpl: dict[str, Any], files: dict[str, Any] | None = None) -> None:
        self.t = tmpl
        self.files = files or {}
        if "heat_template_version" not in tmpl:
            if "HeatTemplateFormatVersion" in tmpl or "AWSTemplateFormatVersion" in tmpl:
                raise InvalidTemplateVersion(explanation="CFN templates are not supported")
            raise InvalidTemplateVersion(explanation=(
                'Template version was not provided'))
        self.version = canonical_version(tmpl["heat_template_version"])
        self.check_sections()

    def at_least(self, version: str) -> bool:
        return self.version >= version

    @property
    def description(self) -> str:
        return description_of(self.t)

    @property
    def parameters(self) -> dict[str, Any]:
        return self.t.get("parameters") or {}

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.t.get("resources") or {}

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        return self.t.get("outputs") or {}

    @property
    def conditions(self) -> dict[str, Any]:
        return self.t.get("conditions") or {}

    def check_sections(self) -> None:
        """Every section and member has the type the engine reads it as (upstream's
        messages), before anything uses them: a wrong type is a 400, never a 500."""
        for key in self.t:
            if key not in TOP_KEYS:  # upstream's message (heat/engine/template.py)
                raise InvalidTemplateSection(section=key)
        for section in ("parameters", "resources", "outputs", "conditions"):
            value = self.t.get(section)
            if value is not None and not isinstance(value, dict):
                raise StackValidationFailed(f'"{section}" must be a map')
        if "conditions" in self.t and not self.at_least("2016-10-14"):
            raise StackValidationFailed('"conditions" is not a valid keyword inside a HOT '
                                        "template")
        for name, snippet in self.resources.items():
            if not snippet:
                raise StackValidationFailed("Each resource must contain a type key.")
            if not isinstance(snippet, dict):
                raise StackValidationFailed(
                    f'"resources" must contain a map of resource maps. Found a '
                    f"[{type(snippet)}] instead")
            for key in snippet:
                if key not in RESOURCE_KEYS:
                    raise StackValidationFailed(
                        f'"{key}" is not a valid keyword inside a resource definition')
            if "type" not in snippet:
                raise StackValidationFailed(f'Resource {name} is missing "type"')
            for key, (kinds, typename) in RESOURCE_FIELD_TYPES.items():
                if key in snippet and snippet[key] is not None and not isinstance(
                        snippet[key], kinds):
                    raise StackValidationFailed(
                        f"Resource {name} {key} type must be {typename}")
            if snippet["type"] is None:
                raise StackValidationFailed(f"Resource {name} type type must be string")
            deps = snippet.get("depends_on")
            if isinstance(deps, list) and not all(isinstance(d, str) for d in deps):
                raise StackValidationFailed(
                    f"Resource {name} depends_on must be a list of strings")
        for name, output in self.outputs.items():
            if not isinstance(output, dict):
                raise StackValidationFailed(
                    f"Output definitions must be a map. Found a {type(output).__name__} "
                    f"instead")
            for key in output:
                if key not in OUTPUT_KEYS:
                    raise StackValidationFailed(
                        f'"{key}" is not a valid keyword inside an output definition')
            if not isinstance(output.get("description", ""), str):
                raise StackValidationFailed(f"Output {name} description must be a string")
            if not isinstance(output.get("condition", ""), str | bool | dict):
                raise StackValidationFailed(
                    f"Output {name} condition type must be string_or_boolean")
        groups = self.t.get("parameter_groups") or []
        if not isinstance(groups, list):
            raise StackValidationFailed("Parameter Groups error: parameter_groups: "
                                        "The parameter_groups should be a list.")
        for group in groups:
            params = group.get("parameters") if isinstance(group, dict) else None
            if not isinstance(params, list):
                raise StackValidationFailed("Parameter Groups error: parameter_groups."
                                            ": The parameters must be provided for each "
                                            "parameter group.")
            for p in params:
                if not isinstance(p, str) or p not in self.parameters:
                    raise StackValidationFailed(f"Parameter Groups error: parameter_groups."
                                                f": The grouped parameter {p} does not "
                                                f"reference a valid parameter.")

    def validate_structure(self) -> None:
        for name, snippet in self.resources.items():
            deps = snippet.get("depends_on")
            for dep in ([deps] if isinstance(deps, str) else deps or []):
                if dep not in self.resources:
                    raise InvalidTemplateReference(resource=dep, key=name)
            policy = snippet.get("deletion_policy")
            if policy is not None:
                allowed = ["Delete", "Retain", "Snapshot"]
                if self.at_least("2016-10-14"):
                    allowed += ["delete", "retain", "snapshot"]
                if policy not in allowed:
                    raise StackValidationFailed(
                        f'Invalid deletion policy "{policy}"')
            if "condition" in snippet and not self.at_least("2016-10-14"):
                raise StackValidationFailed(
                    '"condition" is not a valid keyword inside a resource definition')
        seen: set[str] = set()
        for group in self.t.get("parameter_groups") or []:
            for p in group["parameters"]:
                if p in seen:
                    raise StackValidationFailed(f"Parameter Groups error: parameter_groups."
                                                f": The {p} parameter must be assigned to "
                                                f"one parameter group only.")
                if p not in self.parameters:
                    raise StackValidationFailed(f"Parameter Groups error: parameter_groups."
                                                f": The grouped parameter {p} does not "
                                                f"reference a valid parameter.")
                seen.add(p)
        self.check_functions(self.t.get("resources"), "resources")
        self.check_functions(self.t.get("outputs"), "outputs")

    def check_functions(self, value: Any, where: str) -> None:
        """A function unknown to this template version is a 400 before anything runs."""
        if isinstance(value, dict):
            if len(value) == 1:
                key = next(iter(value))
                span = FUNCTIONS.get(key)
                if span is not None and not self._has(key):
                    raise InvalidTemplateVersion(explanation=(
                        f'"{key}" is not supported by heat_template_version '
                        f"{self.version}"))
            for v in value.values():
                self.check_functions(v, where)
        elif isinstance(value, list):
            for v in value:
                self.check_functions(v, where)

    def _has(self, fn: str) -> bool:
        span = FUNCTIONS.get(fn)
        if span is None:
            return False
        first, last = span
        return first <= self.version and (last is None or self.version <= last)

    def is_function(self, value: Any) -> str | None:
        if isinstance(value, dict) and len(value) == 1:
            key = next(iter(value))
            if self._has(key):
                return key
        return None

    def functions(self) -> list[str]:
        return sorted(f for f in FUNCTIONS if self._has(f))

    # --- static analysis
    def references(self, value: Any) -> set[str]:
        """Resource names a snippet refers to through get_resource / get_attr."""
        found: set[str] = set()

        def walk(v: Any) -> None:
            fn = self.is_function(v)
            if fn == "get_resource" and isinstance(v[fn], str):
                found.add(v[fn])
            elif fn == "get_attr" and isinstance(v[fn], list) and v[fn] and isinstance(
                    v[fn][0], str):
                found.add(v[fn][0])
            if isinstance(v, dict):
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)

        walk(value)
        return found

    def explicit_dependencies(self, name: str) -> set[str]:
        snippet = self.resources[name]
        deps = snippet.get("depends_on")
        out = set([deps] if isinstance(deps, str) else deps or [])
        out |= self.references({k: v for k, v in snippet.items()
                                if k in ("properties", "metadata")})
        return out


# ------------------------------------------------------------------ resolution
class Resolver:
    """Evaluates snippets. `get_resource(name)` / `get_attr(name, attr)` are the stack's
    callbacks; they return UNKNOWN for what cannot be known yet."""

    def __init__(self, template: Template, params: dict[str, Any],
                 get_resource: Callable[[str], Any],
                 get_attr: Callable[[str, str | None], Any],
                 conditions: dict[str, bool] | None = None,
                 facade: Callable[[str], Any] | None = None) -> None:
        self.template = template
        self.params = params
        self.get_resource = get_resource
        self.get_attr_cb = get_attr
        self.condition_values = conditions
        self.facade = facade
        self.budget = Budget()

    # --- conditions
    def conditions(self) -> dict[str, bool]:
        if self.condition_values is None:
            self.condition_values = {}
            defs = self.template.conditions
            pending = dict(defs)

            def evaluate(name: str, stack: tuple[str, ...] = ()) -> bool:
                if name in self.condition_values:  # type: ignore[operator]
                    return self.condition_values[name]  # type: ignore[index]
                if name in stack:
                    raise StackValidationFailed(f"Circular definition for condition {name}")
                value = self.condition(pending[name], stack + (name,), evaluate)
                self.condition_values[name] = value  # type: ignore[index]
                return value

            for name in defs:
                evaluate(name)
        return self.condition_values

    def condition(self, expr: Any, stack: tuple[str, ...] = (),
                  evaluate: Callable[..., bool] | None = None) -> bool:
        if isinstance(expr, bool):
            return expr
        if isinstance(expr, str):
            if evaluate is not None and expr in self.template.conditions:
                return evaluate(expr, stack)
            values = self.conditions()
            if expr not in values:
                raise StackValidationFailed(f'Invalid condition "{expr}"')
            return values[expr]
        fn = self.template.is_function(expr)
        if fn not in CONDITION_FUNCTIONS:
            raise StackValidationFailed(f'The definition of condition "{expr}" is invalid')
        if fn in ("not", "and", "or"):
            args = expr[fn]
            if fn == "not":
                return not self.condition(args, stack, evaluate)
            if not isinstance(args, list) or len(args) < 2:
                raise StackValidationFailed(f'Arguments to "{fn}" must be of the form '
                                            f"[condition_1, condition_2, ...]")
            results = [self.condition(a, stack, evaluate) for a in args]
            return all(results) if fn == "and" else any(results)
        value = self.resolve(expr)
        return bool(value)

    # --- values
    def resolve(self, value: Any) -> Any:
        fn = self.template.is_function(value)
        if fn is not None:
            return getattr(self, "_fn_" + fn.replace("::", "_").lower())(value[fn])
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def _fn_get_param(self, args: Any) -> Any:
        args = self.resolve(args)
        path = args if isinstance(args, list) else [args]
        if not path or not isinstance(path[0], str):
            raise StackValidationFailed('Arguments to "get_param" must be of the form '
                                        "[param_name, path1, ..., pathn]")
        name = path[0]
        if name not in self.params:
            raise UserParameterMissing(key=name)
        return _navigate(self.params[name], path[1:], "get_param")

    def _fn_get_resource(self, args: Any) -> Any:
        if not isinstance(args, str):
            raise StackValidationFailed('Argument to "get_resource" must be a string')
        if args not in self.template.resources:
            raise InvalidTemplateReference(resource=args, key="unknown")
        return self.get_resource(args)

    def _fn_get_attr(self, args: Any) -> Any:
        if not isinstance(args, list) or not args or (
                len(args) < 2 and not self.template.at_least("2015-10-15")):
            raise StackValidationFailed('Arguments to "get_attr" must be of the form '
                                        "[resource_name, attribute, (path), ...]")
        resolved = [args[0]] + [self.resolve(a) for a in args[1:]]
        name = resolved[0]
        if not isinstance(name, str) or name not in self.template.resources:
            raise InvalidTemplateReference(resource=name, key="unknown")
        attr = resolved[1] if len(resolved) > 1 else None
        if isinstance(attr, str) and attr.startswith("resource.") and attr.count(".") == 1 \
                and len(resolved) > 2:
            # ResourceGroup's [group, resource.<n>, <attr>, ...]: that member's attribute
            attr = f"{attr}.{resolved[2]}"
            resolved = resolved[:2] + resolved[3:]
        value = self.get_attr_cb(name, attr)
        if value is UNKNOWN or len(resolved) <= 2:
            return value
        return _navigate(value, resolved[2:], "get_attr", lenient=True)

    def _fn_get_file(self, args: Any) -> Any:
        if not isinstance(args, str):
            raise StackValidationFailed('Argument to "get_file" must be a string')
        if args not in self.template.files:
            raise StackValidationFailed(f'No content found in the "files" section for '
                                        f"get_file path: {args}")
        return self.template.files[args]

    def _fn_resource_facade(self, args: Any) -> Any:
        if args not in ("metadata", "deletion_policy", "update_policy"):
            raise StackValidationFailed(f'Invalid resource_facade argument "{args}"')
        return self.facade(args) if self.facade else ({} if args != "deletion_policy"
                                                      else "Delete")

    def _str_replace(self, args: Any, fn: str) -> Any:
        args = self.resolve(args)
        if not isinstance(args, dict) or "template" not in args or "params" not in args:
            raise StackValidationFailed(f'"{fn}" syntax should be {fn}:\\n  template: '
                                        f"<template string>\\n  params: <parameter mappings>")
        template, params = args["template"], args["params"]
        if contains_unknown(template) or contains_unknown(params):
            return UNKNOWN
        if not isinstance(template, str):
            raise StackValidationFailed(f'"{fn}" template must be a string')
        if not isinstance(params, dict):
            raise StackValidationFailed(f'"{fn}" params must be a map')
        mapping: dict[str, str] = {}
        for key, value in params.items():
            if value is None:
                value = ""
            elif isinstance(value, dict | list):
                if not self.template.at_least("2015-10-15"):
                    raise StackValidationFailed(f'"{fn}" params must be strings or numbers')
                value = json.dumps(value)
            elif isinstance(value, bool):
                value = "true" if value else "false"
            else:
                value = str(value)
            if fn == "str_replace_vstrict" and value == "":
                raise StackValidationFailed(f'"str_replace_vstrict" has an empty value for '
                                            f'"{key}"')
            mapping[str(key)] = value
        if fn != "str_replace":
            missing = [k for k in mapping if k not in template]
            if missing:
                raise StackValidationFailed(
                    f"The following params were not found in the template: "
                    f"{','.join(missing)}")
        if not mapping:
            return template
        keys = sorted(mapping, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(k) for k in keys))
        grows = {k: len(v) - len(k) for k, v in mapping.items()}
        self.budget.charge(len(template) + sum(grows[m.group(0)] for m in
                                               pattern.finditer(template)), fn)
        return pattern.sub(lambda m: mapping[m.group(0)], template)

    def _fn_str_replace(self, args: Any) -> Any:
        return self._str_replace(args, "str_replace")

    def _fn_str_replace_strict(self, args: Any) -> Any:
        return self._str_replace(args, "str_replace_strict")

    def _fn_str_replace_vstrict(self, args: Any) -> Any:
        return self._str_replace(args, "str_replace_vstrict")

    def _fn_fn_replace(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed('Arguments to "Fn::Replace" must be [map, string]')
        return self._str_replace({"template": args[1], "params": args[0]}, "str_replace")

    def _join_item(self, item: Any) -> str:
        if isinstance(item, str):
            return item
        if item is None:
            return ""
        if isinstance(item, dict | list) or self.template.at_least("2015-10-15"):
            return json.dumps(item) if not isinstance(item, int | float) else str(item)
        return str(item)

    def _fn_list_join(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) < 2 or not isinstance(args[0], str):
            raise StackValidationFailed('Incorrect arguments to "list_join" should be: '
                                        "list_join:\\n- <delim>\\n- [<str>, <str>, ...]")
        if contains_unknown(args):
            return UNKNOWN
        if len(args) > 2 and not self.template.at_least("2015-10-15"):
            raise StackValidationFailed('Incorrect arguments to "list_join"')
        items: list[Any] = []
        for lst in args[1:]:
            if lst is None:
                continue
            if not isinstance(lst, list):
                raise StackValidationFailed(f'Incorrect arguments to "list_join": "{lst}" '
                                            f"is not a list")
            items += lst
        self.budget.charge(len(items), "list_join")
        parts, size = [], len(args[0]) * max(len(items) - 1, 0)
        for item in items:
            part = self._join_item(item)
            size += len(part)
            self.budget.charge(len(part), "list_join")
            parts.append(part)
        self.budget.charge(size, "list_join")
        return args[0].join(parts)

    def _fn_fn_join(self, args: Any) -> Any:
        return self._fn_list_join(args)

    def _fn_str_split(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) not in (2, 3):
            raise StackValidationFailed('Incorrect arguments to "str_split" should be: '
                                        "str_split:\\n- <delimiter>\\n- <string>\\n- "
                                        "<index> (optional)")
        if contains_unknown(args):
            return UNKNOWN
        delim, text = args[0], args[1]
        if not isinstance(text, str):
            raise StackValidationFailed(f'Incorrect arguments to "str_split": "{text}" is '
                                        f"not a string")
        parts = text.split(delim)
        if len(args) == 3:
            try:
                return parts[int(args[2])]
            except (IndexError, ValueError):
                raise StackValidationFailed(f'Incorrect index to "str_split" should be '
                                            f"between 0 and {len(parts) - 1}") from None
        return parts

    def _fn_fn_split(self, args: Any) -> Any:
        return self._fn_str_split(args)

    def _fn_fn_select(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed('Arguments to "Fn::Select" must be [index, collection]')
        index, coll = args
        if contains_unknown(args):
            return UNKNOWN
        try:
            if isinstance(coll, dict):
                return coll.get(index)
            return coll[int(index)]
        except (IndexError, ValueError, TypeError):
            return ""

    def _fn_fn_base64(self, args: Any) -> Any:
        return self.resolve(args)

    def _fn_fn_memberlisttomap(self, args: Any) -> Any:
        raise StackValidationFailed('"Fn::MemberListToMap" is not supported')

    def _fn_digest(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2 or not isinstance(args[0], str):
            raise StackValidationFailed('Argument to function "digest" must be a list of '
                                        "algorithm and value")
        if contains_unknown(args):
            return UNKNOWN
        algorithm, value = args
        if algorithm.lower() not in hashlib.algorithms_available:
            raise StackValidationFailed(f'Algorithm must be one of '
                                        f"{sorted(hashlib.algorithms_guaranteed)}")
        if not isinstance(value, str):
            raise StackValidationFailed('The "value" argument to "digest" must be a string')
        return hashlib.new(algorithm.lower(), value.encode()).hexdigest()

    def _fn_repeat(self, args: Any) -> Any:
        if not isinstance(args, dict) or "for_each" not in args or "template" not in args:
            raise StackValidationFailed('The "for_each" argument to "repeat" must contain a '
                                        "map")
        for_each = self.resolve(args["for_each"])
        if not isinstance(for_each, dict) or not for_each:
            raise StackValidationFailed('The "for_each" argument to "repeat" must contain a '
                                        "map")
        if contains_unknown(for_each):
            return UNKNOWN
        for key, lst in for_each.items():
            if not isinstance(lst, list):
                raise StackValidationFailed(f'The values of the "for_each" argument to '
                                            f'"repeat" must be lists ({key})')
        keys = list(for_each)
        permutations = to_bool(args.get("permutations", True))
        combos: Any
        if permutations:
            count = 1
            for k in keys:
                count *= len(for_each[k])
                self.budget.charge(count, "repeat")  # before the product grows further
            combos = itertools.product(*(for_each[k] for k in keys))
        else:
            lengths = {len(for_each[k]) for k in keys}
            if len(lengths) != 1:
                raise StackValidationFailed('Loops in "repeat" must have the same length '
                                            "when permutations is false")
            count = lengths.pop()
            self.budget.charge(count, "repeat")
            combos = zip(*(for_each[k] for k in keys), strict=True)
        template = args["template"]
        self.budget.work(count * nodes(template))  # each item copies it
        out = []
        for combo in combos:
            subs = dict(zip(keys, combo, strict=True))
            out.append(self.resolve(_substitute(template, subs, self.budget)))
        return out

    def _fn_map_merge(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list):
            raise StackValidationFailed('Incorrect arguments to "map_merge" should be: '
                                        "map_merge:\\n- <map>\\n- <map>")
        out: dict[str, Any] = {}
        for m in args:
            if m is UNKNOWN:
                return UNKNOWN
            if m is None:
                continue
            if not isinstance(m, dict):
                raise StackValidationFailed(f'Incorrect arguments: Items to merge must be '
                                            f"maps. {m} is not a map")
            out.update(m)
        return out

    def _fn_map_replace(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2 or not isinstance(args[1], dict):
            raise StackValidationFailed('Incorrect arguments to "map_replace" should be: '
                                        "map_replace:\\n- <map>\\n- keys: <map>\\n  values: "
                                        "<map>")
        mapping, spec = args
        if contains_unknown(args):
            return UNKNOWN
        if not isinstance(mapping, dict):
            raise StackValidationFailed('Incorrect arguments to "map_replace": first '
                                        "argument must be a map")
        keys, values = spec.get("keys") or {}, spec.get("values") or {}
        out: dict[str, Any] = {}
        for k, v in mapping.items():
            nk = keys.get(k, k)
            if nk in out:
                raise StackValidationFailed(f'key replacement {nk} collides with a key in '
                                            f'the input map')
            out[nk] = values.get(v, v) if isinstance(v, str | int | float) else v
        return out

    def _fn_list_concat(self, args: Any, unique: bool = False) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list):
            raise StackValidationFailed('Incorrect arguments to "list_concat" should be: '
                                        "list_concat:\\n- <list>\\n- <list>")
        if contains_unknown(args):
            return UNKNOWN
        out: list[Any] = []
        for lst in args:
            if lst is None:
                continue
            if not isinstance(lst, list):
                raise StackValidationFailed(f'Incorrect arguments to "list_concat": {lst} '
                                            f"is not a list")
            self.budget.charge(len(out) + len(lst), "list_concat")
            if not unique:
                out += lst
                continue
            seen: set[Any] = set()  # hashable items: a set, not a scan of `out`
            unhashable: list[Any] = []
            for item in out:
                try:
                    seen.add(item)
                except TypeError:
                    unhashable.append(item)
            for item in lst:
                try:
                    if item in seen:
                        continue
                    seen.add(item)
                except TypeError:
                    self.budget.work(len(unhashable))
                    if item in unhashable:
                        continue
                    unhashable.append(item)
                out.append(item)
        return out

    def _fn_list_concat_unique(self, args: Any) -> Any:
        return self._fn_list_concat(args, unique=True)

    def _fn_contains(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2 or not isinstance(args[1], list):
            raise StackValidationFailed('Arguments to "contains" must be of the form '
                                        "[value, sequence]")
        return args[0] in args[1]

    def _fn_equals(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed('Arguments to "equals" must be of the form '
                                        "[value_1, value_2]")
        return args[0] == args[1]

    def _fn_not(self, args: Any) -> Any:
        return not self.condition(args)

    def _fn_and(self, args: Any) -> Any:
        return self.condition({"and": args})

    def _fn_or(self, args: Any) -> Any:
        return self.condition({"or": args})

    def _fn_if(self, args: Any) -> Any:
        if not isinstance(args, list) or len(args) != 3:
            raise StackValidationFailed('Arguments to "if" must be of the form '
                                        "[condition_name, value_if_true, value_if_false]")
        chosen = args[1] if self.condition(args[0]) else args[2]
        return self.resolve(chosen)

    def _fn_filter(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed('Arguments to "filter" must be of the form '
                                        "[values, sequence]")
        remove, seq = args
        if contains_unknown(args):
            return UNKNOWN
        self.budget.work(len(seq or []) * max(len(remove or []), 1))
        return [v for v in seq or [] if v not in (remove or [])]

    def _fn_make_url(self, args: Any) -> Any:
        args = self.resolve(args)
        if not isinstance(args, dict):
            raise StackValidationFailed('The arguments to "make_url" must be a map')
        if contains_unknown(args):
            return UNKNOWN
        scheme, host = args.get("scheme", "http"), str(args.get("host", ""))
        if ":" in host:
            host = f"[{host}]"
        port = f":{args['port']}" if args.get("port") not in (None, "") else ""
        path = args.get("path", "")
        url = f"{scheme}://{host}{port}{quote(str(path))}"
        query = args.get("query") or {}
        if query:
            url += "?" + "&".join(f"{quote(str(k))}={quote(str(v))}" for k, v in query.items())
        if args.get("fragment"):
            url += "#" + quote(str(args["fragment"]))
        return url

    def _fn_yaql(self, args: Any) -> Any:
        raise StackValidationFailed('The function "yaql" is not supported by this cloud')


def _substitute(value: Any, subs: dict[str, Any], budget: Budget) -> Any:
    if isinstance(value, str):
        for key, replacement in subs.items():
            if value == key:
                return replacement
            if isinstance(replacement, str | int | float) and key in value:
                text = str(replacement)
                budget.charge(len(value) + value.count(key) * (len(text) - len(key)),
                              "repeat")
                value = value.replace(key, text)
        return value
    if isinstance(value, dict):
        return {_substitute(k, subs, budget): _substitute(v, subs, budget)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, subs, budget) for v in value]
    return value


def _navigate(value: Any, path: list[Any], fn: str, lenient: bool = False) -> Any:
    for key in path:
        if value is UNKNOWN:
            return UNKNOWN
        if value is None:
            return None
        if isinstance(value, dict):
            if key not in value:
                if lenient:
                    return None
                raise StackValidationFailed(f'"{key}" not found in {fn} path')
            value = value[key]
        elif isinstance(value, list):
            try:
                value = value[int(key)]
            except (IndexError, ValueError, TypeError):
                if lenient:
                    return None
                raise StackValidationFailed(f"Index {key} out of range in {fn} path") from None
        else:
            if lenient:
                return None
            raise StackValidationFailed(f'Path components in "{fn}" must be strings or '
                                        f"integers")
    return value


def description_of(t: dict[str, Any]) -> str:
    """A template's description as Heat reads it: "No description" when it has none (a
    stack's show and list and a preview's `template_description` say so)."""
    found = t.get("description", t.get("Description"))
    return "No description" if found is None else str(found)
