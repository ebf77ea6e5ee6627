"""Tables of trunks.

- `network_trunk`: one row per trunk; `port_id` (its parent port) is unique, so a port is
  the parent of at most one trunk whichever process asks.
- `network_trunk_subport`: one row per sub-port; the port id is the primary key (a port
  is a sub-port of at most one trunk) and (trunk, segmentation type, id) is unique (one
  VLAN id per trunk). That a port is never both a parent and a sub-port is kept by taking
  the ports' row locks before the checks (`trunks.claim_ports`).
"""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import StandardAttrs


class Trunk(StandardAttrs, Base):
    __tablename__ = "network_trunk"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    admin_state_up: Mapped[bool] = mapped_column(Boolean, default=True)
    port_id: Mapped[str] = mapped_column(ForeignKey("network_port.id"), unique=True)


class SubPort(Base):
    __tablename__ = "network_trunk_subport"
    __table_args__ = (UniqueConstraint("trunk_id", "segmentation_type", "segmentation_id",
                                       name="uq_network_trunk_subport_segmentation"),)
    port_id: Mapped[str] = mapped_column(ForeignKey("network_port.id"), primary_key=True)
    trunk_id: Mapped[str] = mapped_column(
        ForeignKey("network_trunk.id", ondelete="CASCADE"), index=True)
    segmentation_type: Mapped[str] = mapped_column(String(32))
    segmentation_id: Mapped[int] = mapped_column(Integer)
