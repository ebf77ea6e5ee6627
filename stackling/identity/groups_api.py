"""Identity v3 routes for groups, their members, group grants and role assignments."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import filters, groups, logic
from stackling.identity.api import (
    OBJECT,
    STRING,
    _collection_links,
    _links,
    _require_admin,
    check,
    grant_handlers,
    grant_roles_view,
    user_view,
)
from stackling.identity.group_appcred_models import Group
from stackling.identity.logic import SYSTEM_ALL, USER_DOMAIN, USER_PROJECT
from stackling.identity.models import Domain, Project, Role, User

POLICIES = ("list_groups", "get_group", "create_group", "update_group", "delete_group",
            "list_users_in_group", "add_user_to_group", "check_user_in_group",
            "remove_user_from_group", "list_groups_for_user")
GROUP_SPEC = {"name": (STRING, True), "domain_id": (STRING, False),
              "description": (STRING, False), "options": (OBJECT, False)}


def group_view(rq: ApiRequest, g: Group) -> dict[str, Any]:
    view = {"id": g.id, "name": g.name, "domain_id": g.domain_id,
            "description": g.description, "links": _links(rq, f"groups/{g.id}")}
    for k, v in (g.extra or {}).items():
        view.setdefault(k, v)
    return view


def _group(rq: ApiRequest) -> Group:
    return groups.get_group(rq.db, rq.path_params["group_id"])


# ------------------------------------------------------------------ groups
def list_groups(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_groups")
    rows = groups.list_groups(rq.db, name=rq.query.get("name"),
                              domain_id=rq.query.get("domain_id"))
    rows = filters.filter_rows(rows, rq.query, {"name": Group.name,
                                                "description": Group.description})
    return {"groups": [group_view(rq, g) for g in rows], "links": _collection_links(rq)}


def show_group(rq: ApiRequest) -> Any:
    _require_admin(rq, "get_group")
    return {"group": group_view(rq, _group(rq))}


def create_group(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_group")
    body = check(dict(logic.require_fields(rq.json(), "group")), GROUP_SPEC, allow_extra=True)
    values = {"name": body["name"], "description": body.get("description") or "",
              "domain_id": body.get("domain_id") or rq.ctx.project_domain_id
              or rq.ctx.domain_id or "default",
              "extra": {k: v for k, v in body.items() if k not in GROUP_SPEC}}
    return 201, {"group": group_view(rq, groups.create_group(rq.db, values))}


def update_group(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_group")
    group = _group(rq)
    body = check(dict(logic.require_fields(rq.json(), "group")),
                 {**GROUP_SPEC, "name": (STRING, False)}, allow_extra=True)
    if "domain_id" in body and body["domain_id"] != group.domain_id:
        from stackling.common.errors import BadRequest

        raise BadRequest("Cannot change the domain ID of a group.")
    values: dict[str, Any] = {k: body[k] for k in ("name",) if k in body}
    if "description" in body:
        values["description"] = body["description"] or ""
    extra = {k: v for k, v in body.items() if k not in GROUP_SPEC}
    if extra:
        values["extra"] = {**(group.extra or {}), **extra}
    return {"group": group_view(rq, groups.update_group(rq.db, group, values))}


def delete_group(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_group")
    groups.delete_group(rq.db, _group(rq))
    return no_content()


# ------------------------------------------------------------------ membership
def group_users(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_users_in_group")
    users = groups.list_members(rq.db, _group(rq))
    return {"users": [user_view(rq, u) for u in users], "links": _collection_links(rq)}


def _member(rq: ApiRequest) -> tuple[Group, User]:
    return _group(rq), logic.get_user(rq.db, rq.path_params["user_id"])


def add_member(rq: ApiRequest) -> Any:
    _require_admin(rq, "add_user_to_group")
    groups.add_member(rq.db, *_member(rq))
    return no_content()


def check_member(rq: ApiRequest) -> Any:
    _require_admin(rq, "check_user_in_group")
    groups.check_member(rq.db, *_member(rq))
    return no_content()


def remove_member(rq: ApiRequest) -> Any:
    _require_admin(rq, "remove_user_from_group")
    groups.remove_member(rq.db, *_member(rq))
    return no_content()


def user_groups(rq: ApiRequest) -> Any:
    user_id = rq.path_params["user_id"]
    if user_id != rq.ctx.user_id:
        _require_admin(rq, "list_groups_for_user")
    logic.get_user(rq.db, user_id)
    rows = groups.groups_for_user(rq.db, user_id)
    return {"groups": [group_view(rq, g) for g in rows], "links": _collection_links(rq)}


# ------------------------------------------------------------------ group grants
def _grant_target(rq: ApiRequest) -> tuple[str, str, str, str]:
    p = rq.path_params
    group = _group(rq)
    if "role_id" in p:
        role_id = logic.get_role(rq.db, p["role_id"]).id
    else:
        role_id = ""
    if "project_id" in p:
        target = logic.get_project(rq.db, p["project_id"]).id
        return groups.GROUP_PROJECT, group.id, target, role_id
    if "domain_id" in p:
        return groups.GROUP_DOMAIN, group.id, logic.get_domain(rq.db, p["domain_id"]).id, role_id
    return groups.GROUP_SYSTEM, group.id, SYSTEM_ALL, role_id


put_grant, check_grant, delete_grant = grant_handlers(_grant_target, groups.revoke_group_grant)


def list_grants(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_grants")
    kind, actor, target, _ = _grant_target(rq)
    return grant_roles_view(rq, kind, actor, target)


# ------------------------------------------------------------------ role assignments
def _flag(q: Any, name: str) -> bool:
    # Keystone's query_filter_is_true: present and not "0" (`effective=maybe` is true)
    return name in q and (q.get(name) or "").lower() != "0"


def role_assignments(rq: ApiRequest) -> Any:
    q = rq.query
    user_id = q.get("user.id")
    if not (user_id and user_id == rq.ctx.user_id):
        _require_admin(rq, "list_role_assignments")
    rows = groups.list_role_assignments(
        rq.db, user_id=user_id, group_id=q.get("group.id"), role_id=q.get("role.id"),
        project_id=q.get("scope.project.id"), domain_id=q.get("scope.domain.id"),
        system=q.get("scope.system") == "all", effective=_flag(q, "effective"))
    names = _flag(q, "include_names")
    return {"role_assignments": [_assignment_view(rq, r, names) for r in rows],
            "links": _collection_links(rq)}


def _named_domain(db: Any, domain_id: str) -> dict[str, Any]:
    d = db.get(Domain, domain_id)
    return {"id": domain_id, "name": d.name if d else ""}


def _assignment_view(rq: ApiRequest, row: dict[str, Any], names: bool) -> dict[str, Any]:
    db, base = rq.db, f"{rq.service_url}/v3"
    target = row["target_id"]
    if row["type"] == USER_PROJECT:
        scope: dict[str, Any] = {"project": {"id": target}}
        path = f"projects/{target}"
    elif row["type"] == USER_DOMAIN:
        scope = {"domain": {"id": target}}
        path = f"domains/{target}"
    else:
        scope = {"system": {"all": True}}
        path = "system"
    role: dict[str, Any] = {"id": row["role_id"]}
    view: dict[str, Any] = {"role": role, "scope": scope}
    group_id = row.get("group_id") or row.get("membership_group_id")
    if row.get("user_id"):
        view["user"] = {"id": row["user_id"]}
    else:
        view["group"] = {"id": row["group_id"]}
    if names:
        r = db.get(Role, row["role_id"])
        if r:
            role["name"] = r.name
        if "user" in view:
            u = db.get(User, row["user_id"])
            if u:
                view["user"].update(name=u.name, domain=_named_domain(db, u.domain_id))
        else:
            g = db.get(Group, row["group_id"])
            if g:
                view["group"].update(name=g.name, domain=_named_domain(db, g.domain_id))
        if "project" in scope:
            p = db.get(Project, target)
            if p:
                scope["project"].update(name=p.name, domain=_named_domain(db, p.domain_id))
        elif "domain" in scope:
            scope["domain"]["name"] = _named_domain(db, target)["name"]
    prior = row["prior_role_id"] or row["role_id"]
    actor = f"groups/{group_id}" if group_id else f"users/{row['user_id']}"
    links = {"assignment": f"{base}/{path}/{actor}/roles/{prior}"}
    if row.get("membership_group_id"):
        links["membership"] = f"{base}/groups/{group_id}/users/{row['user_id']}"
    if row["prior_role_id"]:
        links["prior_role"] = f"{base}/roles/{row['prior_role_id']}"
    view["links"] = links
    return view


# ------------------------------------------------------------------ routes
def add_routes(s: Service) -> None:
    s.add("/v3/groups", get=list_groups, post=create_group)
    s.add("/v3/groups/{group_id}", get=show_group, patch=update_group, delete=delete_group)
    s.add("/v3/groups/{group_id}/users", get=group_users)
    s.add("/v3/groups/{group_id}/users/{user_id}", put=add_member, get=check_member,
          head=check_member, delete=remove_member)
    s.add("/v3/users/{user_id}/groups", get=user_groups)
    s.add("/v3/role_assignments", get=role_assignments)
    for scope in ("/v3/projects/{project_id}", "/v3/domains/{domain_id}", "/v3/system"):
        s.add(f"{scope}/groups/{{group_id}}/roles", get=list_grants)
        s.add(f"{scope}/groups/{{group_id}}/roles/{{role_id}}", put=put_grant, get=check_grant,
              head=check_grant, delete=delete_grant)
