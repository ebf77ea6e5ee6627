"""Compute request validation: the common jsonschema helper, errors in Nova's words.

Nova reports the first error as "Invalid input for field/attribute <last path element>.
Value: <value>. <message>", or the bare message when the error has no path (a missing
required key at the top), and an invalid server name as InvalidName's own message.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from typing import Any

from stackling.common import schema as common_schema
from stackling.common.schema import is_uuid_like
from stackling.compute.errors import ValidationError

INVALID_NAME = ("An invalid 'name' value was provided. The name must be: printable characters. "
                "Can not start or end with whitespace.")


class InvalidName(ValueError):
    pass


def _ip(version: int) -> Any:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False

    return check


def _base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _name(value: str) -> bool:
    # Nova's format checker raises InvalidName, which it reports without a field path.
    if value != value.strip() or not value.isprintable():
        raise InvalidName(INVALID_NAME)
    return True


# Nova's FormatChecker entries for the formats our compute schemas use.
FORMATS = {"uuid": is_uuid_like, "ipv4": _ip(4), "ipv6": _ip(6), "base64": _base64,
           "name": _name}


def validate(schema: dict[str, Any], body: Any) -> Any:
    """Raise Nova's 400 for the first schema violation; return the body."""
    err = common_schema.first_error(schema, body, formats=FORMATS)
    if err is None:
        return body
    if isinstance(err.cause, InvalidName):
        detail = INVALID_NAME
    elif err.path:
        detail = (f"Invalid input for field/attribute {err.path[-1]}. "
                  f"Value: {err.instance}. {err.message}")
    else:
        detail = err.message
    raise ValidationError(detail=detail)


def validate_query(schema: dict[str, Any], query: dict[str, Any]) -> None:
    err = common_schema.first_error(schema, query, formats=FORMATS)
    if err is not None:
        detail = (f"Invalid input for query parameters {err.path[0]}. Value: {err.instance}. "
                  f"{err.message}") if err.path else err.message
        raise ValidationError(detail=detail)
