"""The operator console (`/`) and `/metrics`: routes beside the API services.

The console is static: a page and a script that call the public APIs with the user's
token, so it needs no server-side session and policy applies unchanged. Assets are read
once and kept gzipped in memory. Starlette's StaticFiles neither compresses nor caches
in memory, and the graph library is 435 KB (136 KB gzipped), hence this small handler.
"""

from __future__ import annotations

import gzip
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from stackling.observability import metrics

STATIC = Path(__file__).parent / "static"
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".LICENSE": "text/plain; charset=utf-8"}


@cache
def _asset(name: str) -> tuple[bytes, bytes, str, str] | None:
    path = STATIC / name
    if "/" in name or name.startswith(".") or not path.is_file():
        return None
    raw = path.read_bytes()
    etag = '"' + hashlib.sha256(raw).hexdigest()[:16] + '"'
    return raw, gzip.compress(raw, 6), TYPES.get(path.suffix, "application/octet-stream"), etag


def _serve(request: Request, name: str, cache_control: str) -> Response:
    asset = _asset(name)
    if asset is None:
        return Response("Not Found", status_code=404, media_type="text/plain")
    raw, packed, media_type, etag = asset
    headers = {"ETag": etag, "Cache-Control": cache_control, "Vary": "Accept-Encoding",
               "X-Content-Type-Options": "nosniff"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    if "gzip" in request.headers.get("accept-encoding", ""):
        headers["Content-Encoding"] = "gzip"
        return Response(packed, media_type=media_type, headers=headers)
    return Response(raw, media_type=media_type, headers=headers)


async def index(request: Request) -> Response:
    response = _serve(request, "index.html", "no-cache")
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
    return response


async def static(request: Request) -> Response:
    # Revalidated each load (cheap 304s); the page is small and assets change with releases.
    return _serve(request, request.path_params["name"], "no-cache")


def _metrics_allowed(runtime: Any, request: Request) -> bool:
    if runtime.settings.observability.metrics_public:
        return True
    if metrics.is_loopback(request.client.host if request.client else None):
        return True
    token = request.headers.get("x-auth-token")
    if not token:
        return False
    try:
        with runtime.db.transaction(write=False) as db:
            ctx = runtime.authenticate(db, request.headers, "metrics")
    except Exception:  # noqa: BLE001 - any invalid token is simply not allowed
        return False
    return ctx.is_admin and not ctx.access_rules  # no access rule names /metrics


def metrics_route(runtime: Any) -> Route:
    async def endpoint(request: Request) -> Response:
        if not await run_in_threadpool(_metrics_allowed, runtime, request):
            return JSONResponse({"error": {"code": 403, "title": "Forbidden", "message":
                                           "/metrics needs an admin token from this address."}},
                                status_code=403)
        body, content_type = await run_in_threadpool(metrics.exposition, runtime)
        return Response(body, headers={"Content-Type": content_type})

    return Route("/metrics", endpoint, methods=["GET"])


def routes(runtime: Any) -> list[Route]:
    return [Route("/", index, methods=["GET", "HEAD"]),
            Route("/console/static/{name}", static, methods=["GET", "HEAD"]),
            metrics_route(runtime)]
