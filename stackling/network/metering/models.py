"""Metering labels (`network_metering_label`) and their rules
(`network_metering_label_rule`, gone with their label)."""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str


class MeteringLabel(Base):
    __tablename__ = "network_metering_label"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    description: Mapped[str] = mapped_column(String(1024), default="")
    shared: Mapped[bool] = mapped_column(Boolean, default=False)


class MeteringLabelRule(Base):
    __tablename__ = "network_metering_label_rule"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    metering_label_id: Mapped[str] = mapped_column(
        # (named: the conventional name would pass MariaDB's 64-character limit)
        ForeignKey("network_metering_label.id", ondelete="CASCADE",
                   name="fk_network_metering_label_rule_label"), index=True)
    direction: Mapped[str] = mapped_column(String(16))
    excluded: Mapped[bool] = mapped_column(Boolean, default=False)
    remote_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
    source_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
    destination_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
