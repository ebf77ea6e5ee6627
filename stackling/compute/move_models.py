"""Tables of the move machinery and server actions: migration records (os-migrations),
the scheduler's recorded decisions (why each candidate host was or was not chosen) and
remote console tokens."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow_precise


class Migration(Base):
    """One move of a server (Nova's `migrations` table). While a resize or cold migration
    waits in VERIFY_RESIZE, the placement consumer `uuid` holds the source allocation."""

    __tablename__ = "compute_migration"
    __table_args__ = (Index("ix_compute_migration_instance", "instance_uuid", "id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    instance_uuid: Mapped[str] = mapped_column(String(36))
    project_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    migration_type: Mapped[str] = mapped_column(String(32))  # migration|resize|live-migration
    status: Mapped[str] = mapped_column(String(32))
    source_compute: Mapped[str | None] = mapped_column(String(255), nullable=True)
    source_node: Mapped[str | None] = mapped_column(String(255), nullable=True)
    dest_compute: Mapped[str | None] = mapped_column(String(255), nullable=True)
    dest_node: Mapped[str | None] = mapped_column(String(255), nullable=True)
    dest_host: Mapped[str | None] = mapped_column(String(255), nullable=True)
    old_instance_type_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    new_instance_type_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    old_flavor: Mapped[dict[str, Any]] = mapped_column(JSONType)
    new_flavor: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # The server's vm_state before the move (a stopped server comes back stopped).
    old_vm_state: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class SchedulerDecision(Base):
    """The last scheduling decision for a server: one row per server, replaced by each
    build or move, so recording it costs one write."""

    __tablename__ = "compute_scheduler_decision"
    instance_uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    operation: Mapped[str] = mapped_column(String(32))  # build|migrate|resize|live-migration|unshelve
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
    # {"chosen": host|None, "hosts": {host: reason|None}, "reason": text}
    decision: Mapped[dict[str, Any]] = mapped_column(JSONType)


class ConsoleAuthToken(Base):
    """A remote console URL's token (Nova's console_auth_tokens): only its hash is kept."""

    __tablename__ = "compute_console_auth_token"
    __table_args__ = (Index("ix_compute_console_auth_token_expires", "expires"),)
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(String(36))
    console_type: Mapped[str] = mapped_column(String(32))
    expires: Mapped[dt.datetime] = mapped_column(UTCDateTime)
