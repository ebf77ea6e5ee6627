"""Identity tables for what a user hands to others: credentials (EC2 and any other
type), trusts and their roles, application credentials' access rules, and stored policy
blobs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import IdentityBase as Base  # identity's own registry
from stackling.common.db import JSONType, UTCDateTime, utcnow


class Credential(Base):
    """A user's stored secret of some `type`; an EC2 credential's id is the SHA-256 of its
    access key (as Keystone's), so the key finds it without a scan."""

    __tablename__ = "identity_credential"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        ForeignKey("identity_user.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    type: Mapped[str] = mapped_column(String(255))
    blob: Mapped[str] = mapped_column(Text)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)


class Trust(Base):
    """A trustor's delegation of `roles` (role ids) on a project to a trustee.

    `remaining_uses` counts the tokens still to be issued (None: unlimited); a deleted
    trust is removed, which is what invalidates its tokens."""

    __tablename__ = "identity_trust"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    trustor_user_id: Mapped[str] = mapped_column(
        ForeignKey("identity_user.id", ondelete="CASCADE"), index=True)
    trustee_user_id: Mapped[str] = mapped_column(
        ForeignKey("identity_user.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    impersonation: Mapped[bool] = mapped_column(Boolean, default=False)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    remaining_uses: Mapped[int | None] = mapped_column(Integer, nullable=True)
    roles: Mapped[list[str]] = mapped_column(JSONType, default=list)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class AccessRule(Base):
    """A user's access rule, as Keystone keeps them: made by the application credentials
    that name it, shared by id among the user's credentials (one row per distinct rule),
    and kept after they go until deleted (refused while a credential still uses it)."""

    __tablename__ = "identity_access_rule"
    __table_args__ = (UniqueConstraint("user_id", "service", "path", "method"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        ForeignKey("identity_user.id", ondelete="CASCADE"), index=True)
    service: Mapped[str] = mapped_column(String(64))
    path: Mapped[str] = mapped_column(String(255))
    method: Mapped[str] = mapped_column(String(16))
    # The order the user's rules were made in (Keystone lists them by its auto-increment
    # key); last, where the migration adds it.
    position: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Policy(Base):
    """A policy blob stored for others to fetch (Keystone's /v3/policies keeps, never
    enforces them)."""

    __tablename__ = "identity_policy"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    type: Mapped[str] = mapped_column(String(255))
    blob: Mapped[str] = mapped_column(Text)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
