"""Compute tables: flavors, keypairs, services and compute nodes, aggregates, instances.

An instance row is also its own build request: `build_state` is `pending` from the
API's insert until a build worker finishes (`done`) in one transaction, so a process
dying mid-build leaves the row pending and nothing half-allocated (see build.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow_precise


class Flavor(Base):
    __tablename__ = "compute_flavor"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    flavorid: Mapped[str] = mapped_column(String(255), unique=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    memory_mb: Mapped[int] = mapped_column(Integer)
    vcpus: Mapped[int] = mapped_column(Integer)
    root_gb: Mapped[int] = mapped_column(Integer, default=0)
    ephemeral_gb: Mapped[int] = mapped_column(Integer, default=0)
    swap: Mapped[int] = mapped_column(Integer, default=0)
    rxtx_factor: Mapped[float] = mapped_column(Float, default=1.0)
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    extra_specs: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)


class KeyPair(Base):
    __tablename__ = "compute_keypair"
    __table_args__ = (UniqueConstraint("user_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(16), default="ssh")
    public_key: Mapped[str] = mapped_column(Text)
    fingerprint: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)


class ComputeService(Base):
    """A `nova-compute` service row (one per configured host)."""

    __tablename__ = "compute_service"
    __table_args__ = (UniqueConstraint("host", "binary"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    host: Mapped[str] = mapped_column(String(255))
    binary: Mapped[str] = mapped_column(String(255), default="nova-compute")
    topic: Mapped[str] = mapped_column(String(255), default="compute")
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(String(255), nullable=True)
    forced_down: Mapped[bool] = mapped_column(Boolean, default=False)
    version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class ComputeNode(Base):
    """A hypervisor; its `uuid` is its placement resource provider's uuid."""

    __tablename__ = "compute_node"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    service_id: Mapped[int] = mapped_column(ForeignKey("compute_service.id", ondelete="CASCADE"))
    host: Mapped[str] = mapped_column(String(255), unique=True)
    hypervisor_hostname: Mapped[str] = mapped_column(String(255))
    vcpus: Mapped[int] = mapped_column(Integer)
    memory_mb: Mapped[int] = mapped_column(Integer)
    local_gb: Mapped[int] = mapped_column(Integer)
    host_ip: Mapped[str] = mapped_column(String(64), default="")
    availability_zone: Mapped[str] = mapped_column(String(255), default="nova")
    physical_networks: Mapped[list[str]] = mapped_column(JSONType, default=list)


class Aggregate(Base):
    __tablename__ = "compute_aggregate"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class AggregateHost(Base):
    __tablename__ = "compute_aggregate_host"
    aggregate_id: Mapped[int] = mapped_column(
        ForeignKey("compute_aggregate.id", ondelete="CASCADE"), primary_key=True)
    host: Mapped[str] = mapped_column(String(255), primary_key=True)


class AggregateMetadata(Base):
    __tablename__ = "compute_aggregate_metadata"
    aggregate_id: Mapped[int] = mapped_column(
        ForeignKey("compute_aggregate.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[str] = mapped_column(String(255))


class Instance(Base):
    __tablename__ = "compute_instance"
    __table_args__ = (
        Index("ix_compute_instance_project_created", "project_id", "created_at"),
        Index("ix_compute_instance_build_state", "build_state"),
        Index("ix_compute_instance_host", "host"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    display_name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    project_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64))
    roles: Mapped[list[str]] = mapped_column(JSONType, default=list)  # the booting user's
    # The flavor as it was at boot (upstream embeds a copy in the instance too).
    flavor: Mapped[dict[str, Any]] = mapped_column(JSONType)
    image_ref: Mapped[str] = mapped_column(String(255), default="")
    key_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    key_data: Mapped[str | None] = mapped_column(Text, nullable=True)
    vm_state: Mapped[str] = mapped_column(String(32), default="building")
    task_state: Mapped[str | None] = mapped_column(String(32), nullable=True)
    power_state: Mapped[int] = mapped_column(Integer, default=0)
    host: Mapped[str | None] = mapped_column(String(255), nullable=True)
    node: Mapped[str | None] = mapped_column(String(255), nullable=True)
    availability_zone: Mapped[str | None] = mapped_column(String(255), nullable=True)
    requested_az: Mapped[str | None] = mapped_column(String(255), nullable=True)
    metadata_: Mapped[dict[str, str]] = mapped_column("metadata", JSONType, default=dict)
    access_ip_v4: Mapped[str | None] = mapped_column(String(64), nullable=True)
    access_ip_v6: Mapped[str | None] = mapped_column(String(64), nullable=True)
    config_drive: Mapped[str] = mapped_column(String(16), default="")
    disk_config: Mapped[str] = mapped_column(String(16), default="MANUAL")
    locked: Mapped[bool] = mapped_column(Boolean, default=False)
    tags: Mapped[list[str]] = mapped_column(JSONType, default=list)
    user_data: Mapped[str | None] = mapped_column(Text, nullable=True)
    reservation_id: Mapped[str] = mapped_column(String(255))
    launch_index: Mapped[int] = mapped_column(Integer, default=0)
    hostname: Mapped[str] = mapped_column(String(255), default="")
    security_groups: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # What the API accepted: "auto", "none", or a list of {network_id, port_id,
    # address, tag}; the build worker allocates from it.
    requested_networks: Mapped[Any] = mapped_column(JSONType, nullable=True)
    # The network info cache: [{port_id, network_id, label, mac, created, ips: [..]}].
    network_info: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    fault: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    build_state: Mapped[str] = mapped_column(String(16), default="pending")
    build_attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    launched_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # 2.63: the trusted image certificate ids (None: none asked for)
    trusted_certs: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)
    locked_reason: Mapped[str | None] = mapped_column(Text, nullable=True)  # 2.73
    # 2.98: the image's properties Nova keeps (image_properties.py), as at boot or rebuild
    image_properties: Mapped[dict[str, str] | None] = mapped_column(JSONType, nullable=True)
    # 2.100: the scheduler hints given at boot, each value a list of strings (as Nova's
    # request spec keeps them)
    scheduler_hints: Mapped[dict[str, list[str]] | None] = mapped_column(JSONType,
                                                                        nullable=True)


class InstanceAction(Base):
    """One user action on a server (os-instance-actions); kept after the server is gone,
    as Nova keeps them for deleted servers (readable from 2.21). Its few events live in
    a JSON list: [{event, start_time, finish_time, result, traceback, host}]."""

    __tablename__ = "compute_instance_action"
    __table_args__ = (Index("ix_compute_instance_action_instance", "instance_uuid", "id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    instance_uuid: Mapped[str] = mapped_column(String(36))
    action: Mapped[str] = mapped_column(String(255))
    request_id: Mapped[str] = mapped_column(String(255))
    project_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    message: Mapped[str | None] = mapped_column(String(255), nullable=True)
    start_time: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)


class BlockDeviceMapping(Base):
    """Nova's block_device_mapping: one disk of a server. Volumes (`destination_type`
    volume) carry the Cinder attachment they hold; the image disk of an image-backed
    server is a `local` row with boot_index 0. A server's device names and its volumes
    are unique (two attaches racing on one server cannot both take /dev/vdb)."""

    __tablename__ = "compute_block_device_mapping"
    __table_args__ = (
        UniqueConstraint("instance_uuid", "device_name"),
        UniqueConstraint("instance_uuid", "volume_id"),
        Index("ix_compute_block_device_mapping_volume", "volume_id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    instance_uuid: Mapped[str] = mapped_column(String(36))
    source_type: Mapped[str] = mapped_column(String(16))  # image | volume | snapshot | blank
    destination_type: Mapped[str] = mapped_column(String(16))  # local | volume
    boot_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    device_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    volume_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    snapshot_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    image_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    volume_size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    volume_type: Mapped[str | None] = mapped_column(String(255), nullable=True)
    delete_on_termination: Mapped[bool] = mapped_column(Boolean, default=False)
    disk_bus: Mapped[str | None] = mapped_column(String(255), nullable=True)
    device_type: Mapped[str | None] = mapped_column(String(255), nullable=True)
    guest_format: Mapped[str | None] = mapped_column(String(255), nullable=True)
    tag: Mapped[str | None] = mapped_column(String(255), nullable=True)
    attachment_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow_precise)
