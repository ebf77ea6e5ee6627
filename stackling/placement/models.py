"""Placement tables: providers, inventories, allocations, consumers, traits, aggregates.

Standard resource classes and traits (os-resource-classes, os-traits) live in code, not
rows; only the `CUSTOM_*` ones are stored. Inventories, allocations and provider traits
hold the class/trait *name*, so queries need no id mapping.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Double, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, UTCDateTime, utcnow


class ResourceProvider(Base):
    __tablename__ = "placement_resource_provider"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    # Bumped on every change to the provider, its inventory, traits, aggregates or the
    # allocations written against it; writers check it (optimistic concurrency).
    generation: Mapped[int] = mapped_column(Integer, default=0)
    # The root of a provider's tree; a root points at itself.
    root_provider_id: Mapped[int | None] = mapped_column(Integer, index=True, nullable=True)
    parent_provider_id: Mapped[int | None] = mapped_column(
        ForeignKey("placement_resource_provider.id", name="fk_placement_rp_parent"), index=True,
        nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Inventory(Base):
    __tablename__ = "placement_inventory"
    __table_args__ = (
        UniqueConstraint("resource_provider_id", "resource_class",
                         name="uq_placement_inventory_rp_rc"),
        Index("ix_placement_inventory_rc_rp", "resource_class", "resource_provider_id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_provider_id: Mapped[int] = mapped_column(
        ForeignKey("placement_resource_provider.id", name="fk_placement_inventory_rp"))
    resource_class: Mapped[str] = mapped_column(String(255))
    total: Mapped[int] = mapped_column(Integer)
    reserved: Mapped[int] = mapped_column(Integer, default=0)
    min_unit: Mapped[int] = mapped_column(Integer, default=1)
    max_unit: Mapped[int] = mapped_column(Integer)
    step_size: Mapped[int] = mapped_column(Integer, default=1)
    allocation_ratio: Mapped[float] = mapped_column(Double, default=1.0)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Allocation(Base):
    __tablename__ = "placement_allocation"
    __table_args__ = (
        UniqueConstraint("consumer_id", "resource_provider_id", "resource_class",
                         name="uq_placement_allocation_consumer_rp_rc"),
        # Usage per (provider, class) is a grouped sum over this covering index.
        Index("ix_placement_allocation_rp_rc_used", "resource_provider_id", "resource_class",
              "used"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_provider_id: Mapped[int] = mapped_column(
        ForeignKey("placement_resource_provider.id", name="fk_placement_allocation_rp"))
    consumer_id: Mapped[str] = mapped_column(String(36))
    resource_class: Mapped[str] = mapped_column(String(255))
    used: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Consumer(Base):
    """The owner of allocations; exists only while it holds some (as upstream)."""

    __tablename__ = "placement_consumer"
    __table_args__ = (Index("ix_placement_consumer_project_user", "project_id", "user_id"),)
    uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[str] = mapped_column(String(255))
    generation: Mapped[int] = mapped_column(Integer, default=0)
    consumer_type: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class CustomResourceClass(Base):
    __tablename__ = "placement_resource_class"
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class CustomTrait(Base):
    __tablename__ = "placement_trait"
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class ProviderTrait(Base):
    __tablename__ = "placement_provider_trait"
    __table_args__ = (Index("ix_placement_provider_trait_trait", "trait", "resource_provider_id"),)
    resource_provider_id: Mapped[int] = mapped_column(
        ForeignKey("placement_resource_provider.id", name="fk_placement_provider_trait_rp"),
        primary_key=True)
    trait: Mapped[str] = mapped_column(String(255), primary_key=True)


class ProviderAggregate(Base):
    __tablename__ = "placement_provider_aggregate"
    __table_args__ = (Index("ix_placement_provider_aggregate_agg", "aggregate_uuid",
                            "resource_provider_id"),)
    resource_provider_id: Mapped[int] = mapped_column(
        ForeignKey("placement_resource_provider.id", name="fk_placement_provider_aggregate_rp"),
        primary_key=True)
    aggregate_uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
