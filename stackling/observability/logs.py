"""Logging: one line per request, and the request id on every line a request causes.

The request id lives in a context variable set by the HTTP dispatcher; Starlette's thread
pool copies the context into the handler's thread, and background work that a request
started (a server build, a stack action) sets it again from what it stored with the work,
so `grep req-…` finds everything one client call caused, in any process.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

ACCESS = logging.getLogger("stackling.access")
_REQUEST: contextvars.ContextVar[dict[str, str | None] | None] = contextvars.ContextVar(
    "stackling_request", default=None)
FORMATS = ("text", "json")


def current_request_id() -> str | None:
    info = _REQUEST.get()
    return info["request_id"] if info else None


def bind(request_id: str | None, user_id: str | None = None,
         project_id: str | None = None) -> contextvars.Token:
    """Tag this context (and threads started from it) with a request's identity."""
    return _REQUEST.set({"request_id": request_id, "user_id": user_id,
                         "project_id": project_id})


def identify(user_id: str | None, project_id: str | None) -> None:
    """Add the caller, once the token is validated, to the current request's tag."""
    info = _REQUEST.get()
    if info is not None:
        info["user_id"], info["project_id"] = user_id, project_id


@contextlib.contextmanager
def bound(request_id: str | None) -> Iterator[None]:
    """Background work done on behalf of request `request_id`."""
    token = bind(request_id)
    try:
        yield
    finally:
        _REQUEST.reset(token)


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        info = _REQUEST.get() or {}
        for key in ("request_id", "user_id", "project_id"):
            if not hasattr(record, key):
                setattr(record, key, info.get(key))
        return True


class JSONFormatter(logging.Formatter):
    """One JSON object per line; access lines carry their fields as keys."""

    FIELDS = ("request_id", "user_id", "project_id", "method", "path", "route", "service",
              "status", "latency_ms", "client")

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        for key in self.FIELDS:
            value = getattr(record, key, None)
            if value is not None:
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"))


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


LEVELS = ("debug", "info", "warning", "error")


def configure(fmt: str = "text", level: str = "warning") -> None:
    """Root handler on stderr in `fmt` at `level`; access lines always at INFO."""
    from stackling.config import SettingsError

    if fmt not in FORMATS:
        raise SettingsError(f"observability.log_format: expected one of {', '.join(FORMATS)}, "
                            f"got {fmt!r}")
    if level.lower() not in LEVELS:
        raise SettingsError(f"observability.log_level: expected one of {', '.join(LEVELS)}, "
                            f"got {level!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_ContextFilter())
    handler.setFormatter(JSONFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    ACCESS.setLevel(logging.INFO)


def log_request(method: str, path: str, service: str, route: str, status: int,
                latency_s: float, client: str = "-") -> None:
    """The access line: method, path, route template, status, latency and the client's
    address; the request id, user and project come from the context."""
    if not ACCESS.isEnabledFor(logging.INFO):
        return
    latency_ms = round(latency_s * 1000, 2)
    info = _REQUEST.get() or {}
    ACCESS.info("%s %s %s %.2fms user=%s project=%s client=%s", method, path, status,
                latency_ms, info.get("user_id") or "-", info.get("project_id") or "-", client,
                extra={"method": method, "path": path, "route": route, "service": service,
                       "status": status, "latency_ms": latency_ms, "client": client})
