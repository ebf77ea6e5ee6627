"""The image service's in-process interface, for compute (boot, rebuild, snapshots,
shelve, backups) and orchestration (image constraints). Everything else in
`stackling.image` is its own.

Functions take the caller's session and request context with Glance's visibility rules
(an image the context cannot see is `ImageNotFound`, a 404); nothing here commits.
Images are returned as read-only records (`id`, `name`, `status`, `min_ram`, `min_disk`,
`size`, `disk_format`, `container_format`, `properties`...).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.image import logic
from stackling.image.logic import ImageNotFound
from stackling.image.models import Image

__all__ = ["ImageNotFound", "get_image", "image_ids_named", "create_snapshot",
           "instance_images", "delete_image_records"]


def get_image(db: Session, ctx: RequestContext, image_id: str) -> Image:
    """`GET /v2/images/{id}`'s image (ImageNotFound for unknown, deleted or hidden)."""
    return logic.get_image(db, ctx, image_id)


def image_ids_named(db: Session, ctx: RequestContext, name: str, limit: int) -> list[str]:
    """The ids of at most `limit` images `GET /v2/images?name=<name>` would list."""
    return logic.image_ids_named(db, ctx, name, limit)


def create_snapshot(db: Session, ctx: RequestContext, body: dict[str, Any]) -> str:
    """A server snapshot's image (`POST /v2/images` body), active with no data as Nova's
    snapshot of a diskless server leaves it; returns its id."""
    image = logic.create_image(db, ctx, body)
    image.status, image.size = "active", 0
    db.flush()
    return image.id


def instance_images(db: Session, project_id: str, instance_uuid: str, *,
                    name: str | None = None) -> list[Image]:
    """The project's images made from server `instance_uuid` (its `instance_uuid`
    property: snapshots, shelve images, backups), optionally only those named `name`."""
    stmt = select(Image).where(Image.owner == project_id)
    if name is not None:
        stmt = stmt.where(Image.name == name)
    return [i for i in db.scalars(stmt)
            if (i.properties or {}).get("instance_uuid") == instance_uuid]


def delete_image_records(db: Session, images: list[Image]) -> None:
    """Drop images that have no data (snapshots and backups of diskless servers)."""
    for image in images:
        db.delete(image)
