"""Tables of RBAC sharing and address scopes.

- `network_rbac_policy`: one row per RBAC policy (`rbac-policies`): who (`project_id`)
  grants `action` on one object (`object_type`, `object_id`) to `target_tenant` (a
  project, or `*` for every project). One grant per (object, action, target) is a unique
  constraint. A network's `shared` / `router:external` flags and a subnet pool's or
  address scope's `shared` flag mirror their wildcard (`*`) row.
- `network_address_scope`: address scopes; subnet pools name theirs in
  `network_subnet_pool.address_scope_id`.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str


class RbacPolicy(Base):
    __tablename__ = "network_rbac_policy"
    __table_args__ = (
        UniqueConstraint("object_type", "object_id", "action", "target_tenant",
                         name="uq_network_rbac_policy_grant"),
        Index("ix_network_rbac_policy_target", "target_tenant", "object_type"),
    )
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    object_type: Mapped[str] = mapped_column(String(32))
    object_id: Mapped[str] = mapped_column(String(36), index=True)
    action: Mapped[str] = mapped_column(String(255))
    target_tenant: Mapped[str] = mapped_column(String(255))


class AddressScope(Base):
    __tablename__ = "network_address_scope"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    ip_version: Mapped[int] = mapped_column(Integer)
