"""The wire: every kernel object the desired state asks for exists, and nothing else with
the cloud's prefix does (`dataplane.interface.audit_wire`). Not in `CHECKS`: it needs the
settings (the cloud's prefix, its driver), so `stackling audit` and `GET /audit` call it."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.audit.findings import Finding


def check_wire(db: Session, settings: Any) -> list[Finding]:
    from stackling.dataplane import interface as dataplane

    if not dataplane.wire_applies(settings) or skipped(settings):
        return []
    return [Finding(*d) for d in dataplane.audit_wire(db, settings)]


def skipped(settings: Any) -> str | None:
    """Why the wire cannot be read here (not root, no tools), or None."""
    from stackling.dataplane import interface as dataplane

    if not dataplane.wire_applies(settings):
        return None
    return dataplane.unavailable_reason()
