"""Glance's interoperable image import, glance-direct method: stage the data, then import.

`PUT /v2/images/{id}/stage` streams the body to a staging file (never held whole) and
moves the image from `queued` to `uploading`. `POST /v2/images/{id}/import` checks the
staged data exists, passes the image through `importing`, hashes the staged file in
chunks, moves it into the store (an atomic rename) and makes the image `active`, all in
the request's transaction: a failure leaves the image `uploading` with its staged data.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.errors import BadRequest, Conflict
from stackling.image import tasks, web_download
from stackling.image.logic import get_image
from stackling.image.models import Image

# web-download from loopback only (web_download.py); copy-image copies between stores and
# there is one store, so it is not offered (Glance enables it only with several stores)
METHODS = ("glance-direct", "web-download")
STORE = {"id": "file", "description": "Local filesystem store", "default": True}
_CHUNK = 1 << 20


def import_info() -> dict[str, Any]:
    return {"import-methods": {"description": "Import methods available.", "type": "array",
                               "value": list(METHODS)}}


def stores_info() -> dict[str, Any]:
    return {"stores": [dict(STORE)]}


def staging_path(data_dir: Path, image_id: str) -> Path:
    return data_dir / "staging" / image_id


def _transition(db: Session, image: Image, old: str, new: str) -> None:
    """Compare-and-set on the status: of two concurrent requests one wins, one is a 409."""
    done = db.execute(update(Image).where(Image.id == image.id, Image.status == old)
                      .values(status=new, updated_at=utcnow())
                      .execution_options(synchronize_session=False)).rowcount
    db.refresh(image)
    if done != 1:
        raise Conflict(f"Image status transition from {image.status} to {new} is not allowed")


def stage(db: Session, ctx: RequestContext, image_id: str, data: Iterable[bytes],
          data_dir: Path) -> None:
    image = get_image(db, ctx, image_id)
    if image.status != "queued":
        raise Conflict(f"Image status transition from {image.status} to uploading is not "
                       "allowed")
    target = staging_path(data_dir, image_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{image_id}.{uuid.uuid4().hex}.tmp")
    try:
        # The data first, to a private file: no row lock is held while it streams in.
        with open(tmp, "wb") as fh:
            for chunk in data:
                fh.write(chunk)
        _transition(db, image, "queued", "uploading")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def parse_import_body(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("method"), dict):
        raise BadRequest("Invalid request body: 'method' is a required property")
    name = body["method"].get("name")
    if not isinstance(name, str):
        raise BadRequest("Invalid request body: 'name' is a required property")
    if name not in ("glance-direct", "web-download", "copy-image", "glance-download"):
        raise BadRequest(f"Unknown import method name '{name}'.")
    if name not in METHODS:
        raise BadRequest(f"Import method {name} is not enabled.")
    stores = body.get("stores")
    if stores is not None and (not isinstance(stores, list)
                               or any(s != STORE["id"] for s in stores)):
        raise BadRequest(f"Unknown store(s): {stores}.")
    return name


def import_image(db: Session, ctx: RequestContext, image_id: str, method: str,
                 data_dir: Path) -> None:
    image = get_image(db, ctx, image_id)
    staged = staging_path(data_dir, image_id)
    if image.status != "uploading" or not staged.exists():
        raise Conflict("Image needs to be staged before 'glance-direct' method can be used")
    if not image.disk_format or not image.container_format:
        raise BadRequest("Properties disk_format, container_format must be set prior to "
                         "importing data.")
    _transition(db, image, "uploading", "importing")  # one import per staged image
    _activate(db, ctx, image, staged, data_dir, {"method": {"name": method}})


def _activate(db: Session, ctx: RequestContext, image: Image, staged: Path, data_dir: Path,
              request: dict[str, Any]) -> None:
    md5, sha512, size = hashlib.md5(usedforsecurity=False), hashlib.sha512(), 0
    with open(staged, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            md5.update(chunk)
            sha512.update(chunk)
            size += len(chunk)
    image.size = size
    image.checksum = md5.hexdigest()
    image.os_hash_algo = "sha512"
    image.os_hash_value = sha512.hexdigest()
    image.status = "active"
    image.updated_at = utcnow()
    db.flush()
    tasks.record_import(db, ctx, image.id, request)
    # Last, once the row is written: a failure above leaves the staged data in place.
    staged.replace(data_dir / image.id)


def import_web_download(db: Session, ctx: RequestContext, image_id: str, body: dict[str, Any],
                        data_dir: Path, settings: Any, size_cap: int) -> None:
    """Fetch the data from the URI (loopback only) and import it; a failed fetch leaves a
    failure task and the image queued, as Glance's background import would."""
    image = get_image(db, ctx, image_id)
    if image.status != "queued":
        raise Conflict(f"Image status transition from {image.status} to importing is not "
                       "allowed")
    if not image.disk_format or not image.container_format:
        raise BadRequest("Properties disk_format, container_format must be set prior to "
                         "importing data.")
    uri = body["method"].get("uri")
    target = web_download.check_uri(uri, settings)
    request = {"method": {"name": "web-download", "uri": uri}}
    staged = staging_path(data_dir, image_id)
    try:
        web_download.fetch(target, staged, size_cap)
    except web_download.FetchFailed as exc:
        tasks.record_import(db, ctx, image.id, request, status="failure", message=str(exc))
        return
    _transition(db, image, "queued", "importing")  # of two concurrent imports, one runs
    _activate(db, ctx, image, staged, data_dir, request)


def create_headers() -> dict[str, str]:
    """Glance's headers on `POST /v2/images`: clients read the import methods there."""
    return {"OpenStack-image-import-methods": ",".join(METHODS),
            "OpenStack-image-store-ids": STORE["id"]}


def discard_staged(data_dir: Path, image_id: str) -> None:
    """An image deleted between stage and import leaves no staged data behind."""
    staging_path(data_dir, image_id).unlink(missing_ok=True)
