"""Identity v3 routes for domain writes (reads are in api.py)."""

from __future__ import annotations

import re
from typing import Any

from stackling.common.errors import BadRequest
from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import domains, logic
from stackling.identity.api import BOOL, LIST, OBJECT, STRING, _require_admin, check, domain_view

POLICIES = ("create_domain", "update_domain", "delete_domain")
DOMAIN_SPEC = {"name": (STRING, True), "description": (STRING, False), "enabled": (BOOL, False),
               "tags": (LIST, False), "options": (OBJECT, False),
               "explicit_domain_id": (STRING, False)}


def create_domain(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_domain")
    body = check(dict(logic.require_fields(rq.json(), "domain")), DOMAIN_SPEC, allow_extra=True,
                 max_len={"name": 64})
    explicit = body.get("explicit_domain_id")
    if explicit is not None and not re.fullmatch(r"[0-9a-f]{32}", explicit.replace("-", "")):
        raise BadRequest("Domain ID does not conform to required UUID format.")
    values = {**body, "id": explicit.replace("-", "") if explicit else None}
    return 201, {"domain": domain_view(rq, domains.create_domain(rq.db, values))}


def update_domain(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_domain")
    domain = logic.get_domain(rq.db, rq.path_params["domain_id"])
    body = check(dict(logic.require_fields(rq.json(), "domain")),
                 {**DOMAIN_SPEC, "name": (STRING, False)}, allow_extra=True, max_len={"name": 64})
    if body.get("id") not in (None, domain.id):
        raise BadRequest("Cannot change the ID of a domain.")
    return {"domain": domain_view(rq, domains.update_domain(rq.db, domain, body))}


def delete_domain(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_domain")
    domains.delete_domain(rq.db, logic.get_domain(rq.db, rq.path_params["domain_id"]))
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/domains", post=create_domain)
    s.add("/v3/domains/{domain_id}", patch=update_domain, delete=delete_domain)
