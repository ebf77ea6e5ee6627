"""`GET /audit` beside the API services: the audit's findings as JSON, admin only.

Not an OpenStack API, so it lives at the server root (like `/metrics`) with a plain body:
`{"findings": [{"check", "resource", "expected", "actual", "message"}, ...]}`; 401 without
a valid token, 403 for a non-admin (identity's error form).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from stackling.audit import run_audit
from stackling.audit.wire import check_wire


def _error(status: int, title: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": status, "title": title, "message": message}},
                        status_code=status)


def _audit(runtime: Any, request: Request) -> Response:
    try:
        with runtime.db.transaction(write=False) as db:
            ctx = runtime.authenticate(db, request.headers, "audit")
            if ctx.access_rules:  # no access rule names /audit (no service's route)
                raise PermissionError("restricted application credential")
    except Exception:  # noqa: BLE001 - any missing or invalid token is a 401
        return _error(401, "Unauthorized", "The request you have made requires "
                                           "authentication.")
    if not ctx.is_admin:
        return _error(403, "Forbidden", "/audit needs an admin token.")
    with runtime.db.transaction(write=False) as db:
        findings = run_audit(db) + [f.as_dict() for f in check_wire(db, runtime.settings)]
        return JSONResponse({"findings": findings})


def audit_route(runtime: Any) -> Route:
    async def endpoint(request: Request) -> Response:
        return await run_in_threadpool(_audit, runtime, request)

    return Route("/audit", endpoint, methods=["GET"])
