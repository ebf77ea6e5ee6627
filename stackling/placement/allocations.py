"""Allocations and their consumers.

A write replaces all allocations of each consumer it names, atomically, in the caller's
transaction:

1. lock every provider it allocates from (`UPDATE ... SET generation = generation + 1`,
   in uuid order), so concurrent writers of those providers queue behind us and every
   read below sees their committed usage;
2. check and bump consumer generations (`UPDATE ... WHERE generation = ?`);
3. drop the consumers' old allocations, then check the new ones against inventory
   (capacity, min/max unit, step size) with usage summed in SQL;
4. insert, and delete consumers left without allocations.

Any failure raises and the transaction rolls back: nothing is ever over-allocated,
whatever the number of processes.

Everything here reads and writes with Core statements over the tables, never ORM
objects: the caller's session (compute's build transaction) keeps its own objects
untouched, and every claim runs statements built once (building them per call cost more
than running them).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.db import utcnow
from stackling.placement import errors, resource_classes
from stackling.placement.models import Allocation, Consumer, Inventory, ResourceProvider

# Upstream's [placement] incomplete_consumer_project_id / _user_id defaults: the owner
# recorded for allocations written before microversion 1.8 (no project/user in the body).
INCOMPLETE_CONSUMER_PROJECT_ID = "00000000-0000-0000-0000-000000000000"
INCOMPLETE_CONSUMER_USER_ID = "00000000-0000-0000-0000-000000000000"
UNKNOWN_CONSUMER_TYPE = "unknown"


class _NoCheck:
    def __repr__(self) -> str:
        return "NO_CHECK"


NO_CHECK: Any = _NoCheck()  # consumer generation not checked (microversions < 1.28)


@dataclass
class ConsumerWrite:
    """The new allocations of one consumer: {rp_uuid: {resource_class: amount}}."""

    consumer_uuid: str
    allocations: dict[str, dict[str, int]]
    project_id: str = INCOMPLETE_CONSUMER_PROJECT_ID
    user_id: str = INCOMPLETE_CONSUMER_USER_ID
    generation: Any = NO_CHECK  # int, None (= must not exist yet) or NO_CHECK
    consumer_type: str | None = None  # None leaves an existing type alone


_A = Allocation.__table__.c
_C = Consumer.__table__.c
_R = ResourceProvider.__table__.c
# a provider's bump, found by its uuid: its row lock, and whether it exists
_LOCK_BY_UUID = (update(ResourceProvider.__table__).where(_R.uuid == bindparam("b_uuid"))
                 .values(generation=_R.generation + 1, updated_at=bindparam("b_now")))
_CONSUMERS = bindparam("consumers", expanding=True)
_OLD = select(_A.resource_provider_id, _A.resource_class, _A.used).where(
    _A.consumer_id.in_(_CONSUMERS))
_DELETE_OLD = delete(Allocation.__table__).where(_A.consumer_id.in_(_CONSUMERS))
_INSERT = insert(Allocation.__table__)
_NEXT_GENERATION = (update(Consumer.__table__)
                    .where(_C.uuid == bindparam("b_uuid"), _C.generation == bindparam("b_gen"))
                    .values(generation=_C.generation + 1, updated_at=bindparam("b_now")))
_DELETE_CONSUMERS = delete(Consumer.__table__).where(_C.uuid.in_(_CONSUMERS))
_LOCK_CONSUMER = (select(_C.generation, _C.project_id, _C.user_id, _C.consumer_type)
                  .where(_C.uuid == bindparam("uuid")).with_for_update())
_INSERT_CONSUMER = insert(Consumer.__table__)


def replace_all(db: Session, writes: list[ConsumerWrite]) -> None:
    """Replace the allocations of every consumer in `writes`, all or nothing."""
    # Lock (bump) every provider named, in uuid order so writers never deadlock; the
    # bump also tells a missing provider (the caller rolls the locks back with the error).
    now = utcnow()
    for rp_uuid in sorted({u for w in writes for u in w.allocations}):
        if db.execute(_LOCK_BY_UUID, {"b_uuid": rp_uuid, "b_now": now}).rowcount != 1:
            raise errors.BadRequest(
                f"Allocation for resource provider '{rp_uuid}' that does not exist.")
    classes = {rc for w in writes for res in w.allocations.values() for rc in res}
    missing = resource_classes.unknown(db, classes)
    if missing:
        raise errors.BadRequest(
            f"Unable to allocate inventory for consumer {writes[0].consumer_uuid}: "
            f"No such resource class {', '.join(missing)}.")

    # consumer uuid -> its generation before this write (None: created just now)
    before = {w.consumer_uuid: _ensure_consumer(db, w)
              for w in sorted(writes, key=lambda w: w.consumer_uuid)}

    existing = sorted(c for c, gen in before.items() if gen is not None)
    old: dict[tuple[int, str], int] = defaultdict(int)
    if existing:
        for rp_id, rc, used in db.execute(_OLD, {"consumers": existing}):
            old[(rp_id, rc)] += used
        db.execute(_DELETE_OLD, {"consumers": existing})

    # (consumer, provider uuid, class, amount) of every new allocation
    entries = [(w.consumer_uuid, rp_uuid, rc, amount) for w in writes
               for rp_uuid, resources in w.allocations.items() for rc, amount in resources.items()]
    if entries:
        ids = _check_capacity(db, entries, old)
        db.execute(_INSERT, [{"resource_provider_id": ids[rp_uuid], "resource_class": rc,
                              "consumer_id": consumer, "used": amount, "created_at": now}
                             for consumer, rp_uuid, rc, amount in entries])

    for consumer_uuid in existing:
        result = db.execute(_NEXT_GENERATION, {"b_uuid": consumer_uuid,
                                               "b_gen": before[consumer_uuid],
                                               "b_now": utcnow()})
        if result.rowcount != 1:
            raise errors.ConcurrentUpdate(
                "Inventory and/or allocations changed while attempting to allocate: "
                "Another thread concurrently updated the data. Please retry your update")
    emptied = [w.consumer_uuid for w in writes if not any(w.allocations.values())]
    if emptied:
        db.execute(_DELETE_CONSUMERS, {"consumers": emptied})


def _ensure_consumer(db: Session, w: ConsumerWrite) -> int | None:
    """Lock the consumer row and check its generation, or create it (with generation 1,
    the value after this write). Returns the generation it had, None when created."""
    current = db.execute(_LOCK_CONSUMER, {"uuid": w.consumer_uuid}).first()
    if current is not None:
        generation, project_id, user_id, consumer_type = current
        if w.generation is not NO_CHECK and generation != w.generation:
            raise errors.ConcurrentUpdate(
                f"consumer generation conflict - expected {_gen(generation)} "
                f"but got {_gen(w.generation)}")
        changes: dict[str, Any] = {}
        if (w.project_id, w.user_id) != (project_id, user_id):
            changes.update(project_id=w.project_id, user_id=w.user_id)
        if w.consumer_type is not None and w.consumer_type != consumer_type:
            changes["consumer_type"] = w.consumer_type
        if changes:
            db.execute(update(Consumer).where(Consumer.uuid == w.consumer_uuid).values(**changes)
                       .execution_options(synchronize_session=False))
        return generation
    if w.generation is not NO_CHECK and w.generation is not None:
        raise errors.ConcurrentUpdate(
            f"consumer generation conflict - expected null but got {w.generation}")
    now = utcnow()
    try:
        db.execute(_INSERT_CONSUMER, {
            "uuid": w.consumer_uuid, "project_id": w.project_id, "user_id": w.user_id,
            "generation": 1, "consumer_type": w.consumer_type, "created_at": now,
            "updated_at": now})
    except IntegrityError:
        # Another request created it since our read: a concurrent write of this consumer.
        # (The caller's transaction or savepoint is rolled back by the raise.)
        raise errors.ConcurrentUpdate(
            "consumer generation conflict - expected null but the consumer was created "
            "concurrently") from None
    return None


def _gen(value: Any) -> str:
    return "null" if value is None else str(value)


# Inventory and current usage (the claiming consumers' old rows already deleted) in one
# query, built once: every claim runs it.
_RP_UUIDS = bindparam("rp_uuids", expanding=True)
_CLASSES = bindparam("classes", expanding=True)
_I = Inventory.__table__.c
_USAGE = (select(_A.resource_provider_id.label("rp_id"),
                 _A.resource_class.label("rc"), func.sum(_A.used).label("used"))
          .where(_A.resource_provider_id.in_(select(_R.id).where(_R.uuid.in_(_RP_UUIDS))),
                 _A.resource_class.in_(_CLASSES))
          .group_by(_A.resource_provider_id, _A.resource_class).subquery())
_CAPACITY = (select(_I.resource_provider_id, _R.uuid, _I.resource_class, _I.total, _I.reserved,
                    _I.allocation_ratio, _I.min_unit, _I.max_unit, _I.step_size,
                    func.coalesce(_USAGE.c.used, 0))
             .select_from(Inventory.__table__)
             .join(ResourceProvider.__table__, _R.id == _I.resource_provider_id)
             .outerjoin(_USAGE, (_USAGE.c.rp_id == _I.resource_provider_id)
                        & (_USAGE.c.rc == _I.resource_class))
             .where(_R.uuid.in_(_RP_UUIDS), _I.resource_class.in_(_CLASSES)))


def _check_capacity(db: Session, entries: list[tuple[str, str, str, int]],
                    old: dict[tuple[int, str], int]) -> dict[str, int]:
    """Check the new allocations (consumer, provider uuid, class, amount) against the
    providers' inventory and usage; returns the providers' ids by uuid."""
    inventory: dict[tuple[str, str], Any] = {}
    used: dict[tuple[str, str], int] = {}
    ids: dict[str, int] = {}
    for row in db.execute(_CAPACITY, {"rp_uuids": sorted({e[1] for e in entries}),
                                      "classes": sorted({e[2] for e in entries})}):
        key = (row[1], row[2])
        ids[row[1]] = row[0]
        inventory[key] = row
        used[key] = int(row[9])
    wanted: dict[tuple[str, str], int] = defaultdict(int)
    for _consumer, rp_uuid, rc, amount in entries:
        key = (rp_uuid, rc)
        wanted[key] += amount
        inv = inventory.get(key)
        names = {"resource_class": rc, "resource_provider": rp_uuid}
        if inv is None:
            raise errors.InvalidAllocation(**names)
        if amount < inv.min_unit or amount > inv.max_unit or amount % inv.step_size:
            raise errors.ConstraintsViolated(**names)
    for key, amount in wanted.items():
        inv = inventory[key]
        cap = (inv.total - inv.reserved) * inv.allocation_ratio
        # Over capacity is refused unless it is no worse than what these consumers already
        # held there (lets a move proceed after `total` shrank), as upstream.
        if used[key] + amount > cap and amount > old.get((ids[key[0]], key[1]), 0):
            raise errors.CapacityExceeded(resource_class=key[1], resource_provider=key[0])
    return ids


_DELETE_CONSUMER = delete(Consumer.__table__).where(_C.uuid == bindparam("uuid"))
_DELETE_ALLOCATIONS = delete(Allocation.__table__).where(_A.consumer_id == bindparam("uuid"))


def delete_for_consumer(db: Session, consumer_uuid: str) -> bool:
    """Remove all allocations of a consumer (and the consumer); False when it had none.
    The consumer row goes first: its delete is the consumer's row lock, as a writer's
    SELECT ... FOR UPDATE of it."""
    db.execute(_DELETE_CONSUMER, {"uuid": consumer_uuid})
    return db.execute(_DELETE_ALLOCATIONS, {"uuid": consumer_uuid}).rowcount > 0


# ------------------------------------------------------------------ reads
@dataclass
class ConsumerAllocations:
    allocations: dict[str, dict[str, Any]]  # rp_uuid -> {"generation", "resources"}
    project_id: str | None = None
    user_id: str | None = None
    generation: int | None = None
    consumer_type: str | None = None


_OF_CONSUMER = (select(_R.uuid, _R.generation, _A.resource_class, _A.used)
                .select_from(Allocation.__table__)
                .join(ResourceProvider.__table__, _R.id == _A.resource_provider_id)
                .where(_A.consumer_id == bindparam("uuid"))
                .order_by(_R.uuid, _A.resource_class))
_CONSUMER = select(_C.project_id, _C.user_id, _C.generation, _C.consumer_type).where(
    _C.uuid == bindparam("uuid"))


def for_consumer(db: Session, consumer_uuid: str) -> ConsumerAllocations:
    rows = db.execute(_OF_CONSUMER, {"uuid": consumer_uuid}).all()
    if not rows:
        return ConsumerAllocations(allocations={})
    result: dict[str, dict[str, Any]] = {}
    for rp_uuid, generation, rc, used in rows:
        entry = result.setdefault(rp_uuid, {"generation": generation, "resources": {}})
        entry["resources"][rc] = used
    consumer = db.execute(_CONSUMER, {"uuid": consumer_uuid}).first()
    if consumer is None:  # allocations without a consumer row: upstream's incomplete one
        return ConsumerAllocations(result, INCOMPLETE_CONSUMER_PROJECT_ID,
                                   INCOMPLETE_CONSUMER_USER_ID, 0, None)
    return ConsumerAllocations(result, *consumer)


def for_provider(db: Session, rp_id: int) -> dict[str, dict[str, Any]]:
    """{consumer_uuid: {"resources": {rc: used}, "consumer_generation": g}}."""
    rows = db.execute(
        select(Allocation.consumer_id, Allocation.resource_class, Allocation.used,
               Consumer.generation)
        .outerjoin(Consumer, Consumer.uuid == Allocation.consumer_id)
        .where(Allocation.resource_provider_id == rp_id)
        .order_by(Allocation.consumer_id, Allocation.resource_class))
    result: dict[str, dict[str, Any]] = {}
    for consumer_uuid, rc, used, generation in rows:
        entry = result.setdefault(consumer_uuid, {"resources": {},
                                                  "consumer_generation": generation})
        entry["resources"][rc] = used
    return result
