"""Glance routes for image members (`/v2/images/{id}/members[/{member_id}]`)."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import Forbidden
from stackling.common.http import ApiRequest, Service, no_content
from stackling.image import logic, members, policy
from stackling.image.models import Image


def _image(rq: ApiRequest, action: str, member_id: str | None = None) -> Image:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    if member_id is None and image.owner != rq.ctx.project_id:
        member_id = rq.ctx.project_id  # a member reads its own membership
    elif member_id is not None:
        members.get_member(rq.db, rq.ctx, image, member_id)  # another's membership: a 404
    rq.authorize(action, policy.target(image, member_id), exc=Forbidden(
        f"You are not authorized to complete {action} action."))
    return image


def _body(rq: ApiRequest) -> Any:
    return rq.json(malformed="Malformed JSON in request body.")


def add_member(rq: ApiRequest) -> Any:
    image = _image(rq, "add_member")
    return members.view(members.add_member(rq.db, rq.ctx, image, _body(rq)))


def list_members(rq: ApiRequest) -> Any:
    image = _image(rq, "get_members")
    return {"members": [members.view(m) for m in members.list_members(rq.db, rq.ctx, image)],
            "schema": "/v2/schemas/members"}


def show_member(rq: ApiRequest) -> Any:
    member_id = rq.path_params["member_id"]
    image = _image(rq, "get_member", member_id)
    return members.view(members.get_member(rq.db, rq.ctx, image, member_id))


def update_member(rq: ApiRequest) -> Any:
    member_id = rq.path_params["member_id"]
    image = _image(rq, "modify_member", member_id)
    return members.view(members.update_member(rq.db, rq.ctx, image, member_id, _body(rq)))


def delete_member(rq: ApiRequest) -> Any:
    member_id = rq.path_params["member_id"]
    image = _image(rq, "delete_member")
    members.delete_member(rq.db, rq.ctx, image, member_id)
    return no_content()


def schema_member(rq: ApiRequest) -> Any:
    return {"name": "member", "properties": {k: {} for k in (
        "created_at", "image_id", "member_id", "schema", "status", "updated_at")}}


def schema_members(rq: ApiRequest) -> Any:
    return {"name": "members", "properties": {
        "members": {"type": "array", "items": schema_member(rq)},
        "schema": {"type": "string"}}, "links": [{"rel": "schema", "href": "{schema}"}]}


def add_routes(s: Service) -> None:
    s.add("/v2/images/{image_id}/members", get=list_members, post=add_member)
    s.add("/v2/images/{image_id}/members/{member_id}", get=show_member, put=update_member,
          delete=delete_member)
    s.add("/v2/schemas/member", get=schema_member)
    s.add("/v2/schemas/members", get=schema_members)
