"""Tables of QoS policies (`qos`).

- `network_qos_policy`: one row per policy (standard attributes, `shared` mirrored by
  the `*` RBAC policy of object type `qos_policy`).
- `network_qos_default`: a project's default policy; the project is the key, so a
  project has at most one default whichever process sets it.
- `network_qos_rule`: every rule type in one table; (policy, type, direction) is unique
  (one bandwidth-limit rule per direction, one DSCP rule, ...), `direction` is `""` for
  DSCP marking, which has none.
- `network_qos_port_policy` / `network_qos_network_policy`: `qos_policy_id` of ports
  and networks (key = the port or network; the policy key without cascade, so a policy
  in use cannot be deleted even by a racing delete).
"""

from __future__ import annotations

from sqlalchemy import Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import StandardAttrs


class QosPolicy(StandardAttrs, Base):
    __tablename__ = "network_qos_policy"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    shared: Mapped[bool] = mapped_column(Boolean, default=False)


class QosDefault(Base):
    __tablename__ = "network_qos_default"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    qos_policy_id: Mapped[str] = mapped_column(
        ForeignKey("network_qos_policy.id", ondelete="CASCADE"), unique=True)


class QosRule(Base):
    __tablename__ = "network_qos_rule"
    __table_args__ = (UniqueConstraint("qos_policy_id", "type", "direction",
                                       name="uq_network_qos_rule_type_direction"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    qos_policy_id: Mapped[str] = mapped_column(
        ForeignKey("network_qos_policy.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(32))
    direction: Mapped[str] = mapped_column(String(16), default="")
    max_kbps: Mapped[int | None] = mapped_column(Integer, nullable=True)
    max_burst_kbps: Mapped[int | None] = mapped_column(Integer, nullable=True)
    dscp_mark: Mapped[int | None] = mapped_column(Integer, nullable=True)
    min_kbps: Mapped[int | None] = mapped_column(Integer, nullable=True)
    min_kpps: Mapped[int | None] = mapped_column(Integer, nullable=True)


class QosPortPolicy(Base):
    __tablename__ = "network_qos_port_policy"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), primary_key=True)
    qos_policy_id: Mapped[str] = mapped_column(ForeignKey("network_qos_policy.id"),
                                               index=True)


class QosNetworkPolicy(Base):
    __tablename__ = "network_qos_network_policy"
    network_id: Mapped[str] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), primary_key=True)
    qos_policy_id: Mapped[str] = mapped_column(ForeignKey("network_qos_policy.id"),
                                               index=True)
