"""Keystone application credentials: create, list, show, delete, and authentication.

The secret is shown once, at creation, and stored as a bcrypt hash (the password
hasher). A credential carries a subset of its creator's roles on one project; a token
issued from it holds those of them the user still has, lives no longer than the
credential, and stops validating once the credential is deleted or expired.
"""

from __future__ import annotations

import datetime as dt
import secrets
import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common import access_rules
from stackling.common.db import insert_absent
from stackling.common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from stackling.identity import logic, tokens
from stackling.identity.delegation_models import AccessRule
from stackling.identity.group_appcred_models import ApplicationCredential
from stackling.identity.logic import USER_PROJECT
from stackling.identity.models import NULL_DOMAIN_ID, Domain, Project, Role, User

METHOD = "application_credential"


def parse_expiry(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"Invalid input for field 'expires_at': {value!r} is not of type "
                         "'string', 'null'")
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"Invalid input for field 'expires_at': {value!r} is not a "
                         "'date-time'") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def format_expiry(value: dt.datetime | None) -> str | None:
    """As Keystone renders it: microseconds, no zone."""
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") if value else None


def user_role_ids(db: Session, user_id: str, project_id: str) -> set[str]:
    return {r.id for r in logic.effective_roles(db, USER_PROJECT, user_id, project_id)}


def resolve_roles(db: Session, requested: list[dict[str, Any]] | None, token_roles: list[str],
                  user_id: str, project_id: str) -> list[str]:
    """Requested roles (by id or name) or, when none (absent or `[]`, as the CLI sends),
    the token's; each must be held."""
    if not requested:
        rows = list(db.scalars(select(Role).where(Role.name.in_(token_roles),
                                                 Role.domain_id == NULL_DOMAIN_ID)))
    else:
        rows = []
        for ref in requested:
            if not isinstance(ref, dict) or not ({"id", "name"} & set(ref)):
                raise BadRequest("Invalid input for field 'roles': each role needs an id or a "
                                 "name.")
            if "id" in ref:
                rows.append(logic.get_role(db, str(ref["id"])))
            else:
                role = db.scalars(select(Role).where(Role.name == str(ref["name"]),
                                                   Role.domain_id == NULL_DOMAIN_ID)).first()
                if role is None:
                    raise NotFound(f"Could not find role: {ref['name']}.")
                rows.append(role)
    held = user_role_ids(db, user_id, project_id)
    for role in rows:
        if role.id not in held:
            raise NotFound(f"Could not find role assignment with role: {role.id}, user or "
                           f"group: {user_id}, project, domain, or system: {project_id}.")
    return list(dict.fromkeys(r.id for r in rows))


def resolve_access_rules(db: Session, user_id: str, requested: list[Any] | None
                         ) -> list[dict[str, str]]:
    """The credential's access rules, checked as Keystone's schema does, each with an id:
    the user's stored rule (identity_access_rule) when an identical one exists, else a new
    one stored now; a rule given by id alone is the user's rule of that id."""
    fields = ("service", "method", "path")
    rules: list[dict[str, str]] = []
    for i, rule in enumerate(requested or []):
        wrong = access_rules.validation_error(rule)
        if wrong:
            field, why = wrong
            where = f"access_rules/{i}" + (f"/{field}" if field else "")
            raise BadRequest(f"Invalid input for field '{where}': {why}")
        if not all(k in rule for k in fields):
            if "id" not in rule:
                raise BadRequest(f"Invalid input for field 'access_rules/{i}': service, "
                                 "method and path are required")
            row = db.get(AccessRule, rule["id"])
            if row is None or row.user_id != user_id:
                raise NotFound(f"Could not find Access Rule: {rule['id']}.")
        else:
            values = {"user_id": user_id, **{k: rule[k] for k in fields}}
            # one row per distinct rule, also when two credentials name it at once
            position = db.scalar(select(func.coalesce(func.max(AccessRule.position), 0) + 1)
                                 .where(AccessRule.user_id == user_id))
            insert_absent(db, AccessRule, [{"id": uuid.uuid4().hex, "position": position,
                                            **values}])
            row = db.scalars(select(AccessRule).filter_by(**values)).one()
        rules.append({"id": row.id, "service": row.service, "method": row.method,
                      "path": row.path})
    return rules


def create(db: Session, user: User, project_id: str, values: dict[str, Any],
           token_roles: list[str], rounds: int) -> tuple[ApplicationCredential, str]:
    """The new credential and its secret (the only time the secret is known)."""
    expires_at = parse_expiry(values.get("expires_at"))
    if expires_at is not None and expires_at <= dt.datetime.now(dt.UTC):
        raise BadRequest("The 'expires_at' must not be before now.")
    roles = resolve_roles(db, values.get("roles"), token_roles, user.id, project_id)
    rules = resolve_access_rules(db, user.id, values.get("access_rules"))
    secret = values.get("secret") or secrets.token_urlsafe(64)
    cred = ApplicationCredential(
        id=logic.new_id(), name=values["name"], user_id=user.id, project_id=project_id,
        secret_hash=logic.hash_password(secret, rounds), description=values.get("description"),
        expires_at=expires_at, unrestricted=bool(values.get("unrestricted", False)),
        roles=roles, access_rules=rules)
    try:
        with db.begin_nested():
            db.add(cred)
    except IntegrityError:
        raise Conflict("Conflict occurred attempting to store application_credential - "
                       f"Duplicate name, {values['name']}.") from None
    return cred, secret


def get(db: Session, user_id: str, cred_id: str) -> ApplicationCredential:
    cred = db.get(ApplicationCredential, cred_id)
    if cred is None or cred.user_id != user_id:
        raise NotFound(f"Could not find Application Credential: {cred_id}.")
    return cred


def list_for_user(db: Session, user_id: str, name: str | None = None
                  ) -> list[ApplicationCredential]:
    stmt = select(ApplicationCredential).where(ApplicationCredential.user_id == user_id)
    if name is not None:
        stmt = stmt.where(ApplicationCredential.name == name)
    return list(db.scalars(stmt.order_by(ApplicationCredential.name)))


def remove(db: Session, cred: ApplicationCredential) -> None:
    db.delete(cred)


def role_refs(db: Session, cred: ApplicationCredential) -> list[dict[str, Any]]:
    if not cred.roles:
        return []
    rows = db.scalars(select(Role).where(Role.id.in_(cred.roles)).order_by(Role.name))
    return [{"id": r.id, "name": r.name, "domain_id": None} for r in rows]


def require_unrestricted(db: Session, token_data: tokens.TokenData) -> None:
    """A token from a restricted application credential may not delegate further."""
    if token_data.app_cred_id is None:
        return
    cred = db.get(ApplicationCredential, token_data.app_cred_id)
    if cred is None or not cred.unrestricted:
        raise Forbidden("You are not authorized to perform the requested action: Using method "
                        "'application_credential' is not allowed for managing additional "
                        "application credentials.")


# ------------------------------------------------------------------ authentication
def _find(db: Session, ref: dict[str, Any]) -> ApplicationCredential | None:
    if "id" in ref:
        return db.get(ApplicationCredential, str(ref["id"]))
    user_ref = ref.get("user")
    if not isinstance(user_ref, dict) or "name" not in ref:
        return None
    if "id" not in user_ref and "name" not in user_ref:
        return None
    user = logic.find_user(db, user_ref)
    if user is None:
        return None
    return db.scalars(select(ApplicationCredential).where(
        ApplicationCredential.user_id == user.id,
        ApplicationCredential.name == str(ref["name"]))).first()


def authenticate(db: Session, expiration: int, identity: dict[str, Any],
                 scope: Any, rounds: int = 10) -> tokens.TokenData:
    """The `application_credential` auth method: a token scoped to the credential's
    project with the credential's roles the user still holds."""
    ref = identity.get(METHOD)
    if not isinstance(ref, dict) or not isinstance(ref.get("secret"), str) or not (
            "id" in ref or "name" in ref):
        raise BadRequest("Invalid input for field 'identity/application_credential': id or "
                         "name and secret must be present.")
    if scope:
        raise Unauthorized("Application credentials cannot request a scope.")
    cred = _find(db, ref)
    if not logic.verify_password(ref["secret"], cred.secret_hash if cred else None,
                                 rounds) or cred is None:
        raise Unauthorized("Invalid application credential.")
    user = db.get(User, cred.user_id)
    project = db.get(Project, cred.project_id)
    domain = db.get(Domain, user.domain_id) if user else None
    if (user is None or not user.enabled or domain is None or not domain.enabled
            or project is None or not project.enabled):
        raise Unauthorized()
    return token_data(db, cred, user, project, [METHOD], expiration)


def token_data(db: Session, cred: ApplicationCredential, user: User, project: Project,
               methods: list[str], expiration: int) -> tokens.TokenData:
    """A token of the credential (its password-less login, or an EC2 login bound to it):
    the credential's roles the user still holds on its project, no longer than it lives;
    its access rules follow the token (`app_cred_id`)."""
    now = dt.datetime.now(dt.UTC)
    if cred.expires_at is not None and cred.expires_at <= now:
        raise Unauthorized("Application credential has expired.")
    if cred.user_id != user.id or cred.project_id != project.id:
        raise Unauthorized()
    held = user_role_ids(db, user.id, project.id)
    roles = [r for r in logic.expand_implied(db, cred.roles) if r in held]
    if not roles:
        raise Unauthorized("The user no longer holds the application credential's roles.")
    names = sorted(db.scalars(select(Role.name).where(Role.id.in_(roles))))
    expires = now + dt.timedelta(seconds=expiration)
    if cred.expires_at is not None:
        expires = min(expires, cred.expires_at)
    return tokens.TokenData(
        user_id=user.id, methods=methods, issued_at=now, expires_at=expires,
        audit_ids=[tokens.new_audit_id()], project_id=project.id, project_name=project.name,
        project_domain_id=project.domain_id, roles=names, user_domain_id=user.domain_id,
        user_name=user.name, app_cred_id=cred.id)
