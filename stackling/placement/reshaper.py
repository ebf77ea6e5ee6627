"""The reshaper: move inventories and allocations between providers atomically (1.30)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.placement import allocations, errors, inventories, providers


def reshape(db: Session, new_inventories: dict[str, dict[str, Any]],
            writes: list[allocations.ConsumerWrite]) -> None:
    """`new_inventories`: {rp_uuid: {"resource_provider_generation": g, "inventories": {...}}}.

    Inventories are first widened (new records added, old classes kept), allocations are
    rewritten, then each provider is narrowed to exactly its new inventory: a class that
    still has allocations at that point fails with InventoryInUse, and everything rolls back.
    """
    targets = []
    for rp_uuid in sorted(new_inventories):
        rp = providers.find(db, rp_uuid)
        if rp is None:
            err = errors.BadRequest(
                f"Resource provider {rp_uuid} in inventories not found")
            err.code = errors.RESOURCE_PROVIDER_NOT_FOUND
            raise err
        spec = new_inventories[rp_uuid]
        if spec["resource_provider_generation"] != rp.generation:
            raise errors.ConcurrentUpdate(
                f"Resource provider's generation already changed. Please update the "
                f"generation and try again. ({rp_uuid})")
        widened = {**inventories.of_provider(db, rp.id), **spec["inventories"]}
        inventories.set_all(db, rp, widened, rp.generation)
        targets.append((rp, spec["inventories"]))
    allocations.replace_all(db, writes)
    for rp, wanted in targets:
        inventories.set_all(db, rp, wanted, None)
