"""Provider aggregates: plain UUIDs grouping providers (no aggregate resource)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.db import insert_absent
from stackling.placement.models import ProviderAggregate
from stackling.placement.providers import Provider, bump_generation


def of_provider(db: Session, rp_id: int) -> list[str]:
    return sorted(db.scalars(select(ProviderAggregate.aggregate_uuid)
                             .where(ProviderAggregate.resource_provider_id == rp_id)))


def set_for_provider(db: Session, rp: Provider, aggregates: Iterable[str],
                     generation: int | None, *, increment_generation: bool = True) -> int:
    """Replace the provider's aggregates; returns the provider generation afterwards.

    Before 1.19 the aggregate API neither checks nor bumps the generation."""
    new_generation = rp.generation
    if increment_generation:
        new_generation = bump_generation(db, rp.id, generation)
    wanted = set(aggregates)
    current = set(of_provider(db, rp.id))
    gone = current - wanted
    if gone:
        db.execute(delete(ProviderAggregate).where(
            ProviderAggregate.resource_provider_id == rp.id,
            ProviderAggregate.aggregate_uuid.in_(sorted(gone))))
    added = sorted(wanted - current)
    # before 1.19 nothing orders two identical calls: "already there" is success
    insert_absent(db, ProviderAggregate,
                  [{"resource_provider_id": rp.id, "aggregate_uuid": a} for a in added])
    return new_generation
