"""A small JSON-schema validator with jsonschema's error messages, formatted as Nova does.

Nova validates request bodies with jsonschema and reports the first error as
"Invalid input for field/attribute <last path element>. Value: <value>. <message>",
or the bare message when the error has no path (a missing required key). We support
the keywords Nova's compute schemas use.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import uuid
from collections.abc import Iterator
from typing import Any

from stackling.compute.errors import ValidationError

_TYPES: dict[str, Any] = {
    "string": str, "object": dict, "array": list, "null": type(None), "boolean": bool,
}


INVALID_NAME = ("An invalid 'name' value was provided. The name must be: printable characters. "
                "Can not start or end with whitespace.")


class SchemaError(Exception):
    def __init__(self, message: str, path: list[Any], instance: Any) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.instance = instance


def is_uuid_like(value: Any) -> bool:
    """oslo's is_uuid_like: any case, hyphens optional."""
    try:
        return str(uuid.UUID(value)).replace("-", "") == str(value).lower().replace("-", "")
    except (TypeError, ValueError, AttributeError):
        return False


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def _format_ok(fmt: str, value: Any) -> bool:
    if not isinstance(value, str):
        return True
    if fmt == "uuid":
        return is_uuid_like(value)
    if fmt in ("ipv4", "ipv6"):
        try:
            ip = ipaddress.ip_address(value)
        except ValueError:
            return False
        return ip.version == (4 if fmt == "ipv4" else 6)
    if fmt == "base64":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return False
        return True
    return True


def _errors(schema: dict[str, Any], value: Any, path: list[Any]) -> Iterator[SchemaError]:
    types = schema.get("type")
    if types is not None:
        kinds = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, k) for k in kinds):
            shown = ", ".join(repr(k) for k in kinds)
            yield SchemaError(f"{value!r} is not of type {shown}", path, value)
            return
    if "enum" in schema and value not in schema["enum"]:
        yield SchemaError(f"{value!r} is not one of {schema['enum']!r}", path, value)
    if "oneOf" in schema:
        valid = [s for s in schema["oneOf"] if next(_errors(s, value, path), None) is None]
        if not valid:
            yield SchemaError(f"{value!r} is not valid under any of the given schemas", path, value)
        elif len(valid) > 1:
            yield SchemaError(f"{value!r} is valid under each of the given schemas", path, value)
    if "anyOf" in schema and not any(next(_errors(s, value, path), None) is None
                                     for s in schema["anyOf"]):
        yield SchemaError(f"{value!r} is not valid under any of the given schemas", path, value)
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            yield SchemaError(f"{value!r} is too short", path, value)
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            yield SchemaError(f"{value!r} is too long", path, value)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            yield SchemaError(f"{value!r} does not match {schema['pattern']!r}", path, value)
        fmt = schema.get("format")
        if fmt == "name" and (value != value.strip() or not value.isprintable()):
            # Nova raises InvalidName, reported without a field path.
            yield SchemaError(INVALID_NAME, [], value)
        elif fmt and not _format_ok(fmt, value):
            yield SchemaError(f"{value!r} is not a {fmt!r}", path, value)
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            yield SchemaError(f"{value!r} is less than the minimum of {schema['minimum']!r}",
                              path, value)
        if "maximum" in schema and value > schema["maximum"]:
            yield SchemaError(f"{value!r} is greater than the maximum of {schema['maximum']!r}",
                              path, value)
    if isinstance(value, dict):
        # jsonschema walks the keywords in schema order; Nova's schemas list
        # properties, then required, then additionalProperties.
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = []
        for key, item in value.items():
            matched = False
            if key in props:
                matched = True
                yield from _errors(props[key], item, [*path, key])
            for pattern, sub in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    yield from _errors(sub, item, [*path, key])
            if not matched:
                extra.append(key)
        for key in schema.get("required", ()):
            if key not in value:
                yield SchemaError(f"{key!r} is a required property", path, value)
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            yield SchemaError(f"{value!r} does not have enough properties", path, value)
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            yield SchemaError(f"{value!r} has too many properties", path, value)
        additional = schema.get("additionalProperties", True)
        if extra and additional is False:
            if patterns and not props:
                shown = ", ".join(repr(k) for k in sorted(extra))
                verb = "does" if len(extra) == 1 else "do"
                yield SchemaError(f"{shown} {verb} not match any of the regexes: "
                                  + ", ".join(repr(p) for p in sorted(patterns)), path, value)
            else:
                shown = ", ".join(repr(k) for k in extra)
                verb = "was" if len(extra) == 1 else "were"
                yield SchemaError(f"Additional properties are not allowed ({shown} {verb} "
                                  "unexpected)", path, value)
        elif extra and isinstance(additional, dict):
            for key in extra:
                yield from _errors(additional, value[key], [*path, key])
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            yield SchemaError(f"{value!r} is too short", path, value)
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            yield SchemaError(f"{value!r} is too long", path, value)
        if schema.get("uniqueItems"):
            seen: list[Any] = []
            for item in value:
                if item in seen:
                    yield SchemaError(f"{value!r} has non-unique elements", path, value)
                    break
                seen.append(item)
        if "items" in schema:
            for i, item in enumerate(value):
                yield from _errors(schema["items"], item, [*path, i])


def validate(schema: dict[str, Any], body: Any) -> Any:
    """Raise Nova's 400 for the first schema violation; return the body."""
    err = next(_errors(schema, body, []), None)
    if err is None:
        return body
    if err.path:
        detail = (f"Invalid input for field/attribute {err.path[-1]}. "
                  f"Value: {err.instance}. {err.message}")
    else:
        detail = err.message
    raise ValidationError(detail=detail)


def validate_query(schema: dict[str, Any], query: dict[str, Any]) -> None:
    err = next(_errors(schema, query, []), None)
    if err is not None:
        detail = (f"Invalid input for query parameters {err.path[-1]}. Value: {err.instance}. "
                  f"{err.message}") if err.path else err.message
        raise ValidationError(detail=detail)
