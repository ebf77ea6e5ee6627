"""Identity v3 routes for a user's application credentials."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest, Forbidden
from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import app_credentials, logic, tokens
from stackling.identity.api import BOOL, LIST, STRING, _collection_links, _keys, _links, check
from stackling.identity.group_appcred_models import ApplicationCredential

POLICIES = ("get_application_credential", "list_application_credentials",
            "create_application_credential", "delete_application_credential")
SPEC = {"name": (STRING, True), "description": (STRING, False), "secret": (STRING, False),
        "expires_at": (STRING, False), "roles": (LIST, False), "unrestricted": (BOOL, False),
        "access_rules": (LIST, False)}


def view(rq: ApiRequest, cred: ApplicationCredential, secret: str | None = None
         ) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": cred.id, "name": cred.name, "description": cred.description,
        "user_id": cred.user_id, "project_id": cred.project_id,
        "expires_at": app_credentials.format_expiry(cred.expires_at),
        "unrestricted": cred.unrestricted, "roles": app_credentials.role_refs(rq.db, cred),
        "access_rules": list(cred.access_rules or []),
        "links": _links(rq, f"users/{cred.user_id}/application_credentials/{cred.id}")}
    if secret is not None:
        body["secret"] = secret
    return body


def _authorize(rq: ApiRequest, action: str) -> str:
    """Owner or admin (Keystone's `rule:owner or rule:admin_required`); the user id."""
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id and not rq.allowed(f"identity:{action}"):
        raise Forbidden(f"You are not authorized to perform the requested action: "
                        f"identity:{action}.")
    return user_id


def _token(rq: ApiRequest) -> tokens.TokenData:
    return tokens.decode(rq.db, _keys(rq), rq.ctx.auth_token or "")


def create(rq: ApiRequest) -> Any:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id:  # only for oneself, even as admin (as Keystone)
        raise Forbidden("You are not authorized to perform the requested action: "
                        "identity:create_application_credential.")
    app_credentials.require_unrestricted(rq.db, _token(rq))
    body = check(dict(logic.require_fields(rq.json(), "application_credential")), SPEC,
                 allow_extra=False)
    if body.get("expires_at") is None:
        body.pop("expires_at", None)
    if not rq.ctx.project_id:
        raise BadRequest("Application credentials must be created with a project-scoped "
                         "token.")
    user = logic.get_user(rq.db, user_id)
    cred, secret = app_credentials.create(
        rq.db, user, rq.ctx.project_id, body, list(rq.ctx.roles),
        rq.settings.identity.password_hash_rounds)
    return 201, {"application_credential": view(rq, cred, secret)}


def index(rq: ApiRequest) -> Any:
    user_id = _authorize(rq, "list_application_credentials")
    logic.get_user(rq.db, user_id)
    creds = app_credentials.list_for_user(rq.db, user_id, rq.query.get("name"))
    return {"application_credentials": [view(rq, c) for c in creds],
            "links": _collection_links(rq)}


def show(rq: ApiRequest) -> Any:
    user_id = _authorize(rq, "get_application_credential")
    cred = app_credentials.get(rq.db, user_id, rq.path_params["cred_id"])
    return {"application_credential": view(rq, cred)}


def delete(rq: ApiRequest) -> Any:
    user_id = _authorize(rq, "delete_application_credential")
    app_credentials.require_unrestricted(rq.db, _token(rq))
    app_credentials.remove(rq.db, app_credentials.get(rq.db, user_id, rq.path_params["cred_id"]))
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/users/{user_id}/application_credentials", get=index, post=create)
    s.add("/v3/users/{user_id}/application_credentials/{cred_id}", get=show, delete=delete)
