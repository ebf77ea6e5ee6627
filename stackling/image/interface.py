"""The image service's in-process interface, for compute (boot, rebuild, snapshots,
shelve, backups) and orchestration (image constraints). Everything else in
`stackling.image` is its own.

Functions take the caller's session and request context with Glance's visibility rules
(an image the context cannot see is `ImageNotFound`, a 404); nothing here commits.
Images are returned as read-only records (`id`, `name`, `status`, `min_ram`, `min_disk`,
`size`, `disk_format`, `container_format`, `properties`...).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common import storage
from stackling.common.context import RequestContext
from stackling.image import logic
from stackling.image.logic import ImageNotFound
from stackling.image.models import Image

__all__ = ["ImageNotFound", "get_image", "image_ids_named", "create_snapshot",
           "instance_images", "delete_image_records", "list_images", "delete_image",
           "set_properties", "authorize", "finish_snapshots", "data_path", "create_image",
           "staging_file", "activate_data", "fail_upload", "pending_snapshots",
           "begin_snapshot_upload", "store_snapshot", "fail_snapshot"]


def get_image(db: Session, ctx: RequestContext, image_id: str) -> Image:
    """`GET /v2/images/{id}`'s image (ImageNotFound for unknown, deleted or hidden)."""
    return logic.get_image(db, ctx, image_id)


def image_ids_named(db: Session, ctx: RequestContext, name: str, limit: int) -> list[str]:
    """The ids of at most `limit` images `GET /v2/images?name=<name>` would list."""
    return logic.image_ids_named(db, ctx, name, limit)


def create_snapshot(db: Session, ctx: RequestContext, body: dict[str, Any], *,
                    saving: bool = False, pending: bool = False) -> str:
    """A server snapshot's image (`POST /v2/images` body), active; returns its id.

    A simulated server's disk is the image it booted from (the body's `base_image_ref`),
    so the snapshot is that image again: its real size and checksums, and its data when it
    has a data file (hard-linked, so a snapshot costs no disk; the demo cirros has only its
    metadata, and so have its snapshots). A server with no such image gives a snapshot of
    size 0, as before. `saving`: the image stays `saving` (its data still being uploaded)
    until `finish_snapshots`. `pending`: the server's disk is really captured (the
    dataplane's guests): the image stays `queued` with no data, as Glance shows a Nova
    snapshot before its upload, until `store_snapshot` (or `fail_snapshot`)."""
    image = logic.create_image(db, ctx, body)
    if pending:
        configured = _multi_store(db)
        if configured is not None:
            image.stores = [configured.default]
        db.flush()
        return image.id
    image.status, image.size = ("saving" if saving else "active"), 0
    base_id = body.get("base_image_ref")
    base = db.get(Image, base_id) if isinstance(base_id, str) and base_id else None
    if base is not None and base.size:
        data_dir = _data_dir(db)
        source = _base_data(db, data_dir, base) if data_dir is not None else None
        if source is not None:
            _link(source, data_dir / image.id)  # type: ignore[operator]
        image.size, image.checksum = base.size, base.checksum
        image.os_hash_algo, image.os_hash_value = base.os_hash_algo, base.os_hash_value
        image.virtual_size = base.virtual_size
    configured = _multi_store(db)
    if configured is not None:
        image.stores = [configured.default]
    db.flush()
    return image.id


def _settings(db: Session) -> Any:
    """The cloud's settings: a service's session carries its runtime, the dataplane's its
    settings alone (dataplane/service.py)."""
    runtime = db.info.get("stackling.runtime")
    return runtime.settings if runtime is not None else db.info.get("stackling.settings")


def _multi_store(db: Session) -> Any:
    """The configured stores when multi-store is on (image/stores.py), else None."""
    settings = _settings(db)
    from stackling.image import stores

    configured = stores.configured(settings) if settings is not None else None
    return configured if configured is not None and configured.multi else None


def _base_data(db: Session, data_dir: Path, base: Image) -> Path | None:
    """The base image's data file: the single store's, or (multi-store) the first of its
    stores holding one; the snapshot goes into the default store, and says so."""
    configured = _multi_store(db)
    if configured is None:
        path = data_dir / base.id
        return path if path.is_file() else None
    from stackling.image import stores

    return stores.source(data_dir, configured, base)


def _data_dir(db: Session) -> Path | None:
    settings = _settings(db)
    return Path(settings.data_dir) / "images" if settings is not None else None


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not allowed: a whole copy, or none
        storage.copy_file(source, target)


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
    """Drop snapshot and backup images, with any data they hold."""
    data_dir = _data_dir(db)
    from stackling.image import stores

    for image in images:
        if data_dir is not None:
            stores.discard(data_dir, image.id)  # from every store
        db.delete(image)


# Nova's image proxy (`/compute/v2.1/images`, below 2.36) reads and writes through these.
def list_images(db: Session, ctx: RequestContext, filters: dict[str, str], *,
                limit: int | None, marker: str | None) -> tuple[list[Image], bool]:
    """`GET /v2/images` with Glance's filters (name, status, property values...): a page
    and whether more follow."""
    from stackling.common.listing import ListParams

    params = ListParams(sorts=[("created_at", False)], limit=limit, marker=marker)
    page = logic.list_images(db, ctx, dict(filters), params)
    return page.rows, page.has_more


def _own(db: Session, ctx: RequestContext, image_id: str) -> Image:
    image = logic.get_image(db, ctx, image_id)
    if not ctx.is_admin and image.owner != ctx.project_id:
        from stackling.common.errors import Forbidden

        raise Forbidden(f"You are not authorized to modify image {image_id}.")
    return image


def delete_image(db: Session, ctx: RequestContext, image_id: str) -> None:
    """`DELETE /v2/images/{id}` (Glance's owner rule; a protected image is a 403)."""
    _own(db, ctx, image_id)
    data_dir = _data_dir(db)
    logic.delete_image(db, ctx, image_id, data_dir if data_dir is not None else Path("/nonexistent"))


def set_properties(db: Session, ctx: RequestContext, image_id: str,
                   properties: dict[str, Any]) -> Image:
    """Replace the image's free-form properties (its base attributes stay)."""
    from sqlalchemy.orm.attributes import flag_modified

    from stackling.common.db import utcnow

    image = _own(db, ctx, image_id)
    image.properties = dict(properties)
    flag_modified(image, "properties")
    image.updated_at = utcnow()
    db.flush()
    return image


def authorize(rq: Any, action: str, image: Image) -> None:
    """Glance's policy check of `action` (`modify_image`, `delete_image`...) on `image`
    for a request another service serves on the caller's behalf (Nova's image proxy)."""
    from stackling.common.errors import Forbidden
    from stackling.image import policy

    rq.authorize(action, policy.target(image), exc=Forbidden(
        f"You are not authorized to complete {action} action."))


def finish_snapshots(db: Session, instance_uuid: str, *, keep: bool = True) -> None:
    """The snapshots of server `instance_uuid` still `saving` become `active` (their upload
    is over); with `keep=False` (the server went away meanwhile) they are deleted, as Nova
    deletes the image of a snapshot whose instance disappeared."""
    from stackling.common.db import utcnow

    for image in db.scalars(select(Image).where(Image.status == "saving")).all():
        if (image.properties or {}).get("instance_uuid") != instance_uuid:
            continue
        image.status = "active" if keep else "deleted"
        image.updated_at = utcnow()
    db.flush()


def data_path(db: Session, image: Image) -> Path | None:
    """The file holding the image's data (the single store's, or with multi-store the
    first store holding it), or None for an image with metadata only (the demo cirros).
    Block storage streams it into a volume (a volume created from an image)."""
    data_dir = _data_dir(db)
    return _base_data(db, data_dir, image) if data_dir is not None else None


def create_image(db: Session, ctx: RequestContext, body: dict[str, Any]) -> str:
    """`POST /v2/images` (Glance's rules, the context's project owns it): a queued
    image's id. Block storage makes one for os-volume_upload_image."""
    image = logic.create_image(db, ctx, body)
    configured = _multi_store(db)
    if configured is not None:
        image.stores = [configured.default]
    return image.id


def staging_file(db: Session, image_id: str) -> Path:
    """Where a service writes data for a queued image before `activate_data` (in the
    image data dir, so the rename into place is atomic)."""
    data_dir = _data_dir(db)
    if data_dir is None:
        raise RuntimeError("the session carries no runtime")
    data_dir.mkdir(parents=True, exist_ok=True)
    return data_dir / f".{image_id}.upload"


def activate_data(db: Session, image_id: str, written: Path, *, size: int, md5: str,
                  sha512: str) -> bool:
    """The queued image's data is `written` (from `staging_file`): moved into the default
    store, the image `active` with its size and checksums. False (and the file removed)
    when the image is no longer queued (deleted meanwhile)."""
    from stackling.common.db import utcnow

    image = db.get(Image, image_id)
    data_dir = _data_dir(db)
    if image is None or image.status != "queued" or data_dir is None:
        written.unlink(missing_ok=True)
        return False
    os.replace(written, data_dir / image_id)
    image.size, image.checksum = size, md5
    image.os_hash_algo, image.os_hash_value = "sha512", sha512
    image.status, image.updated_at = "active", utcnow()
    db.flush()
    return True


def fail_upload(db: Session, image_id: str) -> None:
    """A queued image whose data never came (a failed upload from a volume) is deleted."""
    image = db.get(Image, image_id)
    if image is not None and image.status == "queued":
        image.status = "deleted"
        db.flush()


# A server snapshot the dataplane captures (compute's createImage of a guest with an image
# tree): `queued` at the request, `saving` while the lease holder writes it, then `active`
# with its data, or deleted (as Nova deletes the image of a failed snapshot).
_SNAPSHOT_PENDING = ("queued", "saving")


def pending_snapshots(db: Session) -> list[dict[str, Any]]:
    """Every snapshot image (`image_type` snapshot, with an `instance_uuid`) whose data has
    not come: {id, instance_uuid, status, disk_format, container_format}."""
    out = []
    for image in db.scalars(select(Image).where(Image.status.in_(_SNAPSHOT_PENDING))
                            .order_by(Image.created_at, Image.id)):
        props = image.properties or {}
        if props.get("image_type") == "snapshot" and props.get("instance_uuid"):
            out.append({"id": image.id, "instance_uuid": props["instance_uuid"],
                        "status": image.status, "disk_format": image.disk_format,
                        "container_format": image.container_format})
    return out


def begin_snapshot_upload(db: Session, image_id: str) -> Path | None:
    """The snapshot's upload begins (`queued` -> `saving`; one still `saving` is an upload a
    dead process began, begun again): where its data is written (`staging_file`), or None
    when the image is no longer waiting for data (deleted meanwhile)."""
    from stackling.common.db import utcnow

    image = db.get(Image, image_id)
    if image is None or image.status not in _SNAPSHOT_PENDING:
        return None
    image.status, image.updated_at = "saving", utcnow()
    db.flush()
    return staging_file(db, image_id)


def store_snapshot(db: Session, image_id: str, written: Path, *, size: int, md5: str,
                   sha512: str, virtual_size: int) -> bool:
    """The snapshot's data is `written` (from `begin_snapshot_upload`): moved into the
    default store, the image `active` with its size, checksums and virtual size. False (and
    the file removed) when the image is no longer `saving` (deleted meanwhile)."""
    from stackling.common.db import utcnow

    image = db.get(Image, image_id)
    data_dir = _data_dir(db)
    if image is None or image.status not in _SNAPSHOT_PENDING or data_dir is None:
        written.unlink(missing_ok=True)
        return False
    configured = _multi_store(db)
    if configured is not None:
        from stackling.image import stores

        stores.place(data_dir, configured, image, written, [configured.default])
    else:
        os.replace(written, data_dir / image_id)
    image.size, image.checksum, image.virtual_size = size, md5, virtual_size
    image.os_hash_algo, image.os_hash_value = "sha512", sha512
    image.status, image.updated_at = "active", utcnow()
    db.flush()
    return True


def fail_snapshot(db: Session, image_id: str) -> bool:
    """A snapshot whose data could not be written is deleted, as Nova deletes it (its
    partial data too); False when it was no longer waiting for data."""
    from stackling.common.db import utcnow

    image = db.get(Image, image_id)
    if image is None or image.status not in _SNAPSHOT_PENDING:
        return False
    image.status, image.updated_at = "deleted", utcnow()
    data_dir = _data_dir(db)
    if data_dir is not None:
        from stackling.image import stores

        stores.discard(data_dir, image_id)
        (data_dir / f".{image_id}.upload").unlink(missing_ok=True)
    db.flush()
    return True
