"""Resource classes: the standard ones from os-resource-classes, plus stored CUSTOM_* ones."""

from __future__ import annotations

from collections.abc import Iterable

import os_resource_classes
from sqlalchemy import delete, exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.placement import errors
from stackling.placement.models import CustomResourceClass, Inventory

STANDARD: tuple[str, ...] = tuple(os_resource_classes.STANDARDS)
_STANDARD_SET = frozenset(STANDARD)
CUSTOM_PREFIX = "CUSTOM_"


def is_standard(name: str) -> bool:
    return name in _STANDARD_SET


def list_names(db: Session) -> list[str]:
    """Standard classes in os-resource-classes order, then custom ones by name."""
    custom = db.scalars(select(CustomResourceClass.name).order_by(CustomResourceClass.name))
    return [*STANDARD, *custom]


def exists_named(db: Session, name: str) -> bool:
    return is_standard(name) or _stored(db, name)


def unknown(db: Session, names: Iterable[str]) -> list[str]:
    """The names in `names` that are neither standard nor created (sorted)."""
    custom = sorted({n for n in names if not is_standard(n)})
    if not custom:
        return []
    found = set(db.scalars(select(CustomResourceClass.name)
                           .where(CustomResourceClass.name.in_(custom))))
    return [n for n in custom if n not in found]


def check_known(db: Session, names: Iterable[str]) -> None:
    missing = unknown(db, names)
    if missing:
        raise errors.ResourceClassNotFound(resource_class=", ".join(missing))


def create(db: Session, name: str) -> None:
    """Create CUSTOM_ class `name`; DuplicateName when it exists."""
    if is_standard(name) or not _insert(db, name):
        raise errors.DuplicateName(f"Conflicting resource class already exists: {name}")


def ensure(db: Session, name: str) -> bool:
    """Create-or-confirm (PUT at >= 1.7); True when created."""
    if is_standard(name):
        return False
    return _insert(db, name)


def _insert(db: Session, name: str) -> bool:
    try:
        with db.begin_nested():
            db.add(CustomResourceClass(name=name))
        return True
    except IntegrityError:
        return False


def rename(db: Session, old: str, new: str) -> None:
    """PUT /resource_classes/{name} before 1.7: rename a custom class not in use."""
    if is_standard(old):
        raise errors.BadRequest(f"Cannot update standard resource class {old}")
    if not _stored(db, old):
        raise errors.ResourceClassNotFound(resource_class=old)
    if exists_named(db, new):
        raise errors.DuplicateName(f"Resource class already exists: {new}")
    _check_unused(db, old, action="update")
    db.execute(delete(CustomResourceClass).where(CustomResourceClass.name == old))
    db.add(CustomResourceClass(name=new))
    db.flush()


def delete_custom(db: Session, name: str) -> None:
    if is_standard(name):
        raise errors.BadRequest(f"Cannot delete standard resource class {name}")
    if not _stored(db, name):
        raise errors.ResourceClassNotFound(resource_class=name)
    _check_unused(db, name, action="delete")
    db.execute(delete(CustomResourceClass).where(CustomResourceClass.name == name))


def _check_unused(db: Session, name: str, action: str) -> None:
    if db.scalar(select(exists().where(Inventory.resource_class == name))):
        raise errors.InUse(f"Unable to {action} resource class {name}: Cannot {action} "
                           f"resource class {name}. Class is in use in inventory.")


def _stored(db: Session, name: str) -> bool:
    return db.scalar(select(CustomResourceClass.name).where(CustomResourceClass.name == name)) is not None
