"""Image tables: one row per image, free-form properties as JSON; members of shared
images; import tasks; the metadata definitions catalog."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow


class Image(Base):
    __tablename__ = "image_image"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    status: Mapped[str] = mapped_column(String(30), default="queued")
    visibility: Mapped[str] = mapped_column(String(20), default="shared")
    owner: Mapped[str | None] = mapped_column(String(255), nullable=True)
    disk_format: Mapped[str | None] = mapped_column(String(20), nullable=True)
    container_format: Mapped[str | None] = mapped_column(String(20), nullable=True)
    min_disk: Mapped[int] = mapped_column(Integer, default=0)
    min_ram: Mapped[int] = mapped_column(Integer, default=0)
    size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    virtual_size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    checksum: Mapped[str | None] = mapped_column(String(32), nullable=True)
    os_hash_algo: Mapped[str | None] = mapped_column(String(64), nullable=True)
    os_hash_value: Mapped[str | None] = mapped_column(String(128), nullable=True)
    protected: Mapped[bool] = mapped_column(Boolean, default=False)
    os_hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    tags: Mapped[list[str]] = mapped_column(JSONType, default=list)
    properties: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Multi-store (stores.py): the stores holding the data, in the order written; None
    # without multi-store (or an image from before it was on). Last, where the migration
    # adds it, so a created schema equals a migrated one.
    stores: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)


class ImageMember(Base):
    """A project an image of visibility `shared` is shared with, and its answer."""
    __tablename__ = "image_member"
    __table_args__ = (UniqueConstraint("image_id", "member_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    image_id: Mapped[str] = mapped_column(ForeignKey("image_image.id", ondelete="CASCADE"))
    member_id: Mapped[str] = mapped_column(String(255), index=True)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Task(Base):
    """An import's record (`/v2/tasks`): Glance's `api_image_import` task."""
    __tablename__ = "image_task"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    type: Mapped[str] = mapped_column(String(30))
    status: Mapped[str] = mapped_column(String(30))
    owner: Mapped[str] = mapped_column(String(255), index=True)
    image_id: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    user_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    request_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    input: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    message: Mapped[str] = mapped_column(String(2048), default="")
    expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


# ------------------------------------------------------------------ metadata definitions
# Glance's metadefs catalog (`/v2/metadefs`): namespaces hold objects, properties and
# tags, unique by name in their namespace; resource types are global and associated
# with namespaces under a prefix.
class MetadefNamespace(Base):
    __tablename__ = "image_metadef_namespace"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(80), unique=True)
    display_name: Mapped[str | None] = mapped_column(String(80), nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    visibility: Mapped[str] = mapped_column(String(32), default="private")
    protected: Mapped[bool] = mapped_column(Boolean, default=False)
    owner: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetadefObject(Base):
    __tablename__ = "image_metadef_object"
    __table_args__ = (UniqueConstraint("namespace_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    namespace_id: Mapped[int] = mapped_column(
        ForeignKey("image_metadef_namespace.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(80))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    required: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)
    properties: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetadefProperty(Base):
    __tablename__ = "image_metadef_property"
    __table_args__ = (UniqueConstraint("namespace_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    namespace_id: Mapped[int] = mapped_column(
        ForeignKey("image_metadef_namespace.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(80))
    json_schema: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetadefTag(Base):
    __tablename__ = "image_metadef_tag"
    __table_args__ = (UniqueConstraint("namespace_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    namespace_id: Mapped[int] = mapped_column(
        ForeignKey("image_metadef_namespace.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetadefResourceType(Base):
    __tablename__ = "image_metadef_resource_type"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    protected: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetadefResourceTypeAssociation(Base):
    __tablename__ = "image_metadef_resource_type_association"
    namespace_id: Mapped[int] = mapped_column(
        ForeignKey("image_metadef_namespace.id", ondelete="CASCADE"), primary_key=True)
    resource_type_id: Mapped[int] = mapped_column(
        ForeignKey("image_metadef_resource_type.id", ondelete="CASCADE"), primary_key=True)
    prefix: Mapped[str | None] = mapped_column(String(80), nullable=True)
    properties_target: Mapped[str | None] = mapped_column(String(80), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
