"""`network_default_sg_rule`: the templates of the rules a new security group starts with
(`used_in_default_sg` for a project's default group, `used_in_non_default_sg` for the
others). `remote_group_id` is null or `PARENT` (the new group itself). The migration
writes Neutron's four defaults. Duplicates collide on the unique fingerprint."""

from __future__ import annotations

from sqlalchemy import Boolean, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str


class DefaultSecurityGroupRule(Base):
    __tablename__ = "network_default_sg_rule"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    description: Mapped[str] = mapped_column(String(255), default="")
    direction: Mapped[str] = mapped_column(String(16))
    ethertype: Mapped[str] = mapped_column(String(8))
    protocol: Mapped[str | None] = mapped_column(String(40), nullable=True)
    port_range_min: Mapped[int | None] = mapped_column(Integer, nullable=True)
    port_range_max: Mapped[int | None] = mapped_column(Integer, nullable=True)
    remote_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
    remote_group_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    remote_address_group_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    used_in_default_sg: Mapped[bool] = mapped_column(Boolean, default=False)
    used_in_non_default_sg: Mapped[bool] = mapped_column(Boolean, default=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
