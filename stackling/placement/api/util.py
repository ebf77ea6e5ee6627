"""What every placement handler shares: the handler decorator (version gate, content
negotiation, policy), body and query-string validation, and response helpers."""

from __future__ import annotations

import functools
from collections.abc import Callable
from email.utils import format_datetime
from typing import Any

from stackling.common import limits
from stackling.common.db import utcnow
from stackling.common.http import ApiRequest, json_response, no_content
from stackling.placement import errors, jsonschema
from stackling.placement.providers import normalize_uuid

Handler = Callable[[ApiRequest], Any]


def handler(action: str | None, *, since: str = "1.0", until: str | None = None,
            absent: int = 404, body: bool = False) -> Callable[[Handler], Handler]:
    """Wrap a placement handler the way upstream's decorators do, in order: the
    microversion gate (404, or 405 for a method that appears later), the JSON content
    type for bodies (415), Accept (406), then the policy check (403)."""

    def decorate(fn: Handler) -> Handler:
        @functools.wraps(fn)
        def wrapped(rq: ApiRequest) -> Any:
            if not rq.version.matches(since, until):
                if absent == 405:
                    raise errors.MethodNotAllowed(
                        "The method specified is not allowed for this resource.")
                raise errors.NotFound("The resource could not be found.")
            check_content(rq, body)
            if action is not None:
                authorize(rq, action)
            return fn(rq)

        wrapped.placement_versions = (since, until)  # type: ignore[attr-defined]
        return wrapped

    return decorate


def check_content(rq: ApiRequest, needs_json: bool) -> None:
    content_type = rq.headers.get("content-type", "")
    length = rq.headers.get("content-length")
    try:
        if length and int(length) > 0 and not content_type:
            raise errors.BadRequest("content-type header required when content-length > 0")
    except ValueError:
        raise errors.BadRequest("content-length header must be an integer") from None
    if needs_json and content_type.split(";")[0].strip().lower() != "application/json":
        raise errors.UnsupportedMediaType(bad=content_type.split(";")[0].strip() or "None")
    accept = rq.headers.get("accept")
    if rq.method == "GET" and accept and not _accepts_json(accept):
        raise errors.NotAcceptable()


def _accepts_json(accept: str) -> bool:
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in ("application/json", "application/*", "*/*", "*"):
            return True
    return False


def authorize(rq: ApiRequest, action: str, target: dict[str, Any] | None = None) -> None:
    rq.authorize(action, target, exc=errors.Forbidden(action=action))


# ------------------------------------------------------------------ input
def extract_json(rq: ApiRequest, schema: dict[str, Any]) -> Any:
    """The body, parsed and validated: 400 'Malformed JSON' / 'JSON does not validate'."""
    try:
        # strict JSON (no NaN/Infinity), nesting and NUL bytes checked (common/limits.py)
        data = limits.loads(rq.raw_body or b"", rq.settings.http.max_json_depth)
    except limits.InvalidInput:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.BadRequest(f"Malformed JSON: {exc}") from None
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        raise errors.BadRequest(f"JSON does not validate: {exc}") from None
    return data


def validate_query(rq: ApiRequest, schema: dict[str, Any]) -> dict[str, str]:
    """The query string as a dict (the last value of a repeated key), schema-checked."""
    params = dict(rq.query)
    try:
        jsonschema.validate(params, schema)
    except jsonschema.ValidationError as exc:
        raise errors.BadRequest(f"Invalid query string parameters: {exc}") from None
    return params


def path_uuid(rq: ApiRequest, name: str = "uuid") -> str:
    return rq.path_params[name]


def consumer_uuid(rq: ApiRequest) -> str:
    value = rq.path_params["consumer_uuid"]
    normalized = normalize_uuid(value)
    if normalized is None:
        raise errors.BadRequest(f"Malformed consumer_uuid: {value}")
    return normalized


# ------------------------------------------------------------------ output
def cache_headers(rq: ApiRequest, last_modified: Any = None) -> dict[str, str]:
    """Last-Modified and Cache-Control, from microversion 1.15."""
    if not rq.version.matches("1.15"):
        return {}
    return {"Last-Modified": format_datetime(last_modified or utcnow(), usegmt=True),
            "Cache-Control": "no-cache"}


def respond(rq: ApiRequest, body: Any, status: int = 200, *, last_modified: Any = None,
            headers: dict[str, str] | None = None) -> Any:
    return json_response(body, status, {**cache_headers(rq, last_modified), **(headers or {})})


def empty(status: int = 204, headers: dict[str, str] | None = None) -> Any:
    return no_content(status, headers)


def href(rq: ApiRequest, path: str) -> str:
    """Links are relative to the host, under the service prefix (upstream's SCRIPT_NAME)."""
    return f"{rq.service.prefix}{path}"


def location(rq: ApiRequest, path: str) -> dict[str, str]:
    """An absolute Location header (webob makes upstream's relative ones absolute, and
    osc-placement follows it)."""
    return {"Location": rq.base_url + href(rq, path)}
