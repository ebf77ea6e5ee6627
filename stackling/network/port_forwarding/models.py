"""Port forwardings of floating IPs.

`network_port_forwarding`: one row per forwarding, gone with its floating IP or its
internal port (cascades). Neutron's two unique keys decide duplicates whichever process
writes: one external port per protocol on a floating IP, and one internal socket
(port, address, port number, protocol).
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str


class PortForwarding(Base):
    __tablename__ = "network_port_forwarding"
    __table_args__ = (
        UniqueConstraint("floatingip_id", "external_port", "protocol",
                         name="uq_network_port_forwarding_external"),
        UniqueConstraint("internal_port_id", "internal_ip_address", "internal_port",
                         "protocol", name="uq_network_port_forwarding_internal"),
    )
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    floatingip_id: Mapped[str] = mapped_column(
        ForeignKey("network_floatingip.id", ondelete="CASCADE"), index=True)
    external_port: Mapped[int] = mapped_column(Integer)
    internal_port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), index=True)
    internal_ip_address: Mapped[str] = mapped_column(String(64))
    internal_port: Mapped[int] = mapped_column(Integer)
    protocol: Mapped[str] = mapped_column(String(40))
    description: Mapped[str] = mapped_column(String(255), default="")
