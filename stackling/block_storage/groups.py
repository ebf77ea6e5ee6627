"""Generic volume groups (3.11 group types, 3.13 groups, 3.14 group snapshots), as
openstacksdk's block_storage calls them: one backend, so a group is a record of volumes
whose snapshots are taken together (no consistency beyond one snapshot per volume, which
the file backend takes one after another)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import errors, snapshots, volumes
from stackling.block_storage.models import (
    Group,
    GroupMember,
    GroupSnapshot,
    GroupType,
    Snapshot,
    Volume,
)
from stackling.common.context import RequestContext
from stackling.common.db import unique_or


class GroupTypeNotFound(errors.NotFound):
    message = "Group type %(group_type_id)s could not be found."


class GroupNotFound(errors.NotFound):
    message = "Group %(group_id)s could not be found."


class GroupSnapshotNotFound(errors.NotFound):
    message = "GroupSnapshot %(group_snapshot_id)s could not be found."


class GroupTypeExists(errors.Conflict):
    message = "Group Type %(id)s already exists."


class GroupTypeSpecsNotFound(errors.NotFound):
    message = "Group Type %(group_type_id)s has no specs with key %(group_specs_key)s."


class InvalidGroup(errors.Invalid):
    message = "Invalid Group: %(reason)s"


# ------------------------------------------------------------------ group types
def get_type(db: Session, ctx: RequestContext, ref: str) -> GroupType:
    row = db.get(GroupType, ref) or db.scalar(select(GroupType).where(GroupType.name == ref))
    if row is None or not (row.is_public or ctx.is_admin):
        raise GroupTypeNotFound(group_type_id=ref)
    return row


def list_types(db: Session, ctx: RequestContext) -> list[GroupType]:
    rows = db.scalars(select(GroupType).order_by(GroupType.name))
    return [t for t in rows if t.is_public or ctx.is_admin]


def create_type(db: Session, name: str, description: str | None, is_public: bool,
                specs: dict[str, str]) -> GroupType:
    if db.scalar(select(GroupType.id).where(GroupType.name == name)) is not None:
        raise GroupTypeExists(id=name)
    row = GroupType(id=str(uuid.uuid4()), name=name, description=description,
                    is_public=is_public, group_specs=dict(specs))
    with unique_or(db, lambda: GroupTypeExists(id=name)):
        db.add(row)
        db.flush()
    return row


def update_type(db: Session, row: GroupType, fields: dict[str, Any]) -> GroupType:
    if "name" in fields and fields["name"] != row.name:
        if db.scalar(select(GroupType.id).where(GroupType.name == fields["name"])):
            raise GroupTypeExists(id=fields["name"])
        row.name = fields["name"]
    if "description" in fields:
        row.description = fields["description"]
    if "is_public" in fields:
        row.is_public = bool(fields["is_public"])
    db.flush()
    return row


def delete_type(db: Session, row: GroupType) -> None:
    if db.scalar(select(Group.id).where(Group.group_type_id == row.id)) is not None:
        raise errors.BadRequest(f"Target group type with {row.id} is still in use.")
    db.delete(row)
    db.flush()


def set_specs(db: Session, row: GroupType, specs: dict[str, str]) -> None:
    row.group_specs = {**(row.group_specs or {}), **{k: str(v) for k, v in specs.items()}}
    db.flush()


def delete_spec(db: Session, row: GroupType, key: str) -> None:
    specs = dict(row.group_specs or {})
    if key not in specs:
        raise GroupTypeSpecsNotFound(group_type_id=row.id, group_specs_key=key)
    del specs[key]
    row.group_specs = specs
    db.flush()


# ------------------------------------------------------------------ groups
def get_group(db: Session, ctx: RequestContext, group_id: str) -> Group:
    row = db.get(Group, group_id)
    if row is None or not (ctx.is_admin or row.project_id == ctx.project_id):
        raise GroupNotFound(group_id=group_id)
    return row


def list_groups(db: Session, ctx: RequestContext, all_tenants: bool) -> list[Group]:
    stmt = select(Group)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Group.project_id == ctx.project_id)
    return list(db.scalars(stmt.order_by(Group.created_at.desc(), Group.id)))


def member_ids(db: Session, group_id: str) -> list[str]:
    return list(db.scalars(select(GroupMember.id).where(GroupMember.group_id == group_id)))


def group_of(db: Session, item_id: str) -> str | None:
    row = db.get(GroupMember, item_id)
    return row.group_id if row is not None else None


def create_group(db: Session, ctx: RequestContext, *, name: str | None,
                 description: str | None, group_type: str, volume_types: list[str],
                 availability_zone: str | None) -> Group:
    from stackling.block_storage import types

    gtype = get_type(db, ctx, group_type)
    if not volume_types:
        raise errors.InvalidInput(reason="volume_types must be provided to create group")
    type_ids = [types.find_type(db, ctx, ref).id for ref in volume_types]
    row = Group(id=str(uuid.uuid4()), project_id=ctx.project_id or "",
                user_id=ctx.user_id or "", name=name, description=description,
                status="available", availability_zone=availability_zone or volumes.AZ,
                group_type_id=gtype.id, volume_type_ids=type_ids)
    db.add(row)
    db.flush()
    return row


def add_volume(db: Session, group: Group, volume: Volume) -> None:
    if volume.volume_type_id not in (group.volume_type_ids or []):
        raise InvalidGroup(reason=f"Volume type {volume.volume_type_id} is not supported by "
                           f"the group {group.id}.")
    if group_of(db, volume.id) not in (None, group.id):
        raise InvalidGroup(reason=f"Volume {volume.id} is already in a group.")
    if group_of(db, volume.id) is None:
        db.add(GroupMember(id=volume.id, group_id=group.id))
        db.flush()


def update_group(db: Session, ctx: RequestContext, group: Group, fields: dict[str, Any]
                 ) -> None:
    for key in ("name", "description"):
        if key in fields:
            setattr(group, key, fields[key])
    for ref in _ids(fields.get("add_volumes")):
        add_volume(db, group, volumes.get_volume(db, ctx, ref))
    for ref in _ids(fields.get("remove_volumes")):
        member = db.get(GroupMember, ref)
        if member is None or member.group_id != group.id:
            raise InvalidGroup(reason=f"Volume {ref} is not in group {group.id}.")
        db.delete(member)
    db.flush()


def _ids(value: Any) -> list[str]:
    if not value:
        return []
    return [v.strip() for v in str(value).split(",") if v.strip()]


def delete_group(db: Session, ctx: RequestContext, group: Group, delete_volumes: bool) -> None:
    members = [db.get(Volume, vid) for vid in member_ids(db, group.id)]
    members = [v for v in members if v is not None]
    if members and not delete_volumes:
        raise InvalidGroup(reason="Group has volumes: delete them with delete-volumes")
    if db.scalar(select(GroupSnapshot.id).where(GroupSnapshot.group_id == group.id)):
        raise InvalidGroup(reason="Group has group snapshots")
    for volume in members:
        volumes.delete_volume(db, ctx, volume, cascade=True)
    for member in db.scalars(select(GroupMember).where(GroupMember.group_id == group.id)):
        db.delete(member)
    db.delete(group)
    db.flush()


# ------------------------------------------------------------------ group snapshots
def get_group_snapshot(db: Session, ctx: RequestContext, gs_id: str) -> GroupSnapshot:
    row = db.get(GroupSnapshot, gs_id)
    if row is None or not (ctx.is_admin or row.project_id == ctx.project_id):
        raise GroupSnapshotNotFound(group_snapshot_id=gs_id)
    return row


def list_group_snapshots(db: Session, ctx: RequestContext,
                         all_tenants: bool) -> list[GroupSnapshot]:
    stmt = select(GroupSnapshot)
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(GroupSnapshot.project_id == ctx.project_id)
    return list(db.scalars(stmt.order_by(GroupSnapshot.created_at.desc(), GroupSnapshot.id)))


def status_of(db: Session, gs: GroupSnapshot) -> str:
    """`creating` until each member snapshot is made, then `available` (or `error`)."""
    if gs.status != "creating":
        return gs.status
    statuses = set(db.scalars(select(Snapshot.status).where(
        Snapshot.id.in_(member_ids(db, gs.id)))))
    if "error" in statuses:
        return "error"
    return "creating" if statuses - {"available"} else "available"


def create_group_snapshot(db: Session, ctx: RequestContext, settings: Any, group: Group,
                          name: str | None, description: str | None) -> GroupSnapshot:
    gs = GroupSnapshot(id=str(uuid.uuid4()), group_id=group.id, project_id=group.project_id,
                       user_id=ctx.user_id or "", name=name, description=description,
                       status="creating", group_type_id=group.group_type_id)
    db.add(gs)
    for vid in member_ids(db, group.id):
        volume = db.get(Volume, vid)
        if volume is None:
            continue
        snap = snapshots.create_snapshot(db, ctx, settings, volume, name=name,
                                         description=description, force=True, metadata={})
        db.add(GroupMember(id=snap.id, group_id=gs.id))
    db.flush()
    return gs


def delete_group_snapshot(db: Session, gs: GroupSnapshot) -> None:
    for sid in member_ids(db, gs.id):
        snap = db.get(Snapshot, sid)
        if snap is not None:
            snapshots.delete_snapshot(db, snap, force=True)
        member = db.get(GroupMember, sid)
        if member is not None:
            db.delete(member)
    db.delete(gs)
    db.flush()
