"""Keystone credentials: a user's stored blobs of any type, and EC2 access/secret pairs
(type `ec2`, blob `{"access", "secret", "trust_id"}`, id the SHA-256 of the access key)
with the /v3/ec2tokens login that checks a request's signature against them.

Blobs are stored as given (Keystone encrypts them with its own credential keys; see
docs/security.md), but for what an EC2 blob is bound to: `trust_id` and `app_cred_id`
are those of the token that made the credential, so that its logins are that trust's or
that application credential's again, and never ones the blob names (Keystone sets them
from the token too, but keeps a blob's own; its login then refuses a trust whose trustee
is not the owner). A PATCH changes neither (Keystone's 400)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from stackling.identity import app_credentials, ec2, logic, tokens, trusts
from stackling.identity.delegation_models import Credential
from stackling.identity.group_appcred_models import ApplicationCredential
from stackling.identity.logic import USER_PROJECT
from stackling.identity.models import Domain, Project, User

EC2 = "ec2"
EC2_TTL = dt.timedelta(minutes=15)  # Keystone's [credential] auth_ttl
# What an EC2 blob is bound to, set from the creating token only (Keystone's keys; OAuth1's
# access_token_id has no token here to come from, so a blob never carries one)
BOUND = ("trust_id", "app_cred_id", "access_token_id")


def _expecting(attribute: str, target: str) -> BadRequest:
    return BadRequest(f"Expecting to find {attribute} in {target}. The server could not comply "
                      "with the request since it is either malformed or otherwise incorrect. "
                      "The client is assumed to be in error.")


def ec2_id(access: str) -> str:
    return hashlib.sha256(access.encode()).hexdigest()


def _ec2_blob(blob: str) -> dict[str, Any]:
    try:
        data = json.loads(blob)
    except ValueError:
        raise BadRequest("Invalid blob in credential") from None
    if not data or not isinstance(data, dict):
        raise _expecting("blob", "credential")
    if not isinstance(data.get("access"), str) or not data["access"]:
        raise _expecting("access", "credential")
    return data


def get(db: Session, credential_id: str) -> Credential:
    cred = db.get(Credential, credential_id)
    if cred is None:
        raise NotFound(f"Could not find credential: {credential_id}.")
    return cred


def list_credentials(db: Session, *, user_id: str | None = None,
                     type_: str | None = None) -> list[Credential]:
    stmt = select(Credential).order_by(Credential.id)
    if user_id is not None:
        stmt = stmt.where(Credential.user_id == user_id)
    if type_ is not None:
        stmt = stmt.where(Credential.type == type_)
    return list(db.scalars(stmt))


def _bound(blob: dict[str, Any]) -> dict[str, Any]:
    return {k: blob[k] for k in BOUND if blob.get(k) is not None}


def create(db: Session, values: dict[str, Any], *, trust_id: str | None = None,
           app_cred_id: str | None = None) -> Credential:
    """A new credential; an EC2 one is bound to the trust or application credential of
    the token that makes it (`trust_id`, `app_cred_id`), and to nothing its blob names."""
    logic.get_user(db, values["user_id"])
    cred_id = uuid.uuid4().hex
    blob_text = values["blob"]
    if values["type"] == EC2:
        blob = _ec2_blob(blob_text)
        if not values.get("project_id"):
            raise _expecting("project_id", "credential")
        cred_id = ec2_id(blob["access"])
        given = {k: v for k, v in blob.items() if k not in BOUND or v is None}
        bound = {"trust_id": trust_id, "app_cred_id": app_cred_id}
        blob_text = json.dumps({**given, **{k: v for k, v in bound.items() if v}})
    if values.get("project_id"):
        logic.get_project(db, values["project_id"])
    cred = Credential(id=cred_id, user_id=values["user_id"], project_id=values.get("project_id"),
                      type=values["type"], blob=blob_text, extra=values.get("extra") or {})
    try:
        with db.begin_nested():
            db.add(cred)
    except IntegrityError:
        raise Conflict(f"Conflict occurred attempting to store credential - Duplicate ID, "
                       f"{cred_id}.") from None
    return cred


def update(db: Session, cred: Credential, values: dict[str, Any]) -> Credential:
    kind = values.get("type", cred.type)
    blob = values.get("blob", cred.blob)
    if kind == EC2:
        # what it is bound to stays (Keystone's check); a credential that was not an EC2
        # one is bound to nothing, so it becomes one bound to nothing
        was = _bound(ec2_blob(cred)) if cred.type == EC2 else {}
        now = _bound(_ec2_blob(blob))
        for key in BOUND:
            if was.get(key) != now.get(key):
                raise BadRequest(f"{key} can not be updated for credential")
        if ec2_id(_ec2_blob(blob)["access"]) != cred.id:
            # the id is the access key's hash: changing the key would orphan the id
            raise BadRequest("Credential ID and EC2 access key do not match.")
    if values.get("user_id"):
        logic.get_user(db, values["user_id"])
        cred.user_id = values["user_id"]
    if values.get("project_id"):
        logic.get_project(db, values["project_id"])
    for key in ("project_id", "type", "blob"):
        if key in values:
            setattr(cred, key, values[key])
    if values.get("extra"):
        cred.extra = {**(cred.extra or {}), **values["extra"]}
    return cred


# ------------------------------------------------------------------ EC2
def ec2_blob(cred: Credential) -> dict[str, Any]:
    try:
        data = json.loads(cred.blob)
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def create_ec2(db: Session, user: User, project_id: str, *, trust_id: str | None = None,
               app_cred_id: str | None = None) -> Credential:
    """An OS-EC2 access/secret pair, bound as `create` binds (Keystone's blob always has a
    `trust_id`, null when none)."""
    logic.get_project(db, project_id)
    blob = {"access": uuid.uuid4().hex, "secret": uuid.uuid4().hex, "trust_id": None}
    return create(db, {"user_id": user.id, "project_id": project_id, "type": EC2,
                       "blob": json.dumps(blob)}, trust_id=trust_id, app_cred_id=app_cred_id)


def get_ec2(db: Session, user_id: str, access: str) -> Credential:
    cred = db.get(Credential, ec2_id(access))
    if cred is None or cred.user_id != user_id or cred.type != EC2:
        raise NotFound(f"Could not find credential: {access}.")
    return cred


def ec2_token_data(db: Session, creds: dict[str, Any], expiration: int,
                   verify: Callable[[str, dict[str, Any]], bool] = ec2.verify
                   ) -> tokens.TokenData:
    """The token an EC2-signed request earns: the credential's user, scoped to its project,
    once the signature checks out under the stored secret (Keystone's checks, in its
    order and with its answers: its 401s are security errors, whose body says only the
    generic sentence, so the reasons are kept to the comments here)."""
    if not isinstance(creds.get("access"), str):
        raise Unauthorized()  # EC2 Signature not supplied
    cred = db.get(Credential, ec2_id(creds["access"]))
    if cred is None or cred.type != EC2:
        raise NotFound("EC2 access key not found.")  # one answer, whether or not it exists
    blob = ec2_blob(cred)
    if not creds.get("signature"):
        raise Unauthorized()  # EC2 signature not supplied
    if not verify(str(blob.get("secret", "")), creds):
        raise Unauthorized()  # Invalid EC2 signature
    user = db.get(User, cred.user_id)
    project = db.get(Project, cred.project_id) if cred.project_id else None
    domain = db.get(Domain, user.domain_id) if user else None
    if user is None or not user.enabled or project is None or not project.enabled or (
            domain is None or not domain.enabled):
        raise Unauthorized()
    now = dt.datetime.now(dt.UTC)
    if ec2.check_timestamp(creds, EC2_TTL, now):
        raise Unauthorized()  # the request is too old, or its timestamp unreadable
    if blob.get("trust_id"):
        # made with a trust-scoped token: the token is the trust's again, for its trustee;
        # the credential is the trustee's, or, made while impersonating, the trustor's.
        # Anyone else's naming the trust logs in as nobody (Keystone: not a trustee, 403)
        trust = trusts.get(db, str(blob["trust_id"]))
        if user.id not in {trust.trustee_user_id,
                           *((trust.trustor_user_id,) if trust.impersonation else ())}:
            raise Forbidden()
        trustee = db.get(User, trust.trustee_user_id)
        if trustee is None:
            raise Unauthorized()
        return trusts.token_data(db, trustee, trust.id, ["ec2credential"], expiration)
    if blob.get("app_cred_id"):
        # made with an application credential's token: the login is that credential's
        # (its roles, access rules and expiry), and ends with it
        app_cred = db.get(ApplicationCredential, str(blob["app_cred_id"]))
        if app_cred is None:
            raise Unauthorized()
        try:
            return app_credentials.token_data(db, app_cred, user, project, ["ec2credential"],
                                              expiration)
        except Unauthorized:
            raise Unauthorized() from None  # an EC2 login's 401 never says why
    roles = logic.effective_roles(db, USER_PROJECT, user.id, project.id)
    if not roles:
        raise Unauthorized()  # User not valid for project
    return tokens.TokenData(
        user_id=user.id, methods=["ec2credential"], issued_at=now,
        expires_at=now + dt.timedelta(seconds=expiration), audit_ids=[tokens.new_audit_id()],
        project_id=project.id, project_name=project.name, project_domain_id=project.domain_id,
        user_domain_id=user.domain_id, user_name=user.name, roles=[r.name for r in roles])
