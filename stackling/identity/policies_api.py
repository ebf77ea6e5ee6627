"""Identity v3 /v3/policies: policy blobs stored for other services to fetch (Keystone
keeps them and enforces none). Admin only, as Keystone's defaults for stackling's roles."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stackling.common.errors import BadRequest, NotFound
from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import filters, logic
from stackling.identity.api import (
    STRING,
    _collection_links,
    _links,
    _require_admin,
    check,
    limit_lengths,
)
from stackling.identity.delegation_models import Policy

POLICIES = ("list_policies", "get_policy", "create_policy", "update_policy", "delete_policy")
POLICY_SPEC = {"blob": (STRING, True), "type": (STRING, True)}


def policy_view(rq: ApiRequest, p: Policy) -> dict[str, Any]:
    view = {"id": p.id, "type": p.type, "blob": p.blob, "links": _links(rq, f"policies/{p.id}")}
    for k, v in (p.extra or {}).items():
        view.setdefault(k, v)
    return view


def _get(rq: ApiRequest) -> Policy:
    policy = rq.db.get(Policy, rq.path_params["policy_id"])
    if policy is None:
        raise NotFound(f"Could not find policy: {rq.path_params['policy_id']}.")
    return policy


def _extra(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in POLICY_SPEC and k != "id"}


def list_policies(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_policies")
    stmt = select(Policy).order_by(Policy.id)
    if rq.query.get("type") is not None:
        stmt = stmt.where(Policy.type == rq.query["type"])
    columns = {"type": Policy.type}
    rows = filters.filter_rows(rq.db.scalars(filters.apply_inexact(stmt, rq.query, columns)),
                               rq.query, columns)
    return {"policies": [policy_view(rq, p) for p in rows], "links": _collection_links(rq)}


def show_policy(rq: ApiRequest) -> Any:
    _require_admin(rq, "get_policy")
    return {"policy": policy_view(rq, _get(rq))}


def create_policy(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_policy")
    body = limit_lengths(check(dict(logic.require_fields(rq.json(), "policy")), POLICY_SPEC,
                               allow_extra=True), {"type": 255})
    policy = Policy(id=logic.new_id(), type=body["type"], blob=body["blob"], extra=_extra(body))
    rq.db.add(policy)
    return 201, {"policy": policy_view(rq, policy)}


def update_policy(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_policy")
    policy = _get(rq)
    body = limit_lengths(check(dict(logic.require_fields(rq.json(), "policy")),
                               {k: (kind, False) for k, (kind, _) in POLICY_SPEC.items()},
                               allow_extra=True), {"type": 255})
    if body.get("id") not in (None, policy.id):
        raise BadRequest("Cannot change policy ID")
    for key in ("type", "blob"):
        if key in body:
            setattr(policy, key, body[key])
    if _extra(body):
        policy.extra = {**(policy.extra or {}), **_extra(body)}
    return {"policy": policy_view(rq, policy)}


def delete_policy(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_policy")
    rq.db.delete(_get(rq))
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/policies", get=list_policies, post=create_policy)
    s.add("/v3/policies/{policy_id}", get=show_policy, patch=update_policy, delete=delete_policy)
