"""`network_conntrack_helper`: a router's conntrack helpers; (router, protocol, port,
helper) is unique, gone with the router."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str


class ConntrackHelper(Base):
    __tablename__ = "network_conntrack_helper"
    __table_args__ = (UniqueConstraint("router_id", "protocol", "port", "helper",
                                       name="uq_network_conntrack_helper"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    router_id: Mapped[str] = mapped_column(
        ForeignKey("network_router.id", ondelete="CASCADE"), index=True)
    protocol: Mapped[str] = mapped_column(String(40))
    port: Mapped[int] = mapped_column(Integer)
    helper: Mapped[str] = mapped_column(String(64))
