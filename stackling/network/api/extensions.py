"""`GET /v2.0/extensions[/{alias}]`: never policy-filtered, never paginated."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.extensions import enabled, find


def list_extensions(rq: ApiRequest) -> Any:
    return {"extensions": [e.view() for e in enabled(rq.settings.network)]}


def show_extension(rq: ApiRequest) -> Any:
    ext = find(rq.path_params["alias"], rq.settings.network)
    if ext is None:
        alias = rq.path_params["alias"]
        raise errors.HTTPNotFound(f"Extension with alias {alias} does not exist")
    return {"extension": ext.view()}


def register(s: Service) -> None:
    s.add("/v2.0/extensions", get=list_extensions)
    s.add("/v2.0/extensions/{alias}", get=show_extension)
