"""Software configuration tables: configs (immutable once made) and deployments of a
config to a server (its state, inputs and the outputs a signal reported)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow


class SoftwareConfig(Base):
    __tablename__ = "heat_software_config"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(64), index=True)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    group: Mapped[str] = mapped_column(String(255))
    config: Mapped[Any] = mapped_column(JSONType, nullable=True)  # text or a structure
    inputs: Mapped[list[Any]] = mapped_column(JSONType, default=list)
    outputs: Mapped[list[Any]] = mapped_column(JSONType, default=list)
    options: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class SoftwareDeployment(Base):
    __tablename__ = "heat_software_deployment"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(64), index=True)
    config_id: Mapped[str] = mapped_column(ForeignKey("heat_software_config.id"))
    server_id: Mapped[str] = mapped_column(String(255), index=True)
    input_values: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    output_values: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    action: Mapped[str] = mapped_column(String(255), default="INIT")
    status: Mapped[str] = mapped_column(String(255), default="COMPLETE")
    status_reason: Mapped[str] = mapped_column(Text, default="")
    stack_user_project_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
