"""Network logs (`network_log`). A log goes with the security group it names
(`resource_id`) and with the port it targets (`target_id`), as upstream's plugin deletes
them on those deletes: here the foreign keys cascade."""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import StandardAttrs


class Log(StandardAttrs, Base):
    __tablename__ = "network_log"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    resource_type: Mapped[str] = mapped_column(String(36))
    resource_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_security_group.id", ondelete="CASCADE",
                   name="fk_network_log_resource"), nullable=True, index=True)
    target_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE", name="fk_network_log_target"),
        nullable=True, index=True)
    event: Mapped[str] = mapped_column(String(255))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
