"""A port's INACTIVE bindings (`network_port_binding`, one per (port, host): the key).

The ACTIVE binding is the port's own `binding_*` columns (what compute, the dataplane and
every other reader use); activating a binding swaps the two."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType


class PortBinding(Base):
    __tablename__ = "network_port_binding"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE", name="fk_network_port_binding_port"),
        primary_key=True)
    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    vnic_type: Mapped[str] = mapped_column(String(64), default="normal")
    vif_type: Mapped[str] = mapped_column(String(64), default="unbound")
    profile: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    vif_details: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
