"""Orchestration tables: stacks, their resources and events, and the pending actions.

A stack row holds the current definition (template, environment, files, parameters). A
stack action that outlives its request (create, update, delete, rollback, suspend, resume,
check) is a `heat_stack_action` row: any process may claim it (a compare-and-swap on
`owner`, renewed with every step: a lease) and run it step by step, each step one
transaction. A resource's physical object and its row are written in the same transaction,
so a crash can lose neither one without the other.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow


class Stack(Base):
    __tablename__ = "heat_stack"
    # A live stack's name is unique in its project; deleted stacks keep `name` but drop
    # `live_name` (NULLs never collide), so the constraint is the database's.
    __table_args__ = (UniqueConstraint("project_id", "live_name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), index=True)
    live_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    project_id: Mapped[str] = mapped_column(String(64), index=True)
    user_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The creator's context (user, project, roles), replayed by background workers.
    context: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    parent_id: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    owner_resource: Mapped[str | None] = mapped_column(String(255), nullable=True)
    template: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    environment: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    files: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    parameters: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    tags: Mapped[list[str]] = mapped_column(JSONType, default=list)
    disable_rollback: Mapped[bool] = mapped_column(Boolean, default=True)
    timeout_mins: Mapped[int | None] = mapped_column(Integer, nullable=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)  # +1 per stack action
    action: Mapped[str] = mapped_column(String(16), default="CREATE")
    status: Mapped[str] = mapped_column(String(16), default="IN_PROGRESS")
    status_reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    deleted_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class StackAction(Base):
    """A stack action in progress: its plan (`work`) and who runs it (`owner` + lease)."""

    __tablename__ = "heat_stack_action"
    # One running action per stack: a second one is the API's 409 (ActionInProgress).
    stack_id: Mapped[str] = mapped_column(ForeignKey("heat_stack.id"), primary_key=True)
    action: Mapped[str] = mapped_column(String(16))
    work: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    owner: Mapped[str | None] = mapped_column(String(255), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Resource(Base):
    __tablename__ = "heat_resource"
    __table_args__ = (Index("ix_heat_resource_stack_name", "stack_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    stack_id: Mapped[str] = mapped_column(ForeignKey("heat_stack.id"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(255))
    # current: the stack's resource of that name; backup: the old one of a replacement,
    # deleted when the update completes (or restored by a rollback).
    role: Mapped[str] = mapped_column(String(16), default="current")
    physical_resource_id: Mapped[str | None] = mapped_column(String(255), nullable=True,
                                                             index=True)
    action: Mapped[str] = mapped_column(String(16), default="INIT")
    status: Mapped[str] = mapped_column(String(16), default="COMPLETE")
    status_reason: Mapped[str] = mapped_column(Text, default="")
    # The template snippet and the resolved properties of the last create/update.
    definition: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    properties: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    requires: Mapped[list[str]] = mapped_column(JSONType, default=list)
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    rsrc_metadata: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # The stack action generation this row was last handled in (resumed actions skip it).
    generation: Mapped[int] = mapped_column(Integer, default=0)
    replaces: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Event(Base):
    __tablename__ = "heat_event"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36), unique=True)
    stack_id: Mapped[str] = mapped_column(ForeignKey("heat_stack.id"), index=True)
    resource_name: Mapped[str] = mapped_column(String(255))
    physical_resource_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    resource_type: Mapped[str] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    status_reason: Mapped[str] = mapped_column(Text, default="")
    properties: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Snapshot(Base):
    """A stack snapshot: upstream's abandon data of the stack when it was taken."""

    __tablename__ = "heat_snapshot"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    stack_id: Mapped[str] = mapped_column(ForeignKey("heat_stack.id"), index=True)
    project_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    action: Mapped[str] = mapped_column(String(16), default="CREATE")
    status: Mapped[str] = mapped_column(String(16), default="IN_PROGRESS")
    status_reason: Mapped[str] = mapped_column(Text, default="")
    data: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class QuotaLock(Base):
    """The per-project row that serialises the stack-count check (common/quota_lock.py)."""

    __tablename__ = "heat_quota_lock"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)


# Software configs and deployments are orchestration tables too: mapped with these.
from stackling.orchestration import software_models  # noqa: E402,F401
