"""Placement's request-schema validation: the common jsonschema helper (as upstream's
`jsonschema.validate`, which reports the `best_match` error), with placement's formats."""

from __future__ import annotations

from typing import Any

from stackling.common import schema as common_schema
from stackling.placement.providers import normalize_uuid


class ValidationError(ValueError):
    pass


# Placement accepts a uuid in any of the forms oslo normalises (dashes optional).
FORMATS = {"uuid": lambda value: normalize_uuid(value) is not None}


def validate(value: Any, schema: dict[str, Any]) -> None:
    """Raise ValidationError (jsonschema's message) unless `value` matches `schema`."""
    err = common_schema.first_error(schema, value, formats=FORMATS, best=True)
    if err is not None:
        raise ValidationError(err.message)
