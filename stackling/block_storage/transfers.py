"""Volume transfers between projects (cinder/transfer/api.py): the owner creates one
(the volume `awaiting-transfer`, an auth key shown once), another project accepts it with
the key (the volume and, unless `no_snapshots`, its snapshots change project)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.block_storage import errors, quotas
from stackling.block_storage.models import Snapshot, Transfer, Volume, VolumeType
from stackling.block_storage.volumes import get_volume, transition
from stackling.common.context import RequestContext

KEY_LENGTH = 16  # Cinder's volume_transfer_key_length


def _hash(salt: str, key: str) -> str:
    return hashlib.sha256((salt + key).encode()).hexdigest()


def get_transfer(db: Session, ctx: RequestContext, transfer_id: str) -> Transfer:
    row = db.get(Transfer, transfer_id)
    if row is None or row.deleted or not (ctx.is_admin or row.source_project_id == ctx.project_id):
        raise errors.TransferNotFound(transfer_id=transfer_id)
    return row


def list_transfers(db: Session, ctx: RequestContext, all_tenants: bool) -> list[Transfer]:
    stmt = select(Transfer).where(Transfer.deleted.is_(False))
    if not (ctx.is_admin and all_tenants):
        stmt = stmt.where(Transfer.source_project_id == ctx.project_id)
    return list(db.scalars(stmt.order_by(Transfer.created_at, Transfer.id)))


def create_transfer(db: Session, ctx: RequestContext, volume_id: str, name: str | None,
                    no_snapshots: bool) -> tuple[Transfer, str]:
    volume = get_volume(db, ctx, volume_id)
    if not transition(db, volume, ("available",), {"status": "awaiting-transfer"}):
        raise errors.InvalidVolume(reason="status must be available")
    key = secrets.token_hex(KEY_LENGTH // 2)
    salt = secrets.token_hex(8)
    row = Transfer(id=str(uuid.uuid4()), volume_id=volume.id, name=name, salt=salt,
                   crypt_hash=_hash(salt, key), source_project_id=volume.project_id,
                   no_snapshots=no_snapshots)
    db.add(row)
    db.flush()
    return row, key


def delete_transfer(db: Session, ctx: RequestContext, row: Transfer) -> None:
    volume = db.get(Volume, row.volume_id)
    if volume is not None and volume.status == "awaiting-transfer":
        volume.status = "available"
    row.deleted = True
    db.flush()


def accept(db: Session, ctx: RequestContext, settings: Any, transfer_id: str,
           auth_key: Any) -> Transfer:
    row = db.get(Transfer, transfer_id)
    if row is None or row.deleted:
        raise errors.TransferNotFound(transfer_id=transfer_id)
    if not isinstance(auth_key, str) or not hmac.compare_digest(
            _hash(row.salt, auth_key), row.crypt_hash):
        raise errors.InvalidAuthKey(reason=f"Attempt to transfer {row.volume_id} with invalid "
                                    "auth key.")
    volume = db.get(Volume, row.volume_id)
    if volume is None or volume.status != "awaiting-transfer":
        raise errors.InvalidVolume(reason="status must be awaiting-transfer")
    target = ctx.project_id or ""
    vtype = db.get(VolumeType, volume.volume_type_id)
    snaps = [] if row.no_snapshots else list(db.scalars(select(Snapshot).where(
        Snapshot.volume_id == volume.id)))
    quotas.check(db, settings, target, volumes=1,
                 gigabytes=volume.size + sum(s.size for s in snaps), snapshots=len(snaps),
                 type_name=vtype.name if vtype else None)
    volume.project_id, volume.user_id, volume.status = target, ctx.user_id or "", "available"
    for snap in snaps:
        snap.project_id, snap.user_id = target, ctx.user_id or ""
    row.accepted, row.deleted, row.destination_project_id = True, True, target
    db.flush()
    return row
