"""Tables of address groups.

- `network_address_group`: one row per group (standard attributes, a long description as
  upstream's 1024 characters).
- `network_address_group_address`: its addresses, normalised CIDRs; (group, address) is
  the key, so an address is in a group once whichever process adds it.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import StandardAttrs


class AddressGroup(StandardAttrs, Base):
    __tablename__ = "network_address_group"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    description: Mapped[str] = mapped_column(String(1024), default="")


class AddressGroupAddress(Base):
    __tablename__ = "network_address_group_address"
    address_group_id: Mapped[str] = mapped_column(
        ForeignKey("network_address_group.id", ondelete="CASCADE",
                   name="fk_network_address_group_address_group"), primary_key=True)
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
