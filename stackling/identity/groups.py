"""Keystone groups: CRUD, membership, group grants and role assignment listing.

Group grants are `identity_assignment` rows of type GroupProject/GroupDomain; a user's
effective roles on a target are the user's own grants plus those of every group the user
belongs to (one query). Removing a member or a group grant revokes the members' tokens,
as Keystone does.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.errors import BadRequest, NotFound
from stackling.identity import logic, tokens
from stackling.identity.group_appcred_models import Group, GroupMembership
from stackling.identity.logic import (
    GROUP_DOMAIN,
    GROUP_KIND,
    GROUP_PROJECT,
    GROUP_SYSTEM,
    SYSTEM_ALL,
    USER_DOMAIN,
    USER_PROJECT,
    USER_SYSTEM,
)
from stackling.identity.models import NULL_DOMAIN_ID, Assignment, Role, User

USER_KIND = {v: k for k, v in GROUP_KIND.items()}


# ------------------------------------------------------------------ groups
def get_group(db: Session, group_id: str) -> Group:
    group = db.get(Group, group_id)
    if group is None:
        raise NotFound(f"Could not find group: {group_id}.")
    return group


def list_groups(db: Session, *, name: str | None = None,
                domain_id: str | None = None) -> list[Group]:
    stmt = select(Group).order_by(Group.name)
    if name is not None:
        stmt = stmt.where(Group.name == name)
    if domain_id is not None:
        stmt = stmt.where(Group.domain_id == domain_id)
    return list(db.scalars(stmt))


def create_group(db: Session, values: dict[str, Any]) -> Group:
    logic.get_domain(db, values["domain_id"])
    group = Group(id=logic.new_id(), **values)
    logic._insert_unique(db, group, "group", group.name)
    return group


def update_group(db: Session, group: Group, values: dict[str, Any]) -> Group:
    for key, value in values.items():
        setattr(group, key, value)
    logic._insert_unique(db, group, "group", group.name)
    return group


def member_ids(db: Session, group_id: str) -> list[str]:
    return list(db.scalars(select(GroupMembership.user_id)
                           .where(GroupMembership.group_id == group_id)))


def delete_group(db: Session, group: Group) -> None:
    for user_id in member_ids(db, group.id):
        tokens.revoke(db, user_id=user_id)
    db.execute(delete(Assignment).where(Assignment.actor_id == group.id,
                                        Assignment.type.in_(tuple(USER_KIND))))
    db.delete(group)


# ------------------------------------------------------------------ membership
def add_member(db: Session, group: Group, user: User) -> None:
    """Idempotent, as Keystone's PUT."""
    if db.get(GroupMembership, (group.id, user.id)) is not None:
        return
    try:
        with db.begin_nested():
            db.add(GroupMembership(group_id=group.id, user_id=user.id))
    except IntegrityError:
        pass  # added concurrently: same outcome


def check_member(db: Session, group: Group, user: User) -> None:
    if db.get(GroupMembership, (group.id, user.id)) is None:
        raise NotFound(f"User '{user.id}' not found in group '{group.id}'")


def remove_member(db: Session, group: Group, user: User) -> None:
    row = db.get(GroupMembership, (group.id, user.id))
    if row is None:
        raise NotFound(f"User '{user.id}' not found in group '{group.id}'")
    db.delete(row)
    tokens.revoke(db, user_id=user.id)  # the roles the group gave are gone


def list_members(db: Session, group: Group) -> list[User]:
    ids = select(GroupMembership.user_id).where(GroupMembership.group_id == group.id)
    return list(db.scalars(select(User).where(User.id.in_(ids)).order_by(User.name)))


def groups_for_user(db: Session, user_id: str) -> list[Group]:
    ids = select(GroupMembership.group_id).where(GroupMembership.user_id == user_id)
    return list(db.scalars(select(Group).where(Group.id.in_(ids)).order_by(Group.name)))


# ------------------------------------------------------------------ grants
def revoke_group_grant(db: Session, kind: str, group_id: str, target_id: str,
                       role_id: str) -> None:
    row = db.get(Assignment, (kind, group_id, target_id, role_id))
    if row is None:
        raise NotFound(f"Could not find role assignment with role: {role_id}, "
                       f"user or group: {group_id}, project, domain, or system: {target_id}.")
    db.delete(row)
    for user_id in member_ids(db, group_id):
        tokens.revoke(db, user_id=user_id,
                      project_id=target_id if kind == GROUP_PROJECT else None)


# ------------------------------------------------------------------ role assignments
def list_role_assignments(db: Session, *, user_id: str | None = None,
                          group_id: str | None = None, role_id: str | None = None,
                          project_id: str | None = None, domain_id: str | None = None,
                          system: bool = False, effective: bool = False
                          ) -> list[dict[str, Any]]:
    """Keystone's `GET /v3/role_assignments`.

    Rows are dicts {type, user_id | group_id, target_id, role_id, prior_role_id,
    membership_group_id}. With `effective`, group assignments become one assignment per
    member (`membership_group_id` set) and implied roles are added.
    """
    if effective and group_id:
        raise BadRequest("Combining effective and group filter will always result in an "
                         "empty list.")
    stmt = select(Assignment)
    if project_id:
        stmt = stmt.where(Assignment.type.in_((USER_PROJECT, GROUP_PROJECT)),
                          Assignment.target_id == project_id)
    elif domain_id:
        stmt = stmt.where(Assignment.type.in_((USER_DOMAIN, GROUP_DOMAIN)),
                          Assignment.target_id == domain_id)
    elif system:
        stmt = stmt.where(Assignment.type.in_((USER_SYSTEM, GROUP_SYSTEM)),
                          Assignment.target_id == SYSTEM_ALL)
    user_groups: list[str] = []
    if user_id:
        user_groups = list(db.scalars(select(GroupMembership.group_id)
                                      .where(GroupMembership.user_id == user_id)))
        actors = [user_id, *user_groups] if effective else [user_id]
        stmt = stmt.where(Assignment.actor_id.in_(actors))
    elif group_id:
        stmt = stmt.where(Assignment.actor_id == group_id, Assignment.type.in_(tuple(USER_KIND)))
    rows = list(db.scalars(stmt.order_by(Assignment.type, Assignment.target_id,
                                         Assignment.actor_id, Assignment.role_id)))
    direct: list[dict[str, Any]] = []
    for row in rows:
        is_group = row.type in USER_KIND
        if user_id and not effective and is_group:
            continue
        base = {"type": USER_KIND.get(row.type, row.type), "target_id": row.target_id,
                "role_id": row.role_id, "prior_role_id": None, "membership_group_id": None}
        if not is_group:
            direct.append({**base, "user_id": row.actor_id})
        elif not effective:
            direct.append({**base, "group_id": row.actor_id})
        else:
            members = [user_id] if user_id else member_ids(db, row.actor_id)
            direct += [{**base, "user_id": m, "membership_group_id": row.actor_id}
                       for m in members]
    result = []
    for row in direct:
        result.append(row)
        if effective:
            for implied in sorted(logic.expand_implied(db, [row["role_id"]]) - {row["role_id"]}):
                result.append({**row, "role_id": implied, "prior_role_id": row["role_id"]})
    if effective:  # as Keystone: a domain-specific role shows only by what it implies
        domain_specific = set(db.scalars(select(Role.id).where(
            Role.id.in_({r["role_id"] for r in result}), Role.domain_id != NULL_DOMAIN_ID)))
        result = [r for r in result if r["role_id"] not in domain_specific]
    if role_id:
        result = [r for r in result if r["role_id"] == role_id]
    if effective:
        seen: set[tuple[Any, ...]] = set()
        unique = []
        for r in result:
            key = (r["type"], r.get("user_id"), r["target_id"], r["role_id"])
            if key not in seen:
                seen.add(key)
                unique.append(r)
        result = unique
    return result


def members_granted(db: Session, role_id: str) -> list[str]:
    """Users holding a role through a group grant (to revoke when the role goes)."""
    groups = select(Assignment.actor_id).where(Assignment.role_id == role_id,
                                               Assignment.type.in_(tuple(USER_KIND)))
    return list(db.scalars(select(GroupMembership.user_id).distinct()
                           .where(GroupMembership.group_id.in_(groups))))
