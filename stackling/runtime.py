"""The process-wide runtime: settings, database, policy, and the services it serves.

Each service package exposes a `COMPONENT` (see `Component`); `app.COMPONENTS` lists the
ones that exist. A component contributes routes, policy defaults, a catalog entry,
bootstrap steps (run once per database, recorded in `bootstrap_step`) and optional
background workers.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import String, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from stackling.common import statements
from stackling.common.context import RequestContext
from stackling.common.db import Base, Database, UTCDateTime, utcnow
from stackling.common.http import Service
from stackling.common.policy import Enforcer, load_policy_file
from stackling.config import Settings

LOG = logging.getLogger(__name__)


class BootstrapStep(Base):
    """One row per bootstrap step done on this database: later starts skip it."""

    __tablename__ = "bootstrap_step"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    done_at: Mapped[Any] = mapped_column(UTCDateTime, default=utcnow)


@dataclass
class CatalogEntry:
    type: str  # os-service-types name: compute, network, ...
    name: str  # nova, neutron, ...
    path: str  # below the base URL, may hold %(project_id)s


@dataclass
class Component:
    name: str
    build: Callable[[Runtime], Service]
    policies: dict[str, str] = field(default_factory=dict)
    catalog: CatalogEntry | None = None
    # (step name, fn(db, runtime)) run once per database, in order, each in its own
    # transaction; a later stackling version may append steps.
    bootstrap: list[tuple[str, Callable[[Session, Runtime], None]]] = field(default_factory=list)
    start: Callable[[Runtime], None] | None = None  # background workers
    stop: Callable[[Runtime], None] | None = None
    # Identity's hook that records another component's catalog entry.
    on_catalog_entry: Callable[[Session, Runtime, CatalogEntry], None] | None = None


class Runtime:
    def __init__(self, settings: Settings, components: list[Component]) -> None:
        self.settings = settings
        self.components = components
        self.db = Database(settings.db_url, processes=settings.workers)
        # Each statement's deadline, and cancellation of requests nobody waits for.
        statements.install(self.db.engine, settings.http.statement_timeout)
        self.enforcer = Enforcer(load_policy_file(settings.policy_file))
        for component in components:
            self.enforcer.register(component.policies)
        self.services: dict[str, Service] = {}
        self.state: dict[str, Any] = {}  # per-component process state (workers, caches)
        # Set when a component's start hook has run: its service's requests wait for it.
        self.ready: dict[str, threading.Event] = {c.name: threading.Event() for c in components}
        self._starters: list[threading.Thread] = []
        # Components still to import after the server listens (a progressive start), with
        # their URL prefixes; `loaded` is set once they all are.
        self.pending: list[tuple[str, str]] = []
        self.loaded = threading.Event()
        self.loaded.set()
        self._authenticate: Callable[[Session, Any, str], RequestContext] | None = None

    # The identity component installs the token validator.
    def set_authenticator(self, fn: Callable[[Session, Any, str], RequestContext]) -> None:
        self._authenticate = fn

    def authenticate(self, db: Session, headers: Any, request_id: str) -> RequestContext:
        if self._authenticate is None:
            raise RuntimeError("no identity component")
        return self._authenticate(db, headers, request_id)

    def add_component(self, component: Component) -> None:
        """A component imported after start: its policies and readiness join the runtime."""
        self.components.append(component)
        self.enforcer.register(component.policies)
        self.ready[component.name] = threading.Event()

    def bootstrap_complete(self, keys: frozenset[str]) -> bool:
        """Whether this database has run every one of `keys` (one query, no imports)."""
        with self.db.transaction(write=False) as db:
            done = set(db.scalars(select(BootstrapStep.name)))
        return keys <= done

    def component(self, name: str) -> Component | None:
        return next((c for c in self.components if c.name == name), None)

    def run_bootstrap(self) -> list[str]:
        """Run the bootstrap steps this database has not seen; return their names."""
        with self.db.transaction(write=False) as db:
            done = set(db.scalars(select(BootstrapStep.name)))
        ran = []
        registrar = next((c.on_catalog_entry for c in self.components if c.on_catalog_entry),
                         None)
        steps: list[tuple[str, Callable[[Session, Runtime], None]]] = []
        for component in self.components:
            steps += [(f"{component.name}.{name}", fn) for name, fn in component.bootstrap]
            if registrar and component.catalog is not None:
                entry = component.catalog
                steps.append((f"catalog.{entry.type}",
                              lambda db, rt, e=entry: registrar(db, rt, e)))
        for key, fn in steps:
            if key in done:
                continue
            try:
                with self.db.transaction() as db:
                    if db.get(BootstrapStep, key) is not None:
                        continue  # another process did it meanwhile
                    db.add(BootstrapStep(name=key))
                    db.flush()
                    fn(db, self)
                ran.append(key)
            except IntegrityError:
                LOG.info("bootstrap step %s done concurrently elsewhere", key)
        return ran

    def start(self, background: bool = False, only: list[Component] | None = None) -> None:
        """Run the start hooks; in the background, each service's requests wait for its own
        hook (identity answers at once while compute is still syncing its hosts)."""
        for component in self.components if only is None else only:
            if component.start is None:
                self.ready[component.name].set()
            elif background:
                thread = threading.Thread(target=self._start_one, args=(component,),
                                          name=f"start-{component.name}", daemon=True)
                self._starters.append(thread)
                thread.start()
            else:
                self._start_one(component)

    def _start_one(self, component: Component) -> None:
        try:
            component.start(self)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - log and serve; the service reports its own errors
            LOG.exception("start hook of %s failed", component.name)
        finally:
            self.ready[component.name].set()

    def stop(self) -> None:
        self.loaded.wait(timeout=60)
        for thread in self._starters:
            thread.join(timeout=30)
        self._starters.clear()
        for component in reversed(self.components):
            if component.stop:
                component.stop(self)


def load_components(paths: list[str]) -> list[Component]:
    return [importlib.import_module(p).COMPONENT for p in paths]
