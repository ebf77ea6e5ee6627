"""Consistency audit: recompute what derived state must be and report every difference.

`CHECKS` is the registry: each check is `fn(db) -> list[Finding]` and only reads. Other
engineers add checks by appending to it (import their module in `_load`). Entry points:
`stackling audit` (the CLI) and `GET /audit` (an admin token; `api.py`), both over
`run_audit(db)`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.audit.findings import CHECKS, Check, Finding, register

__all__ = ["CHECKS", "Check", "Finding", "register", "run_audit"]


def _load() -> None:
    from stackling.audit import routed  # noqa: F401 - registers its checks


def run_audit(db: Session) -> list[dict[str, Any]]:
    """Every finding of every check, as plain dicts ([] = consistent)."""
    if not CHECKS:
        _load()
    out: list[dict[str, Any]] = []
    for _name, fn in CHECKS:
        out.extend(f.as_dict() for f in fn(db))
    return out
