"""Builds the ASGI app: one Starlette app mounting every service under its prefix."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount

from stackling.common.http import build_router
from stackling.config import Settings, load_settings
from stackling.runtime import Runtime, load_components

# The services that exist, in catalog order. A service is served and listed in the
# catalog only once its component is here.
COMPONENTS = [
    "stackling.identity.component",
    "stackling.network.component",
    "stackling.placement.component",
    "stackling.compute.component",
    "stackling.image.component",
]


def create_runtime(settings: Settings) -> Runtime:
    return Runtime(settings, load_components(COMPONENTS))


def create_app(runtime: Runtime | None = None) -> Starlette:
    """The ASGI app; with no runtime, settings come from STACKLING_SERVE_SETTINGS (workers)."""
    if runtime is None:
        overrides = json.loads(os.environ.get("STACKLING_SERVE_SETTINGS", "{}"))
        runtime = create_runtime(load_settings(**overrides))
    mounts = []
    for component in runtime.components:
        service = component.build(runtime)
        service.component = component.name
        runtime.services[service.name] = service
        mounts.append(Mount(service.prefix, app=build_router(runtime, service)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        runtime.start(background=True)
        try:
            yield
        finally:
            runtime.stop()
            runtime.db.dispose()

    app = Starlette(routes=mounts, lifespan=lifespan)
    app.state.runtime = runtime
    return _PathNormalizer(app, list(runtime.services.values()))


class _PathNormalizer:
    """`/placement` answers like `/placement/`, and a service may rewrite its own paths
    (Neutron's `-`/`_` collection names and `.json` suffix) before routing."""

    def __init__(self, app: Starlette, services: list[Any]) -> None:
        self.app = app
        self.state = app.state
        self.services = [(s.prefix, s.rewrite_path) for s in services]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            for prefix, rewrite in self.services:
                if path == prefix:
                    scope = dict(scope, path=prefix + "/")
                    break
                if rewrite is not None and path.startswith(prefix + "/"):
                    scope = dict(scope, path=prefix + rewrite(path[len(prefix):]))
                    break
        await self.app(scope, receive, send)


def asgi_app_factory() -> Any:
    return create_app()
