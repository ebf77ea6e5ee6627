"""Compute quota tables: per-project (and per-user) limits, quota classes, and the
per-project lock row that serialises quota checks (see common/quota_lock.py).

Defaults live in settings (Nova's [quota] options); a row exists only where an admin
set a limit. Usage is never stored: it is counted from the instances and keypairs
themselves, as Nova counts it since Pike.
"""

from __future__ import annotations

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base


class ComputeQuota(Base):
    """A limit set for a project (`user_id` empty) or for one user in it."""

    __tablename__ = "compute_quota"
    project_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True, default="")
    resource: Mapped[str] = mapped_column(String(255), primary_key=True)
    hard_limit: Mapped[int] = mapped_column(Integer)


class ComputeQuotaClass(Base):
    """A limit of a quota class; the `default` class overrides the configured defaults."""

    __tablename__ = "compute_quota_class"
    class_name: Mapped[str] = mapped_column(String(255), primary_key=True)
    resource: Mapped[str] = mapped_column(String(255), primary_key=True)
    hard_limit: Mapped[int] = mapped_column(Integer)


class ComputeQuotaLock(Base):
    """One row per project, locked by every quota check of that project."""

    __tablename__ = "compute_quota_lock"
    project_id: Mapped[str] = mapped_column(String(64), primary_key=True)
