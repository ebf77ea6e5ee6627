"""Standard attributes shared by every network resource: timestamps, revision numbers
(with `If-Match: revision_number=N`), and tags (`standard-attr-tag`).

`TAGGABLE` maps a collection to how its objects are found and authorised, so the one
tags sub-API (`api/tags.py`) serves every resource; other modules register their own
collections (routers, floating IPs) with `register_taggable`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, bindparam, delete, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import insert_absent, utcnow
from stackling.network import errors
from stackling.network.core.models import Tag

MAX_TAG_LEN = 255


def iso(value: dt.datetime | None) -> str | None:
    """`YYYY-MM-DDTHH:MM:SSZ`; stored values are UTC already (UTCDateTime)."""
    if value is None:
        return None
    v = value
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}Z"


def standard_view(obj: Any, tags: list[str]) -> dict[str, Any]:
    return {"description": obj.description, "created_at": iso(obj.created_at),
            "updated_at": iso(obj.updated_at), "revision_number": obj.revision_number,
            "tags": tags}


def values(obj: Any) -> dict[str, Any]:
    """Column values of a list row or an ORM object, as a dict (cheap key lookups when
    rendering thousands of rows)."""
    if isinstance(obj, Row):
        return obj._asdict()
    return {c.key: getattr(obj, c.key) for c in obj.__table__.columns}


def standard_values(d: dict[str, Any], tags: list[str]) -> dict[str, Any]:
    return {"description": d["description"], "created_at": iso(d["created_at"]),
            "updated_at": iso(d["updated_at"]), "revision_number": d["revision_number"],
            "tags": tags}


def touch(obj: Any) -> None:
    """Record a change: bump the revision and the update time."""
    obj.revision_number = (obj.revision_number or 0) + 1
    obj.updated_at = utcnow()
    obj.__dict__.pop(KNOWN, None)  # what its create knew is no longer the whole story
    obj.__dict__.pop(WRITTEN, None)


# A create stores on its new object what the render would read back (its child rows:
# fixed IPs, tags...), as `obj.known_parts`; the render right after takes them instead of
# querying. Taken once: a later render of the same (identity-mapped) object reads.
KNOWN = "known_parts"
# What a create's extension writers wrote (`qos_policy_id`, `dns_domain`...), for their
# renderers of new objects (RENDER_NEW of networks and ports): no read-back either.
WRITTEN = "written_values"


def written(obj: Any) -> dict[str, Any]:
    """The new object's written extension values (made on first use)."""
    return obj.__dict__.setdefault(WRITTEN, {})


def take_written(obj: Any) -> dict[str, Any]:
    return obj.__dict__.pop(WRITTEN, None) or {}


def take_known(objs: Any) -> list[Any] | None:
    """The known parts of every object of `objs`, or None when one lacks them (then
    all are dropped: a render reads)."""
    # list rows (`Row`) never carry any, and asking one for `__dict__` is a slow miss
    parts = [None if isinstance(o, Row) else o.__dict__.pop(KNOWN, None) for o in objs]
    return parts if parts and all(p is not None for p in parts) else None


def check_revision(obj: Any, if_match: int | None) -> None:
    if if_match is not None and obj.revision_number != if_match:
        raise errors.RevisionNumberConstraintFailed(expected=if_match,
                                                   current=obj.revision_number)


def parse_if_match(header: str | None) -> int | None:
    """`If-Match: revision_number=N` -> N; other If-Match values are not ours (None)."""
    if not header:
        return None
    for part in header.split(","):
        part = part.strip()
        if part.startswith("revision_number="):
            value = part.partition("=")[2]
            if not value.isdigit():
                raise errors.BadRequest(f"Invalid If-Match header: {header}")
            return int(value)
    return None


# ------------------------------------------------------------------ tags
# Built once: every rendered page of every resource asks, and a statement built per call
# pays SQLAlchemy's cache-key generation each time.
_TAGS = (select(Tag.resource_id, Tag.tag)
         .where(Tag.resource_id.in_(bindparam("ids", expanding=True))).order_by(Tag.tag))


def tags_for(db: Session, ids: Iterable[str]) -> dict[str, list[str]]:
    ids = list(ids)
    out: dict[str, list[str]] = {i: [] for i in ids}
    if not ids:
        return out
    for chunk in _chunks(ids, 500):
        for rid, tag in db.execute(_TAGS, {"ids": chunk}):
            out[rid].append(tag)
    return out


def chunks(items: list[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


_chunks = chunks


def validate_tags(tags: Any) -> list[str]:
    if not isinstance(tags, list):
        raise errors.BadRequest(f"Invalid tags body: '{tags}' is not a list")
    for tag in tags:
        validate_tag(tag)
    return list(dict.fromkeys(tags))


def validate_tag(tag: Any) -> str:
    if not isinstance(tag, str) or not tag or len(tag) > MAX_TAG_LEN:
        raise errors.BadRequest(f"Invalid input for tag. Reason: '{tag}' is not a valid tag.")
    return tag


def set_tags(db: Session, resource_type: str, resource_id: str, tags: list[str], *,
             new: bool = False) -> None:
    """Replace the object's tags (`new`: an object made in this request has none)."""
    if not new:
        db.execute(delete(Tag).where(Tag.resource_id == resource_id))
    # An identical concurrent PUT's tags are "already there" (idempotent upstream).
    insert_absent(db, Tag, [{"resource_id": resource_id, "tag": t,
                             "resource_type": resource_type} for t in tags])


def add_tag(db: Session, resource_type: str, resource_id: str, tag: str) -> bool:
    exists = db.scalar(select(Tag.tag).where(Tag.resource_id == resource_id, Tag.tag == tag))
    if exists is not None:
        return False
    insert_absent(db, Tag, [{"resource_id": resource_id, "tag": tag,
                             "resource_type": resource_type}])
    return True


def remove_tag(db: Session, resource_id: str, tag: str) -> None:
    result = db.execute(delete(Tag).where(Tag.resource_id == resource_id, Tag.tag == tag))
    if not result.rowcount:  # type: ignore[attr-defined]
        raise errors.TagNotFound(tag=tag)


def has_tag(db: Session, resource_id: str, tag: str) -> bool:
    return db.scalar(select(Tag.tag).where(Tag.resource_id == resource_id,
                                           Tag.tag == tag)) is not None


def delete_tags(db: Session, resource_ids: Iterable[str]) -> None:
    ids = list(resource_ids)
    for chunk in _chunks(ids, 500):
        db.execute(delete(Tag).where(Tag.resource_id.in_(chunk)))


@dataclass(frozen=True)
class Taggable:
    resource_type: str  # "network"
    # (db, ctx, id) -> the object (raises the resource's NotFound if invisible)
    load: Callable[[Session, RequestContext, str], Any]
    # (db, ctx, obj) -> None, raises 403 when the caller may not change it
    authorize_update: Callable[[Session, RequestContext, Any], None]


TAGGABLE: dict[str, Taggable] = {}


def register_taggable(collection: str, taggable: Taggable) -> None:
    TAGGABLE[collection] = taggable
