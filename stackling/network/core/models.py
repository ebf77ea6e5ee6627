"""Networking tables (Neutron core + ML2 segments + security groups).

Conventions:
- Every API resource carries the standard attributes (`StandardAttrs`): description,
  created_at/updated_at (whole seconds, UTC) and revision_number; tags live in one
  `network_tag` table keyed by the resource id (ids are UUIDs, so one table serves every
  resource, including the L3 ones in `l3_models.py`).
- "Only one" rules are constraints: one (subnet, address) in `network_ip_allocation`,
  one MAC per network, one (type, physnet, id) in `network_segment_allocation`, one
  default external network / default subnet pool per IP version (a nullable unique
  marker column: NULLs never collide on SQLite, PostgreSQL or MariaDB), one default
  security group per project.
- Addresses are stored twice: canonical text (what the API shows and filters on) and
  `ip_key`, a fixed-width hex of the 128-bit integer value, which sorts like the address
  so range and gap queries in IPAM use the (subnet_id, ip_key) index.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow, uuid_str


class StandardAttrs:
    """Neutron's standard attributes, as columns on each resource table."""

    description: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    revision_number: Mapped[int] = mapped_column(BigInteger, default=0)


class Tag(Base):
    """`standard-attr-tag`: tags of any network resource, keyed by its id."""

    __tablename__ = "network_tag"
    # Tag filters read the rows of the tags they name (querying._tag_clause).
    __table_args__ = (Index("ix_network_tag_tag_resource_id", "tag", "resource_id"),)
    resource_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    tag: Mapped[str] = mapped_column(String(255), primary_key=True)
    resource_type: Mapped[str] = mapped_column(String(32), default="")


# --------------------------------------------------------------------------- networks
class Network(StandardAttrs, Base):
    __tablename__ = "network_network"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="", index=True)
    status: Mapped[str] = mapped_column(String(16), default="ACTIVE")
    admin_state_up: Mapped[bool] = mapped_column(Boolean, default=True)
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    router_external: Mapped[bool] = mapped_column(Boolean, default=False)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    # "default" while this is the default external network, else NULL (unique).
    default_marker: Mapped[str | None] = mapped_column(String(8), nullable=True, unique=True)
    mtu: Mapped[int] = mapped_column(Integer, default=1500)
    port_security_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    availability_zone_hints: Mapped[list[str]] = mapped_column(JSONType, default=list)

    segments: Mapped[list[Segment]] = relationship(
        back_populates="network", order_by="Segment.segment_index", lazy="select",
        cascade="all, delete-orphan", passive_deletes=True)


class Segment(StandardAttrs, Base):
    """A network segment (ML2 `networksegments`): the network's provider data.

    A network has one segment unless routed networks add more (`segment_index` orders
    them; the first is what `provider:*` shows).
    """

    __tablename__ = "network_segment"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    network_id: Mapped[str] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), index=True)
    network_type: Mapped[str] = mapped_column(String(32))
    physical_network: Mapped[str | None] = mapped_column(String(64), nullable=True)
    segmentation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    segment_index: Mapped[int] = mapped_column(Integer, default=0)
    is_dynamic: Mapped[bool] = mapped_column(Boolean, default=False)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)

    network: Mapped[Network] = relationship(back_populates="segments")


class SegmentAllocation(Base):
    """Taken segmentation ids only (free = configured ranges minus these rows).

    Tunnel types store '' as physical_network so the primary key (which is the
    uniqueness rule) never holds a NULL. Flat networks take id 0 on their physnet,
    which makes "one flat network per physnet" a constraint too.
    """

    __tablename__ = "network_segment_allocation"
    network_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    physical_network: Mapped[str] = mapped_column(String(64), primary_key=True)
    segmentation_id: Mapped[int] = mapped_column(BigInteger, primary_key=True,
                                                 autoincrement=False)


# --------------------------------------------------------------------------- subnet pools
class SubnetPool(StandardAttrs, Base):
    __tablename__ = "network_subnet_pool"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255))
    ip_version: Mapped[int] = mapped_column(Integer)
    default_prefixlen: Mapped[int] = mapped_column(Integer)
    min_prefixlen: Mapped[int] = mapped_column(Integer)
    max_prefixlen: Mapped[int] = mapped_column(Integer)
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    # ip_version while this is that version's default pool, else NULL (unique).
    default_marker: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)
    address_scope_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    default_quota: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # Bumped by every prefix allocation: the row lock serialises allocations per pool.
    generation: Mapped[int] = mapped_column(BigInteger, default=0)

    prefixes: Mapped[list[SubnetPoolPrefix]] = relationship(
        lazy="selectin", cascade="all, delete-orphan", passive_deletes=True,
        order_by="SubnetPoolPrefix.cidr")


class SubnetPoolPrefix(Base):
    __tablename__ = "network_subnet_pool_prefix"
    subnetpool_id: Mapped[str] = mapped_column(
        ForeignKey("network_subnet_pool.id", ondelete="CASCADE"), primary_key=True)
    cidr: Mapped[str] = mapped_column(String(64), primary_key=True)


# --------------------------------------------------------------------------- subnets
class Subnet(StandardAttrs, Base):
    __tablename__ = "network_subnet"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    network_id: Mapped[str] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    ip_version: Mapped[int] = mapped_column(Integer)
    cidr: Mapped[str] = mapped_column(String(64))
    gateway_ip: Mapped[str | None] = mapped_column(String(64), nullable=True)
    enable_dhcp: Mapped[bool] = mapped_column(Boolean, default=True)
    ipv6_ra_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    ipv6_address_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    subnetpool_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_subnet_pool.id"), nullable=True, index=True)
    segment_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_segment.id"), nullable=True, index=True)
    # [{"start": ip, "end": ip}, ...] in order; IPAM reads them from the subnet row.
    allocation_pools: Mapped[list[dict[str, str]]] = mapped_column(JSONType, default=list)
    dns_nameservers: Mapped[list[str]] = mapped_column(JSONType, default=list)
    host_routes: Mapped[list[dict[str, str]]] = mapped_column(JSONType, default=list)
    service_types: Mapped[list[str]] = mapped_column(JSONType, default=list)


# --------------------------------------------------------------------------- security groups
class SecurityGroup(StandardAttrs, Base):
    __tablename__ = "network_security_group"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    stateful: Mapped[bool] = mapped_column(Boolean, default=True)

    rules: Mapped[list[SecurityGroupRule]] = relationship(
        lazy="selectin", cascade="all, delete-orphan", passive_deletes=True,
        foreign_keys="SecurityGroupRule.security_group_id",
        order_by="SecurityGroupRule.created_at, SecurityGroupRule.id")


class DefaultSecurityGroup(Base):
    """One `default` group per project (the primary key is the rule)."""

    __tablename__ = "network_default_security_group"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    security_group_id: Mapped[str] = mapped_column(
        ForeignKey("network_security_group.id", ondelete="CASCADE"), unique=True)


class SecurityGroupRule(StandardAttrs, Base):
    __tablename__ = "network_security_group_rule"
    __table_args__ = (UniqueConstraint("security_group_id", "fingerprint"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    security_group_id: Mapped[str] = mapped_column(
        ForeignKey("network_security_group.id", ondelete="CASCADE"), index=True)
    remote_group_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_security_group.id", ondelete="CASCADE"), nullable=True, index=True)
    remote_address_group_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    direction: Mapped[str] = mapped_column(String(16))
    ethertype: Mapped[str] = mapped_column(String(8))
    protocol: Mapped[str | None] = mapped_column(String(40), nullable=True)
    port_range_min: Mapped[int | None] = mapped_column(Integer, nullable=True)
    port_range_max: Mapped[int | None] = mapped_column(Integer, nullable=True)
    remote_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Hash of the rule's matching fields: duplicates collide on the unique constraint.
    fingerprint: Mapped[str] = mapped_column(String(64))


# --------------------------------------------------------------------------- ports
class Port(StandardAttrs, Base):
    __tablename__ = "network_port"
    __table_args__ = (UniqueConstraint("network_id", "mac_address"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    network_id: Mapped[str] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    mac_address: Mapped[str] = mapped_column(String(32))
    admin_state_up: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[str] = mapped_column(String(16), default="DOWN")
    device_id: Mapped[str] = mapped_column(String(255), default="", index=True)
    device_owner: Mapped[str] = mapped_column(String(255), default="", index=True)
    port_security_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    ip_allocation: Mapped[str | None] = mapped_column(String(16), nullable=True)
    dns_name: Mapped[str] = mapped_column(String(255), default="")
    binding_host_id: Mapped[str] = mapped_column(String(255), default="", index=True)
    binding_vnic_type: Mapped[str] = mapped_column(String(64), default="normal")
    binding_vif_type: Mapped[str] = mapped_column(String(64), default="unbound")
    binding_profile: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    binding_vif_details: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)

    # Loaded on access only: lists render ports from column queries (ports.render).
    fixed_ips: Mapped[list[IPAllocation]] = relationship(
        lazy="select", cascade="all, delete-orphan", passive_deletes=True,
        order_by="IPAllocation.ordinal")
    security_group_bindings: Mapped[list[PortSecurityGroup]] = relationship(
        lazy="select", cascade="all, delete-orphan", passive_deletes=True)
    allowed_address_pairs: Mapped[list[AllowedAddressPair]] = relationship(
        lazy="select", cascade="all, delete-orphan", passive_deletes=True)


class IPAllocation(Base):
    """One fixed IP of a port. (subnet_id, ip_address) is the primary key: no address
    is ever given twice. `ip_key`/`next_key` are the address and its successor as
    sortable hex, so "first taken address whose successor is free" is an indexed query.
    """

    __tablename__ = "network_ip_allocation"
    __table_args__ = (Index("ix_network_ip_allocation_subnet_key", "subnet_id", "ip_key"),)
    subnet_id: Mapped[str] = mapped_column(
        ForeignKey("network_subnet.id", ondelete="CASCADE"), primary_key=True)
    ip_address: Mapped[str] = mapped_column(String(64), primary_key=True)
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), index=True)
    network_id: Mapped[str] = mapped_column(String(36), index=True)
    ip_key: Mapped[str] = mapped_column(String(32))
    next_key: Mapped[str] = mapped_column(String(32))
    ordinal: Mapped[int] = mapped_column(Integer, default=0)


class PortSecurityGroup(Base):
    __tablename__ = "network_port_security_group"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), primary_key=True)
    security_group_id: Mapped[str] = mapped_column(
        ForeignKey("network_security_group.id"), primary_key=True, index=True)


class AllowedAddressPair(Base):
    __tablename__ = "network_allowed_address_pair"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), primary_key=True)
    ip_address: Mapped[str] = mapped_column(String(64), primary_key=True)
    mac_address: Mapped[str] = mapped_column(String(32), primary_key=True)
