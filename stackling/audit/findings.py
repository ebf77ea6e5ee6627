"""The audit's registry: a check is `fn(db) -> list[Finding]` registered by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy.orm import Session


@dataclass(frozen=True)
class Finding:
    check: str  # e.g. "routed.inventory"
    resource: str  # the id of what differs (segment, port, provider, aggregate, host)
    expected: Any
    actual: Any
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Check = Callable[[Session], list[Finding]]
CHECKS: list[tuple[str, Check]] = []


def register(name: str, fn: Check) -> None:
    CHECKS.append((name, fn))
