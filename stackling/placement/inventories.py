"""Inventories: what each provider offers per resource class.

capacity = (total - reserved) * allocation_ratio. Every change bumps the provider's
generation (conditionally when the caller sent one) before anything is written, which
also serialises it with allocation writes on the same provider.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from stackling.common.db import utcnow
from stackling.placement import errors, resource_classes
from stackling.placement.models import Allocation, Inventory
from stackling.placement.providers import Provider, bump_generation

MAX_INT = 2147483647
FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
DEFAULTS: dict[str, Any] = {"reserved": 0, "min_unit": 1, "max_unit": MAX_INT, "step_size": 1,
                            "allocation_ratio": 1.0}


def with_defaults(record: dict[str, Any]) -> dict[str, Any]:
    return {**DEFAULTS, **{k: v for k, v in record.items() if k in FIELDS}}


def capacity(record: dict[str, Any]) -> int:
    return int((record["total"] - record["reserved"]) * record["allocation_ratio"])


_COLUMNS = [getattr(Inventory, f) for f in FIELDS]


def of_provider(db: Session, rp_id: int) -> dict[str, dict[str, Any]]:
    rows = db.execute(select(Inventory.resource_class, *_COLUMNS)
                      .where(Inventory.resource_provider_id == rp_id)
                      .order_by(Inventory.resource_class))
    return {row[0]: dict(zip(FIELDS, row[1:], strict=True)) for row in rows}


def check_capacity(rp: Provider, rc: str, record: dict[str, Any], *,
                   reserved_may_equal_total: bool) -> None:
    """400 when an inventory could never serve anything (upstream's reserved rule)."""
    cap = capacity(record)
    if cap < 0 or (cap == 0 and not reserved_may_equal_total):
        relation = "greater than" if reserved_may_equal_total else "greater than or equal to"
        raise errors.BadRequest(
            f"Invalid inventory for '{rc}' on resource provider '{rp.uuid}'. "
            f"The reserved value is {relation} total.")


def _used_classes(db: Session, rp_id: int, classes: list[str]) -> list[str]:
    if not classes:
        return []
    return sorted(db.scalars(select(Allocation.resource_class).distinct().where(
        Allocation.resource_provider_id == rp_id, Allocation.resource_class.in_(classes))))


def set_all(db: Session, rp: Provider, inventories: dict[str, dict[str, Any]],
            generation: int | None, *, reserved_may_equal_total: bool = True) -> int:
    """Replace the provider's whole inventory; returns the new generation.

    Raises ResourceClassNotFound, BadRequest (capacity), ConcurrentUpdate (generation),
    InventoryInUse (a class with allocations would be removed). Lowering `total` below
    current usage is allowed, as upstream: later allocations then fail the fit test.
    """
    records = {rc: with_defaults(rec) for rc, rec in inventories.items()}
    resource_classes.check_known(db, records)
    for rc, rec in records.items():
        check_capacity(rp, rc, rec, reserved_may_equal_total=reserved_may_equal_total)
    new_generation = bump_generation(db, rp.id, generation)
    existing = of_provider(db, rp.id)
    removed = sorted(set(existing) - set(records))
    in_use = _used_classes(db, rp.id, removed)
    if in_use:
        raise errors.InventoryInUse(resource_classes=", ".join(in_use), resource_provider=rp.uuid)
    if removed:
        db.execute(delete(Inventory).where(Inventory.resource_provider_id == rp.id,
                                           Inventory.resource_class.in_(removed)))
    now = utcnow()
    new_rows = []
    for rc, rec in records.items():
        current = existing.get(rc)
        if current is None:
            new_rows.append({"resource_provider_id": rp.id, "resource_class": rc, **rec,
                             "created_at": now, "updated_at": now})
        elif current != rec:
            db.execute(update(Inventory).where(Inventory.resource_provider_id == rp.id,
                                               Inventory.resource_class == rc)
                       .values(**rec, updated_at=now)
                       .execution_options(synchronize_session=False))
    if new_rows:
        db.execute(insert(Inventory), new_rows)
    return new_generation


def add_one(db: Session, rp: Provider, rc: str, record: dict[str, Any], *,
            reserved_may_equal_total: bool) -> tuple[dict[str, Any], int]:
    """POST /inventories: a new class on the provider; 409 if it already has one."""
    rec = with_defaults(record)
    resource_classes.check_known(db, [rc])
    check_capacity(rp, rc, rec, reserved_may_equal_total=reserved_may_equal_total)
    new_generation = bump_generation(db, rp.id, None)
    if db.scalar(select(Inventory.id).where(Inventory.resource_provider_id == rp.id,
                                            Inventory.resource_class == rc)) is not None:
        raise errors.ConcurrentUpdate(
            f"Update conflict: Inventory for '{rc}' on resource provider '{rp.uuid}' "
            "already exists.")
    db.execute(insert(Inventory), [{"resource_provider_id": rp.id, "resource_class": rc, **rec}])
    return rec, new_generation


def update_one(db: Session, rp: Provider, rc: str, record: dict[str, Any], generation: int | None,
               *, reserved_may_equal_total: bool) -> tuple[dict[str, Any], int]:
    """PUT /inventories/{rc}: change one existing class."""
    rec = with_defaults(record)
    check_capacity(rp, rc, rec, reserved_may_equal_total=reserved_may_equal_total)
    new_generation = bump_generation(db, rp.id, generation)
    result = db.execute(update(Inventory).where(Inventory.resource_provider_id == rp.id,
                                                Inventory.resource_class == rc)
                        .values(**rec, updated_at=utcnow())
                        .execution_options(synchronize_session=False))
    if result.rowcount != 1:
        raise errors.BadRequest(
            f"No inventory record with resource class for resource provider {rp.uuid}: "
            f"No inventory of class {rc} found.")
    return rec, new_generation


def delete_one(db: Session, rp: Provider, rc: str) -> int:
    new_generation = bump_generation(db, rp.id, None)
    if db.scalar(select(func.count()).select_from(Inventory).where(
            Inventory.resource_provider_id == rp.id, Inventory.resource_class == rc)) == 0:
        raise errors.NotFound(f"No inventory of class {rc} found for delete: "
                              f"No inventory of class {rc} found.")
    if _used_classes(db, rp.id, [rc]):
        raise errors.InventoryInUse(
            f"Unable to delete inventory of class {rc}: Inventory for '{rc}' on "
            f"resource provider '{rp.uuid}' in use.")
    db.execute(delete(Inventory).where(Inventory.resource_provider_id == rp.id,
                                       Inventory.resource_class == rc))
    return new_generation
