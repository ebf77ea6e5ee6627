"""The Cinder v3 service: every route module's paths on one Service."""

from __future__ import annotations

from typing import Any

from stackling.block_storage import errors, microversions
from stackling.block_storage.api import (
    attachments,
    backups,
    groups,
    misc,
    snapshots,
    types,
    volumes,
)
from stackling.common.http import Service


def build(runtime: Any) -> Service:
    # logic reaching the settings from a session (interface.py, work.py)
    runtime.db.sessions.kw.setdefault("info", {})["stackling.runtime"] = runtime
    service = Service(name="block-storage", prefix="/volume", family=errors.FAMILY,
                      microversions=microversions.SPEC)
    misc.register(service)
    volumes.register(service)
    types.register(service)
    snapshots.register(service)
    backups.register(service)
    attachments.register(service)
    groups.register(service)
    return service
