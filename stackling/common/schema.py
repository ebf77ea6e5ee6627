"""One JSON-schema validator for every service: the `jsonschema` library, as upstream
Nova, Placement, Keystone, Glance and Heat use it. Each service renders the error in its
own upstream words (compute/validation.py, placement/api/util.py, image/validation.py).

`jsonschema` costs ~150 ms to import, so it is imported on the first validation, not
at start-up; validators are built once per (schema, formats) and cached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# A format name -> a check returning False (or raising ValueError) for a bad string.
FormatChecks = Mapping[str, Callable[[str], bool]]

_validators: dict[tuple[int, int], tuple[Any, Any]] = {}


class SchemaViolation(Exception):
    """The error a service renders: jsonschema's message, the failing value, its path."""

    def __init__(self, message: str, path: list[Any], instance: Any, cause: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.instance = instance
        self.cause = cause  # what a format check raised, if anything


def _validator(schema: Mapping[str, Any], formats: FormatChecks | None) -> Any:
    key = (id(schema), id(formats))
    hit = _validators.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for name, check in (formats or {}).items():
        checker.checks(name, raises=(ValueError, TypeError))(_strings_only(check))
    # Draft 4, the draft upstream's schemas are written for.
    validator = jsonschema.Draft4Validator(schema, format_checker=checker)
    if len(_validators) > 1024:  # schemas built per call must not grow this forever
        _validators.clear()
    _validators[key] = (schema, validator)  # the schema is kept alive, so its id stays its own
    return validator


def _strings_only(check: Callable[[str], bool]) -> Callable[[Any], bool]:
    def run(value: Any) -> bool:
        return not isinstance(value, str) or check(value)

    return run


def first_error(schema: Mapping[str, Any], instance: Any, *, formats: FormatChecks | None = None,
                best: bool = False) -> SchemaViolation | None:
    """The error `Validator.validate` would raise (the first in schema keyword order), or
    with `best` the one `jsonschema.validate` picks (`best_match`); None when valid."""
    validator = _validator(schema, formats)
    if best:
        from jsonschema.exceptions import best_match

        err = best_match(validator.iter_errors(instance))
    else:
        err = next(iter(validator.iter_errors(instance)), None)
    if err is None:
        return None
    return SchemaViolation(err.message, list(err.path), err.instance, err.cause)


def is_uuid_like(value: Any) -> bool:
    """oslo's is_uuid_like: any case, hyphens optional."""
    import uuid

    try:
        return str(uuid.UUID(value)).replace("-", "") == str(value).lower().replace("-", "")
    except (TypeError, ValueError, AttributeError):
        return False
