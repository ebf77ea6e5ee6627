"""Compute quotas, as Nova's DbQuotaDriver with usage counted from the rows themselves.

Limits: the configured defaults (`settings.quota.compute`, Nova's [quota] options), then
the `default` quota class, then the project's own limits, then (for one user) the
user's. Usage: instances, cores and RAM from the project's (or user's) instances, key
pairs from the user's keypairs. A create counts and checks under the project's lock row
(common/quota_lock.py), so concurrent creates never pass the last free slot together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import bindparam, delete, func, literal_column, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.errors import ApiError, BadRequest
from stackling.common.quota_lock import lock_project
from stackling.compute.group_models import ServerGroup
from stackling.compute.models import Instance, KeyPair
from stackling.compute.quota_models import ComputeQuota, ComputeQuotaClass, ComputeQuotaLock
from stackling.config import ComputeQuotaSettings

# Nova's quota resources, in its order.
RESOURCES = ("instances", "cores", "ram", "metadata_items", "injected_files",
             "injected_file_content_bytes", "injected_file_path_bytes", "key_pairs",
             "server_groups", "server_group_members")
# server_group_members is counted per group at a boot (server_groups.check_members)
COUNTED = ("instances", "cores", "ram", "key_pairs", "server_groups")
# nova-network's quotas, still in the body before 2.36 (2.50 for quota classes); never
# enforced, reported unlimited as Nova does since nova-network was removed.
NETWORK_LEGACY = ("fixed_ips", "floating_ips", "security_group_rules", "security_groups")
INJECTED = ("injected_files", "injected_file_content_bytes", "injected_file_path_bytes")
DEFAULT_CLASS = "default"
MAX_INT = 0x7FFFFFFF  # Nova's db MAX_INT: the largest limit


class TooManyInstances(ApiError):
    status = 403
    message = ("Quota exceeded for %(overs)s: Requested %(req)s, but already used %(used)s "
               "of %(allowed)s %(overs)s")


class PortLimitExceeded(ApiError):
    status = 403
    message = "Maximum number of ports exceeded"


class KeypairLimitExceeded(ApiError):
    status = 403
    message = "Quota exceeded, too many key pairs."


class MetadataLimitExceeded(ApiError):
    status = 403
    message = "Maximum number of metadata items exceeds %(allowed)d"


def settings_of(db: Session) -> ComputeQuotaSettings:
    runtime = db.info.get("stackling.runtime")
    return runtime.settings.quota.compute if runtime is not None else ComputeQuotaSettings()


# ------------------------------------------------------------------ limits and usage
def defaults(db: Session) -> dict[str, int]:
    """The configured defaults with the `default` quota class applied (Nova's order)."""
    conf = settings_of(db)
    out = {r: getattr(conf, r) for r in RESOURCES}
    for resource, limit in db.execute(select(ComputeQuotaClass.resource,
                                             ComputeQuotaClass.hard_limit).where(
            ComputeQuotaClass.class_name == DEFAULT_CLASS)):
        if resource in out:
            out[resource] = limit
    return out


def class_limits(db: Session, class_name: str) -> dict[str, int]:
    out = defaults(db)
    for resource, limit in db.execute(select(ComputeQuotaClass.resource,
                                             ComputeQuotaClass.hard_limit).where(
            ComputeQuotaClass.class_name == class_name)):
        if resource in out:
            out[resource] = limit
    return out


def limits(db: Session, project_id: str, user_id: str | None = None) -> dict[str, int]:
    """The project's limits, or a user's (the user's own rows over the project's)."""
    out = defaults(db)
    rows = db.execute(select(ComputeQuota.user_id, ComputeQuota.resource,
                             ComputeQuota.hard_limit).where(
        ComputeQuota.project_id == project_id,
        ComputeQuota.user_id.in_(["", user_id] if user_id else [""])))
    for _user, resource, limit in sorted(rows, key=lambda r: r[0] != ""):  # project first
        if resource in out:
            out[resource] = limit
    return out


class RequestLimits(NamedTuple):
    """A create's limits, read in one statement: the project's, and the user's when the
    user has limits of its own (else None)."""

    project: dict[str, int]
    user: dict[str, int] | None


def request_limits(db: Session, project_id: str, user_id: str | None) -> RequestLimits:
    """`limits(project)` and, if the user has rows of its own, `limits(project, user)`:
    the `default` class and the project's and user's rows in one query."""
    conf = settings_of(db)
    project = {r: getattr(conf, r) for r in RESOURCES}
    rows = list(db.execute(_REQUEST_LIMITS, {"project": project_id,
                                             "users": ["", user_id] if user_id else [""]}))
    user_rows = []
    # the class first, then the project's rows (Nova's order), then the user's
    for kind, user, resource, limit in sorted(rows, key=lambda r: (r[0], r[1] != "")):
        if kind == 1 and user != "":
            user_rows.append((resource, limit))
        elif resource in project:
            project[resource] = limit
    if not user_rows:
        return RequestLimits(project, None)
    user = dict(project)
    for resource, limit in user_rows:
        if resource in user:
            user[resource] = limit
    return RequestLimits(project, user)


# built once (a create runs them): the class's and the project's/user's limit rows, and
# the flavors of a project's (or a user's) instances
_REQUEST_LIMITS = select(
    literal_column("0").label("kind"), ComputeQuotaClass.class_name,
    ComputeQuotaClass.resource, ComputeQuotaClass.hard_limit).where(
    ComputeQuotaClass.class_name == DEFAULT_CLASS).union_all(select(
        literal_column("1").label("kind"), ComputeQuota.user_id, ComputeQuota.resource,
        ComputeQuota.hard_limit).where(
        ComputeQuota.project_id == bindparam("project"),
        ComputeQuota.user_id.in_(bindparam("users", expanding=True))))
_PROJECT_FLAVORS = select(Instance.flavor).where(Instance.project_id == bindparam("project"))
_USER_FLAVORS = _PROJECT_FLAVORS.where(Instance.user_id == bindparam("user"))


def _has_user_limits(db: Session, project_id: str, user_id: str) -> bool:
    return db.scalar(select(func.count()).select_from(ComputeQuota).where(
        ComputeQuota.project_id == project_id, ComputeQuota.user_id == user_id)) > 0


def usage(db: Session, project_id: str, user_id: str | None = None) -> dict[str, int]:
    """What is counted: instances, cores and RAM (of a project or one user in it), and
    a user's key pairs (0 at project level, as Nova counts key pairs per user)."""
    flavors = list(db.scalars(_USER_FLAVORS if user_id else _PROJECT_FLAVORS,
                              {"project": project_id, "user": user_id}))
    keypairs = db.scalar(select(func.count()).select_from(KeyPair).where(
        KeyPair.user_id == user_id)) if user_id else 0
    groups = select(func.count()).select_from(ServerGroup).where(
        ServerGroup.project_id == project_id)
    if user_id:
        groups = groups.where(ServerGroup.user_id == user_id)
    return {"instances": len(flavors), "cores": sum(f["vcpus"] for f in flavors),
            "ram": sum(f["memory_mb"] for f in flavors), "key_pairs": keypairs or 0,
            "server_groups": db.scalar(groups) or 0}


def details(db: Session, project_id: str, user_id: str | None = None
            ) -> dict[str, dict[str, int]]:
    used = usage(db, project_id, user_id)
    return {r: {"limit": limit, "in_use": used.get(r, 0), "reserved": 0}
            for r, limit in limits(db, project_id, user_id).items()}


# ------------------------------------------------------------------ checks
def _lock(db: Session, project_id: str) -> None:
    lock_project(db, ComputeQuotaLock, project_id)


@dataclass(frozen=True)
class _Scope:
    limits: dict[str, int]
    used: dict[str, int]


def _scopes(db: Session, project_id: str, user_id: str | None,
            known: RequestLimits | None = None) -> list[_Scope]:
    if known is not None:  # read by the caller (its limits are not what the lock guards)
        out = [_Scope(known.project, usage(db, project_id))]
        if user_id and known.user is not None:
            out.append(_Scope(known.user, usage(db, project_id, user_id)))
        return out
    out = [_Scope(limits(db, project_id), usage(db, project_id))]
    if user_id and _has_user_limits(db, project_id, user_id):
        out.append(_Scope(limits(db, project_id, user_id), usage(db, project_id, user_id)))
    return out


def check_instances(db: Session, project_id: str, user_id: str | None,
                    flavor: Mapping[str, Any], min_count: int, max_count: int,
                    known: RequestLimits | None = None) -> int:
    """How many of `min_count..max_count` servers of `flavor` fit (Nova's
    check_num_instances_quota): max_count is reduced to what fits; 403 TooManyInstances
    when even min_count does not. Holds the project's quota lock until the transaction
    ends, so the caller must insert the instances in this same transaction. `known`:
    the limits, if the caller read them already (`request_limits`); the usage is always
    counted under the lock."""
    _lock(db, project_id)
    vcpus, ram = int(flavor["vcpus"]), int(flavor["memory_mb"])
    allowed = max_count
    failed: _Scope | None = None
    for scope in _scopes(db, project_id, user_id, known):
        fits = _fits(scope, vcpus, ram)
        if fits is not None and fits < allowed:
            allowed, failed = fits, scope
    if allowed >= max_count or (allowed >= min_count and allowed > 0):
        return min(allowed, max_count)
    assert failed is not None
    deltas = {"instances": max_count, "cores": max_count * vcpus, "ram": max_count * ram}
    overs = sorted(r for r, d in deltas.items()
                   if 0 <= failed.limits[r] < failed.used[r] + d)
    requested = {"instances": str(min_count) if min_count == max_count
                 else f"{min_count}-{max_count}", "cores": deltas["cores"],
                 "ram": deltas["ram"]}
    raise TooManyInstances(overs=", ".join(overs),
                           req=", ".join(str(requested[r]) for r in overs),
                           used=", ".join(str(failed.used[r]) for r in overs),
                           allowed=", ".join(str(failed.limits[r]) for r in overs))


def _fits(scope: _Scope, vcpus: int, ram: int) -> int | None:
    """Instances of this size that still fit the scope (None: unlimited)."""
    room: list[int] = []
    for resource, size in (("instances", 1), ("cores", vcpus), ("ram", ram)):
        limit = scope.limits[resource]
        if limit < 0 or size == 0:
            continue
        room.append(max(0, limit - scope.used[resource]) // size)
    return min(room) if room else None


def check_key_pairs(db: Session, project_id: str, user_id: str) -> None:
    """403 when the user already holds as many key pairs as the quota allows."""
    _lock(db, project_id)
    limit = limits(db, project_id, user_id)["key_pairs"]
    if limit >= 0 and usage(db, project_id, user_id)["key_pairs"] + 1 > limit:
        raise KeypairLimitExceeded()


class ServerGroupLimitExceeded(ApiError):
    status = 403
    message = "Quota exceeded, too many server groups."


def check_server_groups(db: Session, project_id: str, user_id: str | None) -> None:
    """403 when one more server group would pass the project's (or user's) limit; under
    the project's lock, so parallel creates never pass the last slot together."""
    _lock(db, project_id)
    for scope in _scopes(db, project_id, user_id):
        limit = scope.limits["server_groups"]
        if 0 <= limit < scope.used["server_groups"] + 1:
            raise ServerGroupLimitExceeded()


def check_metadata(db: Session, project_id: str, count: int,
                   known: Mapping[str, int] | None = None) -> None:
    limit = (known if known is not None else limits(db, project_id))["metadata_items"]
    if 0 <= limit < count:
        raise MetadataLimitExceeded(allowed=limit)


def ports_fit(db: Session, project_id: str, per_instance: int, count: int) -> int:
    """Nova's port-quota headroom at create: how many of `count` servers needing
    `per_instance` new ports each fit the project's network port quota."""
    if per_instance <= 0:
        return count
    from stackling.network import interface as network

    free = network.port_headroom(db, project_id)
    if free is None or free >= per_instance * count:
        return count
    if free < 0:
        raise PortLimitExceeded()
    return free // per_instance


def verify_project(db: Session, project_id: str) -> None:
    """Nova's identity.verify_project_id: an unknown project is a 400."""
    from stackling.identity import interface as identity

    if not identity.project_exists(db, project_id):
        raise BadRequest(f"Project ID {project_id} is not a valid project.")


# ------------------------------------------------------------------ updates
def validate_update(db: Session, project_id: str, user_id: str | None,
                    values: Mapping[str, int]) -> None:
    """Nova's settable range: not below what is in use (400), a user's not above the
    project's limit."""
    used = usage(db, project_id, user_id)
    project = limits(db, project_id) if user_id else None
    for resource, limit in values.items():
        minimum = used.get(resource, 0) if resource in COUNTED else 0
        maximum = project[resource] if project is not None else -1
        if _inf(limit) < _inf(minimum):
            raise BadRequest(f"Quota limit {limit} for {resource} must be greater than or "
                             f"equal to already used and reserved {minimum}.")
        if _inf(limit) > _inf(maximum):
            raise BadRequest(f"Quota limit {limit} for {resource} must be less than or equal "
                             f"to {maximum}.")


def _inf(value: int) -> float:
    return float("inf") if value == -1 else value


def set_limits(db: Session, project_id: str, user_id: str | None,
               values: Mapping[str, int]) -> None:
    for resource, limit in values.items():
        key = (project_id, user_id or "", resource)
        row = db.get(ComputeQuota, key)
        if row is not None:
            row.hard_limit = limit
            continue
        try:
            with db.begin_nested():
                db.add(ComputeQuota(project_id=project_id, user_id=user_id or "",
                                    resource=resource, hard_limit=limit))
        except IntegrityError:  # set concurrently: the last writer wins
            db.get_one(ComputeQuota, key, populate_existing=True).hard_limit = limit
    db.flush()


def reset(db: Session, project_id: str, user_id: str | None) -> None:
    stmt = delete(ComputeQuota).where(ComputeQuota.project_id == project_id)
    if user_id:
        stmt = stmt.where(ComputeQuota.user_id == user_id)
    db.execute(stmt)


def set_class_limits(db: Session, class_name: str, values: Mapping[str, int]) -> None:
    for resource, limit in values.items():
        key = (class_name, resource)
        row = db.get(ComputeQuotaClass, key)
        if row is not None:
            row.hard_limit = limit
            continue
        try:
            with db.begin_nested():
                db.add(ComputeQuotaClass(class_name=class_name, resource=resource,
                                         hard_limit=limit))
        except IntegrityError:
            db.get_one(ComputeQuotaClass, key, populate_existing=True).hard_limit = limit
    db.flush()
