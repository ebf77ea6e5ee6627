"""Identity logic: plain functions over a session. No HTTP here."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from typing import Any

import bcrypt
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from stackling.identity import app_credential_state, tokens, trust_state
from stackling.identity.group_appcred_models import GroupMembership
from stackling.identity.models import (
    NULL_DOMAIN_ID,
    Assignment,
    CatalogService,
    Domain,
    Endpoint,
    ImpliedRole,
    Project,
    Role,
    User,
)

USER_PROJECT, USER_DOMAIN, USER_SYSTEM = "UserProject", "UserDomain", "UserSystem"
SYSTEM_ALL = "all"
GROUP_PROJECT, GROUP_DOMAIN, GROUP_SYSTEM = "GroupProject", "GroupDomain", "GroupSystem"
GROUP_KIND = {USER_PROJECT: GROUP_PROJECT, USER_DOMAIN: GROUP_DOMAIN, USER_SYSTEM: GROUP_SYSTEM}


def new_id() -> str:
    return uuid.uuid4().hex


# ------------------------------------------------------------------ passwords
def hash_password(password: str, rounds: int) -> str:
    # bcrypt reads at most 72 bytes; Keystone truncates the same way.
    return bcrypt.hashpw(password.encode()[:72], bcrypt.gensalt(rounds)).decode()


def check_password(password: str, hashed: str | None) -> bool:
    if not hashed:
        return False
    try:
        return bcrypt.checkpw(password.encode()[:72], hashed.encode())
    except ValueError:
        return False


_DUMMY_HASHES: dict[int, str] = {}


def verify_password(password: str, hashed: str | None, rounds: int) -> bool:
    """check_password that costs one bcrypt check even when there is no hash to check (an
    unknown user, a wrong domain, a user without a password): a login takes as long
    whether or not the user exists, so its time does not tell."""
    if hashed:
        return check_password(password, hashed)
    if rounds not in _DUMMY_HASHES:  # no one's password, at the deployment's cost
        _DUMMY_HASHES[rounds] = hash_password(uuid.uuid4().hex, rounds)
    check_password(password, _DUMMY_HASHES[rounds])
    return False


# ------------------------------------------------------------------ lookups
def get_domain(db: Session, domain_id: str) -> Domain:
    domain = db.get(Domain, domain_id)
    if domain is None:
        raise NotFound(f"Could not find domain: {domain_id}.")
    return domain


def get_project(db: Session, project_id: str) -> Project:
    project = db.get(Project, project_id)
    if project is None:
        raise NotFound(f"Could not find project: {project_id}.")
    return project


def get_user(db: Session, user_id: str) -> User:
    user = db.get(User, user_id)
    if user is None:
        raise NotFound(f"Could not find user: {user_id}.")
    return user


def get_role(db: Session, role_id: str) -> Role:
    role = db.get(Role, role_id)
    if role is None:
        raise NotFound(f"Could not find role: {role_id}.")
    return role


def _domain_from_ref(db: Session, ref: Any) -> Domain | None:
    if not isinstance(ref, dict):
        return None
    if "id" in ref:
        return db.get(Domain, str(ref["id"]))
    if "name" in ref:
        return db.scalars(select(Domain).where(Domain.name == str(ref["name"]))).first()
    return None


def find_user(db: Session, ref: dict[str, Any]) -> User | None:
    if "id" in ref:
        return db.get(User, str(ref["id"]))
    domain = _domain_from_ref(db, ref.get("domain"))
    if domain is None:
        return None
    return db.scalars(select(User).where(User.domain_id == domain.id,
                                         User.name == str(ref["name"]))).first()


def find_project(db: Session, ref: dict[str, Any]) -> Project | None:
    if "id" in ref:
        return db.get(Project, str(ref["id"]))
    domain = _domain_from_ref(db, ref.get("domain"))
    if domain is None:
        return None
    return db.scalars(select(Project).where(Project.domain_id == domain.id,
                                            Project.name == str(ref["name"]))).first()


# ------------------------------------------------------------------ roles
def expand_implied(db: Session, role_ids: Iterable[str]) -> set[str]:
    """The role ids plus every role they imply, transitively."""
    result = set(role_ids)
    frontier = set(result)
    while frontier:
        implied = set(db.scalars(select(ImpliedRole.implied_role_id)
                                 .where(ImpliedRole.prior_role_id.in_(frontier))))
        frontier = implied - result
        result |= implied
    return result


def check_inference(db: Session, prior: Role, implied: Role) -> None:
    """Keystone's rules for a new inference: no global role implies a domain-specific one
    (InvalidImpliedRole, 403), and none closes a cycle."""
    if prior.domain_id == NULL_DOMAIN_ID and implied.domain_id != NULL_DOMAIN_ID:
        raise Forbidden(f"{implied.id} cannot be an implied roles.")
    if prior.id in expand_implied(db, [implied.id]):
        raise BadRequest(f"Role {implied.id} already implies {prior.id}: the inference would "
                         "form a cycle.")


def direct_role_ids(db: Session, kind: str, actor_id: str, target_id: str) -> set[str]:
    return set(db.scalars(select(Assignment.role_id).where(
        Assignment.type == kind, Assignment.actor_id == actor_id,
        Assignment.target_id == target_id)))


def effective_roles(db: Session, kind: str, actor_id: str, target_id: str) -> list[Role]:
    """A user's roles on a target: its own grants, its groups' grants, implied roles."""
    direct = direct_role_ids(db, kind, actor_id, target_id)
    ids = expand_implied(db, direct | inherited_role_ids(db, kind, actor_id, target_id))
    if not ids:
        return []
    # as Keystone: a domain-specific role counts only by the global roles it implies
    return list(db.scalars(select(Role).where(Role.id.in_(ids), Role.domain_id == NULL_DOMAIN_ID)
                           .order_by(Role.name)))


def inherited_role_ids(db: Session, user_kind: str, user_id: str, target_id: str) -> set[str]:
    """Roles the user holds on the target through its groups (one query)."""
    groups = select(GroupMembership.group_id).where(GroupMembership.user_id == user_id)
    return set(db.scalars(select(Assignment.role_id).where(
        Assignment.type == GROUP_KIND[user_kind], Assignment.actor_id.in_(groups),
        Assignment.target_id == target_id)))


def group_project_ids(db: Session, user_id: str) -> Any:
    """A subquery: projects the user has a role on through a group."""
    groups = select(GroupMembership.group_id).where(GroupMembership.user_id == user_id)
    return select(Assignment.target_id).where(Assignment.type == GROUP_PROJECT,
                                              Assignment.actor_id.in_(groups))


def grant(db: Session, kind: str, actor_id: str, target_id: str, role_id: str) -> None:
    """Idempotent: granting an existing assignment changes nothing. A domain-specific role
    is granted only on projects of its own domain (Keystone's DomainSpecificRoleMismatch)."""
    if db.get(Assignment, (kind, actor_id, target_id, role_id)) is not None:
        return
    role = db.get(Role, role_id)
    if role is not None and role.domain_id != NULL_DOMAIN_ID and kind in (
            USER_PROJECT, GROUP_PROJECT):
        project = db.get(Project, target_id)
        if project is not None and project.domain_id != role.domain_id:
            raise Forbidden(f"Project {target_id} must be in the same domain as the role "
                            f"{role_id} being assigned.")
    try:
        with db.begin_nested():
            db.add(Assignment(type=kind, actor_id=actor_id, target_id=target_id, role_id=role_id))
    except IntegrityError:
        pass  # granted concurrently: same outcome


def revoke_grant(db: Session, kind: str, actor_id: str, target_id: str, role_id: str) -> None:
    row = db.get(Assignment, (kind, actor_id, target_id, role_id))
    if row is None:
        raise NotFound(f"Could not find role assignment with role: {role_id}, "
                       f"user or group: {actor_id}, project, domain, or system: {target_id}.")
    db.delete(row)
    # As Keystone: tokens carrying the old roles stop working, and the user's
    # application credentials on that project are deleted.
    tokens.revoke(db, user_id=actor_id,
                  project_id=target_id if kind == USER_PROJECT else None)
    if kind == USER_PROJECT:
        app_credential_state.delete_for_user_on_project(db, actor_id, target_id)


# ------------------------------------------------------------------ authentication
def authenticate(db: Session, keys: tokens.KeyRing, expiration: int,
                 auth: dict[str, Any], existing: tokens.TokenData | None,
                 rounds: int = 10) -> tokens.TokenData:
    """Check the identity methods and the scope; return the new token's data.

    `auth` has been shape-checked by the API; every failure of the credentials
    themselves is the same generic 401.
    """
    identity = auth["identity"]
    methods: list[str] = identity["methods"]
    if "password" in methods:
        user_ref = identity["password"]["user"]
        user = find_user(db, user_ref)
        # A disabled user's password is checked too (below): all failures cost the same.
        if not verify_password(str(user_ref.get("password", "")),
                               user.password_hash if user else None, rounds) or user is None:
            raise Unauthorized()
        audit_ids = [tokens.new_audit_id()]
        expires = None
    elif "token" in methods:
        if existing is None:
            raise Unauthorized()
        if existing.app_cred_id:
            # never widen a delegated token into the user's own roles
            raise Unauthorized("A token from an application credential cannot be rescoped.")
        if existing.trust_id:
            raise Unauthorized()  # a trust-scoped token is not rescoped
        user = db.get(User, existing.user_id)
        if user is None:
            raise Unauthorized()
        audit_ids = [tokens.new_audit_id(), existing.audit_ids[0]]
        expires = existing.expires_at  # rescoping never extends a token's life
    else:
        raise Unauthorized("Attempted to authenticate with an unsupported method.")
    if not user.enabled:
        raise Unauthorized()
    domain = db.get(Domain, user.domain_id)
    if domain is None or not domain.enabled:
        raise Unauthorized()

    now = dt.datetime.now(dt.UTC)
    data = tokens.TokenData(
        user_id=user.id, methods=methods, issued_at=now,
        expires_at=expires or now + dt.timedelta(seconds=expiration),
        audit_ids=audit_ids, user_domain_id=user.domain_id, user_name=user.name,
    )
    scope = auth.get("scope")
    if scope is None and user.default_project_id:
        project = db.get(Project, user.default_project_id)
        if project is not None and project.enabled and effective_roles(
                db, USER_PROJECT, user.id, project.id):
            scope = {"project": {"id": project.id}}
    if not scope:
        return data
    if "project" in scope:
        project = find_project(db, scope["project"])
        if project is None or not project.enabled:
            raise Unauthorized()
        roles = effective_roles(db, USER_PROJECT, user.id, project.id)
        if not roles:
            raise Unauthorized()
        data.project_id, data.project_name = project.id, project.name
        data.project_domain_id = project.domain_id
    elif "domain" in scope:
        domain = _domain_from_ref(db, scope["domain"])
        if domain is None or not domain.enabled:
            raise Unauthorized()
        roles = effective_roles(db, USER_DOMAIN, user.id, domain.id)
        if not roles:
            raise Unauthorized()
        data.domain_id = domain.id
    elif "system" in scope:
        roles = effective_roles(db, USER_SYSTEM, user.id, SYSTEM_ALL)
        if not roles:
            raise Unauthorized()
        data.system = SYSTEM_ALL
    else:
        raise Unauthorized()
    data.roles = [r.name for r in roles]
    return data


# ------------------------------------------------------------------ catalog
def catalog(db: Session, base_url: str, project_id: str | None) -> list[dict[str, Any]]:
    services = list(db.scalars(select(CatalogService).where(CatalogService.enabled.is_(True))))
    endpoints = list(db.scalars(select(Endpoint).where(Endpoint.enabled.is_(True))
                                .order_by(Endpoint.id)))
    by_service: dict[str, list[dict[str, Any]]] = {}
    for ep in endpoints:
        template = ep.url.replace("$(", "%(")  # Keystone's legacy spelling
        needs_project = "%(project_id)s" in template or "%(tenant_id)s" in template
        if needs_project and not project_id:
            continue  # as Keystone: dropped for unscoped/domain/system tokens
        url = template.replace("%(base_url)s", base_url)
        if project_id:
            url = url.replace("%(project_id)s", project_id).replace("%(tenant_id)s", project_id)
        by_service.setdefault(ep.service_id, []).append({
            "id": ep.id, "interface": ep.interface, "region": ep.region_id,
            "region_id": ep.region_id, "url": url})
    return [{"id": s.id, "type": s.type, "name": s.name, "endpoints": by_service[s.id]}
            for s in services if s.id in by_service]


def render_token(db: Session, data: tokens.TokenData, base_url: str,
                 *, include_catalog: bool = True) -> dict[str, Any]:
    user = db.get(User, data.user_id)
    if user is None:
        raise Unauthorized()
    user_domain = db.get(Domain, user.domain_id)
    body: dict[str, Any] = {
        "methods": data.methods,
        "user": {"id": user.id, "name": user.name,
                 "domain": {"id": user_domain.id, "name": user_domain.name} if user_domain else {},
                 "password_expires_at": None},
        "audit_ids": data.audit_ids,
        "issued_at": tokens.format_time(data.issued_at),
        "expires_at": tokens.format_time(data.expires_at),
    }
    scoped = bool(data.project_id or data.domain_id or data.system)
    if data.project_id:
        project = db.get(Project, data.project_id)
        if project is None:
            raise Unauthorized()
        pdomain = db.get(Domain, project.domain_id)
        body["project"] = {"id": project.id, "name": project.name,
                           "domain": {"id": pdomain.id, "name": pdomain.name} if pdomain else {}}
        body["is_domain"] = False
    elif data.domain_id:
        domain = db.get(Domain, data.domain_id)
        body["domain"] = {"id": data.domain_id, "name": domain.name if domain else ""}
    elif data.system:
        body["system"] = {"all": True}
    if scoped:
        roles = db.scalars(select(Role).where(Role.name.in_(data.roles),
                                              Role.domain_id == NULL_DOMAIN_ID).order_by(Role.name))
        body["roles"] = [{"id": r.id, "name": r.name} for r in roles]
        if include_catalog:
            body["catalog"] = catalog(db, base_url, data.project_id)
    if data.app_cred_id:
        body["application_credential"] = app_credential_state.token_section(db, data.app_cred_id)
    if data.trust_id:
        body["OS-TRUST:trust"] = trust_state.token_section(db, data.trust_id)
    return body


# ------------------------------------------------------------------ writes
def create_project(db: Session, values: dict[str, Any]) -> Project:
    get_domain(db, values["domain_id"])
    project = Project(id=new_id(), **values)
    project.parent_id = values.get("parent_id") or values["domain_id"]
    _insert_unique(db, project, "project", project.name)
    return project


def create_user(db: Session, values: dict[str, Any], rounds: int) -> User:
    get_domain(db, values["domain_id"])
    password = values.pop("password", None)
    user = User(id=new_id(), **values)
    user.password_hash = hash_password(password, rounds) if password else None
    _insert_unique(db, user, "user", user.name)
    return user


def create_role(db: Session, name: str, description: str | None = None,
                role_id: str | None = None, domain_id: str = NULL_DOMAIN_ID) -> Role:
    role = Role(id=role_id or new_id(), name=name, description=description, domain_id=domain_id)
    _insert_unique(db, role, "role", name)
    return role


def _insert_unique(db: Session, obj: Any, kind: str, name: str) -> None:
    try:
        with db.begin_nested():
            db.add(obj)
    except IntegrityError:
        raise Conflict(f"Conflict occurred attempting to store {kind} - "
                       f"Duplicate entry found with name {name}.") from None


def delete_project(db: Session, project: Project) -> None:
    db.execute(delete(Assignment).where(Assignment.target_id == project.id,
                                        Assignment.type == USER_PROJECT))
    db.delete(project)
    tokens.revoke(db, project_id=project.id)


def delete_user(db: Session, user: User) -> None:
    db.execute(delete(Assignment).where(Assignment.actor_id == user.id))
    db.delete(user)
    tokens.revoke(db, user_id=user.id)


def set_user_enabled(db: Session, user: User, enabled: bool) -> None:
    if user.enabled and not enabled:
        tokens.revoke(db, user_id=user.id)
    user.enabled = enabled


def set_project_enabled(db: Session, project: Project, enabled: bool) -> None:
    if project.enabled and not enabled:
        tokens.revoke(db, project_id=project.id)
    project.enabled = enabled


def change_password(db: Session, user: User, original: str, new: str, rounds: int) -> None:
    if not check_password(original, user.password_hash):
        raise Unauthorized("The request you have made requires authentication.")
    user.password_hash = hash_password(new, rounds)
    tokens.revoke(db, user_id=user.id)


def projects_for_user(db: Session, user_id: str) -> list[Project]:
    ids = select(Assignment.target_id).where(Assignment.type == USER_PROJECT,
                                             Assignment.actor_id == user_id)
    through_groups = group_project_ids(db, user_id)
    return list(db.scalars(select(Project).where(
        Project.id.in_(ids) | Project.id.in_(through_groups), Project.enabled.is_(True))
        .order_by(Project.name)))


def list_assignments(db: Session, *, user_id: str | None = None, role_id: str | None = None,
                     project_id: str | None = None, domain_id: str | None = None,
                     system: bool = False, effective: bool = False) -> list[dict[str, Any]]:
    """Role assignments as Keystone lists them; `effective` adds implied roles."""
    stmt = select(Assignment)
    if user_id:
        stmt = stmt.where(Assignment.actor_id == user_id)
    if project_id:
        stmt = stmt.where(Assignment.type == USER_PROJECT, Assignment.target_id == project_id)
    elif domain_id:
        stmt = stmt.where(Assignment.type == USER_DOMAIN, Assignment.target_id == domain_id)
    elif system:
        stmt = stmt.where(Assignment.type == USER_SYSTEM)
    rows = list(db.scalars(stmt.order_by(Assignment.type, Assignment.target_id,
                                         Assignment.actor_id, Assignment.role_id)))
    result = []
    for row in rows:
        result.append({"type": row.type, "user_id": row.actor_id, "target_id": row.target_id,
                       "role_id": row.role_id, "prior_role_id": None})
        if effective:
            for implied in sorted(expand_implied(db, [row.role_id]) - {row.role_id}):
                result.append({"type": row.type, "user_id": row.actor_id,
                               "target_id": row.target_id, "role_id": implied,
                               "prior_role_id": row.role_id})
    if role_id:
        result = [r for r in result if r["role_id"] == role_id]
    if effective:
        seen: set[tuple[str, str, str, str]] = set()
        unique = []
        for r in result:
            key = (r["type"], r["user_id"], r["target_id"], r["role_id"])
            if key not in seen:
                seen.add(key)
                unique.append(r)
        result = unique
    return result


def require_fields(body: Any, wrapper: str) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get(wrapper), dict):
        raise BadRequest(f"Invalid input for field '{wrapper}': '{wrapper}' is a required "
                         "property and must be an object.")
    return body[wrapper]
