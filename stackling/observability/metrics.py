"""Prometheus metrics through the standard client library.

`prometheus_client` costs ~75 ms to import, a sixth of the start-up budget, so it is
imported in the background after the server listens; observations made before that are
queued (bounded) and replayed. With `--workers N` every worker writes to a shared
multiprocess directory (the library's own mechanism) and any worker's `/metrics`
aggregates them all.

Series:
- `stackling_http_requests_total{service,route,method,status}` and
  `stackling_http_request_duration_seconds{service,route,method}` (route = the template,
  so cardinality is bounded by the route tables);
- `stackling_builds_total{outcome}` (server builds: active, error) and
  `stackling_stack_actions_total{action,outcome}`;
- `stackling_pending_work{kind}` (builds waiting for a worker, stack actions in progress),
  read from the database at scrape time, so it is the cloud's, not one process's;
- `stackling_db_pool_connections{state}` (this process's SQLAlchemy pool).
"""

from __future__ import annotations

import collections
import ipaddress
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

LOG = logging.getLogger(__name__)
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_EARLY: collections.deque[tuple[str, tuple[Any, ...]]] = collections.deque(maxlen=100_000)
_LOCK = threading.Lock()
_metrics: _Metrics | None = None
# Scrape-time gauges: name -> fn(runtime) -> {label value: number}; services add theirs.
PENDING_WORK: dict[str, Callable[[Any], int]] = {}


class _Metrics:
    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram

        self.requests = Counter("stackling_http_requests", "HTTP requests answered",
                                ["service", "route", "method", "status"])
        self.latency = Histogram(
            "stackling_http_request_duration_seconds", "HTTP request latency",
            ["service", "route", "method"],
            buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
        self.builds = Counter("stackling_builds", "Server builds finished", ["outcome"])
        self.stack_actions = Counter("stackling_stack_actions", "Stack actions finished",
                                     ["action", "outcome"])

    def request(self, service: str, route: str, method: str, status: int,
                seconds: float) -> None:
        self.requests.labels(service, route, method, str(status)).inc()
        self.latency.labels(service, route, method).observe(seconds)

    def build(self, outcome: str) -> None:
        self.builds.labels(outcome).inc()

    def stack_action(self, action: str, outcome: str) -> None:
        self.stack_actions.labels(action, outcome).inc()


def load() -> None:
    """Import the client library and replay what was observed meanwhile (idempotent)."""
    global _metrics
    with _LOCK:
        if _metrics is None:
            _metrics = _Metrics()
    while _EARLY:
        try:
            kind, args = _EARLY.popleft()
        except IndexError:
            break
        getattr(_metrics, kind)(*args)


def load_in_background() -> None:
    threading.Thread(target=load, name="metrics-load", daemon=True).start()


def _observe(kind: str, *args: Any) -> None:
    metrics = _metrics
    if metrics is None:
        _EARLY.append((kind, args))
    else:
        getattr(metrics, kind)(*args)


def observe_request(service: str, route: str, method: str, status: int, seconds: float) -> None:
    _observe("request", service, route, method, status, seconds)


def observe_build(outcome: str) -> None:
    _observe("build", outcome)


def observe_stack_action(action: str, outcome: str) -> None:
    _observe("stack_action", action, outcome)


def is_loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposition(runtime: Any) -> tuple[bytes, str]:
    """The text exposition: this process's (or every worker's) series plus the
    scrape-time gauges."""
    load()
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    class _Gauges:
        def collect(self) -> Any:
            pending = GaugeMetricFamily("stackling_pending_work",
                                        "Background work waiting or in progress",
                                        labels=["kind"])
            for kind, fn in PENDING_WORK.items():
                try:
                    pending.add_metric([kind], fn(runtime))
                except Exception:  # noqa: BLE001 - a failing gauge must not fail the scrape
                    LOG.exception("pending-work gauge %s failed", kind)
            yield pending
            pool = GaugeMetricFamily("stackling_db_pool_connections",
                                     "Database pool connections of this process",
                                     labels=["state"])
            engine_pool = runtime.db.engine.pool
            for state, attr in (("checked_out", "checkedout"), ("idle", "checkedin"),
                                ("size", "size")):
                value = getattr(engine_pool, attr, None)  # methods on QueuePool
                value = value() if callable(value) else value
                if isinstance(value, int):
                    pool.add_metric([state], value)
            yield pool

    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    gauges = CollectorRegistry()
    gauges.register(_Gauges())
    return generate_latest(registry) + generate_latest(gauges), CONTENT_TYPE_LATEST
