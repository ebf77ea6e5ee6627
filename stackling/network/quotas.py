"""Per-project quotas (`quotas`, `quota_details`, `quota-check-limit` extensions):
defaults from settings (neutron's [quotas] quota_<resource>), per-project overrides (one
`l3.models.Quota` row per overridden resource), usage counts, and the create-time check.

`check(db, project_id, resource)` is called by every create of a counted resource
(networks, subnets, subnet pools, ports, routers, floating IPs, security groups and
rules, whoever the caller: the API, compute's port creation, auto-allocation). It
locks the project's `network_quota_lock` row, counts and compares, so concurrent creates
never both take the last free slot. A bulk POST checks its whole count once
(`reserved`) and its items then consume that reservation without counting again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import bindparam, delete, func, null, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common import memo
from stackling.common.context import RequestContext
from stackling.common.quota_lock import lock_project
from stackling.config import NetworkQuotaSettings
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import Invalid, integer
from stackling.network.core.models import (
    Network,
    Port,
    SecurityGroup,
    SecurityGroupRule,
    Subnet,
    SubnetPool,
)
from stackling.network.l3.models import FloatingIP, Quota, Router
from stackling.network.quota_models import QuotaLock
from stackling.network.rbac.models import RbacPolicy

# The resources with a quota, in neutron's order; -1 is unlimited.
RESOURCES = ("network", "subnet", "port", "router", "floatingip", "security_group",
             "security_group_rule", "subnetpool", "rbac_policy")
_RESERVED = "stackling.network.quota_reserved"  # db.info: {(project, resource): count}

# What a resource's usage counts: rows owned by the project.
_OWNED: dict[str, Any] = {
    "network": Network,
    "subnet": Subnet,
    "port": Port,
    "router": Router,
    "floatingip": FloatingIP,
    "security_group": SecurityGroup,
    "security_group_rule": SecurityGroupRule,
    "subnetpool": SubnetPool,
    "rbac_policy": RbacPolicy,
}


def settings_of(db: Session) -> NetworkQuotaSettings:
    runtime = pol.runtime_of(db)
    return runtime.settings.quota.network if runtime is not None else NetworkQuotaSettings()


def defaults(db: Session) -> dict[str, int]:
    conf = settings_of(db)
    return {r: getattr(conf, r) for r in RESOURCES}


def _authorize_read(db: Session, ctx: RequestContext, project_id: str) -> None:
    if project_id != ctx.project_id and not (ctx.is_admin or ctx.is_service):
        raise errors.QuotaNotAuthorized()
    pol.authorize(db, ctx, "get_quota", {"project_id": project_id})


# Built once (every create checks a quota): no per-call statement construction.
_LIMITS = select(Quota.resource, Quota.hard_limit).where(
    Quota.project_id == bindparam("project"))


def limits(db: Session, project_id: str) -> dict[str, int]:
    """The project's limits, read once per transaction (`memo`; `update` and `reset`
    forget them)."""
    key = ("quota_limits", project_id)
    memo_ = memo.table(db)
    known = memo_.get(key)
    if known is None:
        known = defaults(db)
        for resource, limit in db.execute(_LIMITS, {"project": project_id}):
            if resource in known:
                known[resource] = limit
        memo_[key] = known
    return dict(known)


def limit_of(db: Session, project_id: str, resource: str) -> int:
    return limits(db, project_id)[resource]


# Built once (every create counts): no per-call statement construction.
_USED = {resource: select(func.count()).select_from(model)
         .where(model.project_id == bindparam("project"))
         for resource, model in _OWNED.items()}


def used(db: Session, project_id: str, resource: str) -> int:
    stmt = _USED.get(resource)
    if stmt is None:
        return 0
    return db.scalar(stmt, {"project": project_id}) or 0


def check(db: Session, project_id: str, resource: str, requested: int = 1) -> None:
    """409 OverQuota when `requested` more `resource`s would pass the project's limit.

    Holds the project's quota lock until the transaction ends: the caller inserts the
    rows in this same transaction. Rows a bulk request already reserved are not counted
    again."""
    reserved = db.info.get(_RESERVED)
    key = (project_id, resource)
    if reserved and reserved.get(key, 0) >= requested:
        reserved[key] -= requested
        return
    _check(db, project_id, resource, requested)


def _check(db: Session, project_id: str, resource: str, requested: int) -> None:
    # Once per transaction: the row lock is held until it ends. The memo forgets it on any
    # rollback, a savepoint's included (which may release locks taken inside it).
    count: int | None = None
    if ("quota_lock", project_id) in memo.table(db):
        limit = limit_of(db, project_id, resource)
    else:
        limit, count = _lock(db, project_id, resource)
    if limit < 0:
        return
    if count is None:
        count = used(db, project_id, resource)
    if count + requested > limit:
        raise errors.OverQuota(overs=[resource])


# ------------------------------------------------------------------ project facts
# What other modules need of a project on create (its default security group, its default
# QoS policy), read by the statement that takes the quota lock: a create reads them in no
# statement of its own. name -> f(project id column) -> scalar subquery; registered at
# import by the owning module, which reads them back with `fact`.
FACTS: dict[str, Callable[[Any], Any]] = {}
_LOCK_READS: dict[tuple[str, tuple[str, ...]], Any] = {}
_FACTS_KEY = "project_facts"


def _lock(db: Session, project_id: str, resource: str) -> tuple[int, int | None]:
    """Lock the project's quota row (made on first use) and read, in that statement, the
    resource's limit override and the project's FACTS; returns the limit, and the count
    of the project's `resource`s where that statement could read it too.

    The count joins the lock's statement only where writers take turns from BEGIN
    (SQLite): on PostgreSQL and MariaDB a statement's subqueries read the snapshot it
    started with, before it waited for the lock, so a create committed meanwhile would be
    missed; there it is a statement of its own, after the lock."""
    serial = db.get_bind().dialect.name == "sqlite"
    key = (resource, tuple(FACTS), serial)
    stmt = _LOCK_READS.get(key)
    if stmt is None:  # built once per resource: every create takes the lock
        lock = QuotaLock.project_id
        override = select(Quota.hard_limit).where(
            Quota.project_id == lock, Quota.resource == resource).scalar_subquery()
        count = _USED[resource].scalar_subquery() if serial and resource in _USED else \
            null()
        stmt = _LOCK_READS[key] = select(
            lock, override, count, *(f(lock).label(n) for n, f in FACTS.items())
        ).where(lock == bindparam("project")).with_for_update()
    row = db.execute(stmt, {"project": project_id}).first()
    if row is None:
        lock_project(db, QuotaLock, project_id)
        row = db.execute(stmt, {"project": project_id}).one()
    known = memo.table(db)
    known[("quota_lock", project_id)] = True
    known[(_FACTS_KEY, project_id)] = dict(zip(FACTS, row[3:], strict=True))
    count = row[2] if serial and resource in _USED else None
    limits_known = known.get(("quota_limits", project_id))
    if limits_known is not None:
        return limits_known[resource], count
    return (row[1] if row[1] is not None else getattr(settings_of(db), resource)), count


def fact(db: Session, project_id: str, name: str) -> tuple[bool, Any]:
    """(known, value) of a project fact read with this transaction's quota lock."""
    facts = memo.table(db).get((_FACTS_KEY, project_id))
    if facts is None or name not in facts:
        return False, None
    return True, facts[name]


def forget_fact(db: Session, project_id: str, name: str) -> None:
    """A writer of a fact changed it: later reads in this transaction query again."""
    facts = memo.table(db).get((_FACTS_KEY, project_id))
    if facts is not None:
        facts.pop(name, None)


@contextmanager
def reserved(db: Session, resource: str, project_ids: Iterable[str | None]) -> Iterator[None]:
    """Check a bulk create's whole count per project once (neutron reserves the bulk
    before creating it); the items' own checks then consume the reservation."""
    counts = Counter(p for p in project_ids if p)
    if resource not in RESOURCES or not counts:
        yield
        return
    for project_id, n in sorted(counts.items()):
        _check(db, project_id, resource, n)
    table = db.info.setdefault(_RESERVED, {})
    for project_id, n in counts.items():
        table[(project_id, resource)] = table.get((project_id, resource), 0) + n
    try:
        yield
    finally:
        for project_id in counts:
            table.pop((project_id, resource), None)


def headroom(db: Session, project_id: str, resource: str) -> int | None:
    """How many more the project may create (negative when over); None: unlimited."""
    limit = limit_of(db, project_id, resource)
    return None if limit < 0 else limit - used(db, project_id, resource)


def check_bulk_size(db: Session, collection: str, count: int) -> None:
    """A bulk POST larger than the configured bound is a 400 (it would hold the write
    lock for as long as it takes to create every item)."""
    bound = settings_of(db).max_bulk
    if 0 <= bound < count:
        raise errors.BadRequest(f"Bulk request of {count} {collection} exceeds the limit of "
                                f"{bound} items per request.")


# ------------------------------------------------------------------ API logic
def show(db: Session, ctx: RequestContext, project_id: str) -> dict[str, int]:
    _authorize_read(db, ctx, project_id)
    return limits(db, project_id)


def show_default(db: Session, ctx: RequestContext, project_id: str) -> dict[str, int]:
    _authorize_read(db, ctx, project_id)
    return defaults(db)


def details(db: Session, ctx: RequestContext, project_id: str) -> dict[str, dict[str, int]]:
    _authorize_read(db, ctx, project_id)
    return {resource: {"limit": limit, "used": used(db, project_id, resource),
                       "reserved": 0}
            for resource, limit in limits(db, project_id).items()}


def list_quotas(db: Session, ctx: RequestContext) -> list[dict[str, Any]]:
    """Projects with at least one override (admin only, as upstream)."""
    if not (ctx.is_admin or ctx.is_service):
        raise errors.NotAuthorized()
    projects = list(db.scalars(select(Quota.project_id).distinct().order_by(Quota.project_id)))
    out = []
    for project_id in projects:
        out.append({**limits(db, project_id), "project_id": project_id,
                    "tenant_id": project_id})
    return out


def parse_update(body: Any) -> tuple[dict[str, int], bool]:
    """The new limits, and whether to check them against usage (`quota-check-limit`:
    `check_limit: true`; `force` is accepted and means no check, the default)."""
    if not isinstance(body, dict) or not isinstance(body.get("quota"), dict):
        raise errors.BadRequest("Unable to find 'quota' in request body")
    values = dict(body["quota"])
    flags = {k: _flag(k, values.pop(k, None)) for k in ("check_limit", "force")}
    unknown = [k for k in values if k not in RESOURCES]
    if unknown:
        raise errors.BadRequest(f"Unrecognized attribute(s) '{', '.join(map(str, unknown))}'")
    out = {}
    conv = integer(-1, 2**31 - 1)
    for key, value in values.items():
        try:
            out[key] = conv(value)
        except Invalid as exc:
            raise errors.BadRequest(f"Invalid input for {key}. Reason: {exc}.") from None
    return out, bool(flags["check_limit"]) and not flags["force"]


def _flag(key: str, value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on", "false", "0",
                                                     "no", "off"):
        return value.lower() in ("true", "1", "yes", "on")
    raise errors.BadRequest(f"Invalid input for {key}. Reason: '{value}' is not a valid "
                            "boolean value.")


def update(db: Session, ctx: RequestContext, project_id: str, values: Mapping[str, int],
           check_limit: bool = False) -> dict[str, int]:
    pol.authorize(db, ctx, "update_quota", {"project_id": project_id})
    memo.forget(db, ("quota_limits", project_id))
    if check_limit:
        for resource, limit in values.items():
            in_use = used(db, project_id, resource)
            if in_use > limit >= 0:
                raise errors.BadRequest(f"Quota limit {limit} for {resource} must be greater "
                                        f"than or equal to already used {in_use}")
    for resource, limit in values.items():
        row = db.get(Quota, (project_id, resource))
        if row is not None:
            row.hard_limit = limit
            continue
        try:
            with db.begin_nested():
                db.add(Quota(project_id=project_id, resource=resource, hard_limit=limit))
        except IntegrityError:  # set concurrently: the last writer wins, as upstream
            db.get_one(Quota, (project_id, resource), populate_existing=True).hard_limit = limit
    db.flush()
    return limits(db, project_id)


def reset(db: Session, ctx: RequestContext, project_id: str) -> None:
    pol.authorize(db, ctx, "delete_quota", {"project_id": project_id})
    memo.forget(db, ("quota_limits", project_id))
    db.execute(delete(Quota).where(Quota.project_id == project_id))
