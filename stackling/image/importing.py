"""Glance's interoperable image import, glance-direct method: stage the data, then import.

`PUT /v2/images/{id}/stage` streams the body to a staging file (never held whole) and
moves the image from `queued` to `uploading`. `POST /v2/images/{id}/import` checks the
staged data exists, passes the image through `importing`, hashes the staged file in
chunks, moves it into the store (an atomic rename) and makes the image `active`, all in
the request's transaction: a failure leaves the image `uploading` with its staged data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from stackling.common import storage
from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.errors import ApiError, BadRequest, Conflict
from stackling.image import stores, tasks, web_download
from stackling.image.errors import StorageMediaFull
from stackling.image.logic import get_image
from stackling.image.models import Image
from stackling.image.stores import SINGLE, Stores, UnknownStore

# web-download through Glance's URI filter (web_download.py); copy-image copies between stores, so
# it is offered with multi-store only (settings `image.stores`, stores.py)
METHODS = ("glance-direct", "web-download")
_CHUNK = 1 << 20
IMPORTING, FAILED = "os_glance_importing_to_stores", "os_glance_failed_import"


def methods(configured: Stores) -> tuple[str, ...]:
    return (*METHODS, "copy-image") if configured.multi else METHODS


def import_info(configured: Stores) -> dict[str, Any]:
    return {"import-methods": {"description": "Import methods available.", "type": "array",
                               "value": list(methods(configured))}}


def stores_info(configured: Stores) -> dict[str, Any]:
    return {"stores": configured.info()}


@dataclass
class ImportRequest:
    """An import body as Glance reads it: the method and the stores the data goes to."""

    method: str
    stores: list[str]  # the target stores (not yet checked: an unknown one is a 409)
    all_stores: bool = False
    all_stores_must_succeed: bool = True


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
    try:
        # The data first, to a private file: no row lock is held while it streams in; it
        # becomes the staged data once the image is `uploading`.
        with storage.new_file(staging_path(data_dir, image_id)) as fh:
            for chunk in data:
                fh.write(chunk)
            _transition(db, image, "queued", "uploading")
    except storage.StorageFull:
        raise StorageMediaFull() from None  # nothing staged: the image stays queued


def parse_import_body(body: Any, configured: Stores,
                      header_store: str | None = None) -> ImportRequest:
    if not isinstance(body, dict) or not isinstance(body.get("method"), dict):
        raise BadRequest("Invalid request body: 'method' is a required property")
    name = body["method"].get("name")
    if not isinstance(name, str):
        raise BadRequest("Invalid request body: 'name' is a required property")
    if name not in ("glance-direct", "web-download", "copy-image", "glance-download"):
        raise BadRequest(f"Unknown import method name '{name}'.")
    if name not in methods(configured):
        raise BadRequest(f"Import method {name} is not enabled.")
    all_stores, must = body.get("all_stores", False), body.get("all_stores_must_succeed", True)
    for key, value in (("all_stores", all_stores), ("all_stores_must_succeed", must)):
        if not isinstance(value, bool):
            raise BadRequest(f"Invalid request body: {value!r} is not of type 'boolean' "
                             f"({key})")
    stores = body.get("stores")
    if stores is not None and (not isinstance(stores, list) or not stores
                               or not all(isinstance(x, str) for x in stores)):
        raise BadRequest(f"Invalid request body: {stores!r} is not a list of store ids "
                         "(stores)")
    if not configured.multi:
        if stores is not None and any(x != SINGLE for x in stores):
            raise BadRequest(f"Unknown store(s): {stores}.")
        if not must:
            raise BadRequest(f"All_stores_must_succeed can only be set with enabled_backends "
                             f"{body['method'].get('uri')}")
        return ImportRequest(name, [SINGLE])
    if all_stores:
        if stores is not None or header_store:
            raise BadRequest("All_stores parameter can't be used with x-image-meta-store "
                             "header or stores parameter")
        targets = list(configured.ids)
    elif stores is not None:
        # Glance refuses both; openstacksdk's `store=` sends both, naming one store:
        # accepted when they agree (a deviation doing more)
        if header_store and stores != [header_store]:
            raise BadRequest("Stores parameter and x-image-meta-store header can't be both "
                             "specified")
        targets = list(dict.fromkeys(stores))
    else:
        targets = [header_store or configured.default]
    return ImportRequest(name, targets, all_stores, must)


def _check_stores(configured: Stores, targets: list[str]) -> None:
    """An import naming an unknown store is Glance's 409 (UnknownScheme as a Conflict)."""
    for store in targets:
        try:
            configured.check(store)
        except UnknownStore as err:
            raise Conflict(err.text) from None


def import_image(db: Session, ctx: RequestContext, image_id: str, req: ImportRequest,
                 data_dir: Path, configured: Stores) -> None:
    image = get_image(db, ctx, image_id)
    staged = staging_path(data_dir, image_id)
    if image.status != "uploading" or not staged.exists():
        raise Conflict("Image needs to be staged before 'glance-direct' method can be used")
    if not image.disk_format or not image.container_format:
        raise BadRequest("Properties disk_format, container_format must be set prior to "
                         "importing data.")
    _check_stores(configured, req.stores)
    _transition(db, image, "uploading", "importing")  # one import per staged image
    _activate(db, ctx, image, staged, data_dir, _request(req, {"name": req.method}),
              configured, req)


def _request(req: ImportRequest, method: dict[str, Any]) -> dict[str, Any]:
    """The import request as a task's `import_req` shows it."""
    body: dict[str, Any] = {"method": method}
    if req.all_stores:
        body["all_stores"] = True
    elif req.stores != [SINGLE]:
        body["stores"] = list(req.stores)
    if not req.all_stores_must_succeed:
        body["all_stores_must_succeed"] = False
    return body


def _activate(db: Session, ctx: RequestContext, image: Image, staged: Path, data_dir: Path,
              request: dict[str, Any], configured: Stores | None = None,
              req: ImportRequest | None = None) -> None:
    digests = storage.file_digests(staged, _CHUNK)
    image.size = digests.size
    image.checksum = digests.md5
    image.os_hash_algo = "sha512"
    image.os_hash_value = digests.sha512
    image.status = "active"
    image.updated_at = utcnow()
    if configured is None or not configured.multi or req is None:
        db.flush()
        tasks.record_import(db, ctx, image.id, request)
        # Last, once the row is written: a failure above leaves the staged data in place.
        staged.replace(data_dir / image.id)
        return
    # Multi-store: into each target store; with all_stores_must_succeed false a store
    # that fails is listed in os_glance_failed_import and the others keep the data.
    failed: list[str] = []
    try:
        stores.place(data_dir, configured, image, staged, req.stores[:1])
        for store in req.stores[1:]:
            try:
                stores.copy_into(data_dir, configured, image, store)
                image.stores = [*(image.stores or []), store]
            except OSError:
                if req.all_stores_must_succeed:
                    raise
                failed.append(store)
    except OSError as exc:
        # Not imported (the request rolls back): the copies made go, and the data goes
        # back to staging, where the image (`uploading` again) finds it for another try.
        for store in req.stores[1:]:
            stores.path(data_dir, configured, store, image.id).unlink(missing_ok=True)
        first = stores.path(data_dir, configured, req.stores[0], image.id)
        if first.exists():
            first.replace(staged)
        if isinstance(exc, storage.StorageFull):
            raise StorageMediaFull() from None
        raise Conflict(f"Image import failed: {exc}") from None
    image.properties = {**(image.properties or {}), IMPORTING: "",
                        FAILED: ",".join(sorted(failed))}
    db.flush()
    tasks.record_import(db, ctx, image.id, request, backend=req.stores)


def import_web_download(db: Session, ctx: RequestContext, image_id: str, body: dict[str, Any],
                        data_dir: Path, settings: Any, size_cap: int,
                        configured: Stores | None = None,
                        req: ImportRequest | None = None) -> None:
    """Fetch the data from the URI (filtered: web_download.py) and import it; a failed
    fetch leaves a failure task and the image queued, as Glance's background import would
    (multi-store: importing to no store, the target stores in os_glance_failed_import)."""
    image = get_image(db, ctx, image_id)
    if image.status != "queued":
        raise Conflict(f"Image status transition from {image.status} to importing is not "
                       "allowed")
    if not image.disk_format or not image.container_format:
        raise BadRequest("Properties disk_format, container_format must be set prior to "
                         "importing data.")
    uri = body["method"].get("uri")
    target = web_download.check_uri(uri, settings)
    if configured is not None and req is not None:
        _check_stores(configured, req.stores)
        request = _request(req, {"name": "web-download", "uri": uri})
    else:
        request = {"method": {"name": "web-download", "uri": uri}}
    staged = staging_path(data_dir, image_id)
    try:
        web_download.fetch(target, staged, size_cap, settings)
    except web_download.FetchFailed as exc:
        if configured is not None and configured.multi and req is not None:
            props = image.properties or {}
            failed = {s for s in props.get(FAILED, "").split(",") if s} | set(req.stores)
            image.properties = {**props, IMPORTING: "", FAILED: ",".join(sorted(failed))}
            image.updated_at = utcnow()
        tasks.record_import(db, ctx, image.id, request, status="failure", message=str(exc),
                            backend=req.stores if req is not None else None)
        return
    _transition(db, image, "queued", "importing")  # of two concurrent imports, one runs
    try:
        _activate(db, ctx, image, staged, data_dir, request, configured, req)
    except ApiError:
        staged.unlink(missing_ok=True)  # not staged by the user: nothing to keep
        raise


def copy_image(db: Session, ctx: RequestContext, image_id: str, req: ImportRequest,
               data_dir: Path, configured: Stores) -> None:
    """Glance's copy-image: an active image's data copied into more stores, inside the
    request (Glance copies in a background task). Stores already holding it are a 400 when
    named, skipped with `all_stores` (nothing left: nothing done, no task). A copy that
    fails is listed in `os_glance_failed_import`; with all_stores_must_succeed (the
    default) the copies this import made are removed again and its task fails."""
    image = db.scalars(select(Image).where(Image.id == image_id).with_for_update()
                       .execution_options(populate_existing=True)).one()
    if image.status != "active":
        raise Conflict("Only images with status active can be targeted for copying")
    if not image.container_format:
        raise Conflict("'container_format' needs to be set before import")
    if not image.disk_format:
        raise Conflict("'disk_format' needs to be set before import")
    _check_stores(configured, req.stores)
    held = stores.held_by(image, configured)
    targets = list(req.stores)
    if req.all_stores:
        targets = [s for s in targets if s not in held]
        if not targets:
            return
    else:
        for store in held:
            if store in targets:
                raise BadRequest(f"Image is already present at store '{store}'")
    request = _request(req, {"name": "copy-image"})
    copied: list[str] = []
    failed: list[str] = []
    message = ""
    for store in targets:
        try:
            stores.copy_into(data_dir, configured, image, store)
            copied.append(store)
        except OSError as exc:
            failed.append(store)
            message = f"Copying image data into store {store} failed: {exc}"
            if req.all_stores_must_succeed:
                for done in copied:
                    stores.path(data_dir, configured, done, image.id).unlink(missing_ok=True)
                copied = []
                failed = [s for s in targets if s not in held]
                break
    image.stores = held + copied
    image.properties = {**(image.properties or {}), IMPORTING: "",
                        FAILED: ",".join(sorted(failed))}
    image.updated_at = utcnow()
    db.flush()
    status = "failure" if failed and req.all_stores_must_succeed else "success"
    tasks.record_import(db, ctx, image.id, request, status=status, message=message,
                        backend=targets)


def legacy_import_task(db: Session, ctx: RequestContext, task_input: dict[str, Any],
                       data_dir: Path, settings: Any, size_cap: int,
                       configured: Stores) -> Any:
    """Glance's `import` task (`POST /v2/tasks`): a new image from `image_properties`, its
    data fetched from `import_from` (the web-download filter applies), run
    in the request: the task answered is already `success` (result: the image id) or
    `failure` (Glance's "Error: ..." message). A bad URI is Glance's 400 before any task.
    A failed fetch deletes the image it made (Glance leaves it `saving`)."""
    uri = task_input.get("import_from")
    if not isinstance(uri, str) or not uri:
        raise BadRequest(f"Invalid location: {uri}")
    if uri.startswith(("file:///", "filesystem:///")):
        raise BadRequest("File based imports are not allowed. Please use a non-local source "
                         "of image data.")
    if not uri.startswith(("http://", "https://")):
        raise BadRequest("The given uri is not valid. Please specify a valid uri from the "
                         "following list of supported uri ['http']")
    try:
        target = web_download.check_uri(uri, settings)
    except BadRequest:
        raise BadRequest(f"URI for legacy import task does not pass filtering: {uri}") from None
    props = task_input.get("image_properties") or {}
    if not isinstance(props, dict):
        raise BadRequest("Invalid input: image_properties must be an object")
    from stackling.image import logic

    try:
        image = logic.create_image(db, ctx, props)
    except ApiError as err:
        return tasks.record(db, ctx, "import", task_input, status="failure",
                            message=f"Error: {type(err).__name__}: {err.text}")
    image.status = "saving"
    db.flush()
    staged = staging_path(data_dir, image.id)
    try:
        web_download.fetch(target, staged, size_cap, settings)
    except web_download.FetchFailed as exc:
        image.status = "deleted"
        db.flush()
        return tasks.record(db, ctx, "import", task_input, status="failure",
                            message=f"Error: {type(exc).__name__}: {exc}", image_id=image.id)
    digests = storage.file_digests(staged, _CHUNK)
    image.size, image.checksum = digests.size, digests.md5
    image.os_hash_algo, image.os_hash_value = "sha512", digests.sha512
    image.status, image.updated_at = "active", utcnow()
    if configured.multi:
        stores.place(data_dir, configured, image, staged, [configured.default])
    db.flush()
    task = tasks.record(db, ctx, "import", task_input, status="success",
                        result={"image_id": image.id}, image_id=image.id)
    if not configured.multi:
        staged.replace(data_dir / image.id)  # last, once the rows are written
    return task


def create_headers(configured: Stores) -> dict[str, str]:
    """Glance's headers on `POST /v2/images`: clients read the import methods there."""
    return {"OpenStack-image-import-methods": ",".join(methods(configured)),
            "OpenStack-image-store-ids": ",".join(configured.ids)}


def discard_staged(data_dir: Path, image_id: str) -> None:
    """An image deleted between stage and import leaves no staged data behind."""
    staging_path(data_dir, image_id).unlink(missing_ok=True)
