"""Tables of server groups (os-server-groups) and of flavor access (os-flavor-access).

A server group's members are rows of `compute_server_group_member`, one per server (a
server is in one group at most). A member's `host` is set by the scheduler in the same
transaction as its placement claim. For a hard anti-affinity group the host is also
written to `anti_affinity_host`, unique per group: two parallel builds of one group can
never commit the same host, whatever process runs them (NULLs never collide, so the
other policies and unscheduled members carry NULL there). An affinity group's host is
fixed once on the group row by a guarded UPDATE (`affinity_host IS NULL`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow_precise


class ServerGroup(Base):
    __tablename__ = "compute_server_group"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    name: Mapped[str] = mapped_column(String(255))
    project_id: Mapped[str] = mapped_column(String(64), index=True)
    user_id: Mapped[str] = mapped_column(String(64))
    # Nova stores one policy per group since 2.64; before, `policies` is [policy].
    policy: Mapped[str] = mapped_column(String(32))
    rules: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    affinity_host: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)


class ServerGroupMember(Base):
    __tablename__ = "compute_server_group_member"
    __table_args__ = (UniqueConstraint("group_id", "anti_affinity_host"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    group_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("compute_server_group.id", ondelete="CASCADE"))
    instance_uuid: Mapped[str] = mapped_column(String(36), unique=True)
    host: Mapped[str | None] = mapped_column(String(255), nullable=True)
    anti_affinity_host: Mapped[str | None] = mapped_column(String(255), nullable=True)


class FlavorProject(Base):
    """A project granted a private flavor (Nova's flavor_projects)."""

    __tablename__ = "compute_flavor_project"
    __table_args__ = (UniqueConstraint("flavor_id", "project_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    flavor_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("compute_flavor.id", ondelete="CASCADE"))
    project_id: Mapped[str] = mapped_column(String(255))
