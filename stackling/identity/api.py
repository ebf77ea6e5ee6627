"""Identity v3 routes: thin handlers over identity.logic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from stackling.common.db import insert_absent
from stackling.common.errors import BadRequest, Forbidden, NotFound, Unauthorized
from stackling.common.http import ApiRequest, Service, json_response, no_content
from stackling.common.listing import bool_from_string
from stackling.identity import filters, logic, project_tags, tokens, trusts
from stackling.identity.logic import SYSTEM_ALL, USER_DOMAIN, USER_PROJECT, USER_SYSTEM
from stackling.identity.models import (
    NULL_DOMAIN_ID,
    Domain,
    ImpliedRole,
    Project,
    Role,
    User,
)

V3_UPDATED = "2020-04-07T00:00:00Z"
STRING, BOOL, OBJECT, LIST = "string", "boolean", "object", "array"
_PY_TYPES = {STRING: str, BOOL: bool, OBJECT: dict, LIST: list}


# ------------------------------------------------------------------ validation
def _invalid(field: str, reason: str) -> BadRequest:
    return BadRequest(f"Invalid input for field '{field}': {reason}")


def check(body: dict[str, Any], spec: dict[str, tuple[str, bool]], *, allow_extra: bool,
          max_len: dict[str, int] | None = None) -> dict[str, Any]:
    """Check types (jsonschema-like messages, as Keystone's); spec: name -> (type, required)."""
    for name, (kind, required) in spec.items():
        if name not in body:
            if required:
                raise _invalid(name, f"'{name}' is a required property")
            continue
        value = body[name]
        if value is None and kind == STRING and not required and name != "name":
            continue
        if not isinstance(value, _PY_TYPES[kind]) or (kind == STRING and isinstance(value, bool)):
            raise _invalid(name, f"{value!r} is not of type '{kind}'")
        if kind == STRING and name == "name":
            if not value.strip():
                raise _invalid(name, f"{value!r} is too short")
            limit = (max_len or {}).get(name, 255)
            if len(value) > limit:
                raise _invalid(name, f"{value!r} is too long")
    if not allow_extra:
        extra = sorted(set(body) - set(spec))
        if extra:
            raise BadRequest(f"Invalid input for field '{extra[0]}': Additional properties are "
                             f"not allowed ('{extra[0]}' was unexpected)")
    return body


def limit_lengths(body: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
    """Strings no longer than their columns (Keystone's schemas' maxLength): a 400, never a
    database error."""
    for name, limit in limits.items():
        value = body.get(name)
        if isinstance(value, str) and len(value) > limit:
            raise _invalid(name, f"{value!r} is too long")
    return body


def _links(rq: ApiRequest, path: str) -> dict[str, str]:
    return {"self": f"{rq.service_url}/v3/{path}"}


def _collection_links(rq: ApiRequest) -> dict[str, Any]:
    url = rq.url_for_request()
    if rq.request.url.query:
        url += "?" + rq.request.url.query
    return {"self": url, "previous": None, "next": None}


# ------------------------------------------------------------------ renderers
def domain_view(rq: ApiRequest, d: Domain) -> dict[str, Any]:
    return {"id": d.id, "name": d.name, "description": d.description, "enabled": d.enabled,
            "tags": [], "options": {}, "links": _links(rq, f"domains/{d.id}")}


def project_view(rq: ApiRequest, p: Project) -> dict[str, Any]:
    view = {"id": p.id, "name": p.name, "domain_id": p.domain_id, "description": p.description,
            "enabled": p.enabled, "is_domain": False, "parent_id": p.parent_id,
            "tags": list(p.tags or []), "options": {}, "links": _links(rq, f"projects/{p.id}")}
    for k, v in (p.extra or {}).items():
        view.setdefault(k, v)
    return view


def user_view(rq: ApiRequest, u: User) -> dict[str, Any]:
    view: dict[str, Any] = {"id": u.id, "name": u.name, "domain_id": u.domain_id,
                            "enabled": u.enabled, "password_expires_at": None, "options": {},
                            "links": _links(rq, f"users/{u.id}")}
    if u.default_project_id:
        view["default_project_id"] = u.default_project_id
    for k, v in (u.extra or {}).items():
        view.setdefault(k, v)
    return view


def role_view(rq: ApiRequest, r: Role) -> dict[str, Any]:
    domain_id = None if r.domain_id == NULL_DOMAIN_ID else r.domain_id
    return {"id": r.id, "name": r.name, "domain_id": domain_id, "description": r.description,
            "options": {}, "links": _links(rq, f"roles/{r.id}")}


# ------------------------------------------------------------------ discovery
def _v3_entry(rq: ApiRequest) -> dict[str, Any]:
    return {"id": "v3.14", "status": "stable", "updated": V3_UPDATED,
            "links": [{"rel": "self", "href": f"{rq.service_url}/v3/"}],
            "media-types": [{"base": "application/json",
                             "type": "application/vnd.openstack.identity-v3+json"}]}


def versions(rq: ApiRequest) -> Any:
    return json_response({"versions": {"values": [_v3_entry(rq)]}}, 300,
                         {"Location": f"{rq.service_url}/v3/"})


def version_v3(rq: ApiRequest) -> Any:
    return {"version": _v3_entry(rq)}


# ------------------------------------------------------------------ tokens
def _keys(rq: ApiRequest) -> tokens.KeyRing:
    return rq.runtime.state["identity.keys"]


def _check_auth_body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or "auth" not in body:
        raise _invalid("auth", "'auth' is a required property")
    auth = body["auth"]
    if not isinstance(auth, dict):
        raise _invalid("auth", f"{auth!r} is not of type 'object'")
    identity = auth.get("identity")
    if not isinstance(identity, dict):
        raise _invalid("identity", "'identity' is a required property")
    methods = identity.get("methods")
    if not isinstance(methods, list) or not methods or not all(isinstance(m, str) for m in methods):
        raise _invalid("identity/methods", "'methods' must be a non-empty list of strings")
    if "password" in methods:
        password = identity.get("password")
        if not isinstance(password, dict) or not isinstance(password.get("user"), dict):
            raise _invalid("identity/password/user", "'user' is a required property")
        user = password["user"]
        if "id" not in user and "name" not in user:
            raise BadRequest("Invalid input for field identity/password/user: "
                             "id or name must be present.")
        for key in ("id", "name", "password"):
            if key in user and not isinstance(user[key], str):
                raise _invalid(f"identity/password/user/{key}",
                               f"{user[key]!r} is not of type 'string'")
        if "id" not in user and not isinstance(user.get("domain"), dict):
            raise BadRequest("Invalid input for field identity/password/user/domain: "
                             "id or name must be present.")
    if "token" in methods:
        token = identity.get("token")
        if not isinstance(token, dict) or not isinstance(token.get("id"), str):
            raise _invalid("identity/token/id", "'id' is a required property")
    scope = auth.get("scope")
    if scope is not None:
        if scope == "unscoped":
            auth.pop("scope")
        elif not isinstance(scope, dict) or not scope:
            raise _invalid("scope", f"{scope!r} is not valid under any of the given schemas")
        else:
            for kind in ("project", "domain"):
                if kind not in scope:
                    continue
                ref = scope[kind]  # {"project": null} is Keystone's 400 too
                if not isinstance(ref, dict) or ("id" not in ref and "name" not in ref):
                    raise BadRequest(f"Invalid input for field scope/{kind}: "
                                     "id or name must be present.")
                for part, where in ((ref, kind), (ref.get("domain") or {}, f"{kind}/domain")):
                    if not isinstance(part, dict):
                        raise _invalid(f"scope/{where}", f"{part!r} is not of type 'object'")
                    for key in ("id", "name"):
                        if key in part and not isinstance(part[key], str):
                            raise _invalid(f"scope/{where}/{key}",
                                           f"{part[key]!r} is not of type 'string'")
                if "id" not in ref and kind == "project" and not isinstance(ref.get("domain"), dict):
                    raise BadRequest("Invalid input for field scope/project/domain: "
                                     "id or name must be present.")
            if trusts.SCOPE in scope:
                ref = scope[trusts.SCOPE]
                if not isinstance(ref, dict) or not isinstance(ref.get("id"), str):
                    raise _invalid(f"scope/{trusts.SCOPE}/id", "'id' is a required property")
            if not ({"project", "domain", "system", trusts.SCOPE} & set(scope)):
                raise _invalid("scope", f"{scope!r} is not valid under any of the given schemas")
    return auth


def issue_token(rq: ApiRequest) -> Any:
    auth = _check_auth_body(rq.json(malformed="Malformed request body"))
    existing = None
    if "token" in auth["identity"]["methods"]:
        existing = tokens.decode(rq.db, _keys(rq), auth["identity"]["token"]["id"])
    settings = rq.settings.identity
    if "application_credential" in auth["identity"]["methods"]:
        from stackling.identity import app_credentials

        data = app_credentials.authenticate(rq.db, settings.token_expiration, auth["identity"],
                                            auth.get("scope"), settings.password_hash_rounds)
    elif trusts.SCOPE in (auth.get("scope") or {}):
        # the trustee proves who it is (unscoped), then the trust gives the scope
        trust_id = auth["scope"][trusts.SCOPE]["id"]
        unscoped = {k: v for k, v in auth.items() if k != "scope"}
        trustee = logic.authenticate(rq.db, _keys(rq), settings.token_expiration, unscoped,
                                     existing, settings.password_hash_rounds)
        user = logic.get_user(rq.db, trustee.user_id)
        data = trusts.token_data(rq.db, user, trust_id, trustee.methods,
                                 settings.token_expiration,
                                 existing.expires_at if existing else None)
    else:
        data = logic.authenticate(rq.db, _keys(rq), settings.token_expiration, auth, existing,
                                  settings.password_hash_rounds)
    token = tokens.issue(rq.db, _keys(rq), data)
    body = logic.render_token(rq.db, data, rq.base_url, include_catalog="nocatalog" not in rq.query)
    return json_response({"token": body}, 201, {"X-Subject-Token": token})


def _subject(rq: ApiRequest) -> tokens.TokenData:
    subject = rq.headers.get("x-subject-token")
    if not subject:
        raise NotFound("Could not find token: .")
    allow_expired = bool_from_string(rq.query.get("allow_expired", "false")) if rq.query.get(
        "allow_expired") else False
    window = rq.settings.identity.allow_expired_window if allow_expired else 0
    try:
        data = tokens.decode(rq.db, _keys(rq), subject, allow_expired_window=window)
    except Unauthorized:
        raise NotFound(f"Could not find token: {subject}.") from None
    if data.user_id != rq.ctx.user_id and not (rq.ctx.is_admin or "service" in rq.ctx.roles):
        raise Forbidden("You are not authorized to perform the requested action: "
                        "identity:validate_token.")
    return data


def validate_token(rq: ApiRequest) -> Any:
    data = _subject(rq)
    subject = rq.headers["x-subject-token"]
    if rq.method == "HEAD":
        return no_content(200, {"X-Subject-Token": subject})
    body = logic.render_token(rq.db, data, rq.base_url, include_catalog="nocatalog" not in rq.query)
    return json_response({"token": body}, 200, {"X-Subject-Token": subject})


def revoke_token(rq: ApiRequest) -> Any:
    data = _subject(rq)
    tokens.revoke(rq.db, audit_id=data.audit_ids[0], expires_at=data.expires_at)
    return no_content()


def auth_catalog(rq: ApiRequest) -> Any:
    return {"catalog": logic.catalog(rq.db, rq.base_url, rq.ctx.project_id),
            "links": _collection_links(rq)}


def auth_projects(rq: ApiRequest) -> Any:
    projects = logic.projects_for_user(rq.db, rq.ctx.user_id or "")
    return {"projects": [project_view(rq, p) for p in projects], "links": _collection_links(rq)}


def auth_domains(rq: ApiRequest) -> Any:
    from stackling.identity import groups

    # the user's own domain grants and its groups' (effective assignments)
    ids = {a["target_id"] for a in groups.list_role_assignments(
        rq.db, user_id=rq.ctx.user_id, effective=True) if a["type"] == USER_DOMAIN}
    domains = [d for d in rq.db.scalars(select(Domain)) if d.id in ids]
    return {"domains": [domain_view(rq, d) for d in domains], "links": _collection_links(rq)}


# ------------------------------------------------------------------ policy helpers
def _require_admin(rq: ApiRequest, action: str) -> None:
    if not rq.allowed(f"identity:{action}"):
        raise Forbidden(f"You are not authorized to perform the requested action: "
                        f"identity:{action}.")


# ------------------------------------------------------------------ domains
def list_domains(rq: ApiRequest) -> Any:
    stmt = select(Domain).order_by(Domain.name)
    if rq.query.get("name") is not None:
        stmt = stmt.where(Domain.name == rq.query["name"])
    if rq.query.get("enabled") is not None:
        stmt = stmt.where(Domain.enabled.is_(bool_from_string(rq.query["enabled"], True)))
    columns = {"name": Domain.name, "description": Domain.description}
    domains = filters.filter_rows(rq.db.scalars(filters.apply_inexact(stmt, rq.query, columns)),
                                  rq.query, columns)
    if not rq.allowed("identity:list_domains"):
        mine = {rq.ctx.project_domain_id, rq.ctx.user_domain_id, rq.ctx.domain_id}
        domains = [d for d in domains if d.id in mine]
    return {"domains": [domain_view(rq, d) for d in domains], "links": _collection_links(rq)}


def show_domain(rq: ApiRequest) -> Any:
    domain_id = rq.path_params["domain_id"]
    mine = {rq.ctx.project_domain_id, rq.ctx.user_domain_id, rq.ctx.domain_id}
    if domain_id not in mine:
        _require_admin(rq, "get_domain")
    return {"domain": domain_view(rq, logic.get_domain(rq.db, domain_id))}


# ------------------------------------------------------------------ projects
PROJECT_SPEC = {"name": (STRING, True), "domain_id": (STRING, False),
                "description": (STRING, False), "enabled": (BOOL, False),
                "parent_id": (STRING, False), "is_domain": (BOOL, False), "tags": (LIST, False),
                "options": (OBJECT, False)}


def list_projects(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_projects")
    stmt = select(Project).order_by(Project.name)
    q = rq.query
    if q.get("name") is not None:
        stmt = stmt.where(Project.name == q["name"])
    if q.get("domain_id") is not None:
        stmt = stmt.where(Project.domain_id == q["domain_id"])
    if q.get("enabled") is not None:
        stmt = stmt.where(Project.enabled.is_(bool_from_string(q["enabled"], True)))
    if q.get("parent_id") is not None:
        stmt = stmt.where(Project.parent_id == q["parent_id"])
    if q.get("is_domain") is not None and bool_from_string(q["is_domain"], True):
        return {"projects": [], "links": _collection_links(rq)}
    columns = {"name": Project.name, "description": Project.description}
    projects = filters.filter_rows(rq.db.scalars(filters.apply_inexact(stmt, q, columns)),
                                   q, columns)
    projects = [p for p in projects if filters.tags_match(p.tags, q)]
    return {"projects": [project_view(rq, p) for p in projects], "links": _collection_links(rq)}


def show_project(rq: ApiRequest) -> Any:
    project_id = rq.path_params["project_id"]
    if project_id != rq.ctx.project_id:
        _require_admin(rq, "get_project")
    return {"project": project_view(rq, logic.get_project(rq.db, project_id))}


def create_project(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_project")
    body = check(dict(logic.require_fields(rq.json(), "project")), PROJECT_SPEC,
                 allow_extra=True, max_len={"name": 64})
    if body.get("is_domain"):
        raise BadRequest("Creating projects acting as domains is not supported.")
    known = {"name", "domain_id", "description", "enabled", "parent_id", "tags"}
    values = {k: body[k] for k in known if k in body}
    values.setdefault("domain_id", rq.ctx.project_domain_id or rq.ctx.domain_id or "default")
    values["description"] = values.get("description") or ""
    if "tags" in values:
        values["tags"] = project_tags.checked(values["tags"])
    if values.get("parent_id"):
        parent = logic.get_project(rq.db, values["parent_id"])
        values["domain_id"] = parent.domain_id
    extra = {k: v for k, v in body.items() if k not in known and k not in ("options", "is_domain")}
    project = logic.create_project(rq.db, {**values, "extra": extra})
    return 201, {"project": project_view(rq, project)}


def update_project(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_project")
    project = logic.get_project(rq.db, rq.path_params["project_id"])
    body = check(dict(logic.require_fields(rq.json(), "project")),
                 {**PROJECT_SPEC, "name": (STRING, False)}, allow_extra=True,
                 max_len={"name": 64})
    if "domain_id" in body and body["domain_id"] != project.domain_id:
        raise BadRequest("Cannot change the domain ID of a project.")
    if "name" in body:
        project.name = body["name"]
    if "description" in body:
        project.description = body["description"] or ""
    if "tags" in body:
        project.tags = project_tags.checked(body["tags"])
    if "enabled" in body:
        logic.set_project_enabled(rq.db, project, body["enabled"])
    extra = {k: v for k, v in body.items() if k not in PROJECT_SPEC}
    if extra:
        project.extra = {**(project.extra or {}), **extra}
    logic._insert_unique(rq.db, project, "project", project.name)
    return {"project": project_view(rq, project)}


def delete_project(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_project")
    logic.delete_project(rq.db, logic.get_project(rq.db, rq.path_params["project_id"]))
    return no_content()


# ------------------------------------------------------------------ users
USER_SPEC = {"name": (STRING, True), "domain_id": (STRING, False), "password": (STRING, False),
             "enabled": (BOOL, False), "default_project_id": (STRING, False),
             "description": (STRING, False), "email": (STRING, False),
             "options": (OBJECT, False)}


def list_users(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_users")
    stmt = select(User).order_by(User.name)
    q = rq.query
    if q.get("name") is not None:
        stmt = stmt.where(User.name == q["name"])
    if q.get("domain_id") is not None:
        stmt = stmt.where(User.domain_id == q["domain_id"])
    if q.get("enabled") is not None:
        stmt = stmt.where(User.enabled.is_(bool_from_string(q["enabled"], True)))
    columns = {"name": User.name}
    users = filters.filter_rows(rq.db.scalars(filters.apply_inexact(stmt, q, columns)), q, columns)
    return {"users": [user_view(rq, u) for u in users], "links": _collection_links(rq)}


def show_user(rq: ApiRequest) -> Any:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id:
        _require_admin(rq, "get_user")
    return {"user": user_view(rq, logic.get_user(rq.db, user_id))}


def create_user(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_user")
    body = check(dict(logic.require_fields(rq.json(), "user")), USER_SPEC, allow_extra=True)
    known = {"name", "domain_id", "password", "enabled", "default_project_id"}
    values = {k: body[k] for k in known if k in body and body[k] is not None}
    values.setdefault("domain_id", rq.ctx.project_domain_id or rq.ctx.domain_id or "default")
    if values.get("default_project_id"):
        logic.get_project(rq.db, values["default_project_id"])
    values["extra"] = {k: v for k, v in body.items() if k not in known and k != "options"}
    user = logic.create_user(rq.db, values, rq.settings.identity.password_hash_rounds)
    return 201, {"user": user_view(rq, user)}


def update_user(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_user")
    user = logic.get_user(rq.db, rq.path_params["user_id"])
    body = check(dict(logic.require_fields(rq.json(), "user")),
                 {**USER_SPEC, "name": (STRING, False)}, allow_extra=True)
    if "domain_id" in body and body["domain_id"] != user.domain_id:
        raise BadRequest("Cannot change the domain ID of a user.")
    if "name" in body:
        user.name = body["name"]
    if "password" in body and body["password"]:
        user.password_hash = logic.hash_password(body["password"],
                                                 rq.settings.identity.password_hash_rounds)
        tokens.revoke(rq.db, user_id=user.id)
    if "enabled" in body:
        logic.set_user_enabled(rq.db, user, body["enabled"])
    if "default_project_id" in body:
        user.default_project_id = body["default_project_id"]
    extra = {k: v for k, v in body.items()
             if k not in {"name", "domain_id", "password", "enabled", "default_project_id",
                          "options"}}
    if extra:
        user.extra = {**(user.extra or {}), **extra}
    logic._insert_unique(rq.db, user, "user", user.name)
    return {"user": user_view(rq, user)}


def delete_user(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_user")
    logic.delete_user(rq.db, logic.get_user(rq.db, rq.path_params["user_id"]))
    return no_content()


def change_password(rq: ApiRequest) -> Any:
    user = logic.get_user(rq.db, rq.path_params["user_id"])
    if user.id != rq.ctx.user_id:
        _require_admin(rq, "change_password")
    body = check(dict(logic.require_fields(rq.json(), "user")),
                 {"original_password": (STRING, True), "password": (STRING, True)},
                 allow_extra=False)
    logic.change_password(rq.db, user, body["original_password"], body["password"],
                          rq.settings.identity.password_hash_rounds)
    return no_content()


def user_projects(rq: ApiRequest) -> Any:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id:
        _require_admin(rq, "list_user_projects")
    logic.get_user(rq.db, user_id)
    projects = logic.projects_for_user(rq.db, user_id)
    return {"projects": [project_view(rq, p) for p in projects], "links": _collection_links(rq)}


# ------------------------------------------------------------------ roles
def list_roles(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_roles")
    # as Keystone: the global roles, or with `domain_id` that domain's own
    stmt = select(Role).where(Role.domain_id == (rq.query.get("domain_id") or NULL_DOMAIN_ID)
                              ).order_by(Role.name)
    if rq.query.get("name") is not None:
        stmt = stmt.where(Role.name == rq.query["name"])
    columns = {"name": Role.name, "description": Role.description}
    roles = filters.filter_rows(rq.db.scalars(filters.apply_inexact(stmt, rq.query, columns)),
                                rq.query, columns)
    return {"roles": [role_view(rq, r) for r in roles], "links": _collection_links(rq)}


def show_role(rq: ApiRequest) -> Any:
    _require_admin(rq, "get_role")
    return {"role": role_view(rq, logic.get_role(rq.db, rq.path_params["role_id"]))}


def create_role(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_role")
    body = check(dict(logic.require_fields(rq.json(), "role")),
                 {"name": (STRING, True), "description": (STRING, False),
                  "domain_id": (STRING, False), "options": (OBJECT, False)}, allow_extra=True)
    if body.get("domain_id"):
        logic.get_domain(rq.db, body["domain_id"])
    role = logic.create_role(rq.db, body["name"], body.get("description"),
                             domain_id=body.get("domain_id") or NULL_DOMAIN_ID)
    return 201, {"role": role_view(rq, role)}


def delete_role(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_role")
    role = logic.get_role(rq.db, rq.path_params["role_id"])
    for a in logic.list_assignments(rq.db, role_id=role.id):
        tokens.revoke(rq.db, user_id=a["user_id"])
    from stackling.identity import groups

    for user_id in groups.members_granted(rq.db, role.id):
        tokens.revoke(rq.db, user_id=user_id)  # the role came to them through a group
    rq.db.delete(role)
    return no_content()


def role_inferences(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_role_inference_rules")
    rules: dict[str, list[Role]] = {}
    for row in rq.db.scalars(select(ImpliedRole)):
        rules.setdefault(row.prior_role_id, []).append(rq.db.get(Role, row.implied_role_id))
    body = []
    for prior_id, implied in sorted(rules.items()):
        prior = rq.db.get(Role, prior_id)
        body.append({"prior_role": _role_ref(rq, prior),
                     "implies": [_role_ref(rq, r) for r in implied if r]})
    return {"role_inferences": body, "links": _collection_links(rq)}


def _role_ref(rq: ApiRequest, role: Role | None) -> dict[str, Any]:
    if role is None:
        return {}
    return {"id": role.id, "name": role.name, "links": _links(rq, f"roles/{role.id}")}


def put_implied_role(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_implied_role")
    prior = logic.get_role(rq.db, rq.path_params["prior_role_id"])
    implied = logic.get_role(rq.db, rq.path_params["implied_role_id"])
    logic.check_inference(rq.db, prior, implied)
    # idempotent, also when two identical requests race
    insert_absent(rq.db, ImpliedRole, [{"prior_role_id": prior.id, "implied_role_id": implied.id}])
    body = {"role_inference": {"prior_role": _role_ref(rq, prior),
                               "implies": _role_ref(rq, implied)}}
    return 201, body


# ------------------------------------------------------------------ grants
def _grant_target(rq: ApiRequest) -> tuple[str, str, str, str]:
    p = rq.path_params
    user = logic.get_user(rq.db, p["user_id"])
    role = logic.get_role(rq.db, p["role_id"])
    if "project_id" in p:
        return USER_PROJECT, user.id, logic.get_project(rq.db, p["project_id"]).id, role.id
    if "domain_id" in p:
        return USER_DOMAIN, user.id, logic.get_domain(rq.db, p["domain_id"]).id, role.id
    return USER_SYSTEM, user.id, SYSTEM_ALL, role.id


GrantTarget = Callable[[ApiRequest], tuple[str, str, str, str]]


def grant_handlers(target_of: GrantTarget, revoke: Callable[..., Any]
                   ) -> tuple[Callable[[ApiRequest], Any], ...]:
    """PUT, GET/HEAD and DELETE of one grant (user or group: `target_of` resolves the
    path to (kind, actor, target, role); `revoke` is the actor kind's revocation)."""

    def put(rq: ApiRequest) -> Any:
        _require_admin(rq, "create_grant")
        logic.grant(rq.db, *target_of(rq))
        return no_content()

    def check(rq: ApiRequest) -> Any:
        _require_admin(rq, "check_grant")
        kind, actor, target, role = target_of(rq)
        if role not in logic.direct_role_ids(rq.db, kind, actor, target):
            raise NotFound(f"Could not find role assignment with role: {role}, user or "
                           f"group: {actor}, project, domain, or system: {target}.")
        return no_content()

    def delete(rq: ApiRequest) -> Any:
        _require_admin(rq, "revoke_grant")
        revoke(rq.db, *target_of(rq))
        return no_content()

    return put, check, delete


def grant_roles_view(rq: ApiRequest, kind: str, actor: str, target: str) -> Any:
    """The roles granted directly to `actor` on `target` (a grants list body)."""
    ids = logic.direct_role_ids(rq.db, kind, actor, target)
    roles = rq.db.scalars(select(Role).where(Role.id.in_(ids)).order_by(Role.name)) if ids else []
    return {"roles": [role_view(rq, r) for r in roles], "links": _collection_links(rq)}


put_grant, check_grant, delete_grant = grant_handlers(_grant_target, logic.revoke_grant)


def list_grants(rq: ApiRequest) -> Any:
    p = rq.path_params
    user = logic.get_user(rq.db, p["user_id"])
    if "project_id" in p:
        kind, target = USER_PROJECT, logic.get_project(rq.db, p["project_id"]).id
    elif "domain_id" in p:
        kind, target = USER_DOMAIN, logic.get_domain(rq.db, p["domain_id"]).id
    else:
        kind, target = USER_SYSTEM, SYSTEM_ALL
    if not (user.id == rq.ctx.user_id and target in (rq.ctx.project_id, rq.ctx.domain_id)):
        _require_admin(rq, "list_grants")
    return grant_roles_view(rq, kind, user.id, target)


# ------------------------------------------------------------------ the table
def build(runtime: Any) -> Service:
    s = Service(name="identity", prefix="/identity", family="identity",
                project_scoped=False)
    s.add("/", public=True, get=versions)
    s.add("/v3", public=True, get=version_v3)
    s.add("/v3/", public=True, get=version_v3)
    s.add("/v3/auth/tokens", public=True, post=issue_token)
    s.add("/v3/auth/tokens", get=validate_token, head=validate_token, delete=revoke_token)
    s.add("/v3/auth/catalog", get=auth_catalog)
    s.add("/v3/auth/projects", get=auth_projects)
    s.add("/v3/auth/domains", get=auth_domains)
    s.add("/v3/domains", get=list_domains)
    s.add("/v3/domains/{domain_id}", get=show_domain)
    s.add("/v3/projects", get=list_projects, post=create_project)
    s.add("/v3/projects/{project_id}", get=show_project, patch=update_project,
          delete=delete_project)
    s.add("/v3/users", get=list_users, post=create_user)
    s.add("/v3/users/{user_id}", get=show_user, patch=update_user, delete=delete_user)
    s.add("/v3/users/{user_id}/password", post=change_password)
    s.add("/v3/users/{user_id}/projects", get=user_projects)
    s.add("/v3/roles", get=list_roles, post=create_role)
    s.add("/v3/roles/{role_id}", get=show_role, delete=delete_role)
    s.add("/v3/roles/{prior_role_id}/implies/{implied_role_id}", put=put_implied_role)
    s.add("/v3/role_inferences", get=role_inferences)
    for scope in ("/v3/projects/{project_id}", "/v3/domains/{domain_id}", "/v3/system"):
        s.add(f"{scope}/users/{{user_id}}/roles", get=list_grants)
        s.add(f"{scope}/users/{{user_id}}/roles/{{role_id}}", put=put_grant, get=check_grant,
              head=check_grant, delete=delete_grant)
    return s  # the other route modules' routes: component.py adds them
