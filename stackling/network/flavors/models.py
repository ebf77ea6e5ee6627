"""Network flavors (`network_flavor`), service profiles (`network_service_profile`) and
their associations (`network_flavor_service_profile`: one row per pair, the key)."""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str


class Flavor(Base):
    __tablename__ = "network_flavor"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    name: Mapped[str] = mapped_column(String(255), default="")
    description: Mapped[str] = mapped_column(String(1024), default="")
    service_type: Mapped[str] = mapped_column(String(36))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)


class ServiceProfile(Base):
    __tablename__ = "network_service_profile"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    description: Mapped[str] = mapped_column(String(1024), default="")
    driver: Mapped[str] = mapped_column(String(1024), default="")
    metainfo: Mapped[str] = mapped_column(Text, default="")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)


class FlavorServiceProfile(Base):
    __tablename__ = "network_flavor_service_profile"
    flavor_id: Mapped[str] = mapped_column(
        ForeignKey("network_flavor.id", ondelete="CASCADE", name="fk_network_flavor_sp_flavor"),
        primary_key=True)
    # no cascade: a profile in use is refused (ServiceProfileInUse), also against a race
    service_profile_id: Mapped[str] = mapped_column(
        ForeignKey("network_service_profile.id", name="fk_network_flavor_sp_profile"),
        primary_key=True, index=True)
