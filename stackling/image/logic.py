"""Glance v2 image records: plain functions over a session and a request context.

Policy (who may write which image) is checked by the handlers before these run."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import bindparam, or_, select
from sqlalchemy.orm import Session

from stackling.common import storage
from stackling.common.context import RequestContext
from stackling.common.db import unique_or, utcnow
from stackling.common.errors import ApiError, BadRequest, Conflict, Forbidden, NotFound
from stackling.common.listing import ListParams, Page, paginate
from stackling.image import filtering, members, validation
from stackling.image.errors import StorageMediaFull
from stackling.image.models import Image

# Columns an API body may set; anything else is a free-form property.
BASE_ATTRS = ("name", "visibility", "disk_format", "container_format", "min_disk", "min_ram",
              "protected", "os_hidden", "tags")
READ_ONLY = ("status", "checksum", "os_hash_algo", "os_hash_value", "size", "virtual_size",
             "owner", "created_at", "updated_at", "self", "file", "schema", "direct_url",
             "locations")
DISK_FORMATS, CONTAINER_FORMATS = validation.DISK_FORMATS, validation.CONTAINER_FORMATS
VISIBILITIES = validation.VISIBILITIES


class ImageNotFound(NotFound):
    message = "No image found with ID %(image_id)s"


class TooManyTags(ApiError):
    status = 413
    message = ("Image tag limit exceeded for image %(image_id)s: "
               "Maximum number of tags exceeded. Maximum: 128")


def _visible(ctx: RequestContext) -> Any:
    """What a list shows by default: public, community, own, and shared ones accepted."""
    if ctx.is_admin:
        return True
    return or_(Image.visibility.in_(("public", "community")), Image.owner == ctx.project_id,
               members.is_member(ctx.project_id, ("accepted",)))


def get_image(db: Session, ctx: RequestContext, image_id: str) -> Image:
    image = db.get(Image, image_id)
    if image is None or image.status == "deleted" or (
            not ctx.is_admin and image.visibility not in ("public", "community")
            and image.owner != ctx.project_id and not (
                image.visibility == "shared"
                and members.member_of(db, image.id, ctx.project_id) is not None)):
        raise ImageNotFound(image_id=image_id)
    return image


_NAMED = select(Image.id).where(Image.name == bindparam("name"), Image.status != "deleted",
                                Image.visibility != "community").limit(bindparam("limit"))
_NAMED_VISIBLE = _NAMED.where(or_(Image.visibility.in_(("public", "community")),
                                  Image.owner == bindparam("project")))  # built once


def image_ids_named(db: Session, ctx: RequestContext, name: str, limit: int) -> list[str]:
    """The ids of at most `limit` of the images `list_images` answers for `?name=<name>`
    (a name look-up, e.g. Heat's, reads no page and loads no image)."""
    if ctx.is_admin:
        return list(db.scalars(_NAMED, {"name": name, "limit": limit}))
    return list(db.scalars(_NAMED_VISIBLE, {"name": name, "limit": limit,
                                            "project": ctx.project_id}))


def list_images(db: Session, ctx: RequestContext, filters: dict[str, str],
                params: ListParams) -> Page:
    stmt = select(Image).where(Image.status != "deleted")
    visibility = filters.pop("visibility", None)
    if visibility == "all":
        visibility = None
    member_status = filters.pop("member_status", "accepted")
    if member_status not in (*members.STATUSES, "all"):
        raise BadRequest(f"Invalid status value: {member_status}")
    if visibility is not None:
        if visibility not in VISIBILITIES:
            raise BadRequest(f"Invalid visibility value: {visibility}")
        stmt = stmt.where(Image.visibility == visibility)
    else:
        stmt = stmt.where(Image.visibility != "community")
    if visibility == "shared" and not ctx.is_admin:
        # Glance: the caller's own shared images and those shared with it, by its answer
        statuses = None if member_status == "all" else (member_status,)
        stmt = stmt.where(or_(Image.owner == ctx.project_id,
                              members.is_member(ctx.project_id, statuses)))
    elif not ctx.is_admin:
        stmt = stmt.where(_visible(ctx))
    stmt = filtering.apply_operators(stmt, filters)
    for key in ("id", "name", "status", "owner", "disk_format", "container_format"):
        if key in filters:
            value = filters.pop(key)
            column = getattr(Image, key)
            if value.startswith("in:"):  # Glance's `in:` operator: a comma-separated list
                stmt = stmt.where(column.in_([v.strip('"') for v in value[3:].split(",")]))
            else:
                stmt = stmt.where(column == value)
    tag = filters.pop("tag", None)
    if "protected" in filters:
        stmt = stmt.where(Image.protected == (filters.pop("protected").lower() == "true"))
    if params.marker:
        get_image(db, ctx, params.marker)  # an unknown marker is Glance's 400 below
    columns = {"created_at": Image.created_at, "name": Image.name, "updated_at": Image.updated_at,
               "size": Image.size, "status": Image.status}
    # the marker is visible (checked above): it positions the page whatever the filters
    page = paginate(db, stmt, columns=columns, id_column=Image.id, params=params,
                    marker_scope=select(Image))
    # Free-form property filters (e.g. ?os_distro=cirros) compare as strings.
    if tag is not None:
        page.rows = [i for i in page.rows if tag in (i.tags or [])]
    if filters:
        page.rows = [i for i in page.rows
                     if all(str((i.properties or {}).get(k)) == v for k, v in filters.items())]
    return page


def _check_formats(values: dict[str, Any]) -> None:
    validation.check_image(values)


def create_image(db: Session, ctx: RequestContext, body: dict[str, Any]) -> Image:
    body = dict(body)
    for key in READ_ONLY:
        if key in body:
            raise Forbidden(f"Attribute '{key}' is read-only.")
    _check_formats(body)
    image_id = body.pop("id", None) or str(uuid.uuid4())
    # A deleted image keeps its row (status "deleted"), so its id is never reused.
    if db.get(Image, image_id) is not None:
        raise Conflict(f"Image with identifier {image_id} already exists!")
    values = {k: body.pop(k) for k in BASE_ATTRS if k in body}
    image = Image(id=image_id, owner=ctx.project_id, status="queued", properties=body,
                  **{"visibility": "shared", "min_disk": 0, "min_ram": 0, "tags": [],
                     **values})
    # Two creates with the same id: the second is Glance's 409, not a unique violation.
    with unique_or(db, lambda: Conflict(f"Image with identifier {image_id} already exists!")):
        db.add(image)
        db.flush()
    return image


def patch_image(db: Session, ctx: RequestContext, image_id: str,
                changes: list[dict[str, Any]]) -> Image:
    """Apply a JSON patch (add/replace/remove of top-level attributes)."""
    image = get_image(db, ctx, image_id)
    props = dict(image.properties or {})
    for change in changes:
        if not isinstance(change, dict) or "op" not in change or "path" not in change:
            raise BadRequest("Unable to find `op` in JSON Schema change. It must be one of the "
                             "following: add, remove, replace.")
        op, path = change["op"], str(change["path"])
        key = path.lstrip("/")
        if op not in ("add", "replace", "remove") or not key or "/" in key:
            raise BadRequest(f"Invalid JSON pointer for this resource: '{path}'")
        if key in READ_ONLY or key == "id":
            raise Forbidden(f"Attribute '{key}' is read-only.")
        if op == "remove":
            if key in BASE_ATTRS:
                raise Forbidden(f"Attribute '{key}' is reserved.")
            if key not in props:
                raise Conflict(f"Property {key} does not exist.")
            props.pop(key)
            continue
        if "value" not in change:
            raise BadRequest("'value' is a required property")
        _check_formats({key: change["value"]})
        if key in BASE_ATTRS:
            setattr(image, key, change["value"])
        else:
            if op == "replace" and key not in props:
                raise Conflict(f"Property {key} does not exist.")
            props[key] = change["value"]
    image.properties = props
    image.updated_at = utcnow()
    db.flush()
    return image


# Glance's `image_tag_quota` default: more tags on one image is a 413.
TAG_QUOTA = 128


def add_tag(db: Session, ctx: RequestContext, image_id: str, tag: str) -> None:
    """`PUT /v2/images/{id}/tags/{tag}`: a tag the image has already changes nothing."""
    image = get_image(db, ctx, image_id)
    if len(tag) > 255:
        raise BadRequest(f"Could not update image: Provided object does not match schema "
                         f"'image': '{tag}' is too long")
    tags = list(image.tags or [])
    if tag in tags:
        return
    if len(tags) >= TAG_QUOTA:
        raise TooManyTags(image_id=image_id)
    image.tags, image.updated_at = tags + [tag], utcnow()
    db.flush()


def delete_tag(db: Session, ctx: RequestContext, image_id: str, tag: str) -> None:
    image = get_image(db, ctx, image_id)
    tags = list(image.tags or [])
    if tag not in tags:
        raise NotFound(f"Tag {tag} not found.")
    image.tags, image.updated_at = [t for t in tags if t != tag], utcnow()
    db.flush()


def deactivate(db: Session, ctx: RequestContext, image_id: str) -> None:
    """Glance: only an active image is deactivated (a deactivated one stays so)."""
    image = get_image(db, ctx, image_id)
    if image.status not in ("active", "deactivated"):
        raise Forbidden(f"Not allowed to deactivate image in status '{image.status}'")
    if image.status == "active":
        image.status, image.updated_at = "deactivated", utcnow()
        db.flush()


def reactivate(db: Session, ctx: RequestContext, image_id: str) -> None:
    image = get_image(db, ctx, image_id)
    if image.status not in ("active", "deactivated"):
        raise Forbidden(f"Not allowed to reactivate image in status '{image.status}'")
    if image.status == "deactivated":
        image.status, image.updated_at = "active", utcnow()
        db.flush()


def delete_image(db: Session, ctx: RequestContext, image_id: str, data_dir: Path) -> None:
    image = get_image(db, ctx, image_id)
    if image.protected:
        raise Forbidden(f"Image {image_id} is protected and cannot be deleted.")
    # Soft delete, as Glance: the row stays so that no one can create the id again.
    image.status = "deleted"
    image.updated_at = utcnow()
    db.flush()
    from stackling.image import stores

    stores.discard(data_dir, image_id)  # from every store


def upload_image(db: Session, ctx: RequestContext, image_id: str, data: Iterable[bytes],
                 data_dir: Path) -> None:
    """Store the image data, streamed chunk by chunk to a file (never held whole)."""
    image = get_image(db, ctx, image_id)
    if image.status != "queued":
        raise Conflict(f"Image status transition from {image.status} to saving is not allowed")
    if not image.disk_format or not image.container_format:
        raise BadRequest("Properties disk_format, container_format must be set prior to "
                         "saving data.")
    md5, sha512, size = hashlib.md5(usedforsecurity=False), hashlib.sha512(), 0
    try:
        with storage.new_file(data_dir / image_id) as fh:
            for chunk in data:
                fh.write(chunk)
                md5.update(chunk)
                sha512.update(chunk)
                size += len(chunk)
    except storage.StorageFull:
        raise StorageMediaFull() from None  # nothing written: the image stays queued
    image.size = size
    image.checksum = md5.hexdigest()
    image.os_hash_algo = "sha512"
    image.os_hash_value = sha512.hexdigest()
    image.status = "active"
    image.updated_at = utcnow()
    db.flush()


def open_image_data(db: Session, ctx: RequestContext, image_id: str,
                    data_dir: Path, stores_: Any = None) -> BinaryIO | None:
    """The image's data file, open for reading (the caller streams and closes it), or None
    when it has no data. An open file stays readable if the image is deleted meanwhile.
    `stores_` (multi-store): read from the first of the image's stores holding a file."""
    image = get_image(db, ctx, image_id)
    source = data_dir / image_id
    if stores_ is not None and stores_.multi:
        from stackling.image import stores

        source = stores.source(data_dir, stores_, image) or source
    try:
        return open(source, "rb")  # noqa: SIM115 - closed by the stream
    except FileNotFoundError:
        return None
