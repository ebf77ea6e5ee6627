"""Block-storage tables (Cinder's volumes, types, QoS specs, snapshots, backups,
attachments, transfers, quotas and default types), under the prefix `volume_`.

Work that outlives a request (a copy from an image, a backup, a restore) is a `task` on
its row: claimed by a process with a lease (`claimed_until`), so another process takes
it over when the claimant dies (work.py)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow


class VolumeType(Base):
    __tablename__ = "volume_type"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    extra_specs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    qos_specs_id: Mapped[str | None] = mapped_column(
        ForeignKey("volume_qos_specs.id"), nullable=True, index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class VolumeTypeAccess(Base):
    """A project a private volume type is shared with."""
    __tablename__ = "volume_type_access"
    __table_args__ = (UniqueConstraint("volume_type_id", "project_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    volume_type_id: Mapped[str] = mapped_column(
        ForeignKey("volume_type.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[str] = mapped_column(String(255))


class QosSpecs(Base):
    __tablename__ = "volume_qos_specs"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    consumer: Mapped[str] = mapped_column(String(20), default="back-end")
    specs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class DefaultType(Base):
    """A project's default volume type (the default-types API, 3.62)."""
    __tablename__ = "volume_default_type"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    volume_type_id: Mapped[str] = mapped_column(ForeignKey("volume_type.id", ondelete="CASCADE"))


class Volume(Base):
    __tablename__ = "volume_volume"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    size: Mapped[int] = mapped_column(Integer)  # GiB
    status: Mapped[str] = mapped_column(String(32), index=True)
    previous_status: Mapped[str | None] = mapped_column(String(32), nullable=True)
    migration_status: Mapped[str | None] = mapped_column(String(32), nullable=True)
    availability_zone: Mapped[str] = mapped_column(String(255), default="nova")
    volume_type_id: Mapped[str] = mapped_column(ForeignKey("volume_type.id"), index=True)
    snapshot_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    source_volid: Mapped[str | None] = mapped_column(String(36), nullable=True)
    backup_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    image_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    bootable: Mapped[bool] = mapped_column(Boolean, default=False)
    multiattach: Mapped[bool] = mapped_column(Boolean, default=False)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    image_metadata: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    admin_metadata: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    host: Mapped[str] = mapped_column(String(255), default="")
    # Work still to do on the file backend (create, copy, extend, delete...) and its lease.
    task: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    task_args: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    claimed_by: Mapped[str | None] = mapped_column(String(36), nullable=True)
    claimed_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    fault: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    launched_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Attachment(Base):
    """One attachment of a volume (the attachments API's record; the legacy actions
    make them too). `attach_status`: reserved, attaching, attached, detaching."""
    __tablename__ = "volume_attachment"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(
        ForeignKey("volume_volume.id", ondelete="CASCADE"), index=True)
    instance_uuid: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    attached_host: Mapped[str | None] = mapped_column(String(255), nullable=True)
    mountpoint: Mapped[str | None] = mapped_column(String(255), nullable=True)
    attach_status: Mapped[str] = mapped_column(String(32))
    attach_mode: Mapped[str] = mapped_column(String(4), default="rw")
    connector: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    connection_info: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    attach_time: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    detach_time: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Snapshot(Base):
    __tablename__ = "volume_snapshot"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(ForeignKey("volume_volume.id"), index=True)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[str] = mapped_column(String(32))
    size: Mapped[int] = mapped_column(Integer)
    progress: Mapped[str] = mapped_column(String(8), default="0%")
    volume_type_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    task: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    claimed_by: Mapped[str | None] = mapped_column(String(36), nullable=True)
    claimed_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Backup(Base):
    __tablename__ = "volume_backup"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(String(36), index=True)
    snapshot_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    parent_id: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[str] = mapped_column(String(32))
    size: Mapped[int] = mapped_column(Integer)
    object_count: Mapped[int] = mapped_column(Integer, default=0)
    container: Mapped[str | None] = mapped_column(String(255), nullable=True)
    availability_zone: Mapped[str | None] = mapped_column(String(255), nullable=True)
    is_incremental: Mapped[bool] = mapped_column(Boolean, default=False)
    fail_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    task: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    task_args: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    claimed_by: Mapped[str | None] = mapped_column(String(36), nullable=True)
    claimed_until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    data_timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Transfer(Base):
    __tablename__ = "volume_transfer"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    volume_id: Mapped[str] = mapped_column(String(36), index=True)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    salt: Mapped[str] = mapped_column(String(255))
    crypt_hash: Mapped[str] = mapped_column(String(255))
    source_project_id: Mapped[str] = mapped_column(String(255), index=True)
    destination_project_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    accepted: Mapped[bool] = mapped_column(Boolean, default=False)
    no_snapshots: Mapped[bool] = mapped_column(Boolean, default=False)
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Quota(Base):
    """A project's hard limit for one resource (volumes, gigabytes, volumes_<type>...)."""
    __tablename__ = "volume_quota"
    __table_args__ = (UniqueConstraint("project_id", "resource"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(String(255))
    resource: Mapped[str] = mapped_column(String(300))
    hard_limit: Mapped[int] = mapped_column(BigInteger)


class QuotaClass(Base):
    __tablename__ = "volume_quota_class"
    __table_args__ = (UniqueConstraint("class_name", "resource"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    class_name: Mapped[str] = mapped_column(String(255))
    resource: Mapped[str] = mapped_column(String(300))
    hard_limit: Mapped[int] = mapped_column(BigInteger)


class QuotaLock(Base):
    """One row per project, locked while its quota is checked (common/quota_lock.py)."""
    __tablename__ = "volume_quota_lock"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)


class GroupType(Base):
    """A generic volume group's type (3.11), with its group specs."""
    __tablename__ = "volume_group_type"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    group_specs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Group(Base):
    """A generic volume group (3.13): volumes of its volume types, snapshotted together."""
    __tablename__ = "volume_group"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[str] = mapped_column(String(32))
    availability_zone: Mapped[str] = mapped_column(String(255), default="nova")
    group_type_id: Mapped[str] = mapped_column(ForeignKey("volume_group_type.id"), index=True)
    volume_type_ids: Mapped[list[str]] = mapped_column(JSONType, default=list)
    group_snapshot_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    source_group_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class GroupSnapshot(Base):
    """A snapshot of every volume of a group (3.14); its status follows its snapshots'."""
    __tablename__ = "volume_group_snapshot"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(36), index=True)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[str] = mapped_column(String(32))
    group_type_id: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class GroupMember(Base):
    """A volume's group (one at most), and a snapshot's group snapshot."""
    __tablename__ = "volume_group_member"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # the volume or snapshot
    group_id: Mapped[str] = mapped_column(String(36), index=True)  # a group or group snapshot
