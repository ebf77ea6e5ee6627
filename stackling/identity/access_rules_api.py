"""Identity v3 /v3/users/{id}/access_rules: a user's access rules, made by the application
credentials that name them (list, show, delete). Owner or admin, as Keystone's defaults;
a rule still used by a credential cannot be deleted."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stackling.common.errors import Forbidden, NotFound
from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import app_credentials, logic
from stackling.identity.api import _collection_links, _links
from stackling.identity.delegation_models import AccessRule

POLICIES = ("list_access_rules", "get_access_rule", "delete_access_rule")


def _user(rq: ApiRequest, action: str) -> str:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id and not rq.allowed(f"identity:{action}"):
        raise Forbidden(f"You are not authorized to perform the requested action: "
                        f"identity:{action}.")
    logic.get_user(rq.db, user_id)
    return user_id


def _view(rq: ApiRequest, rule: AccessRule) -> dict[str, Any]:
    return {"id": rule.id, "service": rule.service, "path": rule.path, "method": rule.method,
            "links": _links(rq, f"users/{rule.user_id}/access_rules/{rule.id}")}


def _one(rq: ApiRequest, user_id: str) -> AccessRule:
    rule = rq.db.get(AccessRule, rq.path_params["access_rule_id"])
    if rule is None or rule.user_id != user_id:
        raise NotFound(f"Could not find Access Rule: {rq.path_params['access_rule_id']}.")
    return rule


def list_rules(rq: ApiRequest) -> Any:
    user_id = _user(rq, "list_access_rules")
    stmt = select(AccessRule).where(AccessRule.user_id == user_id).order_by(
        AccessRule.position, AccessRule.id)  # creation order, as Keystone lists them
    for key in ("service", "path", "method"):
        if rq.query.get(key) is not None:
            stmt = stmt.where(getattr(AccessRule, key) == rq.query[key])
    return {"access_rules": [_view(rq, r) for r in rq.db.scalars(stmt)],
            "links": _collection_links(rq)}


def show_rule(rq: ApiRequest) -> Any:
    return {"access_rule": _view(rq, _one(rq, _user(rq, "get_access_rule")))}


def delete_rule(rq: ApiRequest) -> Any:
    user_id = _user(rq, "delete_access_rule")
    rule = _one(rq, user_id)
    in_use = any(r.get("id") == rule.id for cred in app_credentials.list_for_user(rq.db, user_id)
                 for r in cred.access_rules or [] if isinstance(r, dict))
    if in_use:
        raise Forbidden("May not delete access rule in use")  # Keystone's ForbiddenNotSecurity
    rq.db.delete(rule)
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/users/{user_id}/access_rules", get=list_rules)
    s.add("/v3/users/{user_id}/access_rules/{access_rule_id}", get=show_rule, delete=delete_rule)
