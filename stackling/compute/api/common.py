"""What every compute handler shares: the request body under a schema, links, policy."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from stackling.common.errors import ApiError, BadRequest
from stackling.common.http import ApiRequest, Handler
from stackling.common.listing import parse_limit
from stackling.common.microversion import Version
from stackling.compute import microversions, validation
from stackling.compute.views import Links


class UnsupportedMediaType(ApiError):
    status = 415
    message = "Unsupported Content-Type"


def version(rq: ApiRequest) -> Version:
    return rq.version or microversions.MIN


def body(rq: ApiRequest, schema: dict[str, Any] | dict[str, dict[str, Any]],
         *, versioned: bool = False) -> Any:
    """The JSON body validated against `schema` (a {version: schema} table if versioned)."""
    ctype = rq.headers.get("content-type", "application/json").split(";")[0].strip()
    if rq.raw_body.strip() and ctype not in ("application/json", ""):
        raise UnsupportedMediaType()
    data = rq.json(malformed="Malformed request body")
    if versioned:
        schema = microversions.pick(version(rq), schema)  # type: ignore[arg-type]
    return validation.validate(schema, data)  # type: ignore[arg-type]


def links(rq: ApiRequest) -> Links:
    return Links(rq.service_url)


def authorize(rq: ApiRequest, action: str, target: dict[str, Any] | None = None) -> None:
    rq.authorize(f"os_compute_api:{action}", target, exc=PolicyRefused(action=action))


class PolicyRefused(ApiError):
    status = 403
    message = "Policy doesn't allow os_compute_api:%(action)s to be performed."


def allowed(rq: ApiRequest, action: str, target: dict[str, Any] | None = None) -> bool:
    return rq.allowed(f"os_compute_api:{action}", target)


def since(rq: ApiRequest, minimum: str) -> None:
    """Nova answers 404 for an API below the microversion that introduced it."""
    if not version(rq).matches(minimum):
        from stackling.common.errors import NotFound

        raise NotFound("The resource could not be found.")


# Nova's [api] max_limit: no page of any compute list is longer.
MAX_LIMIT = 1000


def page_limit(rq: ApiRequest) -> int | None:
    """A list's `limit` as Nova's get_limit_and_marker reads it: a non-negative integer
    (else 400), at most MAX_LIMIT, through the clamp every list uses."""
    return parse_limit(rq.query.get("limit"), max_limit=MAX_LIMIT,
                       invalid=lambda: BadRequest("limit param must be an integer"),
                       negative=lambda: BadRequest("limit param must be positive"))


def query_timestamp(value: str, name: str) -> Any:
    """A `changes-since`-style query value as an aware datetime (400 as Nova words it)."""
    import datetime as dt

    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"Invalid input for query parameters {name}. Value: {value}. "
                         f"'{value}' is not a 'date-time'") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def known_query(rq: ApiRequest, names: frozenset[str] | set[str], since: str = "2.75") -> None:
    """From 2.75 (or `since`) a query parameter Nova's schema does not name is a 400
    (ignored before)."""
    if not version(rq).matches(since):
        return
    unknown = sorted(k for k in rq.query.keys() if k not in names)
    if unknown:
        listed = ", ".join(repr(k) for k in unknown)
        verb = "were" if len(unknown) > 1 else "was"
        raise BadRequest(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def changes_before(rq: ApiRequest, changes_since: Any) -> Any:
    """The 2.66 `changes-before` filter, never earlier than `changes-since` (Nova's 400)."""
    value = rq.query.get("changes-before")
    if not value:
        return None
    before = query_timestamp(value, "changes-before")
    if changes_since is not None and before < changes_since:
        raise BadRequest("The value of changes-since must be less than or equal to "
                         "changes-before.")
    return before


# ------------------------------------------------------------------ 2.102: strict queries
ANY_QUERY = frozenset({"*"})  # an API gone before 2.102: its own 404 answers first


def takes_query(*names: str) -> Callable[[Handler], Handler]:
    """Declare the query parameters a GET handler reads (Nova's query schema names them);
    from 2.102 any other is a 400 on every GET (`strict_query`)."""
    def mark(handler: Handler) -> Handler:
        handler.query_params = ANY_QUERY if names == ("*",) else frozenset(names)  # type: ignore[attr-defined]
        return handler
    return mark


def strict_query(handler: Handler) -> Handler:
    """The handler with 2.102's rule in front: a query parameter it does not declare
    (`takes_query`) is a 400; before 2.102 the handler's own rules (2.75) hold."""
    names = getattr(handler, "query_params", frozenset())
    if names is ANY_QUERY:
        return handler

    @functools.wraps(handler)
    def checked(rq: ApiRequest) -> Any:
        known_query(rq, names, since="2.102")
        return handler(rq)
    return checked
