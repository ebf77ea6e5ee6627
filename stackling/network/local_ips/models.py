"""Local IPs (`network_local_ip`) and their port associations
(`network_local_ip_association`, one per (local IP, port): the key)."""

from __future__ import annotations

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import StandardAttrs


class LocalIP(StandardAttrs, Base):
    __tablename__ = "network_local_ip"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    # no cascade: a port a local IP uses is refused on delete (ServicePortInUse)
    local_port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", name="fk_network_local_ip_port"), index=True)
    network_id: Mapped[str] = mapped_column(String(36))
    local_ip_address: Mapped[str] = mapped_column(String(64))
    ip_mode: Mapped[str] = mapped_column(String(32))


class LocalIPAssociation(Base):
    __tablename__ = "network_local_ip_association"
    # no cascade from the local IP: one with associations is refused (LocalIPInUse)
    local_ip_id: Mapped[str] = mapped_column(
        ForeignKey("network_local_ip.id", name="fk_network_local_ip_assoc_lip"),
        primary_key=True)
    fixed_port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE", name="fk_network_local_ip_assoc_port"),
        primary_key=True, index=True)
    fixed_ip: Mapped[str] = mapped_column(String(64))
