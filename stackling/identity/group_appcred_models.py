"""Identity tables for groups (and their members) and application credentials.

Group role grants live in `identity_assignment` with types GroupProject / GroupDomain,
as Keystone's; a membership row is unique per (group, user) by its key.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import IdentityBase as Base  # identity's own registry
from stackling.common.db import JSONType, UTCDateTime, utcnow


class Group(Base):
    __tablename__ = "identity_group"
    __table_args__ = (UniqueConstraint("domain_id", "name"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    domain_id: Mapped[str] = mapped_column(ForeignKey("identity_domain.id"))
    description: Mapped[str] = mapped_column(Text, default="")
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)


class GroupMembership(Base):
    __tablename__ = "identity_group_membership"
    group_id: Mapped[str] = mapped_column(
        ForeignKey("identity_group.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        ForeignKey("identity_user.id", ondelete="CASCADE"), primary_key=True, index=True)


class ApplicationCredential(Base):
    """A user's delegated login to one project: the secret is stored hashed only.

    `roles` is the list of role ids the credential carries (a subset of the creator's
    roles on the project at creation time); `access_rules` is kept as given.
    """

    __tablename__ = "identity_application_credential"
    __table_args__ = (UniqueConstraint("user_id", "name"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[str] = mapped_column(
        ForeignKey("identity_user.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str] = mapped_column(String(64), index=True)
    secret_hash: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    unrestricted: Mapped[bool] = mapped_column(Boolean, default=False)
    roles: Mapped[list[str]] = mapped_column(JSONType, default=list)
    access_rules: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
