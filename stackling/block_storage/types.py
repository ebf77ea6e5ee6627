"""Volume types (extra specs, access, the `__DEFAULT__` type and per-project default
types) and QoS specs, as cinder/volume/volume_types.py and qos_specs.py."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.block_storage import errors
from stackling.block_storage.models import (
    DefaultType,
    QosSpecs,
    Volume,
    VolumeType,
    VolumeTypeAccess,
)
from stackling.common.context import RequestContext
from stackling.common.db import unique_or, utcnow

DEFAULT_TYPE_NAME = "__DEFAULT__"  # Cinder's default_volume_type since Train
DEFAULT_TYPE_DESCRIPTION = "Default Volume Type"
QOS_CONSUMERS = ("front-end", "back-end", "both")


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _visible(db: Session, ctx: RequestContext, vtype: VolumeType) -> bool:
    if vtype.is_public or ctx.is_admin:
        return True
    return db.scalar(select(VolumeTypeAccess.id).where(
        VolumeTypeAccess.volume_type_id == vtype.id,
        VolumeTypeAccess.project_id == ctx.project_id)) is not None


def get_type(db: Session, ctx: RequestContext, type_id: str) -> VolumeType:
    """A type by id that the context may see (a private type not shared: not found)."""
    vtype = db.get(VolumeType, type_id)
    if vtype is None or not _visible(db, ctx, vtype):
        raise errors.VolumeTypeNotFound(volume_type_id=type_id)
    return vtype


def find_type(db: Session, ctx: RequestContext, ref: str) -> VolumeType:
    """A type by id or by name (volume create's `volume_type` takes either)."""
    vtype = db.get(VolumeType, ref) if _is_uuid(ref) else None
    if vtype is None:
        vtype = db.scalar(select(VolumeType).where(VolumeType.name == ref))
    if vtype is None or not _visible(db, ctx, vtype):
        raise errors.VolumeTypeNotFoundByName(volume_type_name=ref)
    return vtype


def list_types(db: Session, ctx: RequestContext, is_public: bool | None) -> list[VolumeType]:
    """Cinder: an admin sees all with is_public unset (None), else the public ones; a
    project also sees the private types shared with it."""
    stmt = select(VolumeType).order_by(VolumeType.name)
    rows = list(db.scalars(stmt))
    if ctx.is_admin:
        return rows if is_public is None else [t for t in rows if t.is_public == is_public]
    shared = set(db.scalars(select(VolumeTypeAccess.volume_type_id).where(
        VolumeTypeAccess.project_id == ctx.project_id)))
    return [t for t in rows if t.is_public or t.id in shared]


def create_type(db: Session, name: str, description: str | None, is_public: bool,
                extra_specs: dict[str, str]) -> VolumeType:
    if db.scalar(select(VolumeType.id).where(VolumeType.name == name)) is not None:
        raise errors.VolumeTypeExists(id=name)
    vtype = VolumeType(id=str(uuid.uuid4()), name=name, description=description,
                       is_public=is_public, extra_specs=dict(extra_specs))
    with unique_or(db, lambda: errors.VolumeTypeExists(id=name)):
        db.add(vtype)
        db.flush()
    return vtype


def update_type(db: Session, vtype: VolumeType, *, name: str | None,
                description: str | None, is_public: bool | None,
                description_given: bool) -> VolumeType:
    if name is not None and name != vtype.name:
        if vtype.name == DEFAULT_TYPE_NAME:
            raise errors.InvalidVolumeType(reason="The default volume type cannot be renamed.")
        if db.scalar(select(VolumeType.id).where(VolumeType.name == name)) is not None:
            raise errors.VolumeTypeExists(id=name)
        vtype.name = name
    if description_given:
        vtype.description = description
    if is_public is not None:
        vtype.is_public = is_public
    vtype.updated_at = utcnow()
    db.flush()
    return vtype


def delete_type(db: Session, vtype: VolumeType) -> None:
    if vtype.name == DEFAULT_TYPE_NAME or db.scalar(select(DefaultType.project_id).where(
            DefaultType.volume_type_id == vtype.id)) is not None:
        raise errors.VolumeTypeDefaultDeletionError(volume_type_id=vtype.id)
    if db.scalar(select(func.count()).select_from(Volume).where(
            Volume.volume_type_id == vtype.id)):
        raise errors.VolumeTypeInUse(volume_type_id=vtype.id)
    db.delete(vtype)
    db.flush()


def set_extra_specs(db: Session, vtype: VolumeType, specs: dict[str, str]) -> dict[str, str]:
    vtype.extra_specs = {**(vtype.extra_specs or {}), **specs}
    vtype.updated_at = utcnow()
    db.flush()
    return specs


def delete_extra_spec(db: Session, vtype: VolumeType, key: str) -> None:
    specs = dict(vtype.extra_specs or {})
    if key not in specs:
        raise errors.VolumeTypeExtraSpecsNotFound(volume_type_id=vtype.id, extra_specs_key=key)
    del specs[key]
    vtype.extra_specs = specs
    db.flush()


def add_access(db: Session, vtype: VolumeType, project_id: str) -> None:
    if vtype.is_public:
        raise errors.InvalidVolumeType(reason="Invalid volume type: Type access modification "
                                       "is not applicable to public volume type.")
    with unique_or(db, lambda: errors.VolumeTypeAccessExists(volume_type_id=vtype.id,
                                                              project_id=project_id)):
        db.add(VolumeTypeAccess(volume_type_id=vtype.id, project_id=project_id))
        db.flush()


def remove_access(db: Session, vtype: VolumeType, project_id: str) -> None:
    if vtype.is_public:
        raise errors.InvalidVolumeType(reason="Invalid volume type: Type access modification "
                                       "is not applicable to public volume type.")
    row = db.scalar(select(VolumeTypeAccess).where(VolumeTypeAccess.volume_type_id == vtype.id,
                                                   VolumeTypeAccess.project_id == project_id))
    if row is None:
        raise errors.VolumeTypeAccessNotFound(volume_type_id=vtype.id, project_id=project_id)
    db.delete(row)
    db.flush()


def access_list(db: Session, vtype: VolumeType) -> list[str]:
    if vtype.is_public:
        raise errors.VolumeTypeAccessNotFound(volume_type_id=vtype.id, project_id="")
    return list(db.scalars(select(VolumeTypeAccess.project_id).where(
        VolumeTypeAccess.volume_type_id == vtype.id).order_by(VolumeTypeAccess.project_id)))


# ------------------------------------------------------------------ default types
def system_default(db: Session) -> VolumeType:
    vtype = db.scalar(select(VolumeType).where(VolumeType.name == DEFAULT_TYPE_NAME))
    if vtype is None:  # made by the bootstrap; an operator may have renamed nothing else
        vtype = VolumeType(id=str(uuid.uuid4()), name=DEFAULT_TYPE_NAME,
                           description=DEFAULT_TYPE_DESCRIPTION, is_public=True, extra_specs={})
        db.add(vtype)
        db.flush()
    return vtype


def default_for(db: Session, project_id: str) -> VolumeType:
    """The project's default type (3.62), else `__DEFAULT__`."""
    row = db.get(DefaultType, project_id)
    if row is not None:
        vtype = db.get(VolumeType, row.volume_type_id)
        if vtype is not None:
            return vtype
    return system_default(db)


def set_default(db: Session, ctx: RequestContext, project_id: str, type_ref: str) -> DefaultType:
    vtype = find_type(db, ctx, type_ref)
    row = db.get(DefaultType, project_id)
    if row is None:
        row = DefaultType(project_id=project_id, volume_type_id=vtype.id)
        db.add(row)
    else:
        row.volume_type_id = vtype.id
    db.flush()
    return row


def get_default(db: Session, project_id: str) -> DefaultType:
    row = db.get(DefaultType, project_id)
    if row is None:
        raise errors.VolumeTypeProjectDefaultNotFound(project_id=project_id)
    return row


def list_defaults(db: Session) -> list[DefaultType]:
    return list(db.scalars(select(DefaultType).order_by(DefaultType.project_id)))


def unset_default(db: Session, project_id: str) -> None:
    row = db.get(DefaultType, project_id)
    if row is not None:
        db.delete(row)
        db.flush()


# ------------------------------------------------------------------ QoS specs
def get_qos(db: Session, specs_id: str) -> QosSpecs:
    qos = db.get(QosSpecs, specs_id)
    if qos is None:
        raise errors.QoSSpecsNotFound(specs_id=specs_id)
    return qos


def list_qos(db: Session) -> list[QosSpecs]:
    return list(db.scalars(select(QosSpecs).order_by(QosSpecs.created_at, QosSpecs.id)))


def create_qos(db: Session, name: str, specs: dict[str, Any]) -> QosSpecs:
    specs = dict(specs)
    consumer = specs.pop("consumer", "back-end")
    if consumer not in QOS_CONSUMERS:
        raise errors.InvalidInput(reason=f"Invalid consumer value {consumer}; valid values "
                                  f"are {', '.join(QOS_CONSUMERS)}.")
    if db.scalar(select(QosSpecs.id).where(QosSpecs.name == name)) is not None:
        raise errors.QoSSpecsExists(specs_id=name)
    qos = QosSpecs(id=str(uuid.uuid4()), name=name, consumer=consumer,
                   specs={k: str(v) for k, v in specs.items()})
    with unique_or(db, lambda: errors.QoSSpecsExists(specs_id=name)):
        db.add(qos)
        db.flush()
    return qos


def update_qos(db: Session, qos: QosSpecs, specs: dict[str, Any]) -> dict[str, Any]:
    specs = dict(specs)
    if "consumer" in specs:
        consumer = specs.pop("consumer")
        if consumer not in QOS_CONSUMERS:
            raise errors.InvalidInput(reason=f"Invalid consumer value {consumer}.")
        qos.consumer = consumer
    qos.specs = {**(qos.specs or {}), **{k: str(v) for k, v in specs.items()}}
    db.flush()
    return specs


def unset_qos_keys(db: Session, qos: QosSpecs, keys: list[str]) -> None:
    specs = dict(qos.specs or {})
    for key in keys:
        if key not in specs:
            raise errors.QoSSpecsNotFound(specs_id=f"{qos.id} key {key}")
        del specs[key]
    qos.specs = specs
    db.flush()


def qos_associations(db: Session, qos: QosSpecs) -> list[VolumeType]:
    return list(db.scalars(select(VolumeType).where(VolumeType.qos_specs_id == qos.id)))


def delete_qos(db: Session, qos: QosSpecs, force: bool) -> None:
    associated = qos_associations(db, qos)
    if associated and not force:
        raise errors.QoSSpecsInUse(specs_id=qos.id)
    for vtype in associated:
        vtype.qos_specs_id = None
    db.delete(qos)
    db.flush()


def associate_qos(db: Session, ctx: RequestContext, qos: QosSpecs, type_id: str) -> None:
    vtype = get_type(db, ctx, type_id)
    if vtype.qos_specs_id not in (None, qos.id):
        raise errors.InvalidVolumeType(reason=f"Type {type_id} is already associated with "
                                       f"another qos specs: {vtype.qos_specs_id}")
    vtype.qos_specs_id = qos.id
    db.flush()


def disassociate_qos(db: Session, ctx: RequestContext, qos: QosSpecs,
                     type_id: str | None) -> None:
    if type_id is None:
        for vtype in qos_associations(db, qos):
            vtype.qos_specs_id = None
    else:
        vtype = get_type(db, ctx, type_id)
        if vtype.qos_specs_id == qos.id:
            vtype.qos_specs_id = None
    db.flush()
