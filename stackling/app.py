"""Builds the ASGI app: one Starlette app mounting every service under its prefix."""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.routing import Mount

from stackling.audit.api import audit_route
from stackling.common.http import build_router
from stackling.config import Settings, load_settings
from stackling.console.routes import routes as console_routes
from stackling.observability import logs, metrics
from stackling.runtime import Runtime, load_components

LOG = logging.getLogger(__name__)

# The services that exist, in catalog order, with their URL prefixes. A service is served
# and listed in the catalog only once its component is here.
COMPONENTS = [
    ("stackling.identity.component", "/identity"),
    ("stackling.network.component", "/networking"),
    ("stackling.placement.component", "/placement"),
    ("stackling.compute.component", "/compute"),
    ("stackling.image.component", "/image"),
    ("stackling.block_storage.component", "/volume"),
    ("stackling.orchestration.component", "/orchestration"),
    ("stackling.dataplane.component", "/dataplane"),  # the wire's admin API (no catalog entry)
]
# Loaded before the server listens: every service checks tokens through identity.
EAGER = ("stackling.identity.component",)
# Loaded (and started) first after the socket opens: the services a newcomer's first
# requests use (network, whose start waits for compute's hosts); placement next (compute's
# start writes its host providers through placement's interface, which needs no placement
# routes), then image, block storage and orchestration. Network and compute stay in one group: compute's
# import registers what network asks of it (a segment's host aggregate, a server's
# project: network.compute_hooks) before network's requests run.
FIRST = ("stackling.network.component", "stackling.compute.component")
SECOND = ("stackling.placement.component",)
# Every bootstrap step of the components above (pinned by tests/unit/test_app.py). A start
# whose database has run them all serves identity at once and imports the other services
# just after the socket opens; their requests wait for that (a progressive start).
BOOTSTRAP_STEPS = frozenset({
    "identity.base", "catalog.identity", "network.base", "network.default_sg_rules", "catalog.network",
    "catalog.placement", "compute.flavors", "catalog.compute", "image.cirros", "image.debian",
    "image.metadefs", "catalog.image", "catalog.orchestration", "block_storage.default_type",
    "block_storage.volumev3",
    "catalog.block-storage",
})


def create_runtime(settings: Settings, *, progressive: bool = False) -> Runtime:
    """A runtime with every component, or (progressive) only the eager ones, the rest
    left in `runtime.pending` for `create_app` to load in the background."""
    if not progressive:
        return Runtime(settings, load_components([path for path, _ in COMPONENTS]))
    runtime = Runtime(settings, load_components(list(EAGER)))
    # Identity's models live in a registry of their own (common.db.IdentityBase), mapped
    # here before any request; the other services' models are mapped by the background
    # loader (map_models) before their services load, none of their requests running
    # meanwhile. SQLAlchemy configures a registry as a whole on a query, so a request
    # using Base while a model module is half-imported would fail (and poison) that.
    from stackling.common.db import IdentityBase

    IdentityBase.registry.configure()
    runtime.pending = [(path, prefix) for path, prefix in COMPONENTS if path not in EAGER]
    if runtime.pending:
        runtime.loaded.clear()
    return runtime


def load_pending_now(runtime: Runtime) -> None:
    """Import the pending components at once (a first start must bootstrap them all)."""
    map_models()
    for path, _ in runtime.pending:
        runtime.add_component(importlib.import_module(path).COMPONENT)
    runtime.pending = []
    runtime.loaded.set()


def create_app(runtime: Runtime | None = None) -> Any:
    """The ASGI app; with no runtime, settings come from STACKLING_SERVE_SETTINGS (workers)."""
    if runtime is None:
        overrides = json.loads(os.environ.get("STACKLING_SERVE_SETTINGS", "{}"))
        runtime = create_runtime(load_settings(**overrides), progressive=True)
        obs = runtime.settings.observability  # a worker process of `serve --workers N`
        logs.configure(obs.log_format, obs.log_level)
        if not runtime.bootstrap_complete(BOOTSTRAP_STEPS):
            load_pending_now(runtime)
    mounts = [_mount(runtime, component) for component in runtime.components]
    pending, loader, switch = list(runtime.pending), None, sys.getswitchinterval()
    # Each pending service's requests wait for its own group (FIRST, then the rest).
    arrived = {prefix: threading.Event() for _, prefix in pending}
    groups = [[p for p in pending if p[0] in FIRST], [p for p in pending if p[0] in SECOND],
              [p for p in pending if p[0] not in FIRST + SECOND]]

    def load_pending() -> None:
        try:
            map_models()
            for group in groups:
                loaded = []
                for path, _ in group:
                    component = importlib.import_module(path).COMPONENT
                    runtime.add_component(component)
                    app.router.routes.append(_mount(runtime, component))
                    loaded.append(component)
                # Started together: network's start hook waits for compute's, which writes
                # to placement.
                runtime.start(background=True, only=loaded)
                for _, prefix in group:
                    arrived[prefix].set()
        except Exception:  # noqa: BLE001 - logged; the waiting requests then get 404s
            LOG.exception("loading the services failed")
        finally:
            runtime.pending = []
            runtime.loaded.set()
            for event in arrived.values():
                event.set()
            sys.setswitchinterval(switch)
            collect_garbage_again()
        metrics.load()  # after the services: its import would compete with their loading

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        nonlocal loader
        runtime.db.log_pool()
        runtime.start(background=True)
        dataplane = _start_dataplane(runtime.settings, runtime.loaded)
        if pending:
            # While the services load, a request's thread gets the GIL back from the loader
            # within 0.5 ms instead of 5 (each of its SQL calls and socket writes gives the
            # GIL up): the first requests are not slowed by the loading beside them.
            sys.setswitchinterval(0.0005)
            loader = threading.Thread(target=load_pending, name="load-services", daemon=True)
            loader.start()
        else:
            collect_garbage_again()
            metrics.load_in_background()
        try:
            yield
        finally:
            if loader is not None:
                loader.join(timeout=60)
            if dataplane is not None:
                dataplane.stop()
            runtime.stop()
            runtime.db.dispose()

    app = Starlette(routes=[*console_routes(runtime), audit_route(runtime), *mounts],
                    lifespan=lifespan)
    app.state.runtime = runtime
    return _PathNormalizer(app, runtime, arrived)


def map_models() -> None:
    """Every model module imported and every mapper configured (the background loader's
    first step, before any service beside identity serves)."""
    from sqlalchemy.orm import configure_mappers

    from stackling.migrations.schema import all_metadata

    all_metadata()
    configure_mappers()


def collect_garbage_again() -> None:
    """`stackling serve` starts with the cyclic garbage collector off (loading makes few
    cycles but hundreds of thousands of objects, and each collection walked them all: some
    30 ms of a start). Once the services are loaded, what exists is frozen out of later
    collections, which then run again. A collector nobody turned off is left alone."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _start_dataplane(settings: Settings, loaded: threading.Event) -> Any:
    """The dataplane (driver netns) where the machine allows it; else one line saying why.
    Its first pass waits for `loaded` (the services' models mapped by the loader thread: a
    query compiled beside that mapping failed, and the pass with it)."""
    if settings.dataplane.driver != "netns":
        return None
    from stackling.dataplane import interface as dataplane

    reason = dataplane.unavailable_reason()
    if reason is not None:
        LOG.warning("dataplane: driver netns not started: %s; servers stay database rows", reason)
        return None
    dataplane.start(settings, ready=loaded)
    return dataplane


def _mount(runtime: Runtime, component: Any) -> Mount:
    service = component.build(runtime)
    service.component = component.name
    runtime.services[service.name] = service
    return Mount(service.prefix, app=build_router(runtime, service))


class _PathNormalizer:
    """`/placement` answers like `/placement/`, and a service may rewrite its own paths
    (Neutron's `-`/`_` collection names and `.json` suffix) before routing."""

    def __init__(self, app: Starlette, runtime: Runtime,
                 pending: dict[str, threading.Event]) -> None:
        self.app = app
        self.state = app.state
        self.runtime = runtime
        self.pending = pending  # prefixes of services loading at start: set once loaded

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if not self.runtime.loaded.is_set():
                for prefix, arrived in self.pending.items():
                    if (path == prefix or path.startswith(prefix + "/")) and not arrived.is_set():
                        await run_in_threadpool(arrived.wait)
                if path == "/audit" or path.startswith("/audit/"):  # it reads every service
                    await run_in_threadpool(self.runtime.loaded.wait)
            for prefix, rewrite in ((s.prefix, s.rewrite_path)
                                    for s in self.runtime.services.values()):
                if path == prefix:
                    scope = dict(scope, path=prefix + "/")
                    break
                if rewrite is not None and path.startswith(prefix + "/"):
                    # the client's spelling is kept for access rules (common/access_rules)
                    scope = dict(scope, path=prefix + rewrite(path[len(prefix):]),
                                 **{"stackling.path": path})
                    break
        await self.app(scope, receive, send)


def asgi_app_factory() -> Any:
    return create_app()
