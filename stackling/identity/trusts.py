"""OS-TRUST: a trustor delegates some of its roles on a project to a trustee, who then gets
trust-scoped tokens (`"scope": {"OS-TRUST:trust": {"id": …}}`) acting for the trustor
(impersonation) or as itself. Heat's deferred authentication is built on them.

A token from a trust lives only as long as the trust does: deleting the trust, or the
trustor losing a delegated role, ends it. `remaining_uses` is spent by one conditional
UPDATE per token, so concurrent logins never overspend it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from stackling.common.errors import BadRequest, Forbidden, NotFound, Unauthorized
from stackling.identity import logic, tokens, trust_state
from stackling.identity.delegation_models import Trust
from stackling.identity.group_appcred_models import ApplicationCredential
from stackling.identity.logic import USER_PROJECT
from stackling.identity.models import NULL_DOMAIN_ID, Project, Role, User

SCOPE = "OS-TRUST:trust"
# a token minted from an EC2 credential delegates no further (Keystone's LP#2153453 guard)
DELEGATED_METHOD = "ec2credential"


def get(db: Session, trust_id: str) -> Trust:
    trust = db.get(Trust, trust_id)
    if trust is None:
        raise NotFound(f"Could not find trust: {trust_id}.")
    return trust


def _forbidden(action: str) -> Forbidden:
    return Forbidden(f"You are not authorized to perform the requested action: {action}.")


def parse_expiry(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    text = str(value)
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"Invalid input for field 'expires_at': {text!r} is not a "
                         "'date-time'") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _resolve_roles(db: Session, refs: list[Any]) -> list[Role]:
    roles = []
    for ref in refs:
        if not isinstance(ref, dict) or not ({"id", "name"} & set(ref)):
            raise BadRequest("Invalid input for field 'roles': each role needs an id or a name.")
        if "id" in ref:
            roles.append(logic.get_role(db, str(ref["id"])))
            continue
        role = db.scalars(select(Role).where(Role.name == str(ref["name"]),
                                             Role.domain_id == NULL_DOMAIN_ID)).first()
        if role is None:
            raise NotFound(f"Could not find role: {ref['name']}.")
        roles.append(role)
    return roles


def require_unrestricted(db: Session, caller: tokens.TokenData) -> None:
    """As Keystone: a restricted application credential's token manages no trusts."""
    if caller.app_cred_id:
        cred = db.get(ApplicationCredential, caller.app_cred_id)
        if cred is None or not cred.unrestricted:
            raise _forbidden("Using method 'application_credential' is not allowed for "
                             "managing trusts")


def create(db: Session, caller: tokens.TokenData, values: dict[str, Any]) -> Trust:
    require_unrestricted(db, caller)
    if caller.trust_id or DELEGATED_METHOD in caller.methods:
        # a trust token would redelegate (refused); an EC2 login's token delegates nothing
        raise _forbidden("identity:create_trust")
    if values.get("project_id") and not values.get("roles"):
        raise _forbidden("At least one role should be specified")
    if values["trustor_user_id"] != caller.user_id:
        raise _forbidden("The authenticated user should match the trustor")
    logic.get_user(db, values["trustee_user_id"])
    uses = values.get("remaining_uses")
    if uses is not None and (isinstance(uses, bool) or not isinstance(uses, int) or uses < 1
                             or uses > 2**31 - 1):
        raise BadRequest("Invalid input for field 'remaining_uses': must be a positive integer "
                         "or null.")
    project_id = values.get("project_id")
    roles = _resolve_roles(db, values.get("roles") or [])
    if project_id:
        logic.get_project(db, project_id)
        held = {r.id for r in logic.effective_roles(db, USER_PROJECT, caller.user_id, project_id)}
        for role in roles:
            if role.id not in held:  # as Keystone: a role the trustor lacks is not found
                raise NotFound(f"Could not find role: {role.id}.")
    elif roles:
        raise BadRequest("Roles can only be delegated on a project.")
    expires_at = parse_expiry(values.get("expires_at"))
    if expires_at is not None and expires_at <= dt.datetime.now(dt.UTC):
        raise BadRequest("The 'expires_at' must not be before now. The server could not comply "
                         "with the request since it is either malformed or otherwise "
                         "incorrect. The client is assumed to be in error.")
    trust = Trust(id=logic.new_id(), trustor_user_id=caller.user_id,
                  trustee_user_id=values["trustee_user_id"], project_id=project_id,
                  impersonation=bool(values["impersonation"]), expires_at=expires_at,
                  remaining_uses=uses, roles=list(dict.fromkeys(r.id for r in roles)))
    db.add(trust)
    return trust


def list_trusts(db: Session, trustor: str | None, trustee: str | None) -> list[Trust]:
    stmt = select(Trust).order_by(Trust.created_at, Trust.id)
    if trustor:
        stmt = stmt.where(Trust.trustor_user_id == trustor)
    if trustee:
        stmt = stmt.where(Trust.trustee_user_id == trustee)
    return [t for t in db.scalars(stmt) if not trust_state.expired(t)]


def delete(db: Session, trust: Trust) -> None:
    db.delete(trust)  # its tokens check that it still exists (still_valid)


def role_rows(db: Session, trust: Trust) -> list[Role]:
    if not trust.roles:
        return []
    return list(db.scalars(select(Role).where(Role.id.in_(trust.roles)).order_by(Role.name)))


def _delegated_roles(db: Session, trust: Trust) -> list[Role]:
    """The trust's roles the trustor still holds, with what they imply; none: the trust is
    unusable (Keystone refuses the token)."""
    if not trust.project_id:
        return []
    held = {r.id for r in logic.effective_roles(db, USER_PROJECT, trust.trustor_user_id,
                                                 trust.project_id)}
    if not set(trust.roles) <= held:
        return []
    ids = logic.expand_implied(db, trust.roles)
    return list(db.scalars(select(Role).where(Role.id.in_(ids), Role.domain_id == NULL_DOMAIN_ID)
                           .order_by(Role.name)))


def token_data(db: Session, trustee: User, trust_id: str, methods: list[str],
               expiration: int, expires: dt.datetime | None = None) -> tokens.TokenData:
    """A trust-scoped token for `trustee`; spends one use of a limited trust."""
    trust = db.get(Trust, str(trust_id))
    now = dt.datetime.now(dt.UTC)
    if trust is None or trust.trustee_user_id != trustee.id or trust_state.expired(trust, now):
        raise Unauthorized()
    trustor = db.get(User, trust.trustor_user_id)
    project = db.get(Project, trust.project_id) if trust.project_id else None
    if trustor is None or not trustor.enabled or (project is not None and not project.enabled):
        raise Unauthorized()
    roles = _delegated_roles(db, trust)
    if trust.project_id and not roles:
        raise Unauthorized()
    if trust.remaining_uses is not None:
        spent = db.execute(update(Trust).where(Trust.id == trust.id, Trust.remaining_uses > 0)
                           .values(remaining_uses=Trust.remaining_uses - 1))
        if spent.rowcount != 1:
            raise Unauthorized()  # no remaining uses
    user = trustor if trust.impersonation else trustee
    expires_at = now + dt.timedelta(seconds=expiration)
    if trust.expires_at is not None:
        expires_at = min(expires_at, trust.expires_at)
    if expires is not None:
        expires_at = min(expires_at, expires)
    data = tokens.TokenData(
        user_id=user.id, methods=methods, issued_at=now, expires_at=expires_at,
        audit_ids=[tokens.new_audit_id()], user_domain_id=user.domain_id, user_name=user.name,
        roles=[r.name for r in roles], trust_id=trust.id)
    if project is not None:
        data.project_id, data.project_name = project.id, project.name
        data.project_domain_id = project.domain_id
    return data
