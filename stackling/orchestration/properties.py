"""Property and parameter schemas: types, constraints, coercion and Heat's messages.

A resource type declares `properties_schema = {"name": Property("string", ...)}`; the
engine validates a resource's resolved properties against it (unknown keys, required
keys, types, constraints) and fills defaults. Values that are not resolvable yet (a
`get_attr` of a resource not created) are `UNKNOWN` and skip validation until they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stackling.common.patterns import PatternError, UserPattern
from stackling.orchestration.errors import StackValidationFailed


class _Unknown:
    """A value that cannot be known before the stack runs (e.g. a physical id)."""

    def __repr__(self) -> str:
        return "<unknown>"

    def __deepcopy__(self, memo: Any) -> _Unknown:
        return self


UNKNOWN: Any = _Unknown()


def contains_unknown(value: Any) -> bool:
    if value is UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(contains_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_unknown(v) for v in value)
    return False


TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")


def to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_STRINGS:
        return True
    if text in FALSE_STRINGS:
        return False
    raise ValueError(f"Unrecognized value '{value}', acceptable values are: "
                     f"'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")


# ------------------------------------------------------------------ constraints
@dataclass
class Constraint:
    kind: str  # length | range | modulo | allowed_values | allowed_pattern | custom_constraint
    value: Any
    description: str | None = None

    def check(self, value: Any, checker: CustomChecker | None) -> None:
        """Raise ValueError with Heat's message when `value` breaks the constraint."""
        try:
            self._check(value, checker)
        except ValueError as err:
            if self.description and self.kind != "custom_constraint":
                raise ValueError(self.description) from None
            raise err

    def _check(self, value: Any, checker: CustomChecker | None) -> None:
        kind, spec = self.kind, self.value
        if kind == "allowed_values":
            if value not in spec and str(value) not in [str(v) for v in spec]:
                raise ValueError(f'"{value}" is not an allowed value {_repr_list(spec)}')
        elif kind == "length":
            n = len(value)
            lo, hi = spec.get("min"), spec.get("max")
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                raise ValueError(f"length ({n}) is out of range (min: {lo}, max: {hi})")
        elif kind == "range":
            num = float(value)
            lo, hi = spec.get("min"), spec.get("max")
            if (lo is not None and num < lo) or (hi is not None and num > hi):
                raise ValueError(f"{value} is out of range (min: {lo}, max: {hi})")
        elif kind == "modulo":
            step, offset = spec.get("step"), spec.get("offset")
            if int(value) % int(step) != int(offset):
                raise ValueError(f"{value} is not a multiple of {step} with an offset of "
                                 f"{offset})")
        elif kind == "allowed_pattern":
            try:
                matches = isinstance(value, str) and UserPattern(spec).fullmatch(value)
            except PatternError as err:  # a bad or too costly pattern: a 400, not a hang
                raise ValueError(f'Invalid pattern "{spec}": {err}') from None
            if not matches:
                raise ValueError(f'"{value}" does not match pattern "{spec}"')
        elif kind == "custom_constraint":
            if checker is not None:
                checker(spec, value)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {self.kind: self.value}
        if self.description:
            out["description"] = self.description
        return out


def _repr_list(values: list[Any]) -> str:
    return "[" + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in values) + "]"


# (constraint name, value) -> None or ValueError; the engine passes one bound to the stack.
CustomChecker = Callable[[str, Any], None]


# ------------------------------------------------------------------ property schema
@dataclass
class Property:
    type: str  # string | integer | number | boolean | map | list | any
    description: str = ""
    required: bool = False
    default: Any = None
    update_allowed: bool = False
    immutable: bool = False
    constraints: list[Constraint] = field(default_factory=list)
    # list: the item schema (a Property); map: the keys' schemas (dict of Property), or
    # None for a free-form map.
    schema: Any = None

    def to_dict(self) -> dict[str, Any]:
        """`GET /resource_types/{type}`: the property's documented schema."""
        out: dict[str, Any] = {"type": self.type, "description": self.description,
                               "required": self.required, "update_allowed": self.update_allowed,
                               "immutable": self.immutable}
        if self.default is not None:
            out["default"] = self.default
        if self.constraints:
            out["constraints"] = [c.to_dict() for c in self.constraints]
        if isinstance(self.schema, Property):
            out["schema"] = {"*": self.schema.to_dict()}
        elif isinstance(self.schema, dict):
            out["schema"] = {k: v.to_dict() for k, v in self.schema.items()}
        return out


def coerce(prop: Property, value: Any) -> Any:
    """`value` as the property's type, or ValueError with Heat's message."""
    kind = prop.type
    if value is UNKNOWN:
        return value
    if kind == "string":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        if not isinstance(value, str):
            raise ValueError(f"Value must be a string; got {json.dumps(value)}")
        return value
    if kind == "integer":
        if isinstance(value, bool):
            raise ValueError(f"Value '{value}' is not an integer")
        try:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(str(value).strip()) if isinstance(value, str) else int(value)
        except (TypeError, ValueError):
            raise ValueError(f"Value '{value}' is not an integer") from None
    if kind == "number":
        if isinstance(value, bool):
            raise ValueError(f"Value '{value}' is not a number")
        if isinstance(value, int | float):
            return value
        try:
            text = str(value).strip()
            return int(text) if re.fullmatch(r"[-+]?\d+", text) else float(text)
        except (TypeError, ValueError):
            raise ValueError(f"Value '{value}' is not a number") from None
    if kind == "boolean":
        return to_bool(value)
    if kind == "map":
        if not isinstance(value, dict):
            raise ValueError(f"'{value}' is not a map")
        return value
    if kind == "list":
        if isinstance(value, str) or not isinstance(value, list):
            raise ValueError(f"'{value}' is not a list")
        return value
    return value


def validate_properties(schema: dict[str, Property], values: Any, path: str,
                        checker: CustomChecker | None = None,
                        strict_required: bool = True) -> dict[str, Any]:
    """The properties with defaults filled and values coerced; StackValidationFailed
    (`Property error: <path>[.<key>]: <message>`) otherwise."""
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise StackValidationFailed(f"Property error: {path}: Properties must be a map")
    for key in values:
        if key not in schema:
            raise StackValidationFailed(f"Property error: {path}: Unknown Property {key}")
    out: dict[str, Any] = {}
    for key, prop in schema.items():
        value = values.get(key)
        if value is None:
            if prop.required and strict_required:
                raise StackValidationFailed(
                    f"Property error: {path}: Property {key} not assigned")
            value = prop.default
            if value is None:
                out[key] = None
                continue
        out[key] = _validate_value(prop, value, f"{path}.{key}", checker)
    return out


def _validate_value(prop: Property, value: Any, path: str,
                    checker: CustomChecker | None) -> Any:
    if value is UNKNOWN:
        return value
    try:
        value = coerce(prop, value)
    except ValueError as err:
        raise StackValidationFailed(f"Property error: {path}: {err}") from None
    if prop.type == "list" and prop.schema is not None:
        value = [_validate_item(prop.schema, item, f"{path}[{i}]", checker)
                 for i, item in enumerate(value)]
    elif prop.type == "map" and isinstance(prop.schema, dict):
        value = validate_properties(prop.schema, value, path, checker)
    if contains_unknown(value):
        return value
    for constraint in prop.constraints:
        try:
            constraint.check(value, checker)
        except ValueError as err:
            raise StackValidationFailed(f"Property error: {path}: {err}") from None
    return value


def _validate_item(schema: Any, item: Any, path: str, checker: CustomChecker | None) -> Any:
    if isinstance(schema, dict):
        if item is UNKNOWN:
            return item
        return validate_properties(schema, item, path, checker)
    return _validate_value(schema, item, path, checker)
