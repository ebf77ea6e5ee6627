"""Traits: the standard ones from os-traits, stored CUSTOM_* ones, and provider traits."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from sqlalchemy import delete, exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.db import insert_absent
from stackling.placement import errors, providers
from stackling.placement.models import CustomTrait, ProviderTrait

SHARES_VIA_AGGREGATE = "MISC_SHARES_VIA_AGGREGATE"  # os_traits.MISC_SHARES_VIA_AGGREGATE


@functools.cache
def standard() -> frozenset[str]:
    """os-traits' names, read at first use: importing it (with pbr) costs ~15 ms of start."""
    import os_traits

    return frozenset(os_traits.get_traits())


def is_standard(name: str) -> bool:
    return name in standard()


def unknown(db: Session, names: Iterable[str]) -> list[str]:
    custom = sorted({n for n in names if n not in standard()})
    if not custom:
        return []
    found = set(db.scalars(select(CustomTrait.name).where(CustomTrait.name.in_(custom))))
    return [n for n in custom if n not in found]


def check_known(db: Session, names: Iterable[str]) -> None:
    missing = unknown(db, names)
    if missing:
        raise errors.TraitNotFound(names=", ".join(missing))


def exists_named(db: Session, name: str) -> bool:
    return name in standard() or _stored(db, name)


def list_names(db: Session, *, name_in: list[str] | None = None,
               starts_with: str | None = None, associated: bool | None = None) -> list[str]:
    """All traits (sorted), filtered like GET /traits."""
    custom = set(db.scalars(select(CustomTrait.name)))
    names = standard() | custom
    if name_in is not None:
        names = names & set(name_in)
    if starts_with is not None:
        names = {n for n in names if n.startswith(starts_with)}
    if associated is not None:
        used = set(db.scalars(select(ProviderTrait.trait).distinct()))
        names = names & used if associated else names - used
    return sorted(names)


def ensure_custom(db: Session, name: str) -> bool:
    """PUT /traits/{name}: True when created, False when it already existed."""
    if name in standard() or _stored(db, name):
        return False
    try:
        with db.begin_nested():
            db.add(CustomTrait(name=name))
        return True
    except IntegrityError:
        return False


def delete_custom(db: Session, name: str) -> None:
    if name in standard():
        raise errors.BadRequest(f"Cannot delete standard trait {name}.")
    if not _stored(db, name):
        raise errors.NotFound(f"No such trait(s): {name}.")
    if db.scalar(select(exists().where(ProviderTrait.trait == name))):
        raise errors.InUse(f"The trait {name} is in use by a resource provider.")
    db.execute(delete(CustomTrait).where(CustomTrait.name == name))


# ------------------------------------------------------------------ provider traits
def of_provider(db: Session, rp_id: int) -> list[str]:
    return sorted(db.scalars(select(ProviderTrait.trait)
                             .where(ProviderTrait.resource_provider_id == rp_id)))


def set_for_provider(db: Session, rp: providers.Provider, names: Iterable[str],
                     generation: int | None) -> int:
    """Replace the provider's traits; returns the new provider generation.

    `generation=None` skips the check (in-process callers that own the provider)."""
    names = sorted(set(names))
    check_known(db, names)
    new_generation = providers.bump_generation(db, rp.id, generation)
    db.execute(delete(ProviderTrait).where(ProviderTrait.resource_provider_id == rp.id))
    # without a generation check two identical calls may race: "already there" is success
    insert_absent(db, ProviderTrait, [{"resource_provider_id": rp.id, "trait": n} for n in names])
    return new_generation


def _stored(db: Session, name: str) -> bool:
    return db.scalar(select(CustomTrait.name).where(CustomTrait.name == name)) is not None
