"""The block-storage service (Cinder v3) as a stackling component: routes, Cinder's
default policies, the catalog entries and the volume manager's workers."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import bootstrap, policy, work
from stackling.block_storage.api import root
from stackling.runtime import CatalogEntry, Component


def _start(runtime: Any) -> None:
    worker = work.VolumeWorker(runtime, runtime.settings.block_storage.workers)
    runtime.state[work.STATE_KEY] = worker
    worker.start()
    worker.wake()  # work left by a previous run (or another process's dead claims)


def _stop(runtime: Any) -> None:
    worker = runtime.state.pop(work.STATE_KEY, None)
    if worker is not None:
        worker.stop()


COMPONENT = Component(
    name="block_storage",
    build=root.build,
    policies=policy.POLICIES,
    catalog=CatalogEntry(type="block-storage", name="cinder", path="/volume/v3"),
    bootstrap=[("default_type", bootstrap.default_type),
               ("volumev3", bootstrap.volumev3_entry)],
    start=_start,
    stop=_stop,
)
