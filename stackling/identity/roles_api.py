"""Identity v3 routes for role updates and implied roles (`/v3/roles/{prior}/implies`).

A global role may not imply a domain-specific one (Keystone's InvalidImpliedRole); a
domain-specific role may imply global ones, which is how it gives anything in a token."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stackling.common.errors import BadRequest, NotFound
from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import logic
from stackling.identity.api import (
    OBJECT,
    STRING,
    _collection_links,
    _require_admin,
    _role_ref,
    check,
    role_view,
)
from stackling.identity.models import NULL_DOMAIN_ID, ImpliedRole, Role

POLICIES = ("update_role", "list_implied_roles", "get_implied_role", "check_implied_role",
            "delete_implied_role")
ROLE_SPEC = {"name": (STRING, False), "description": (STRING, False),
             "domain_id": (STRING, False), "options": (OBJECT, False)}


def update_role(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_role")
    role = logic.get_role(rq.db, rq.path_params["role_id"])
    body = check(dict(logic.require_fields(rq.json(), "role")), ROLE_SPEC, allow_extra=True)
    if "domain_id" in body and (body["domain_id"] or NULL_DOMAIN_ID) != role.domain_id:
        raise BadRequest("Cannot change the domain ID of a role.")
    if "name" in body:
        role.name = body["name"]
    if "description" in body:
        role.description = body["description"]
    logic._insert_unique(rq.db, role, "role", role.name)
    return {"role": role_view(rq, role)}


def _pair(rq: ApiRequest) -> tuple[Role, Role]:
    return (logic.get_role(rq.db, rq.path_params["prior_role_id"]),
            logic.get_role(rq.db, rq.path_params["implied_role_id"]))


def _existing(rq: ApiRequest) -> tuple[Role, Role]:
    prior, implied = _pair(rq)
    if rq.db.get(ImpliedRole, (prior.id, implied.id)) is None:
        raise NotFound(f"{prior.id} does not imply {implied.id}.")
    return prior, implied


def list_implied(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_implied_roles")
    prior = logic.get_role(rq.db, rq.path_params["prior_role_id"])
    ids = select(ImpliedRole.implied_role_id).where(ImpliedRole.prior_role_id == prior.id)
    implied = rq.db.scalars(select(Role).where(Role.id.in_(ids)).order_by(Role.name))
    return {"role_inference": {"prior_role": _role_ref(rq, prior),
                               "implies": [_role_ref(rq, r) for r in implied]},
            "links": _collection_links(rq)}


def get_implied(rq: ApiRequest) -> Any:
    if rq.method == "HEAD":
        _require_admin(rq, "check_implied_role")
        _existing(rq)
        return no_content()
    _require_admin(rq, "get_implied_role")
    prior, implied = _existing(rq)
    return {"role_inference": {"prior_role": _role_ref(rq, prior),
                               "implies": _role_ref(rq, implied)}}


def delete_implied(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_implied_role")
    prior, implied = _existing(rq)
    rq.db.delete(rq.db.get(ImpliedRole, (prior.id, implied.id)))
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/roles/{role_id}", patch=update_role)
    s.add("/v3/roles/{prior_role_id}/implies", get=list_implied)
    s.add("/v3/roles/{prior_role_id}/implies/{implied_role_id}", get=get_implied,
          head=get_implied, delete=delete_implied)
