"""The in-process Placement interface other services call (compute, network).

Named after Nova's scheduler report client calls; every function runs in the caller's
session (`db`) over the same logic as the HTTP API. Writes that can fail midway run in a
savepoint, so a caught error leaves the caller's transaction as it was.

Errors are `stackling.placement.errors` exceptions: `ClaimFailed` (its subclasses
`CapacityExceeded`, `ConstraintsViolated`, `InvalidAllocation`, `ConcurrentUpdate`) means
"this claim lost, pick another host"; `ResourceProviderNotFound`, `ResourceClassNotFound`,
`TraitNotFound`, `BadRequest` and `DuplicateName` are caller mistakes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.db import insert_absent
from stackling.placement import (
    aggregates,
    allocations,
    candidates,
    errors,
    inventories,
    providers,
    resource_classes,
    traits,
    usages,
)
from stackling.placement.allocations import INCOMPLETE_CONSUMER_USER_ID
from stackling.placement.errors import CapacityExceeded, ClaimFailed, ConcurrentUpdate

__all__ = [
    "ensure_resource_provider", "get_resource_provider", "delete_resource_provider",
    "set_inventory_for_provider", "get_inventory", "update_inventory_for_class",
    "set_traits_for_provider", "set_aggregates_for_provider", "get_allocation_candidates",
    "claim_resources", "put_allocations", "move_allocations", "delete_allocation_for_instance",
    "get_allocations_for_consumer", "get_provider_usages", "get_aggregates_for_providers",
    "release_resource_class",
    "get_aggregates_for_provider", "get_allocations_for_provider", "list_providers_named_like",
    "get_aggregate_members",
    "update_inventory_record", "free_capacity", "set_aggregates_for_providers",
    "create_resource_provider_with", "root_providers", "ensure_child_provider",
    "errors",
    # what callers catch or write by name
    "ClaimFailed", "CapacityExceeded", "ConcurrentUpdate", "INCOMPLETE_CONSUMER_USER_ID",
]


# ------------------------------------------------------------------ providers
def ensure_resource_provider(db: Session, uuid: str, name: str,
                             parent_provider_uuid: str | None = None) -> dict[str, Any]:
    """Create the provider if absent; return {uuid, name, generation, parent_provider_uuid,
    root_provider_uuid}. A different provider already holding `name` is DuplicateName."""
    rp = providers.find(db, uuid)
    if rp is None:
        try:
            rp = providers.create(db, name, uuid, parent_provider_uuid)
        except errors.DuplicateName:
            rp = providers.find(db, uuid)  # created concurrently by someone else
            if rp is None:
                raise
    return rp.as_dict()


def get_resource_provider(db: Session, uuid: str) -> dict[str, Any] | None:
    rp = providers.find(db, uuid)
    return rp.as_dict() if rp else None


def delete_resource_provider(db: Session, uuid: str) -> None:
    """Delete a provider (no-op if absent); ProviderInUse if it has allocations."""
    rp = providers.find(db, uuid)
    if rp is not None:
        with db.begin_nested():
            providers.delete_provider(db, rp)


# ------------------------------------------------------------------ inventory, traits, aggs
def set_inventory_for_provider(db: Session, rp_uuid: str,
                               inventories_by_class: dict[str, dict[str, Any]]) -> None:
    """Replace the provider's whole inventory. Records take upstream's defaults
    (reserved 0, min_unit 1, max_unit 2147483647, step_size 1, allocation_ratio 1.0).
    InventoryInUse when a class with allocations would disappear."""
    rp = providers.get(db, rp_uuid)
    current = inventories.of_provider(db, rp.id)
    wanted = {rc: inventories.with_defaults(rec) for rc, rec in inventories_by_class.items()}
    if current == wanted:
        return  # unchanged: no generation bump, as Nova's report client skips the PUT
    with db.begin_nested():
        inventories.set_all(db, rp, wanted, None)


def get_inventory(db: Session, rp_uuid: str) -> dict[str, dict[str, Any]]:
    return inventories.of_provider(db, providers.get(db, rp_uuid).id)


def update_inventory_for_class(db: Session, rp_uuid: str, resource_class: str,
                               record: dict[str, Any]) -> None:
    """Set one class's inventory, creating it if missing (Neutron's segment IPv4 updates)."""
    rp = providers.get(db, rp_uuid)
    current = inventories.of_provider(db, rp.id)
    current[resource_class] = inventories.with_defaults(record)
    with db.begin_nested():
        inventories.set_all(db, rp, current, None)


def set_traits_for_provider(db: Session, rp_uuid: str, trait_names: Iterable[str]) -> None:
    rp = providers.get(db, rp_uuid)
    names = sorted(set(trait_names))
    if traits.of_provider(db, rp.id) == names:
        return
    with db.begin_nested():
        traits.set_for_provider(db, rp, names, None)


def set_aggregates_for_provider(db: Session, rp_uuid: str, aggregate_uuids: Iterable[str]) -> None:
    rp = providers.get(db, rp_uuid)
    wanted = sorted(set(aggregate_uuids))
    if aggregates.of_provider(db, rp.id) == wanted:
        return
    with db.begin_nested():
        aggregates.set_for_provider(db, rp, wanted, None)


def set_aggregates_for_providers(db: Session, wanted: dict[str, Iterable[str]]) -> None:
    """`set_aggregates_for_provider` for several providers at once: their aggregates read
    in one query, each changed provider bumped (locked, in id order), then one insert and
    at most one delete. ResourceProviderNotFound for a missing provider. Nothing but
    generations is written before the last lock, so a provider deleted meanwhile
    (ConcurrentUpdate) leaves no aggregate half-set: no savepoint needed."""
    from sqlalchemy import and_, delete, or_, select

    from stackling.placement.models import ProviderAggregate, ResourceProvider

    if not wanted:
        return
    rp, pa = ResourceProvider.__table__, ProviderAggregate.__table__
    current: dict[str, set[str]] = {}
    ids: dict[str, int] = {}
    for rp_id, rp_uuid, agg in db.execute(
            select(rp.c.id, rp.c.uuid, pa.c.aggregate_uuid)
            .select_from(rp.outerjoin(pa, pa.c.resource_provider_id == rp.c.id))
            .where(rp.c.uuid.in_(sorted(wanted)))):
        ids[rp_uuid] = rp_id
        current.setdefault(rp_uuid, set())
        if agg is not None:
            current[rp_uuid].add(agg)
    for rp_uuid in sorted(wanted):
        if rp_uuid not in ids:
            raise errors.ResourceProviderNotFound(uuid=rp_uuid)
    sets = {u: set(aggs) for u, aggs in wanted.items()}
    changed = sorted(u for u in sets if sets[u] != current[u])
    if not changed:
        return
    providers.lock_providers(db, [ids[u] for u in changed])
    gone = [(ids[u], a) for u in changed for a in sorted(current[u] - sets[u])]
    if gone:
        db.execute(delete(pa).where(or_(*(and_(pa.c.resource_provider_id == i,
                                               pa.c.aggregate_uuid == a) for i, a in gone))))
    insert_absent(db, ProviderAggregate, [{"resource_provider_id": ids[u], "aggregate_uuid": a}
                                          for u in changed for a in sorted(sets[u] - current[u])])


def create_resource_provider_with(db: Session, uuid: str, name: str,
                                  inventories_by_class: dict[str, dict[str, Any]],
                                  aggregate_uuids: Iterable[str]) -> bool:
    """A new root provider with its inventory and aggregates, written at once and left as
    `ensure_resource_provider`, `set_aggregates_for_provider` and
    `set_inventory_for_provider` would leave it (generation bumped once per part set).
    False, with nothing written, when a provider with that uuid or name exists."""
    from sqlalchemy import insert, update
    from sqlalchemy.exc import IntegrityError

    from stackling.common.db import utcnow
    from stackling.placement.models import Inventory, ProviderAggregate, ResourceProvider

    records = {rc: inventories.with_defaults(rec) for rc, rec in inventories_by_class.items()}
    aggs = sorted(set(aggregate_uuids))
    resource_classes.check_known(db, records)
    stub = providers.Provider(0, uuid, name, 0, None, uuid, 0, None)
    for rc, rec in records.items():
        inventories.check_capacity(stub, rc, rec, reserved_may_equal_total=True)
    rp = ResourceProvider.__table__
    now = utcnow()
    try:
        with db.begin_nested():
            rp_id = db.execute(insert(rp).values(
                uuid=uuid, name=name, generation=int(bool(aggs)) + int(bool(records)),
                root_provider_id=None, parent_provider_id=None, created_at=now,
                updated_at=now)).inserted_primary_key[0]
            db.execute(update(rp).where(rp.c.id == rp_id).values(root_provider_id=rp_id))
            if records:
                db.execute(insert(Inventory.__table__), [
                    {"resource_provider_id": rp_id, "resource_class": rc, **rec,
                     "created_at": now, "updated_at": now} for rc, rec in records.items()])
            if aggs:
                db.execute(insert(ProviderAggregate.__table__), [
                    {"resource_provider_id": rp_id, "aggregate_uuid": a} for a in aggs])
    except IntegrityError:
        return False
    return True


# ------------------------------------------------------------------ scheduling
def get_allocation_candidates(db: Session, resources: dict[str, int], *,
                              required: Iterable[str] = (), forbidden: Iterable[str] = (),
                              member_of: Iterable[Iterable[str]] = (),
                              in_tree: str | None = None,
                              limit: int | None = None,
                              groups: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """[{"allocations": {rp_uuid: {rc: amount}}}, ...], most free capacity first (with
    `groups`, also "mappings": {suffix: [rp_uuid]}).

    `member_of` is a list of aggregate lists: each inner list is any-of, the outer AND
    (Nova's routed-network prefilter passes one list per network). `groups` are further
    granular request groups, `{"suffix", "resources", "required"}` (a port's resource
    request groups, each satisfied by one provider of the same tree, group policy none)."""
    group = candidates.RequestGroup(
        suffix="", resources=dict(resources), required=[{t} for t in required],
        forbidden=set(forbidden), member_of=[set(aggs) for aggs in member_of], in_tree=in_tree)
    request = candidates.CandidateRequest(groups={"": group}, limit=limit)
    for g in groups:
        request.group_policy = "none"
        request.groups[g["suffix"]] = candidates.RequestGroup(
            suffix=g["suffix"], resources=dict(g["resources"]),
            required=[{t} for t in g.get("required", ())], in_tree=in_tree)
    candidates.validate(db, request)
    result = candidates.find(db, request, with_summaries=False)
    out: list[dict[str, Any]] = []
    for c in result.candidates:
        item: dict[str, Any] = {"allocations": {rp: dict(res) for rp, res in c.allocations.items()}}
        if len(request.groups) > 1:
            item["mappings"] = {k: list(v) for k, v in c.mappings.items()}
        out.append(item)
    return out


def claim_resources(db: Session, consumer_uuid: str, allocations_by_rp: dict[str, dict[str, int]],
                    project_id: str, user_id: str, consumer_type: str = "INSTANCE") -> None:
    """Replace the consumer's allocations with `allocations_by_rp` ({rp_uuid: {rc: n}}).

    Runs in the caller's transaction (inside a savepoint): raises ClaimFailed when the
    providers cannot take it, leaving the caller's transaction untouched."""
    write = allocations.ConsumerWrite(consumer_uuid, _clean(allocations_by_rp), project_id,
                                      user_id, consumer_type=consumer_type)
    with db.begin_nested():
        allocations.replace_all(db, [write])


def put_allocations(db: Session, consumer_uuid: str, allocations_by_rp: dict[str, dict[str, int]],
                    project_id: str, user_id: str, consumer_generation: int | None,
                    consumer_type: str = "INSTANCE") -> None:
    """Like claim_resources, with the consumer generation checked (None = new consumer)."""
    write = allocations.ConsumerWrite(consumer_uuid, _clean(allocations_by_rp), project_id,
                                      user_id, generation=consumer_generation,
                                      consumer_type=consumer_type)
    with db.begin_nested():
        allocations.replace_all(db, [write])


def move_allocations(db: Session, source_consumer: str, target_consumer: str) -> bool:
    """Move all allocations of `source_consumer` to `target_consumer` atomically (Nova's
    move to a migration record). False when the source has none."""
    source = allocations.for_consumer(db, source_consumer)
    if not source.allocations:
        return False
    moved = {rp: dict(entry["resources"]) for rp, entry in source.allocations.items()}
    writes = [
        allocations.ConsumerWrite(target_consumer, moved, source.project_id or "",
                                  source.user_id or "", consumer_type="MIGRATION"),
        allocations.ConsumerWrite(source_consumer, {}, source.project_id or "",
                                  source.user_id or ""),
    ]
    with db.begin_nested():
        allocations.replace_all(db, writes)
    return True


def delete_allocation_for_instance(db: Session, consumer_uuid: str) -> None:
    """Remove the consumer's allocations; a no-op when it has none. (Two deletes that
    cannot fail midway: no savepoint.)"""
    allocations.delete_for_consumer(db, consumer_uuid)


def get_allocations_for_consumer(db: Session, consumer_uuid: str) -> dict[str, Any]:
    """Nova's shape: {rp_uuid: {"generation": g, "resources": {rc: n}}} ({} when none)."""
    return allocations.for_consumer(db, consumer_uuid).allocations


def get_provider_usages(db: Session, rp_uuid: str) -> dict[str, int]:
    return usages.of_provider(db, providers.get(db, rp_uuid).id)


def _release_statements() -> tuple[Any, Any, Any]:
    from sqlalchemy import and_, bindparam, delete, select, update

    from stackling.placement.models import Allocation, Consumer, ResourceProvider

    a, c, rp = Allocation.__table__.c, Consumer.__table__.c, ResourceProvider.__table__.c
    held = and_(a.consumer_id == bindparam("consumer"), a.resource_class == bindparam("rc"))
    # the providers' bump (their row locks) finds them by the allocations it releases
    lock = (update(ResourceProvider.__table__)
            .where(rp.id.in_(select(a.resource_provider_id).where(held).scalar_subquery()))
            .values(generation=rp.generation + 1, updated_at=bindparam("b_now")))
    drop = delete(Allocation.__table__).where(held)
    bump = (update(Consumer.__table__).where(c.uuid == bindparam("consumer"))
            .values(generation=c.generation + 1, updated_at=bindparam("b_now")))
    return lock, drop, bump


_RELEASE: tuple[Any, Any, Any] | None = None


def release_resource_class(db: Session, consumer_uuid: str, resource_class: str) -> bool:
    """Drop one resource class from a consumer's allocations, as an allocation write does
    (providers' and consumer's generations bumped) but with nothing to check: usage only
    goes down. Compute hands a build's IPv4 claim to the port this way. False when the
    consumer held none of it.

    The providers are bumped (locked) in one statement, in no set order: the build that
    calls this locked them already, in id order, when it claimed."""
    global _RELEASE
    from stackling.common.db import utcnow

    if _RELEASE is None:
        _RELEASE = _release_statements()
    lock, drop, bump = _RELEASE
    params = {"consumer": consumer_uuid, "rc": resource_class, "b_now": utcnow()}
    if db.execute(lock, params).rowcount == 0:
        return False
    db.execute(drop, params)
    db.execute(bump, params)
    return True


_AGGREGATES_OF: Any = None


def get_aggregates_for_providers(db: Session, rp_uuids: Iterable[str]) -> dict[str, list[str]]:
    """{rp_uuid: [aggregate uuid, ...]} for the providers that exist (one query)."""
    global _AGGREGATES_OF
    if _AGGREGATES_OF is None:
        from sqlalchemy import bindparam, select

        from stackling.placement.models import ProviderAggregate, ResourceProvider

        rp, pa = ResourceProvider.__table__, ProviderAggregate.__table__
        _AGGREGATES_OF = (select(rp.c.uuid, pa.c.aggregate_uuid)
                          .select_from(rp.join(pa, pa.c.resource_provider_id == rp.c.id))
                          .where(rp.c.uuid.in_(bindparam("uuids", expanding=True))))
    out: dict[str, list[str]] = {}
    uuids = list(rp_uuids)
    if not uuids:
        return out
    for rp_uuid, agg in db.execute(_AGGREGATES_OF, {"uuids": uuids}):
        out.setdefault(rp_uuid, []).append(agg)
    return out


_AGGREGATE_PEERS: Any = None


def get_aggregate_members(db: Session, rp_uuids: Iterable[str]) -> dict[str, list[str]]:
    """{rp_uuid: [aggregate uuid, ...]} over the aggregates the given providers are in:
    theirs, and for every provider sharing one of them, those it shares (one query, whose
    size is the aggregates' membership, not the number of providers asked about)."""
    global _AGGREGATE_PEERS
    if _AGGREGATE_PEERS is None:
        from sqlalchemy import bindparam, select

        from stackling.placement.models import ProviderAggregate, ResourceProvider

        rp, pa = ResourceProvider.__table__, ProviderAggregate.__table__
        rp2, pa2 = rp.alias("asked"), pa.alias("theirs")
        theirs = (select(pa2.c.aggregate_uuid)
                  .select_from(pa2.join(rp2, rp2.c.id == pa2.c.resource_provider_id))
                  .where(rp2.c.uuid.in_(bindparam("uuids", expanding=True))))
        _AGGREGATE_PEERS = (select(rp.c.uuid, pa.c.aggregate_uuid)
                            .select_from(pa.join(rp, rp.c.id == pa.c.resource_provider_id))
                            .where(pa.c.aggregate_uuid.in_(theirs)))
    out: dict[str, list[str]] = {}
    uuids = sorted(set(rp_uuids))
    if not uuids:
        return out
    for rp_uuid, agg in db.execute(_AGGREGATE_PEERS, {"uuids": uuids}):
        out.setdefault(rp_uuid, []).append(agg)
    return out


# ------------------------------------------------------------------ routed-network segments
def get_aggregates_for_provider(db: Session, rp_uuid: str) -> list[str]:
    return aggregates.of_provider(db, providers.get(db, rp_uuid).id)


def get_allocations_for_provider(db: Session, rp_uuid: str) -> dict[str, dict[str, int]]:
    """{consumer_uuid: {resource_class: amount}} of everything allocated from the provider."""
    return {consumer: dict(entry["resources"]) for consumer, entry in
            allocations.for_provider(db, providers.get(db, rp_uuid).id).items()}


def _inventory_statements() -> tuple[Any, Any, Any, Any, Any]:
    """Core statements over the tables, values bound at execution: built once."""
    from sqlalchemy import and_, bindparam, exists, or_, select, update

    from stackling.placement.inventories import FIELDS
    from stackling.placement.models import Inventory, ResourceProvider

    rp_t, inv_t = ResourceProvider.__table__, Inventory.__table__
    rp, inv = rp_t.c, inv_t.c
    current = (select(rp.id, *(inv[f] for f in FIELDS))
               .select_from(rp_t.join(inv_t, inv.resource_provider_id == rp.id))
               .where(rp.uuid == bindparam("rp_uuid"), inv.resource_class == bindparam("rc")))
    bump = update(rp_t).where(rp.id == bindparam("rp_id")).values(generation=rp.generation + 1)
    record = {f: bindparam(f"w_{f}") for f in FIELDS}
    write = (update(inv_t).where(inv.resource_provider_id == bindparam("rp_id"),
                                 inv.resource_class == bindparam("rc")).values(**record))
    # The likely-changed path: bump (and so lock) the provider only when its record
    # differs from the wanted one, then write the record, found by the provider's uuid.
    differs = exists().where(inv.resource_provider_id == rp.id,
                             inv.resource_class == bindparam("rc"),
                             or_(*(inv[f] != bindparam(f"w_{f}") for f in FIELDS)))
    bump_if_differs = (update(rp_t).where(and_(rp.uuid == bindparam("rp_uuid"), differs))
                       .values(generation=rp.generation + 1))
    rp_id = select(rp.id).where(rp.uuid == bindparam("rp_uuid")).scalar_subquery()
    write_by_uuid = (update(inv_t).where(inv.resource_provider_id == rp_id,
                                         inv.resource_class == bindparam("rc"))
                     .values(**record))
    return current, bump, write, bump_if_differs, write_by_uuid


_INVENTORY_STATEMENTS: tuple[Any, Any, Any, Any, Any] | None = None


def update_inventory_record(db: Session, rp_uuid: str, resource_class: str,
                            record: dict[str, Any], *, likely_changed: bool = False) -> bool:
    """Set an existing inventory record of the provider (complete record, reserved <=
    total) with at most three prebuilt statements; the provider generation is bumped
    when it changes. False when the provider has no such inventory (nothing written):
    the caller falls back to `set_inventory_for_provider`. For hot paths (a routed
    segment's IPv4 inventory follows every subnet and port change).

    `likely_changed` (a subnet change): two statements when the record did change, the
    provider's bump (its row lock, taken first as everywhere) only if it differs, then
    the write; otherwise, or when it did not change, the current record is read first."""
    global _INVENTORY_STATEMENTS
    from stackling.placement.inventories import FIELDS

    if _INVENTORY_STATEMENTS is None:
        _INVENTORY_STATEMENTS = _inventory_statements()
    current, bump, write, bump_if_differs, write_by_uuid = _INVENTORY_STATEMENTS
    wanted = inventories.with_defaults(record)
    params = {"rp_uuid": rp_uuid, "rc": resource_class, **{f"w_{f}": wanted[f] for f in FIELDS}}
    if likely_changed:
        if db.execute(bump_if_differs, params).rowcount == 1:
            db.execute(write_by_uuid, params)
            return True
        # unchanged, or no such record: told apart below (also a concurrent writer's)
    row = db.execute(current, params).first()
    if row is None:
        return False
    if dict(zip(FIELDS, row[1:], strict=True)) == wanted:
        return True
    params["rp_id"] = row[0]
    db.execute(bump, params)  # also the provider's row lock, as set_all takes
    db.execute(write, params)
    return True


def _free_statement() -> Any:
    from sqlalchemy import and_, bindparam, func, select

    from stackling.placement.models import Allocation, Inventory, ResourceProvider

    used = (select(func.coalesce(func.sum(Allocation.used), 0))
            .where(Allocation.resource_provider_id == ResourceProvider.id,
                   Allocation.resource_class == bindparam("rc"))
            .scalar_subquery())
    return (select(ResourceProvider.uuid, Inventory.total, Inventory.reserved,
                   Inventory.allocation_ratio, used)
            .outerjoin(Inventory, and_(Inventory.resource_provider_id == ResourceProvider.id,
                                       Inventory.resource_class == bindparam("rc")))
            .where(ResourceProvider.uuid.in_(bindparam("uuids", expanding=True))))


_FREE: Any = None


def free_capacity(db: Session, rp_uuids: Iterable[str], resource_class: str) -> dict[str, int]:
    """{rp_uuid: capacity - usage of `resource_class`} for those of the providers that
    exist (0 for one without such inventory), in one query."""
    global _FREE
    uuids = sorted(set(rp_uuids))
    if not uuids:
        return {}
    if _FREE is None:
        _FREE = _free_statement()
    out = {}
    for uuid, total, reserved, ratio, used in db.execute(
            _FREE, {"uuids": uuids, "rc": resource_class}):
        out[uuid] = 0 if total is None else int((total - reserved) * ratio) - int(used)
    return out


def list_providers_named_like(db: Session, prefix: str) -> dict[str, str]:
    """{uuid: name} of the providers whose name starts with `prefix` (the network audit
    finds Neutron's segment providers by their name stub)."""
    from sqlalchemy import select

    from stackling.placement.models import ResourceProvider

    rows = db.execute(select(ResourceProvider.uuid, ResourceProvider.name).where(
        ResourceProvider.name.startswith(prefix, autoescape=True)))
    return {u: n for u, n in rows}


def _clean(allocations_by_rp: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {rp: {rc: int(n) for rc, n in res.items() if n} for rp, res in allocations_by_rp.items()
            if any(res.values())}


def root_providers(db: Session, rp_uuids: Iterable[str]) -> dict[str, str]:
    """{rp_uuid: its root provider's uuid} for the providers that exist."""
    from sqlalchemy import select
    from sqlalchemy.orm import aliased

    from stackling.placement.models import ResourceProvider

    uuids = list(rp_uuids)
    if not uuids:
        return {}
    root = aliased(ResourceProvider)
    rows = db.execute(select(ResourceProvider.uuid, root.uuid).join(
        root, root.id == ResourceProvider.root_provider_id).where(
        ResourceProvider.uuid.in_(uuids)))
    return {uuid: root_uuid for uuid, root_uuid in rows}


def ensure_child_provider(db: Session, uuid: str, name: str, parent_uuid: str,
                          inventories_by_class: dict[str, dict[str, Any]],
                          trait_names: Iterable[str]) -> None:
    """A provider under `parent_uuid` with exactly this inventory and these traits
    (custom traits created as needed): what an agent reports of its devices."""
    ensure_resource_provider(db, uuid, name, parent_uuid)
    names = sorted(set(trait_names))
    for name_ in names:
        if name_.startswith("CUSTOM_"):
            traits.ensure_custom(db, name_)
    set_traits_for_provider(db, uuid, names)
    set_inventory_for_provider(db, uuid, inventories_by_class)
