"""Identity v3 routes for credentials: /v3/credentials, a user's EC2 credentials
(/v3/users/{id}/credentials/OS-EC2) and the signature logins (/v3/ec2tokens,
/v3/s3tokens).

Policies as Keystone's defaults: a user manages its own credentials, admins everyone's;
another's credential is a 403 for a non-admin."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest, Forbidden
from stackling.common.http import ApiRequest, Service, json_response, no_content
from stackling.identity import credentials, ec2, logic, tokens
from stackling.identity.api import STRING, _collection_links, _keys, _links, check, limit_lengths
from stackling.identity.delegation_models import Credential

POLICIES = ("list_credentials", "get_credential", "create_credential", "update_credential",
            "delete_credential", "ec2_list_credentials", "ec2_get_credential",
            "ec2_create_credential", "ec2_delete_credential")
CREDENTIAL_SPEC = {"blob": (STRING, True), "type": (STRING, True), "user_id": (STRING, True),
                   "project_id": (STRING, False)}
EC2_SPEC = {"tenant_id": (STRING, True)}


def credential_view(rq: ApiRequest, c: Credential) -> dict[str, Any]:
    view = {"id": c.id, "user_id": c.user_id, "project_id": c.project_id, "type": c.type,
            "blob": c.blob, "links": _links(rq, f"credentials/{c.id}")}
    for k, v in (c.extra or {}).items():
        view.setdefault(k, v)
    return view


def _deny(action: str) -> Forbidden:
    return Forbidden(f"You are not authorized to perform the requested action: "
                     f"identity:{action}.")


def _not_from_ec2(rq: ApiRequest, action: str) -> tokens.TokenData:
    """The caller's token, unless an EC2 login minted it: such a token makes no new
    credentials (as Keystone's guard against a leaked key minting more)."""
    caller = tokens.decode(rq.db, _keys(rq), rq.ctx.auth_token or "")
    if "ec2credential" in caller.methods:
        raise _deny(action)
    return caller


def _owned(rq: ApiRequest, action: str) -> Credential:
    """The path's credential if the caller owns it or is an admin; as Keystone, the policy
    is checked first, so a non-admin gets 403 for another's or a missing credential."""
    cred_id = rq.path_params["credential_id"]
    if not rq.allowed(f"identity:{action}"):
        cred = rq.db.get(Credential, cred_id)
        if cred is None or cred.user_id != rq.ctx.user_id:
            raise _deny(action)
    return credentials.get(rq.db, cred_id)


def list_credentials(rq: ApiRequest) -> Any:
    user_id = rq.query.get("user_id")
    if not rq.allowed("identity:list_credentials"):
        if user_id not in (None, rq.ctx.user_id):
            return {"credentials": [], "links": _collection_links(rq)}
        user_id = rq.ctx.user_id  # a user lists its own only
    rows = credentials.list_credentials(rq.db, user_id=user_id, type_=rq.query.get("type"))
    return {"credentials": [credential_view(rq, c) for c in rows], "links": _collection_links(rq)}


def show_credential(rq: ApiRequest) -> Any:
    return {"credential": credential_view(rq, _owned(rq, "get_credential"))}


def _extra(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in CREDENTIAL_SPEC and k != "id"}


def create_credential(rq: ApiRequest) -> Any:
    body = limit_lengths(check(dict(logic.require_fields(rq.json(), "credential")),
                               CREDENTIAL_SPEC, allow_extra=True), {"type": 255})
    if body["user_id"] != rq.ctx.user_id and not rq.allowed("identity:create_credential"):
        raise _deny("create_credential")
    caller = _not_from_ec2(rq, "create_credential")
    if body["type"] == credentials.EC2:
        body["project_id"] = body.get("project_id") or rq.ctx.project_id
    # an EC2 credential's logins are the caller's trust's or application credential's again
    cred = credentials.create(rq.db, {**body, "extra": _extra(body)}, trust_id=caller.trust_id,
                              app_cred_id=caller.app_cred_id)
    return 201, {"credential": credential_view(rq, cred)}


def update_credential(rq: ApiRequest) -> Any:
    cred = _owned(rq, "update_credential")
    body = limit_lengths(check(dict(logic.require_fields(rq.json(), "credential")),
                               {k: (kind, False) for k, (kind, _) in CREDENTIAL_SPEC.items()},
                               allow_extra=True), {"type": 255})
    if body.get("id") not in (None, cred.id):
        raise BadRequest("Cannot change credential ID")
    if body.get("user_id") not in (None, cred.user_id) and not rq.allowed(
            "identity:update_credential"):
        raise _deny("update_credential")
    return {"credential": credential_view(rq, credentials.update(
        rq.db, cred, {**body, "extra": _extra(body)}))}


def delete_credential(rq: ApiRequest) -> Any:
    rq.db.delete(_owned(rq, "delete_credential"))
    return no_content()


# ------------------------------------------------------------------ OS-EC2
def ec2_view(rq: ApiRequest, c: Credential) -> dict[str, Any]:
    blob = credentials.ec2_blob(c)
    return {"user_id": c.user_id, "tenant_id": c.project_id, "access": blob.get("access"),
            "secret": blob.get("secret"), "trust_id": blob.get("trust_id"),
            "links": _links(rq, f"users/{c.user_id}/credentials/OS-EC2/{blob.get('access')}")}


def _ec2_user(rq: ApiRequest, action: str) -> str:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id and not rq.allowed(f"identity:{action}"):
        raise _deny(action)
    logic.get_user(rq.db, user_id)
    return user_id


def ec2_list(rq: ApiRequest) -> Any:
    user_id = _ec2_user(rq, "ec2_list_credentials")
    rows = credentials.list_credentials(rq.db, user_id=user_id, type_=credentials.EC2)
    return {"credentials": [ec2_view(rq, c) for c in rows], "links": _collection_links(rq)}


def ec2_create(rq: ApiRequest) -> Any:
    user = logic.get_user(rq.db, _ec2_user(rq, "ec2_create_credential"))
    body = rq.json()
    if not isinstance(body, dict):
        raise BadRequest("Invalid input for field 'tenant_id': 'tenant_id' is a required "
                         "property")
    check(body, EC2_SPEC, allow_extra=True)
    caller = _not_from_ec2(rq, "ec2_create_credential")
    cred = credentials.create_ec2(rq.db, user, body["tenant_id"], trust_id=caller.trust_id,
                                  app_cred_id=caller.app_cred_id)
    return 201, {"credential": ec2_view(rq, cred)}


def ec2_show(rq: ApiRequest) -> Any:
    user_id = _ec2_user(rq, "ec2_get_credential")
    return {"credential": ec2_view(rq, credentials.get_ec2(
        rq.db, user_id, rq.path_params["credential_id"]))}


def ec2_delete(rq: ApiRequest) -> Any:
    user_id = _ec2_user(rq, "ec2_delete_credential")
    rq.db.delete(credentials.get_ec2(rq.db, user_id, rq.path_params["credential_id"]))
    return no_content()


def _signed_credentials(rq: ApiRequest) -> dict[str, Any]:
    body = rq.json(malformed="request must include a request body")
    if not body or not isinstance(body, dict):
        raise BadRequest("request must include a request body")
    creds = body.get("credentials") or body.get("credential") or body.get("ec2Credentials")
    return creds if isinstance(creds, dict) else {}


def ec2_tokens(rq: ApiRequest) -> Any:
    """POST /v3/ec2tokens: a token for a request signed with an EC2 secret."""
    data = credentials.ec2_token_data(rq.db, _signed_credentials(rq),
                                      rq.settings.identity.token_expiration)
    token = tokens.issue(rq.db, _keys(rq), data)
    body = logic.render_token(rq.db, data, rq.base_url)
    return json_response({"token": body}, 200, {"X-Subject-Token": token})


def s3_tokens(rq: ApiRequest) -> Any:
    """POST /v3/s3tokens: an S3 request's signature checked (swift3/s3api middleware asks);
    as Keystone, the token's body only, no X-Subject-Token."""
    data = credentials.ec2_token_data(rq.db, _signed_credentials(rq),
                                      rq.settings.identity.token_expiration, ec2.s3_verify)
    return json_response({"token": logic.render_token(rq.db, data, rq.base_url)}, 200)


def add_routes(s: Service) -> None:
    s.add("/v3/credentials", get=list_credentials, post=create_credential)
    s.add("/v3/credentials/{credential_id}", get=show_credential, patch=update_credential,
          delete=delete_credential)
    s.add("/v3/users/{user_id}/credentials/OS-EC2", get=ec2_list, post=ec2_create)
    s.add("/v3/users/{user_id}/credentials/OS-EC2/{credential_id}", get=ec2_show,
          delete=ec2_delete)
    s.add("/v3/ec2tokens", public=True, post=ec2_tokens)
    s.add("/v3/s3tokens", public=True, post=s3_tokens)
