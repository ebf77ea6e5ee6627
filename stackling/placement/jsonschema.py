"""A small JSON Schema (draft 4 subset) validator for placement's request schemas.

Placement validates bodies and query strings with plain-dict schemas; messages follow
the jsonschema library's wording, which upstream puts in its 400 details.
"""

from __future__ import annotations

import re
from typing import Any

from stackling.placement.providers import normalize_uuid

_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "number": (int, float), "integer": int,
    "boolean": bool, "null": type(None),
}


class ValidationError(ValueError):
    pass


def _is_type(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[kind])


def _fmt(value: Any) -> str:
    return repr(value)


def validate(value: Any, schema: dict[str, Any]) -> None:
    """Raise ValidationError (jsonschema's message) unless `value` matches `schema`."""
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is_type(value, k) for k in kinds):
            names = ", ".join(repr(k) for k in kinds)
            raise ValidationError(f"{_fmt(value)} is not of type {names}")
    if "enum" in schema and value not in schema["enum"]:
        raise ValidationError(f"{_fmt(value)} is not one of {schema['enum']!r}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise ValidationError(f"{_fmt(value)} is too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ValidationError(f"{_fmt(value)} is too long")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise ValidationError(f"{_fmt(value)} does not match {schema['pattern']!r}")
        if schema.get("format") == "uuid" and normalize_uuid(value) is None:
            raise ValidationError(f"{_fmt(value)} is not a 'uuid'")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ValidationError(f"{_fmt(value)} is less than the minimum of {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ValidationError(
                f"{_fmt(value)} is greater than the maximum of {schema['maximum']}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise ValidationError(f"{_fmt(value)} is too short")
        if schema.get("uniqueItems"):
            seen: list[Any] = []
            for item in value:
                if item in seen:
                    raise ValidationError(f"{_fmt(value)} has non-unique elements")
                seen.append(item)
        if "items" in schema:
            for item in value:
                validate(item, schema["items"])
    if isinstance(value, dict):
        _validate_object(value, schema)
    for sub in ("anyOf", "oneOf"):
        if sub in schema:
            errors = []
            for option in schema[sub]:
                try:
                    validate(value, option)
                    break
                except ValidationError as exc:
                    errors.append(exc)
            else:
                raise ValidationError(f"{_fmt(value)} is not valid under any of the given schemas")


def _validate_object(value: dict[str, Any], schema: dict[str, Any]) -> None:
    for name in schema.get("required", ()):
        if name not in value:
            raise ValidationError(f"{name!r} is a required property")
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        raise ValidationError(f"{_fmt(value)} does not have enough properties")
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = []
    for key, item in value.items():
        matched = False
        if key in props:
            validate(item, props[key])
            matched = True
        for pattern, sub in patterns.items():
            if re.search(pattern, key):
                validate(item, sub)
                matched = True
        if not matched:
            extra.append(key)
    additional = schema.get("additionalProperties", True)
    if extra and additional is False:
        if patterns and not props:
            regexes = ", ".join(repr(p) for p in sorted(patterns))
            raise ValidationError(f"{extra[0]!r} does not match any of the regexes: {regexes}")
        listed = ", ".join(repr(k) for k in sorted(extra))
        verb = "was" if len(extra) == 1 else "were"
        raise ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")
    if extra and isinstance(additional, dict):
        for key in extra:
            validate(value[key], additional)
