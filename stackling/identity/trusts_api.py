"""Identity v3 OS-TRUST routes: /v3/OS-TRUST/trusts and a trust's roles.

Policies as Keystone's defaults: anyone creates a trust as its own trustor; the trustor
and the trustee read it (and list by their own id); the trustor deletes it; admins may
do all but create one for someone else."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import Forbidden, NotFound
from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import logic, tokens, trusts
from stackling.identity.api import (
    BOOL,
    LIST,
    STRING,
    _collection_links,
    _keys,
    _links,
    check,
    role_view,
)
from stackling.identity.delegation_models import Trust

POLICIES = ("create_trust", "list_trusts", "get_trust", "delete_trust", "list_roles_for_trust",
            "get_role_for_trust")
TRUST_SPEC = {"trustor_user_id": (STRING, True), "trustee_user_id": (STRING, True),
              "impersonation": (BOOL, True), "project_id": (STRING, False),
              "roles": (LIST, False), "expires_at": (STRING, False),
              "allow_redelegation": (BOOL, False)}


def _deny(action: str) -> Forbidden:
    return Forbidden(f"You are not authorized to perform the requested action: "
                     f"identity:{action}.")


def trust_view(rq: ApiRequest, t: Trust, *, roles: bool = True) -> dict[str, Any]:
    """A trust as Keystone shows one; a list leaves out its roles."""
    base = f"OS-TRUST/trusts/{t.id}"
    view = {"id": t.id, "trustor_user_id": t.trustor_user_id,
            "trustee_user_id": t.trustee_user_id, "project_id": t.project_id,
            "impersonation": t.impersonation,
            "expires_at": tokens.format_time(t.expires_at) if t.expires_at else None,
            "remaining_uses": t.remaining_uses, "allow_redelegation": False,
            "redelegation_count": 0, "redelegated_trust_id": None,
            "links": _links(rq, base)}
    if roles:
        view["roles"] = [role_view(rq, r) for r in trusts.role_rows(rq.db, t)]
        view["roles_links"] = {"self": f"{rq.service_url}/v3/{base}/roles", "previous": None,
                               "next": None}
    return view


def _party(rq: ApiRequest, action: str, *, trustee_too: bool = True) -> Trust:
    trust = trusts.get(rq.db, rq.path_params["trust_id"])
    parties = {trust.trustor_user_id, *((trust.trustee_user_id,) if trustee_too else ())}
    if rq.ctx.user_id not in parties and not rq.allowed(f"identity:{action}"):
        raise Forbidden("You are not authorized to perform the requested action: Requested "
                        "user has no relation to this trust.")
    return trust


def create_trust(rq: ApiRequest) -> Any:
    body = check(dict(logic.require_fields(rq.json(), "trust")), TRUST_SPEC, allow_extra=True)
    if body.get("allow_redelegation"):
        raise Forbidden("Redelegation of trusts is not supported.")
    caller = tokens.decode(rq.db, _keys(rq), rq.ctx.auth_token or "")
    return 201, {"trust": trust_view(rq, trusts.create(rq.db, caller, body))}


def list_trusts(rq: ApiRequest) -> Any:
    trustor, trustee = rq.query.get("trustor_user_id"), rq.query.get("trustee_user_id")
    own = rq.ctx.user_id is not None and rq.ctx.user_id in (trustor, trustee)
    if not own and not rq.allowed("identity:list_trusts"):
        raise _deny("list_trusts")
    rows = trusts.list_trusts(rq.db, trustor, trustee)
    return {"trusts": [trust_view(rq, t, roles=False) for t in rows],
            "links": _collection_links(rq)}


def show_trust(rq: ApiRequest) -> Any:
    return {"trust": trust_view(rq, _party(rq, "get_trust"))}


def delete_trust(rq: ApiRequest) -> Any:
    trust = _party(rq, "delete_trust", trustee_too=False)
    trusts.require_unrestricted(rq.db, tokens.decode(rq.db, _keys(rq), rq.ctx.auth_token or ""))
    trusts.delete(rq.db, trust)
    return no_content()


def trust_roles(rq: ApiRequest) -> Any:
    trust = _party(rq, "list_roles_for_trust")
    return {"roles": [role_view(rq, r) for r in trusts.role_rows(rq.db, trust)],
            "links": _collection_links(rq)}


def trust_role(rq: ApiRequest) -> Any:
    trust = _party(rq, "get_role_for_trust")
    role_id = rq.path_params["role_id"]
    if role_id not in (trust.roles or []):
        raise NotFound(f"Could not find role: {role_id}.")
    if rq.method == "HEAD":
        return no_content(200)
    return {"role": role_view(rq, logic.get_role(rq.db, role_id))}


def add_routes(s: Service) -> None:
    s.add("/v3/OS-TRUST/trusts", get=list_trusts, post=create_trust)
    s.add("/v3/OS-TRUST/trusts/{trust_id}", get=show_trust, delete=delete_trust)
    s.add("/v3/OS-TRUST/trusts/{trust_id}/roles", get=trust_roles)
    s.add("/v3/OS-TRUST/trusts/{trust_id}/roles/{role_id}", get=trust_role, head=trust_role)
