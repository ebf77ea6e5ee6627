"""Resource providers: create, read, update, delete, list with filters, generations."""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import (
    Select,
    and_,
    bindparam,
    delete,
    exists,
    func,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from stackling.common.db import utcnow
from stackling.placement import errors
from stackling.placement.models import (
    Allocation,
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceProvider,
)

RP = ResourceProvider


@dataclass
class Provider:
    id: int
    uuid: str
    name: str
    generation: int
    parent_provider_uuid: str | None
    root_provider_uuid: str
    root_provider_id: int
    parent_provider_id: int | None
    updated_at: dt.datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "name": self.name, "generation": self.generation,
                "parent_provider_uuid": self.parent_provider_uuid,
                "root_provider_uuid": self.root_provider_uuid}


@cache  # built once: constructing the aliased join cost more than running the query
def _provider_select() -> Select[Any]:
    parent = aliased(RP, name="parent")
    root = aliased(RP, name="root")
    return (select(RP.id, RP.uuid, RP.name, RP.generation, parent.uuid, root.uuid,
                   RP.root_provider_id, RP.parent_provider_id, RP.updated_at)
            .join(root, root.id == RP.root_provider_id)
            .outerjoin(parent, parent.id == RP.parent_provider_id))


def _row(row: Any) -> Provider:
    return Provider(*row)


def normalize_uuid(value: str) -> str | None:
    try:
        return str(uuidlib.UUID(value))
    except (ValueError, AttributeError, TypeError):
        return None


def find(db: Session, rp_uuid: str) -> Provider | None:
    row = db.execute(_provider_select().where(RP.uuid == rp_uuid)).first()
    return _row(row) if row else None


def get(db: Session, rp_uuid: str) -> Provider:
    rp = find(db, rp_uuid)
    if rp is None:
        raise errors.ResourceProviderNotFound(uuid=rp_uuid)
    return rp


def by_uuids(db: Session, uuids: Iterable[str]) -> dict[str, Provider]:
    uuids = list(set(uuids))
    if not uuids:
        return {}
    rows = db.execute(_provider_select().where(RP.uuid.in_(uuids)))
    return {p.uuid: p for p in map(_row, rows)}


# ------------------------------------------------------------------ generations
def bump_generation(db: Session, rp_id: int, expected: int | None) -> int:
    """Increment the provider's generation; with `expected`, only if it still matches.

    The UPDATE also takes the provider's row lock, so everything the caller does next in
    its transaction (usage checks, inventory writes) is serialised with other writers of
    this provider on every backend. Raises ConcurrentUpdate on a mismatch.
    """
    stmt = update(RP).where(RP.id == rp_id)
    if expected is not None:
        stmt = stmt.where(RP.generation == expected)
    result = db.execute(stmt.values(generation=RP.generation + 1, updated_at=utcnow()),
                        execution_options={"synchronize_session": False})
    if result.rowcount != 1:
        raise errors.ConcurrentUpdate(
            "Another thread concurrently updated the resource provider data. "
            "Please retry your update")
    if expected is not None:
        return expected + 1
    return db.scalar(select(RP.generation).where(RP.id == rp_id))


_RPC = RP.__table__.c
_BUMP = (update(RP.__table__).where(_RPC.id == bindparam("b_id"))
         .values(generation=_RPC.generation + 1, updated_at=bindparam("b_now")))


def lock_providers(db: Session, rp_ids: Iterable[int]) -> None:
    """Bump (and so lock) several providers, in id order so writers never deadlock."""
    now = utcnow()
    for rp_id in sorted(set(rp_ids)):
        result = db.execute(_BUMP, {"b_id": rp_id, "b_now": now})
        if result.rowcount != 1:  # deleted meanwhile
            raise errors.ConcurrentUpdate(
                "Another thread concurrently updated the resource provider data. "
                "Please retry your update")


# ------------------------------------------------------------------ create / update
def create(db: Session, name: str, rp_uuid: str | None = None,
           parent_provider_uuid: str | None = None) -> Provider:
    rp_uuid = rp_uuid or str(uuidlib.uuid4())
    parent = None
    if parent_provider_uuid is not None:
        parent = find(db, parent_provider_uuid)
        if parent is None:
            raise errors.BadRequest(
                f'Unable to create resource provider "{name}", {rp_uuid}: '
                f"No such resource provider {parent_provider_uuid}.")
    _check_unique(db, rp_uuid, name)
    row = RP(uuid=rp_uuid, name=name, generation=0,
             parent_provider_id=parent.id if parent else None,
             root_provider_id=parent.root_provider_id if parent else None)
    try:
        with db.begin_nested():
            db.add(row)
            db.flush()
            if parent is None:
                row.root_provider_id = row.id
                db.flush()
    except IntegrityError:
        raise _duplicate(db, rp_uuid, name) from None
    return get(db, rp_uuid)


def _check_unique(db: Session, rp_uuid: str | None, name: str | None,
                  exclude_id: int | None = None) -> None:
    conds = []
    if rp_uuid is not None:
        conds.append(RP.uuid == rp_uuid)
    if name is not None:
        conds.append(RP.name == name)
    query = select(RP.id).where(or_(*conds))
    if exclude_id is not None:
        query = query.where(RP.id != exclude_id)
    if db.scalar(query.limit(1)) is not None:
        raise _duplicate(db, rp_uuid, name)


def _duplicate(db: Session, rp_uuid: str | None, name: str | None) -> errors.DuplicateName:
    parts = []
    if rp_uuid is not None and db.scalar(select(RP.id).where(RP.uuid == rp_uuid)) is not None:
        parts.append(f"uuid: {rp_uuid}")
    if name is not None and db.scalar(select(RP.id).where(RP.name == name)) is not None:
        parts.append(f"name: {name}")
    duplicate = ", ".join(parts) or f"name: {name}"
    return errors.DuplicateName(f"Conflicting resource provider {duplicate} already exists.")


_UNSET: Any = object()


def update_provider(db: Session, rp: Provider, *, name: str | None = None,
                    parent_provider_uuid: Any = _UNSET, allow_reparent: bool = False) -> Provider:
    """PUT /resource_providers/{uuid}: rename and (1.14+) set the parent.

    Before 1.37 (`allow_reparent=False`) a parent can only be set on a root provider once;
    from 1.37 the provider may move under any provider outside its own subtree, or
    become a root again.
    """
    values: dict[str, Any] = {}
    if name is not None and name != rp.name:
        _check_unique(db, None, name, exclude_id=rp.id)
        values["name"] = name
    new_root_id = None
    if parent_provider_uuid is not _UNSET and parent_provider_uuid != rp.parent_provider_uuid:
        fail = f"Unable to save resource provider {rp.uuid}: Object action update failed because: "
        if parent_provider_uuid is None:
            if not allow_reparent:
                raise errors.BadRequest(fail + "un-parenting a provider is not currently allowed.")
            values["parent_provider_id"] = None
            new_root_id = rp.id
        else:
            parent = find(db, parent_provider_uuid)
            if parent is None:
                raise errors.BadRequest(
                    fail + f"parent provider UUID {parent_provider_uuid} does not exist.")
            if not allow_reparent and rp.parent_provider_uuid is not None:
                raise errors.BadRequest(fail + "re-parenting a provider is not currently allowed.")
            if parent.id in subtree_ids(db, rp.id):
                raise errors.BadRequest(
                    fail + "creating loop in the provider tree is not allowed.")
            values["parent_provider_id"] = parent.id
            new_root_id = parent.root_provider_id
    if values:
        try:
            with db.begin_nested():
                db.execute(update(RP).where(RP.id == rp.id).values(**values, updated_at=utcnow())
                           .execution_options(synchronize_session=False))
                if new_root_id is not None and new_root_id != rp.root_provider_id:
                    db.execute(update(RP).where(RP.id.in_(subtree_ids(db, rp.id)))
                               .values(root_provider_id=new_root_id)
                               .execution_options(synchronize_session=False))
        except IntegrityError:
            raise _duplicate(db, None, name) from None
        bump_generation(db, rp.id, None)
    return get(db, rp.uuid)


def subtree_ids(db: Session, rp_id: int) -> set[int]:
    """The provider and all its descendants (walks the tree level by level)."""
    root_id = db.scalar(select(RP.root_provider_id).where(RP.id == rp_id))
    edges = db.execute(select(RP.id, RP.parent_provider_id)
                       .where(RP.root_provider_id == root_id)).all()
    children: dict[int | None, list[int]] = {}
    for child, parent in edges:
        children.setdefault(parent, []).append(child)
    found, todo = {rp_id}, [rp_id]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def delete_provider(db: Session, rp: Provider) -> None:
    bump_generation(db, rp.id, None)  # lock against concurrent claims
    if db.scalar(select(exists().where(Allocation.resource_provider_id == rp.id))):
        raise errors.ProviderInUse(
            f"Unable to delete resource provider {rp.uuid}: Resource provider has allocations.")
    if db.scalar(select(exists().where(RP.parent_provider_id == rp.id))):
        raise errors.CannotDeleteParent(uuid=rp.uuid)
    for model in (Inventory, ProviderTrait, ProviderAggregate):
        db.execute(delete(model).where(model.resource_provider_id == rp.id))
    db.execute(delete(RP).where(RP.id == rp.id))


# ------------------------------------------------------------------ listing
@dataclass
class ProviderFilters:
    name: str | None = None
    uuid: str | None = None
    in_tree: str | None = None
    # AND of OR-sets of aggregate uuids, and aggregates none of which may be held
    member_of: list[set[str]] = field(default_factory=list)
    forbidden_aggs: set[str] = field(default_factory=set)
    resources: dict[str, int] = field(default_factory=dict)
    # AND of OR-sets of trait names, and forbidden trait names
    required: list[set[str]] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)


def list_providers(db: Session, f: ProviderFilters) -> list[Provider]:
    query = _provider_select()
    conds: list[Any] = []
    if f.name is not None:
        conds.append(RP.name == f.name)
    if f.uuid is not None:
        conds.append(RP.uuid == f.uuid)
    if f.in_tree is not None:
        tree = find(db, f.in_tree)
        if tree is None:
            return []
        conds.append(RP.root_provider_id == tree.root_provider_id)
    for any_of in f.member_of:
        conds.append(RP.id.in_(select(ProviderAggregate.resource_provider_id)
                               .where(ProviderAggregate.aggregate_uuid.in_(sorted(any_of)))))
    if f.forbidden_aggs:
        conds.append(RP.id.not_in(select(ProviderAggregate.resource_provider_id).where(
            ProviderAggregate.aggregate_uuid.in_(sorted(f.forbidden_aggs)))))
    for any_of in f.required:
        conds.append(RP.id.in_(select(ProviderTrait.resource_provider_id)
                               .where(ProviderTrait.trait.in_(sorted(any_of)))))
    if f.forbidden:
        conds.append(RP.id.not_in(select(ProviderTrait.resource_provider_id)
                                  .where(ProviderTrait.trait.in_(sorted(f.forbidden)))))
    for rc, amount in f.resources.items():
        conds.append(RP.id.in_(providers_with_capacity(rc, amount)))
    if conds:
        query = query.where(and_(*conds))
    return [_row(r) for r in db.execute(query.order_by(RP.id))]


def usage_subquery(resource_classes: Sequence[str] | None = None) -> Any:
    """SUM(used) per (provider, class): one grouped query over the covering index."""
    alloc = Allocation.__table__.c  # Core columns: cheaper to build than ORM attributes
    query = select(alloc.resource_provider_id.label("rp_id"), alloc.resource_class.label("rc"),
                   func.sum(alloc.used).label("used"))
    if resource_classes is not None:
        query = query.where(alloc.resource_class.in_(list(resource_classes)))
    return query.group_by(alloc.resource_provider_id, alloc.resource_class).subquery()


def fits_clause(inv: Any, used: Any, amount: Any) -> Any:
    """SQL for the fit test: room left, min/max unit and step size (`amount`: an int or a
    bound parameter)."""
    amt = literal(amount) if isinstance(amount, int) else amount
    return and_(
        func.coalesce(used, 0) + amt <= (inv.total - inv.reserved) * inv.allocation_ratio,
        inv.min_unit <= amt,
        inv.max_unit >= amt,
        amt % inv.step_size == 0,
    )


def providers_with_capacity(rc: str, amount: int) -> Select[Any]:
    """Ids of providers that can serve `amount` of `rc` themselves."""
    inv = aliased(Inventory, name="inv")
    usage = usage_subquery([rc])
    return (select(inv.resource_provider_id)
            .outerjoin(usage, and_(usage.c.rp_id == inv.resource_provider_id,
                                   usage.c.rc == inv.resource_class))
            .where(inv.resource_class == rc, fits_clause(inv, usage.c.used, amount)))


def has_trees(db: Session) -> bool:
    """True once any provider has a parent (trees change the candidate search)."""
    return db.scalar(select(exists().where(RP.parent_provider_id.is_not(None)))) or False

