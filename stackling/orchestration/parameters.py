"""Template parameters: declared types, defaults, constraints, hidden and immutable."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from stackling.orchestration.errors import (
    ImmutableParameterModified,
    StackValidationFailed,
    UnknownUserParameter,
    UserParameterMissing,
)
from stackling.orchestration.limits import check_document
from stackling.orchestration.properties import Constraint, to_bool

TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")
PARAM_KEYS = {"type", "label", "description", "default", "hidden", "constraints",
              "immutable", "tags"}
CONSTRAINT_KEYS = {"length", "range", "modulo", "allowed_values", "allowed_pattern",
                   "custom_constraint"}


def _constraints(name: str, schema: dict[str, Any]) -> list[Constraint]:
    out = []
    for item in schema.get("constraints") or []:
        if not isinstance(item, dict):
            raise StackValidationFailed(f"Invalid parameter constraints for parameter {name},"
                                        f" expected a list")
        kinds = [k for k in item if k in CONSTRAINT_KEYS]
        if len(kinds) != 1 or set(item) - CONSTRAINT_KEYS - {"description"}:
            raise StackValidationFailed(f"Invalid key '{next(iter(item), '')}' for parameter "
                                        f"constraints")
        out.append(Constraint(kinds[0], item[kinds[0]], item.get("description")))
    return out


def validate_schema(params: dict[str, Any]) -> None:
    for name, schema in params.items():
        if not isinstance(schema, dict):
            raise StackValidationFailed(f"Invalid parameter {name}: must be a map")
        for key in schema:
            if key not in PARAM_KEYS:
                raise StackValidationFailed(f"Invalid key '{key}' for parameter ({name})")
        if "type" not in schema:
            raise StackValidationFailed(f"Missing parameter type for parameter: {name}")
        if schema["type"] not in TYPES:
            raise StackValidationFailed(f"Invalid type ({schema['type']})")
        _constraints(name, schema)


def coerce(name: str, kind: str, value: Any) -> Any:
    try:
        if kind == "string":
            if isinstance(value, dict | list):
                raise ValueError(f"Value must be a string; got {json.dumps(value)}")
            return value if isinstance(value, str) else (
                json.dumps(value) if isinstance(value, bool) else str(value))
        if kind == "number":
            if isinstance(value, bool):
                raise ValueError(f"Value '{value}' is not a number")
            if isinstance(value, int | float):
                return value
            text = str(value).strip()
            try:
                return int(text)
            except ValueError:
                return float(text)
        if kind == "boolean":
            return to_bool(value)
        if kind == "comma_delimited_list":
            if isinstance(value, list):
                return [str(v) for v in value]
            text = str(value)
            return text.split(",") if text else []
        if kind == "json":
            if isinstance(value, str):
                try:
                    value = json.loads(value) if value else {}
                except RecursionError:
                    raise ValueError("Value must be valid JSON: it nests too deeply") from None
                check_document(value, "parameter value")
            if not isinstance(value, dict | list):
                raise ValueError("Value must be valid JSON")
            return value
    except ValueError as err:
        message = str(err)
        if kind == "number" and "is not a number" not in message:
            message = f"Value '{value}' is not a number"
        if kind == "json" and "JSON" not in message:
            message = f"Value must be valid JSON: {err}"
        raise StackValidationFailed(f"Parameter '{name}' is invalid: {message}") from None
    return value


def resolve(params: dict[str, Any], given: dict[str, Any], defaults: dict[str, Any],
            checker: Callable[[str, Any], None] | None = None,
            strict: bool = True) -> dict[str, Any]:
    """Typed values of every declared parameter from the user's values, the
    environment's `parameter_defaults` and the template defaults."""
    for key in given:
        if key not in params:
            raise UnknownUserParameter(key=key)
    out: dict[str, Any] = {}
    for name, schema in params.items():
        if name in given:
            value = given[name]
        elif name in defaults:
            value = defaults[name]
        elif "default" in schema:
            value = schema["default"]
        else:
            if strict:
                raise UserParameterMissing(key=name)
            out[name] = None
            continue
        typed = coerce(name, schema["type"], value)
        for constraint in _constraints(name, schema):
            try:
                constraint.check(typed, checker)
            except ValueError as err:
                raise StackValidationFailed(f"Parameter '{name}' is invalid: {err}") from None
            except StackValidationFailed as err:
                raise StackValidationFailed(f"Parameter '{name}' is invalid: {err.text}") from None
        out[name] = typed
    return out


def check_immutable(params: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> None:
    changed = [n for n, s in params.items() if s.get("immutable") and n in old
               and n in new and old[n] != new[n]]
    if changed:
        raise ImmutableParameterModified(keys=", ".join(sorted(changed)))


def display(params: dict[str, Any], values: dict[str, Any]) -> dict[str, str]:
    """Stack show's `parameters`: every value as a string, hidden ones masked."""
    out = {}
    for name, value in values.items():
        schema = params.get(name) or {}
        if schema.get("hidden"):
            out[name] = "******"
        elif isinstance(value, list) and schema.get("type") == "comma_delimited_list":
            out[name] = ",".join(value)
        elif isinstance(value, dict | list):
            out[name] = json.dumps(value)
        elif isinstance(value, bool):
            out[name] = "True" if value else "False"
        else:
            out[name] = "" if value is None else str(value)
    return out


def validate_view(params: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`POST /validate`'s `Parameters` (Heat's CFN-style keys)."""
    out = {}
    for name, schema in params.items():
        kind = schema["type"]
        view: dict[str, Any] = {
            "Type": {"string": "String", "number": "Number", "comma_delimited_list":
                     "CommaDelimitedList", "json": "Json", "boolean": "Boolean"}[kind],
            "Description": schema.get("description", ""),
            "Label": schema.get("label", name),
            "NoEcho": "true" if schema.get("hidden") else "false",
        }
        if name in defaults:
            view["Default"] = defaults[name]
        elif "default" in schema:
            view["Default"] = schema["default"]
        for c in _constraints(name, schema):
            if c.kind == "allowed_values":
                view["AllowedValues"] = c.value
            elif c.kind == "allowed_pattern":
                view["AllowedPattern"] = c.value
            elif c.kind == "length":
                if "min" in c.value:
                    view["MinLength"] = c.value["min"]
                if "max" in c.value:
                    view["MaxLength"] = c.value["max"]
            elif c.kind == "range":
                if "min" in c.value:
                    view["MinValue"] = c.value["min"]
                if "max" in c.value:
                    view["MaxValue"] = c.value["max"]
            elif c.kind == "custom_constraint":
                view["CustomConstraint"] = c.value
            if c.description:
                view["ConstraintDescription"] = c.description
        out[name] = view
    return out
