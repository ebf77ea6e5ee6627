"""Identity v3 /v3/users/{id}/access_rules: the access rules a user's application
credentials carry (list, show, delete). Owner or admin, as Keystone's defaults.

stackling keeps a rule inside the credentials that use it, so a rule exists while some
credential carries it; deleting one still in use is refused, as Keystone refuses it."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import Forbidden, NotFound
from stackling.common.http import ApiRequest, Service
from stackling.identity import app_credentials, logic
from stackling.identity.api import _collection_links, _links

POLICIES = ("list_access_rules", "get_access_rule", "delete_access_rule")


def _user(rq: ApiRequest, action: str) -> str:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id and not rq.allowed(f"identity:{action}"):
        raise Forbidden(f"You are not authorized to perform the requested action: "
                        f"identity:{action}.")
    logic.get_user(rq.db, user_id)
    return user_id


def _rules(rq: ApiRequest, user_id: str) -> dict[str, dict[str, Any]]:
    rules: dict[str, dict[str, Any]] = {}
    for cred in app_credentials.list_for_user(rq.db, user_id):
        for rule in cred.access_rules or []:
            if isinstance(rule, dict) and isinstance(rule.get("id"), str):
                rules.setdefault(rule["id"], rule)
    return rules


def _view(rq: ApiRequest, user_id: str, rule: dict[str, Any]) -> dict[str, Any]:
    return {"id": rule["id"], "service": rule.get("service"), "path": rule.get("path"),
            "method": rule.get("method"),
            "links": _links(rq, f"users/{user_id}/access_rules/{rule['id']}")}


def _one(rq: ApiRequest, user_id: str) -> dict[str, Any]:
    rule = _rules(rq, user_id).get(rq.path_params["access_rule_id"])
    if rule is None:
        raise NotFound(f"Could not find Access Rule: {rq.path_params['access_rule_id']}.")
    return rule


def list_rules(rq: ApiRequest) -> Any:
    user_id = _user(rq, "list_access_rules")
    rules = _rules(rq, user_id).values()
    q = rq.query
    rows = [r for r in rules if all(q.get(k) in (None, r.get(k)) for k in ("service", "path",
                                                                           "method"))]
    return {"access_rules": [_view(rq, user_id, r) for r in rows], "links": _collection_links(rq)}


def show_rule(rq: ApiRequest) -> Any:
    user_id = _user(rq, "get_access_rule")
    return {"access_rule": _view(rq, user_id, _one(rq, user_id))}


def delete_rule(rq: ApiRequest) -> Any:
    user_id = _user(rq, "delete_access_rule")
    _one(rq, user_id)
    raise Forbidden("May not delete access rule in use")  # Keystone's ForbiddenNotSecurity


def add_routes(s: Service) -> None:
    s.add("/v3/users/{user_id}/access_rules", get=list_rules)
    s.add("/v3/users/{user_id}/access_rules/{access_rule_id}", get=show_rule, delete=delete_rule)
