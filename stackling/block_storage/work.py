"""The volume manager: the file work a status announces, claimed from the database.

A row with a `task` (a volume `creating`/`deleting`/`extending`, a snapshot `creating`/
`deleting`, a backup `creating`/`restoring`/`deleting`) is claimed by one process for a
lease (`claimed_by`, `claimed_until`, renewed while the work runs). The work is done
outside any transaction (a copy of 300 MB must not hold the write lock), then one
transaction records the result if the claim is still this worker's. A process that dies
mid-work loses its lease and another takes the task over from the start: copies write
to `.part` files renamed into place, so a half copy never becomes a volume.

A task that fails ends in Cinder's final state (`error`, `error_deleting`, ...) with
the reason kept (`fault`, `fail_reason`); a failed create leaves no file."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from stackling.block_storage import backend
from stackling.block_storage.models import Backup, Snapshot, Volume
from stackling.common.db import utcnow, utcnow_precise
from stackling.common.workers import WorkerPool, claim_next

LOG = logging.getLogger(__name__)
POLL_SECONDS = 2.0
STATE_KEY = "block_storage.worker"
MODELS: tuple[type[Any], ...] = (Volume, Snapshot, Backup)


def _lease(runtime: Any) -> dt.timedelta:
    return dt.timedelta(seconds=float(runtime.settings.block_storage.lease_seconds))


def _claim(db: Session, token: str, only: tuple[type[Any], str] | None,
           lease: dt.timedelta) -> tuple[type[Any], str] | None:
    now = utcnow_precise()
    for model in MODELS:
        if only is not None and model is not only[0]:
            continue
        stmt = select(model).where(model.task.is_not(None), or_(
            model.claimed_until.is_(None), model.claimed_until < now))
        if only is not None:
            stmt = stmt.where(model.id == only[1])
        if db.get_bind().dialect.name != "sqlite":
            stmt = stmt.with_for_update(skip_locked=True)
        row = db.scalars(stmt.order_by(model.created_at).limit(1)).first()
        if row is not None:
            row.claimed_by = token
            row.claimed_until = now + lease
            db.flush()
            return model, row.id
    return None


def _peek(db: Session) -> bool:
    now = utcnow_precise()
    return any(db.scalar(select(m.id).where(m.task.is_not(None), or_(
        m.claimed_until.is_(None), m.claimed_until < now)).limit(1)) is not None
        for m in MODELS)


def run_next(runtime: Any, only: tuple[type[Any], str] | None = None) -> bool:
    """Claim one task (any, or `only` (model, id)) and do it; False when none was due."""
    token = str(uuid.uuid4())
    claimed = claim_next(runtime.db, _peek if only is None else None,
                         lambda db: _claim(db, token, only, _lease(runtime)))
    if claimed is None:
        return False
    model, row_id = claimed
    stop = threading.Event()
    renewer = threading.Thread(target=_renew, args=(runtime, model, row_id, token, stop),
                               name="block-storage-lease", daemon=True)
    renewer.start()
    try:
        _run(runtime, model, row_id, token)
    finally:
        stop.set()
        renewer.join(timeout=5)
    return True


def _renew(runtime: Any, model: type[Any], row_id: str, token: str,
           stop: threading.Event) -> None:
    lease = _lease(runtime)
    while not stop.wait(lease.total_seconds() / 3):
        try:
            with runtime.db.transaction() as db:
                db.execute(update(model).where(model.id == row_id, model.claimed_by == token)
                           .values(claimed_until=utcnow_precise() + lease))
        except Exception:  # noqa: BLE001 - the next renewal tries again
            LOG.warning("renewing the lease of %s %s failed", model.__name__, row_id)


@contextlib.contextmanager
def _finishing(runtime: Any, model: type[Any], row_id: str, token: str) -> Any:
    """The row, in a transaction, if this worker's claim still holds (else None)."""
    with runtime.db.transaction() as db:
        row = db.scalar(select(model).where(model.id == row_id).with_for_update())
        if row is None or row.claimed_by != token:
            yield db, None
            return
        yield db, row


def _run(runtime: Any, model: type[Any], row_id: str, token: str) -> None:
    driver = backend.driver_for(runtime.settings)
    with runtime.db.transaction(write=False) as db:
        row = db.get(model, row_id)
        if row is None or row.task is None:
            return
        task, args = row.task, dict(getattr(row, "task_args", None) or {})
        snapshot = {"size": row.size, "volume_id": getattr(row, "volume_id", None),
                    "parent_id": getattr(row, "parent_id", None),
                    "snapshot_id": getattr(row, "snapshot_id", None)}
    try:
        image_path = None
        if model is Volume and task == "create" and args.get("source") == "image":
            with runtime.db.transaction(write=False) as db:
                image_path = _image_path(db, args["id"])
        result = _do(runtime, driver, model, row_id, task, args, snapshot, image_path)
    except Exception as err:  # noqa: BLE001 - the task's final state carries the reason
        LOG.exception("%s %s: %s failed", model.__name__, row_id, task)
        _fail(runtime, driver, model, row_id, token, task, f"{type(err).__name__}: {err}")
        return
    _succeed(runtime, driver, model, row_id, token, task, args, result)


def _image_path(db: Session, image_id: str) -> Path | None:
    from stackling.common.context import admin_context
    from stackling.image import interface as images

    try:
        image = images.get_image(db, admin_context(), image_id)
    except images.ImageNotFound:
        raise FileNotFoundError(f"image {image_id} is gone") from None
    return images.data_path(db, image)


def _do(runtime: Any, driver: backend.FileDriver, model: type[Any], row_id: str, task: str,
        args: dict[str, Any], row: dict[str, Any], image_path: Path | None) -> Any:
    if model is Volume:
        if task == "create":
            source = args.get("source", "blank")
            if source == "blank":
                driver.create_volume(row_id, row["size"])
            elif source == "image":
                if image_path is None:  # an image with metadata only: an empty volume
                    driver.copy_image_to_volume(row_id, None, row["size"])
                else:
                    with open(image_path, "rb") as fh:
                        driver.copy_image_to_volume(row_id, fh, row["size"])
            elif source == "snapshot":
                driver.create_volume_from_snapshot(row_id, args["id"], row["size"])
            elif source == "volume":
                driver.create_cloned_volume(row_id, args["id"], row["size"])
            elif source == "backup":
                restore_chunks(runtime, driver, args["id"], row_id, row["size"])
            return None
        if task == "delete":
            driver.delete_volume(row_id)
            return None
        if task == "extend":
            driver.extend_volume(row_id, int(args["new_size"]))
            return None
        if task == "upload":
            return upload_volume(runtime, driver, row_id, args["image_id"])
    if model is Snapshot:
        if task == "create":
            driver.create_snapshot(row_id, row["volume_id"])
        elif task == "delete":
            driver.delete_snapshot(row_id)
        return None
    if model is Backup:
        if task == "create":
            return write_backup(runtime, driver, row_id, row["volume_id"], row["parent_id"],
                                row["snapshot_id"])
        if task == "restore":
            restore_chunks(runtime, driver, row_id, args["volume_id"], None)
            return None
        if task == "delete":
            shutil.rmtree(backup_dir(runtime.settings) / row_id, ignore_errors=True)
            return None
    raise ValueError(f"unknown task {task} of {model.__name__}")


def _succeed(runtime: Any, driver: backend.FileDriver, model: type[Any], row_id: str,
             token: str, task: str, args: dict[str, Any], result: Any) -> None:
    now = utcnow()
    with _finishing(runtime, model, row_id, token) as (db, row):
        if row is None:
            # Reclaimed (this worker was presumed dead) or deleted meanwhile: a created
            # file nobody records is removed again.
            if model is Volume and task == "create" and db.get(Volume, row_id) is None:
                driver.delete_volume(row_id)
            return
        row.task, row.claimed_by, row.claimed_until = None, None, None
        row.updated_at = now
        if model is Volume:
            if task == "create" and args.get("reimage"):
                row.status = row.previous_status or "available"
                if row.status == "error":
                    row.status = "available"
            elif task == "create":
                row.status, row.launched_at = "available", now
            elif task == "delete":
                from stackling.block_storage.models import Attachment

                for att in db.scalars(select(Attachment).where(Attachment.volume_id == row_id)):
                    db.delete(att)
                for snap in db.scalars(select(Snapshot).where(Snapshot.volume_id == row_id)):
                    driver.delete_snapshot(snap.id)
                    _leave_group(db, snap.id)
                    db.delete(snap)
                _leave_group(db, row_id)
                db.delete(row)
            elif task == "extend":
                row.size = int(args["new_size"])
                row.status = row.previous_status or "available"
            elif task == "upload":
                from stackling.image import interface as images

                images.activate_data(db, args["image_id"], result[0], size=result[1],
                                     md5=result[2], sha512=result[3])
                row.status = row.previous_status or "available"
        elif model is Snapshot:
            if task == "create":
                row.status, row.progress = "available", "100%"
            else:
                _leave_group(db, row_id)
                db.delete(row)
        elif model is Backup:
            if task == "create":
                row.object_count = result
                row.status = "available"
                _volume_back(db, row.volume_id, args.get("previous_status"))
            elif task == "restore":
                row.status = "available"
                target = db.get(Volume, args["volume_id"])
                if target is not None:
                    target.status, target.task = "available", None
                    target.size = max(target.size, row.size)
            else:
                db.delete(row)


def _leave_group(db: Session, item_id: str) -> None:
    from stackling.block_storage.models import GroupMember

    member = db.get(GroupMember, item_id)
    if member is not None:
        db.delete(member)


def _volume_back(db: Session, volume_id: str, previous: str | None) -> None:
    volume = db.get(Volume, volume_id)
    if volume is not None and volume.status == "backing-up":
        volume.status = previous or volume.previous_status or "available"


def _fail(runtime: Any, driver: backend.FileDriver, model: type[Any], row_id: str,
          token: str, task: str, reason: str) -> None:
    with _finishing(runtime, model, row_id, token) as (db, row):
        if row is None:
            return
        row.task, row.claimed_by, row.claimed_until = None, None, None
        if model is Volume:
            if task == "create" and (row.task_args or {}).get("reimage"):
                row.status = "error"  # Cinder: a failed re-image leaves the volume in error
            elif task == "create":
                driver.delete_volume(row_id)  # no file of a failed create
                row.status = "error"
            elif task == "delete":
                row.status = "error_deleting"
            elif task == "extend":
                row.status = "error_extending"
            elif task == "upload":  # Cinder: the volume as it was, the image deleted
                from stackling.image import interface as images

                images.fail_upload(db, (row.task_args or {}).get("image_id", ""))
                row.status = row.previous_status or "available"
            row.fault = reason[:4000]
        elif model is Snapshot:
            row.status = "error" if task == "create" else "error_deleting"
            if task == "create":
                driver.delete_snapshot(row_id)
        elif model is Backup:
            row.fail_reason = reason[:4000]
            if task == "create":
                shutil.rmtree(backup_dir(runtime.settings) / row_id, ignore_errors=True)
                row.status = "error"
                _volume_back(db, row.volume_id, (row.task_args or {}).get("previous_status"))
            elif task == "restore":
                row.status = "available"
                target = db.get(Volume, (row.task_args or {}).get("volume_id"))
                if target is not None:
                    target.status, target.task = "error_restoring", None
            else:
                row.status = "error_deleting"


def upload_volume(runtime: Any, driver: backend.FileDriver, volume_id: str,
                  image_id: str) -> tuple[Path, int, str, str]:
    """The volume's bytes into the image's staging file, checksummed as Glance does."""
    from stackling.image import interface as images

    with runtime.db.transaction(write=False) as db:
        target = images.staging_file(db, image_id)
    md5, sha512, size = hashlib.md5(usedforsecurity=False), hashlib.sha512(), 0
    try:
        with open(driver.volume_path(volume_id), "rb") as src, open(target, "wb") as out:
            while True:
                data = src.read(backend.CHUNK)
                if not data:
                    break
                out.write(data)
                md5.update(data)
                sha512.update(data)
                size += len(data)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target, size, md5.hexdigest(), sha512.hexdigest()


# ------------------------------------------------------------------ the backup store
# A backup is a directory `<backup dir>/<backup id>/`: its chunks `00000000`, ... and its
# `sha256file` (as the posix driver's): one [SHA-256, holder] per chunk of the volume,
# the holder being the backup whose directory has the bytes (itself, or for an unchanged
# chunk of an incremental backup its parent's holder), None for a chunk of zeros.
SHA256FILE = "sha256file"


def backup_dir(settings: Any) -> Path:
    configured = settings.block_storage.backup_dir
    return Path(configured) if configured else Path(settings.data_dir) / "backups"


def read_sha256file(settings: Any, backup_id: str) -> list[list[Any]]:
    path = backup_dir(settings) / backup_id / SHA256FILE
    return [list(c) for c in json.loads(path.read_text())]


def _data_starts(fd: int, offset: int) -> int:
    """The first offset at or after `offset` holding data (the file's size when only a
    hole is left): the holes of a sparse file are never read."""
    return backend.data_starts(fd, offset)


def write_backup(runtime: Any, driver: backend.FileDriver, backup_id: str, volume_id: str,
                 parent_id: str | None, snapshot_id: str | None) -> int:
    """Chunk the volume (or snapshot) file into the backup's directory; returns the chunks
    written. A chunk equal to the parent's is not written again (incremental); a chunk of
    zeros (or in a hole, which is not even read) is held by nobody."""
    settings = runtime.settings
    size = settings.block_storage.backup_chunk_size
    parent = read_sha256file(settings, parent_id) if parent_id is not None else []
    source = driver.snapshot_path(snapshot_id) if snapshot_id else driver.volume_path(volume_id)
    target = backup_dir(settings) / backup_id
    shutil.rmtree(target, ignore_errors=True)  # a previous claimant's partial work
    target.mkdir(parents=True, exist_ok=True)
    zero = hashlib.sha256(bytes(size)).hexdigest()
    chunks: list[list[Any]] = []
    written = 0
    with open(source, "rb") as fh:
        total = os.fstat(fh.fileno()).st_size
        for index, offset in enumerate(range(0, total, size)):
            length = min(size, total - offset)
            if _data_starts(fh.fileno(), offset) >= offset + length:
                digest = zero if length == size else hashlib.sha256(bytes(length)).hexdigest()
                chunks.append([digest, None])
                continue
            fh.seek(offset)
            data = fh.read(length)
            digest = hashlib.sha256(data).hexdigest()
            if data.count(0) == len(data):
                chunks.append([digest, None])
            elif index < len(parent) and parent[index][0] == digest:
                chunks.append([digest, parent[index][1]])
            else:
                part = target / f"{index:08d}.part"
                with open(part, "wb") as out:
                    out.write(data)
                os.replace(part, target / f"{index:08d}")
                chunks.append([digest, backup_id])
                written += 1
    part = target / f"{SHA256FILE}.part"
    part.write_text(json.dumps(chunks))
    os.replace(part, target / SHA256FILE)
    return written


def restore_chunks(runtime: Any, driver: backend.FileDriver, backup_id: str,
                   volume_id: str, size_gb: int | None) -> None:
    """Write the backup's chunks into the volume's file (a new file, renamed into place);
    every chunk's SHA-256 is checked before it is written."""
    with runtime.db.transaction(write=False) as db:
        row = db.get(Backup, backup_id)
        if row is None:
            raise FileNotFoundError(f"backup {backup_id} is gone")
        backup_size = row.size
        target_row = db.get(Volume, volume_id)
        volume_size = target_row.size if target_row is not None else backup_size
    chunks = read_sha256file(runtime.settings, backup_id)
    chunk = runtime.settings.block_storage.backup_chunk_size
    root = backup_dir(runtime.settings)
    final = driver.volume_path(volume_id)
    with driver._writing(final) as out:
        for index, (digest, holder) in enumerate(chunks):
            if holder is None:
                out.seek(chunk, os.SEEK_CUR)
                continue
            data = (root / holder / f"{index:08d}").read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                raise ValueError(f"backup {backup_id}: chunk {index} does not match its "
                                 "SHA-256")
            out.seek(index * chunk)
            out.write(data)
        out.truncate(max(size_gb or 0, volume_size, backup_size) * backend.GiB)


# ------------------------------------------------------------------ the pool
class VolumeWorker:
    def __init__(self, runtime: Any, threads: int) -> None:
        self._pool = WorkerPool("block-storage", threads, lambda: run_next(runtime),
                                poll=POLL_SECONDS)

    def start(self) -> None:
        self._pool.start()

    def wake(self) -> None:
        self._pool.wake()

    def stop(self) -> None:
        self._pool.stop()


def wake(runtime: Any) -> None:
    worker = runtime.state.get(STATE_KEY)
    if worker is not None:
        worker.wake()
