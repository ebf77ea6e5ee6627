"""The thin HTTP layer every service uses.

A service is a prefix, an error family and one route table mapping each path to
`{method: handler}` (405 and `Allow` come from the table). A handler is a plain
function `handler(rq: ApiRequest) -> result`, run in a worker thread inside one database
transaction that commits when it returns and rolls back when it raises.

The dispatcher does, in order: request id, token validation (unless the route is
public), microversion negotiation, the transaction, rendering (errors in the service
family's own body), and the common response headers.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as StarletteRoute
from starlette.routing import Router

from stackling.common import access_rules, errors, limits, statements
from stackling.common.context import RequestContext, new_request_id
from stackling.common.db import (
    is_deadlock,
    is_overloaded,
    is_refused_connection,
    retry_on_conflict,
)
from stackling.common.microversion import Version, VersionSpec
from stackling.common.policy import require_project_scope
from stackling.observability import logs, metrics


class Runtime(Protocol):
    """What the HTTP layer needs of the process runtime (`stackling.runtime.Runtime`, which
    sits above common and builds the services on it)."""

    settings: Any
    db: Any
    enforcer: Any
    state: dict[str, Any]
    ready: dict[str, Any]  # component name -> threading.Event set once it has started

    def authenticate(self, db: Session, headers: Any, request_id: str) -> RequestContext: ...

    def component(self, name: str) -> Any: ...


LOG = logging.getLogger(__name__)

Handler = Callable[["ApiRequest"], Any]
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# An overloaded database (no connection to be had): 503 and when to retry, in seconds.
OVERLOADED = "The service is temporarily overloaded; retry the request later."
RETRY_AFTER = "2"
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":"), default=_json_default).encode()


def _json_default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


def no_content(status: int = 204, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status_code=status, headers=dict(headers or {}))


@dataclass
class Route:
    path: str
    methods: dict[str, Handler]
    public: set[str] = field(default_factory=set)  # methods served without a token
    stream: set[str] = field(default_factory=set)  # methods whose body the handler streams
    # methods whose handler needs no token, no database and no thread (a version
    # document): run on the event loop, outside any transaction
    inline: set[str] = field(default_factory=set)

    def is_public(self, method: str) -> bool:
        return method in self.public or (method == "HEAD" and "GET" in self.public)


@dataclass
class Service:
    """One API family mounted under `prefix`."""

    name: str  # catalog-independent name: identity, network, compute, ...
    prefix: str  # "/networking"
    family: str  # key into errors.RENDERERS
    routes: list[Route] = field(default_factory=list)
    microversions: VersionSpec | None = None
    # Optional rewrite of the path below the prefix before routing (Neutron's `-`/`_`).
    rewrite_path: Callable[[str], str] | None = None
    component: str | None = None  # the component whose start hook gates this service
    project_scoped: bool = True  # tokens without a project scope get a 403 (not identity)

    def add(self, path: str, public: bool = False, stream: bool = False,
            inline: bool = False, **methods: Handler) -> None:
        """Add handlers for `path`; adding the same path again merges the methods.
        `stream`: the handlers read bulk data from `rq.body_stream` (limits.BodyStream).
        `inline` (public only): the handlers read no database (`rq.db` is None) and are
        quick: they run on the event loop, with no transaction and no worker thread."""
        upper = {m.upper(): h for m, h in methods.items()}
        route = next((r for r in self.routes if r.path == path), None)
        if route is None:
            route = Route(path, {})
            self.routes.append(route)
        route.methods.update(upper)
        if public:
            route.public.update(upper)
        if stream:
            route.stream.update(upper)
        if inline:
            if not public:
                raise ValueError(f"{path}: an inline handler is public (no token to check)")
            route.inline.update(upper)

    def render_error(self, err: errors.ApiError, request_id: str) -> Response:
        status, body = errors.RENDERERS[self.family](err, request_id)
        headers = dict(err.headers)
        if status == 405 and "Allow" not in headers and "allow" in err.kwargs:
            headers["Allow"] = err.kwargs["allow"]
        return JSONResponse(body, status_code=status, headers=headers)


class ApiRequest:
    """What a handler sees: the request, its caller, its database session and version."""

    def __init__(
        self,
        request: Request,
        runtime: Runtime,
        service: Service,
        path_params: dict[str, str],
        body: bytes,
        request_id: str,
    ) -> None:
        self.request = request
        self.runtime = runtime
        self.service = service
        self.path_params = path_params
        self.raw_body = body
        self.request_id = request_id
        self.ctx: RequestContext = RequestContext(request_id=request_id)
        self.version: Version | None = None
        self.db: Session = None  # type: ignore[assignment]  # set by the dispatcher
        self._after_commit: list[Callable[[], None]] = []
        self._json: Any = _UNSET
        self.body_stream: limits.BodyStream | None = None  # streamed routes only

    # ----------------------------------------------------------------- request data
    @property
    def method(self) -> str:
        return self.request.method

    @property
    def query(self) -> Any:
        """Starlette QueryParams: `.get(k)`, `.getlist(k)`, `.multi_items()`."""
        return self.request.query_params

    @property
    def headers(self) -> Any:
        return self.request.headers

    @property
    def settings(self) -> Any:
        return self.runtime.settings

    @property
    def base_url(self) -> str:
        """The public base URL (scheme://host[:port]) that links and the catalog use."""
        if self.runtime.settings.public_url:
            return self.runtime.settings.public_url.rstrip("/")
        return request_base_url(self.request,
                                trust_proxy=self.runtime.settings.http.enable_proxy_headers_parsing)

    @property
    def service_url(self) -> str:
        return self.base_url + self.service.prefix

    @property
    def client_address(self) -> str:
        """The client's address, for the access log and the per-address body bound."""
        return client_address(self.request,
                              trust_proxy=self.runtime.settings.http.enable_proxy_headers_parsing)

    def url_for_request(self) -> str:
        """The URL of this request (path below the service, no query), for links."""
        return self.base_url + self.request.url.path

    def json(self, *, bad_request: type[errors.ApiError] = errors.BadRequest,
             malformed: str = "Malformed request body", required: bool = True) -> Any:
        """The JSON body; a malformed one is the family's 400."""
        if self._json is _UNSET:
            if not self.raw_body.strip():
                if required:
                    raise bad_request(malformed)
                self._json = None
            else:
                try:
                    self._json = limits.loads(self.raw_body, self.settings.http.max_json_depth)
                except limits.InvalidInput:
                    raise
                except (ValueError, UnicodeDecodeError):
                    raise bad_request(malformed) from None
        return self._json

    # ----------------------------------------------------------------- policy
    def authorize(self, action: str, target: Mapping[str, Any] | None = None, *,
                  exc: errors.ApiError | None = None) -> None:
        """Enforce `action`; raise `exc` (default: PolicyNotAuthorized) when refused."""
        if not self.allowed(action, target):
            raise exc or errors.PolicyNotAuthorized(action=action)

    def allowed(self, action: str, target: Mapping[str, Any] | None = None) -> bool:
        target = dict(target or {})
        target.setdefault("project_id", self.ctx.project_id)
        return self.runtime.enforcer.enforce(action, target, self.ctx.policy_creds())

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Run `fn` after the request's transaction commits (e.g. wake a worker)."""
        self._after_commit.append(fn)


_UNSET = object()


def request_base_url(request: Request, *, trust_proxy: bool = False) -> str:
    """scheme://host of the request; X-Forwarded-* only when a proxy is trusted to set
    them (oslo.middleware's HTTPProxyToWSGI, off by default): any client can send them."""
    headers = request.headers
    scheme = (trust_proxy and headers.get("x-forwarded-proto")) or request.url.scheme
    host = (trust_proxy and headers.get("x-forwarded-host")) or headers.get("host")
    if not host:
        server = request.scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}"


def client_address(request: Request, *, trust_proxy: bool = False) -> str:
    """The socket's peer; X-Forwarded-For's first entry only when a proxy is trusted to set
    it (any client can send it). Under `stackling serve` uvicorn has then already put that
    entry in the scope; in-process callers get the same answer here."""
    if trust_proxy:
        first = request.headers.get("x-forwarded-for", "").split(",")[0].strip()
        if first:
            return first[:64]  # a bucket key and a log field: bounded
    client = request.scope.get("client")
    return str(client[0]) if client else "-"


def to_response(result: Any) -> Response:
    if isinstance(result, Response):
        return result
    if result is None:
        return no_content()
    if isinstance(result, tuple):
        if len(result) == 2:
            status, body = result
            return json_response(body, status) if body is not None else no_content(status)
        status, body, headers = result
        return json_response(body, status, headers) if body is not None else no_content(status, headers)
    return json_response(result)


def build_router(runtime: Runtime, service: Service) -> Router:
    """A Starlette router for the service: every method goes through `dispatch`."""
    routes: list[StarletteRoute] = []
    for route in service.routes:
        routes.append(StarletteRoute(route.path, _endpoint(runtime, service, route),
                                     methods=ALL_METHODS, include_in_schema=False))
    not_found = Route("/{path:path}", {}, public={"GET"})
    routes.append(StarletteRoute("/{path:path}", _endpoint(runtime, service, not_found),
                                 methods=ALL_METHODS, include_in_schema=False))
    return Router(routes=routes)


def _endpoint(runtime: Runtime, service: Service, route: Route) -> Callable[[Request], Any]:
    allow = ", ".join(sorted(route.methods))

    async def endpoint(request: Request) -> Response:
        request_id = new_request_id()
        started = time.perf_counter()
        logs.bind(request_id)
        rq = ApiRequest(request, runtime, service, dict(request.path_params), b"", request_id)
        method = request.method
        handler = route.methods.get(method)
        if handler is None and method == "HEAD":
            handler = route.methods.get("GET")
        try:
            if service.microversions is not None:
                # Negotiated first, as upstream's middleware does: 404/405 answers also
                # carry the version (and placement's error code from 1.23).
                rq.version = service.microversions.negotiate(dict(request.headers))
            # Before authentication and before buffering: size, timeout, NUL, nesting.
            await limits.accept(rq, method in route.stream)
            if not route.methods:
                raise errors.NotFound("The resource could not be found.")
            if handler is None:
                raise errors.MethodNotAllowed(
                    f"The method {method} is not supported for this resource.", allow=allow)
            ready = runtime.ready.get(service.component or "")
            if ready is not None and not ready.is_set():
                await run_in_threadpool(ready.wait)  # the service's start hook is running
            if method in route.inline or (method == "HEAD" and "GET" in route.inline):
                response = to_response(handler(rq))
            else:
                # A read's SQL is cancelled if its client leaves; any request's when a
                # stop has waited for it long enough (common/statements.py).
                response = await statements.guarded(
                    request.receive if method in READ_METHODS and not route.stream else None,
                    lambda: run_in_threadpool(_run, rq, route, handler))
        except errors.ApiError as err:
            response = _render_error(rq, err)
        except Exception as err:  # noqa: BLE001 - the last resort: a family 500, logged
            if is_overloaded(err):  # no connection to be had: the client should retry
                LOG.warning("database overloaded in %s %s: %s", method, request.url.path, err)
                response = _render_error(rq, errors.ServiceUnavailable(
                    OVERLOADED, headers={"Retry-After": RETRY_AFTER}))
            else:
                LOG.exception("unhandled error in %s %s", method, request.url.path)
                response = service.render_error(errors.InternalError(), request_id)
        response = _finish(rq, response)
        _observe(service, route, method, request.url.path, response.status_code, started,
                 rq.client_address)
        return response

    return endpoint


def _run(rq: ApiRequest, route: Route, handler: Handler) -> Response:
    service = rq.service
    if service.microversions is not None and rq.version is None:
        rq.version = service.microversions.negotiate(dict(rq.request.headers))
    write = rq.method not in READ_METHODS

    def lost_race(err: BaseException) -> bool:
        # A read that writes (GET auto-allocated-topology) met SQLite's lock: it is run
        # again holding the write lock from BEGIN, waiting for it (busy_timeout).
        nonlocal write
        if is_deadlock(err):
            write = True
            return True
        return is_refused_connection(err)  # nothing was done: try again shortly

    def attempt() -> Response:
        rq._after_commit.clear()
        with rq.runtime.db.transaction(write=write) as session:
            rq.db = session
            if not route.is_public(rq.method):
                rq.ctx = rq.runtime.authenticate(session, rq.request.headers, rq.request_id)
                logs.identify(rq.ctx.user_id, rq.ctx.project_id)
                if rq.ctx.access_rules is not None:
                    access_rules.enforce(rq.ctx.access_rules, _service_type(rq), rq.method,
                                         service.prefix, request_path(rq.request))
                if service.project_scoped:
                    require_project_scope(rq.ctx)
            result = to_response(handler(rq))
        return result

    response = retry_on_conflict(attempt, retry_if=lost_race)
    for fn in rq._after_commit:
        try:
            fn()
        except Exception:  # noqa: BLE001 - post-commit hooks must not fail the request
            LOG.exception("after-commit hook failed")
    return response


def request_path(request: Request) -> str:
    """The path as the client sent it (before a service's own rewrite), decoded."""
    return request.scope.get("stackling.path") or request.url.path


def _service_type(rq: ApiRequest) -> str:
    component = rq.runtime.component(rq.service.component or rq.service.name)
    entry = getattr(component, "catalog", None)
    return entry.type if entry is not None else rq.service.name


def _observe(service: Service, route: Route, method: str, path: str, status: int,
             started: float, client: str) -> None:
    """The access log line and the request metrics, keyed by the route template."""
    seconds = time.perf_counter() - started
    logs.log_request(method, path, service.name, route.path, status, seconds, client)
    metrics.observe_request(service.name, route.path, method, status, seconds)


def _render_error(rq: ApiRequest, err: errors.ApiError) -> Response:
    err.version = rq.version
    if isinstance(err, errors.Unauthorized):
        # keystonemiddleware answers 401 in Keystone's form for every service.
        status, body = errors.render_identity(err, rq.request_id)
        return JSONResponse(body, status_code=status, headers={
            "WWW-Authenticate": f'Keystone uri="{rq.base_url}/identity/v3"'})
    return rq.service.render_error(err, rq.request_id)


def _finish(rq: ApiRequest, response: Response) -> Response:
    response.headers["x-openstack-request-id"] = rq.request_id
    spec = rq.service.microversions
    if spec is not None:
        version = rq.version or spec.min_version
        for key, value in spec.response_headers(version).items():
            response.headers[key] = value
    if rq.service.name == "compute":
        response.headers["X-Compute-Request-Id"] = rq.request_id
    if rq.service.name == "identity":
        response.headers["Vary"] = "X-Auth-Token"
    return response

