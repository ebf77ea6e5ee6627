"""Identity tables: domains, projects, users, roles, assignments, catalog, tokens."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import IdentityBase as Base  # identity's own registry
from stackling.common.db import JSONType, UTCDateTime, utcnow


class Domain(Base):
    __tablename__ = "identity_domain"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)


class Project(Base):
    __tablename__ = "identity_project"
    __table_args__ = (UniqueConstraint("domain_id", "name"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    domain_id: Mapped[str] = mapped_column(ForeignKey("identity_domain.id"))
    description: Mapped[str] = mapped_column(Text, default="")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    parent_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    tags: Mapped[list[str]] = mapped_column(JSONType, default=list)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)


class User(Base):
    __tablename__ = "identity_user"
    __table_args__ = (UniqueConstraint("domain_id", "name"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    domain_id: Mapped[str] = mapped_column(ForeignKey("identity_domain.id"))
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    default_project_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


NULL_DOMAIN_ID = "<<null>>"  # Keystone's stand-in domain of global roles (unique keys skip NULLs)


class Role(Base):
    """A global role (`domain_id` NULL_DOMAIN_ID) or a domain-specific one: names are unique
    per domain, so a domain may hold a role named like a global one."""

    __tablename__ = "identity_role"
    __table_args__ = (UniqueConstraint("name", "domain_id"),)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    domain_id: Mapped[str] = mapped_column(String(64), default=NULL_DOMAIN_ID,
                                           server_default=NULL_DOMAIN_ID)


class ImpliedRole(Base):
    __tablename__ = "identity_implied_role"
    prior_role_id: Mapped[str] = mapped_column(
        ForeignKey("identity_role.id", ondelete="CASCADE"), primary_key=True)
    implied_role_id: Mapped[str] = mapped_column(
        ForeignKey("identity_role.id", ondelete="CASCADE"), primary_key=True)


class Assignment(Base):
    """A role granted to a user on a project, a domain or the system ("all")."""

    __tablename__ = "identity_assignment"
    __table_args__ = (Index("ix_identity_assignment_target", "target_id"),)
    type: Mapped[str] = mapped_column(String(16), primary_key=True)  # UserProject, ...
    actor_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    target_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    role_id: Mapped[str] = mapped_column(
        ForeignKey("identity_role.id", ondelete="CASCADE"), primary_key=True)


class Region(Base):
    __tablename__ = "identity_region"
    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    description: Mapped[str] = mapped_column(Text, default="")
    parent_region_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    extra: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)


class CatalogService(Base):
    __tablename__ = "identity_service"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    type: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    extra: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)  # description


class Endpoint(Base):
    """`url` is a template: `%(base_url)s` is the public base, `%(project_id)s` the scope."""

    __tablename__ = "identity_endpoint"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    service_id: Mapped[str] = mapped_column(
        ForeignKey("identity_service.id", ondelete="CASCADE"), index=True)
    interface: Mapped[str] = mapped_column(String(8))
    region_id: Mapped[str | None] = mapped_column(ForeignKey("identity_region.id"), nullable=True)
    url: Mapped[str] = mapped_column(Text)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    extra: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)  # name, ...


class SigningKey(Base):
    """Fernet keys shared by every process; the newest signs, all verify."""

    __tablename__ = "identity_signing_key"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class RevocationEvent(Base):
    """Tokens matching an event and issued at or before `issued_before` are invalid.

    A token's own revocation sets `audit_id`; deleting a user, a project or a role
    assignment sets `user_id`/`project_id`, as Keystone's revoke events do.
    """

    __tablename__ = "identity_revocation_event"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    audit_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    user_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    project_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    issued_before: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
