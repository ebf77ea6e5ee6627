"""Image members (Glance's image sharing): an image of visibility `shared` is offered to
other projects, each of which accepts or rejects it.

The owner adds and removes members; only the member itself answers (`status`). A member
sees the image whatever its answer (`GET /v2/images/{id}`), but lists list it only once
accepted (or with `member_status`). Policy is checked by the handlers before these run.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import unique_or, utcnow
from stackling.common.errors import ApiError, BadRequest, Conflict, Forbidden, NotFound
from stackling.image.models import Image, ImageMember

STATUSES = ("pending", "accepted", "rejected")
MEMBER_QUOTA = 128  # Glance's image_member_quota


class MemberLimitExceeded(ApiError):
    status = 413
    message = "The request returned a 413 Request Entity Too Large."


class MemberNotFound(NotFound):
    message = "%(member_id)s is not a member of image %(image_id)s"


def view(m: ImageMember) -> dict[str, Any]:
    return {"created_at": m.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"), "image_id": m.image_id,
            "member_id": m.member_id, "schema": "/v2/schemas/member", "status": m.status,
            "updated_at": m.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ")}


def is_member(project_id: Any, statuses: tuple[str, ...] | None = None) -> Any:
    """SQL: the image (a row of `Image`) is shared with `project_id` (with one of `statuses`)."""
    cond = [ImageMember.image_id == Image.id, ImageMember.member_id == project_id]
    if statuses is not None:
        cond.append(ImageMember.status.in_(statuses))
    return and_(Image.visibility == "shared", exists().where(*cond))


def member_of(db: Session, image_id: str, project_id: str | None) -> ImageMember | None:
    if not project_id:
        return None
    return db.scalar(select(ImageMember).where(ImageMember.image_id == image_id,
                                               ImageMember.member_id == project_id))


def add_member(db: Session, ctx: RequestContext, image: Image, body: Any) -> ImageMember:
    if not isinstance(body, dict) or not isinstance(body.get("member"), str) or \
            not body["member"] or len(body) != 1:
        raise BadRequest("Member to be added not specified")
    if image.visibility != "shared":
        raise Forbidden(f"Image {image.id} could not be shared: only shared images have "
                        "members.")
    member_id = body["member"]
    if len(member_id) > 255:  # Glance's member column; longer was a 500 on PostgreSQL/MariaDB
        raise BadRequest("Member id must be at most 255 characters")
    if member_of(db, image.id, member_id) is not None:
        raise Conflict(f"Member {member_id} is duplicated for image {image.id}")
    # (under concurrent adds the count may pass the quota by a few: a soft bound)
    count = db.scalar(select(func.count()).select_from(ImageMember)
                      .where(ImageMember.image_id == image.id))
    if count is not None and count >= MEMBER_QUOTA:
        raise MemberLimitExceeded(f"Maximum number of image members exceeded: "
                                  f"{MEMBER_QUOTA}")
    now = utcnow()
    m = ImageMember(image_id=image.id, member_id=member_id, status="pending", created_at=now,
                    updated_at=now)
    with unique_or(db, lambda: Conflict(f"Member {member_id} is duplicated for image "
                                        f"{image.id}")):
        db.add(m)
        db.flush()
    return m


def list_members(db: Session, ctx: RequestContext, image: Image) -> list[ImageMember]:
    """The owner (and an admin) sees every member; a member sees its own membership."""
    stmt = select(ImageMember).where(ImageMember.image_id == image.id)
    if not ctx.is_admin and image.owner != ctx.project_id:
        stmt = stmt.where(ImageMember.member_id == ctx.project_id)
    return list(db.scalars(stmt.order_by(ImageMember.created_at, ImageMember.id)))


def get_member(db: Session, ctx: RequestContext, image: Image, member_id: str) -> ImageMember:
    m = member_of(db, image.id, member_id)
    if m is None or (not ctx.is_admin and image.owner != ctx.project_id
                     and member_id != ctx.project_id):
        raise MemberNotFound(member_id=member_id, image_id=image.id)
    return m


def update_member(db: Session, ctx: RequestContext, image: Image, member_id: str,
                  body: Any) -> ImageMember:
    m = get_member(db, ctx, image, member_id)
    status = body.get("status") if isinstance(body, dict) else None
    if status not in STATUSES:
        raise BadRequest(f"Invalid status: {status}")
    m.status = status
    m.updated_at = utcnow()
    db.flush()
    return m


def delete_member(db: Session, ctx: RequestContext, image: Image, member_id: str) -> None:
    m = get_member(db, ctx, image, member_id)
    db.delete(m)
    db.flush()
