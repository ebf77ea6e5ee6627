"""Server groups (os-server-groups): the groups, their members, and the rule a group sets
for the scheduler.

A server joins a group at boot (the `group` scheduler hint) and leaves it when deleted.
The scheduler asks `rule_for` which hosts the group refuses or prefers, and takes a host
with `claim_host` in the same transaction as the placement claim. What makes the hard
policies hold across processes is the database (see group_models): a unique
(group, anti_affinity_host) for anti-affinity, a guarded UPDATE of the group's
`affinity_host` for affinity. The soft policies only weigh hosts.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError, BadRequest, NotFound
from stackling.compute import quotas
from stackling.compute.group_models import ServerGroup, ServerGroupMember
from stackling.compute.models import Instance

POLICIES = ("anti-affinity", "affinity")  # 2.1
SOFT_POLICIES = ("soft-anti-affinity", "soft-affinity")  # from 2.15


class InstanceGroupNotFound(NotFound):
    message = "Instance group %(group_uuid)s could not be found."


class GroupHintNotFound(BadRequest):
    """An unknown group in a boot's scheduler hints (Nova: a 400 on create)."""

    message = "Instance group %(group_uuid)s could not be found."


class GroupMembersLimitExceeded(ApiError):
    status = 403
    message = "Quota exceeded, too many servers in group"


# ------------------------------------------------------------------ the API's objects
def create_group(db: Session, ctx: RequestContext, name: str, policy: str,
                 rules: dict[str, Any] | None = None) -> ServerGroup:
    project_id, user_id = ctx.project_id or "", ctx.user_id or ""
    quotas.check_server_groups(db, project_id, user_id)
    group = ServerGroup(uuid=str(uuid.uuid4()), name=name, project_id=project_id,
                        user_id=user_id, policy=policy, rules=dict(rules or {}))
    db.add(group)
    db.flush()
    return group


def get_group(db: Session, group_uuid: str) -> ServerGroup:
    """Any project's group (Nova looks it up unscoped; the policy then checks its project)."""
    group = db.scalars(select(ServerGroup).where(ServerGroup.uuid == group_uuid)).first()
    if group is None:
        raise InstanceGroupNotFound(group_uuid=group_uuid)
    return group


def list_groups(db: Session, project_id: str | None, limit: int | None,
                offset: int) -> list[ServerGroup]:
    """A project's groups (every group when `project_id` is None), oldest first, with
    Nova's limit/offset paging."""
    stmt = select(ServerGroup).order_by(ServerGroup.id)
    if project_id is not None:
        stmt = stmt.where(ServerGroup.project_id == project_id)
    if offset:
        stmt = stmt.offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(db.scalars(stmt))


def members(db: Session, groups: list[ServerGroup]) -> dict[int, list[str]]:
    """Each group's existing servers, in the order they joined (one query)."""
    out: dict[int, list[str]] = {g.id: [] for g in groups}
    if not groups:
        return out
    rows = db.execute(select(ServerGroupMember.group_id, ServerGroupMember.instance_uuid).join(
        Instance, Instance.uuid == ServerGroupMember.instance_uuid).where(
        ServerGroupMember.group_id.in_(list(out))).order_by(ServerGroupMember.id))
    for group_id, instance_uuid in rows:
        out[group_id].append(instance_uuid)
    return out


def delete_group(db: Session, group: ServerGroup) -> None:
    """The group goes; its servers stay, in no group."""
    db.execute(delete(ServerGroupMember).where(ServerGroupMember.group_id == group.id))
    db.delete(group)
    db.flush()


# ------------------------------------------------------------------ servers joining, leaving
def join_at_boot(db: Session, ctx: RequestContext, group_uuid: str,
                 instance_uuids: list[str]) -> None:
    """New servers join the group of their `group` hint, within its member quota (counted
    under the project's quota lock, as the instance quota of the same create)."""
    group = db.scalars(select(ServerGroup).where(ServerGroup.uuid == group_uuid)).first()
    if group is None:
        raise GroupHintNotFound(group_uuid=group_uuid)
    limit = quotas.limits(db, group.project_id, ctx.user_id)["server_group_members"]
    if limit >= 0:
        held = db.scalar(select(func.count()).select_from(ServerGroupMember).where(
            ServerGroupMember.group_id == group.id)) or 0
        if held + len(instance_uuids) > limit:
            raise GroupMembersLimitExceeded()
    for instance_uuid in instance_uuids:
        db.add(ServerGroupMember(group_id=group.id, instance_uuid=instance_uuid))
    db.flush()


def leave(db: Session, instance_uuid: str) -> None:
    """A deleted server leaves its group."""
    db.execute(delete(ServerGroupMember).where(
        ServerGroupMember.instance_uuid == instance_uuid))


def group_of(db: Session, instance_uuid: str) -> str | None:
    return db.scalar(select(ServerGroup.uuid).join(
        ServerGroupMember, ServerGroupMember.group_id == ServerGroup.id).where(
        ServerGroupMember.instance_uuid == instance_uuid))


# ------------------------------------------------------------------ scheduling
@dataclass
class GroupRule:
    """What a server's group asks of the scheduler for that server."""

    group_id: int
    group_uuid: str
    policy: str
    affinity_host: str | None
    # the hosts of the group's other scheduled members, with how many each holds
    others: Counter[str] = field(default_factory=Counter)
    max_per_host: int = 1  # anti-affinity's `max_server_per_host` rule (2.64)

    def refuses(self, host: str) -> str | None:
        if self.policy == "anti-affinity" and self.others[host] >= self.max_per_host:
            return (f"server group {self.group_uuid} (anti-affinity) has "
                    f"{self.others[host]} member(s) there")
        pinned = self.affinity_host or next(iter(self.others), None)
        if self.policy == "affinity" and pinned is not None and host != pinned:
            return f"server group {self.group_uuid} (affinity) is on host {pinned}"
        return None

    def weight(self, host: str) -> int:
        """Sort key (lowest first) of the soft policies."""
        if self.policy == "soft-anti-affinity":
            return self.others[host]
        if self.policy == "soft-affinity":
            return -self.others[host]
        return 0


def rule_for(db: Session, instance_uuid: str) -> GroupRule | None:
    row = db.execute(select(ServerGroup.id, ServerGroup.uuid, ServerGroup.policy,
                            ServerGroup.affinity_host, ServerGroup.rules).join(
        ServerGroupMember, ServerGroupMember.group_id == ServerGroup.id).where(
        ServerGroupMember.instance_uuid == instance_uuid)).first()
    if row is None:
        return None
    # where the other members are now (the instances' own hosts)
    hosts = db.scalars(select(Instance.host).join(
        ServerGroupMember, ServerGroupMember.instance_uuid == Instance.uuid).where(
        ServerGroupMember.group_id == row.id, ServerGroupMember.instance_uuid != instance_uuid,
        Instance.host.is_not(None)))
    max_per_host = int((row.rules or {}).get("max_server_per_host", 1))
    return GroupRule(row.id, row.uuid, row.policy, row.affinity_host, Counter(hosts),
                     max_per_host)


def anti_affinity_slot(db: Session, rule: GroupRule, instance_uuid: str,
                       host: str) -> str | None:
    """The member row's unique (group, slot) value: the host itself, or with
    `max_server_per_host` n a free slot `host#k` (k < n) of the host, so the database
    refuses an (n+1)th member there whichever process builds it."""
    if rule.policy != "anti-affinity":
        return None
    if rule.max_per_host <= 1:
        return host
    taken = set(db.scalars(select(ServerGroupMember.anti_affinity_host).where(
        ServerGroupMember.group_id == rule.group_id,
        ServerGroupMember.host == host, ServerGroupMember.instance_uuid != instance_uuid)))
    free = [f"{host}#{k}" for k in range(rule.max_per_host) if f"{host}#{k}" not in taken]
    return free[0] if free else f"{host}#0"  # all taken: the update then conflicts


def claim_host(db: Session, rule: GroupRule, instance_uuid: str, host: str) -> bool:
    """Record `host` as the member's host; False when another build of the group took it
    first (anti-affinity: the unique (group, host) row; affinity: the group is pinned to
    another host). Runs in a savepoint: a refusal leaves nothing behind."""
    try:
        with db.begin_nested():
            if rule.policy == "affinity":
                db.execute(update(ServerGroup).where(
                    ServerGroup.id == rule.group_id, ServerGroup.affinity_host.is_(None)
                ).values(affinity_host=host))
                # a locking read sees the latest commit (MariaDB's plain read would not)
                pinned = db.scalar(select(ServerGroup.affinity_host).where(
                    ServerGroup.id == rule.group_id).with_for_update())
                if pinned != host:
                    return False
            db.execute(update(ServerGroupMember).where(
                ServerGroupMember.instance_uuid == instance_uuid).values(
                host=host, anti_affinity_host=anti_affinity_slot(db, rule, instance_uuid, host)))
    except IntegrityError:
        return False
    return True


def follow_host(db: Session, instance_uuid: str, host: str | None) -> None:
    """A server moved back without the scheduler (a reverted resize): its member row
    follows (an anti-affinity conflict keeps the old record rather than fail the revert)."""
    try:
        with db.begin_nested():
            rule = rule_for(db, instance_uuid)
            if rule is None:
                return
            db.execute(update(ServerGroupMember).where(
                ServerGroupMember.instance_uuid == instance_uuid).values(
                host=host,
                anti_affinity_host=anti_affinity_slot(db, rule, instance_uuid, host) if host
                else None))
    except IntegrityError:
        pass
