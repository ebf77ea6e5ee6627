"""/os-server-groups: create, list (limit/offset, all_projects for admins), show, delete,
with Nova's bodies: `policies` as a one-item list and an empty `metadata` below 2.64,
`policy` and `rules` from 2.64."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest
from stackling.common.http import ApiRequest
from stackling.compute import server_groups as logic
from stackling.compute.api.common import authorize, body, known_query, page_limit, takes_query, version
from stackling.compute.group_models import ServerGroup
from stackling.compute.schemas import NAME, POSITIVE_INT

ADMIN = "rule:context_is_admin"
READER = "rule:context_is_admin or rule:project_reader_api"
MEMBER = "rule:context_is_admin or rule:project_member_api"

# Nova's defaults (the target is the group's project, or the caller's for create/index).
POLICIES = {
    "os_compute_api:os-server-groups:create": MEMBER,
    "os_compute_api:os-server-groups:delete": MEMBER,
    "os_compute_api:os-server-groups:index": READER,
    "os_compute_api:os-server-groups:index:all_projects": ADMIN,
    "os_compute_api:os-server-groups:show": READER,
}

# 2.64 replaces `policies` with `policy` and `rules` ({"max_server_per_host": n}, for
# anti-affinity only) and drops `metadata`.
GROUP_POLICY_MV = "2.64"


def _create_schema(policies: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": {"server_group": {
        "type": "object",
        "properties": {"name": NAME, "policies": {
            "type": "array", "items": [{"type": "string", "enum": list(policies)}],
            "uniqueItems": True, "minItems": 1, "maxItems": 1, "additionalItems": False}},
        "required": ["name", "policies"], "additionalProperties": False}},
        "required": ["server_group"], "additionalProperties": False}


CREATE_2_64 = {"type": "object", "properties": {"server_group": {
    "type": "object",
    "properties": {"name": NAME,
                   "policy": {"type": "string",
                              "enum": list(logic.POLICIES + logic.SOFT_POLICIES)},
                   "rules": {"type": "object",
                             "properties": {"max_server_per_host": POSITIVE_INT},
                             "additionalProperties": False}},
    "required": ["name", "policy"], "additionalProperties": False}},
    "required": ["server_group"], "additionalProperties": False}

CREATE = {"2.1": _create_schema(logic.POLICIES),
          "2.15": _create_schema(logic.POLICIES + logic.SOFT_POLICIES),
          GROUP_POLICY_MV: CREATE_2_64}


def _view(rq: ApiRequest, group: ServerGroup, members: list[str]) -> dict[str, Any]:
    view: dict[str, Any] = {"id": group.uuid, "name": group.name}
    if version(rq).matches(GROUP_POLICY_MV):
        view.update(policy=group.policy, rules=dict(group.rules or {}))
    else:
        view.update(policies=[group.policy], metadata={})
    view["members"] = members
    if version(rq).matches("2.13"):
        view.update(project_id=group.project_id, user_id=group.user_id)
    return view


def create(rq: ApiRequest) -> Any:
    authorize(rq, "os-server-groups:create", {"project_id": rq.ctx.project_id})
    data = body(rq, CREATE, versioned=True)["server_group"]
    if version(rq).matches(GROUP_POLICY_MV):
        policy, rules = data["policy"], dict(data.get("rules") or {})
        if rules and policy != "anti-affinity":
            raise BadRequest("Only anti-affinity policy supports rules.")
        if "max_server_per_host" in rules:  # stored as the number it is
            rules["max_server_per_host"] = int(rules["max_server_per_host"])
    else:
        policy, rules = data["policies"][0], {}
    group = logic.create_group(rq.db, rq.ctx, data["name"], policy, rules)
    return {"server_group": _view(rq, group, [])}


@takes_query("all_projects", "limit", "offset")
def index(rq: ApiRequest) -> Any:
    known_query(rq, {"all_projects", "limit", "offset"})
    authorize(rq, "os-server-groups:index", {"project_id": rq.ctx.project_id})
    limit = page_limit(rq)
    try:
        offset = int(rq.query.get("offset") or 0)
    except ValueError:
        raise BadRequest("offset param must be an integer") from None
    if offset < 0:
        raise BadRequest("offset param must be positive")
    project: str | None = rq.ctx.project_id or ""
    if "all_projects" in rq.query and rq.ctx.is_admin:
        authorize(rq, "os-server-groups:index:all_projects", {"project_id": project})
        project = None
    groups = logic.list_groups(rq.db, project, limit, offset)
    members = logic.members(rq.db, groups)
    return {"server_groups": [_view(rq, g, members[g.id]) for g in groups]}


def show(rq: ApiRequest) -> Any:
    group = logic.get_group(rq.db, rq.path_params["group_id"])
    authorize(rq, "os-server-groups:show", {"project_id": group.project_id})
    return {"server_group": _view(rq, group, logic.members(rq.db, [group])[group.id])}


def delete(rq: ApiRequest) -> Any:
    group = logic.get_group(rq.db, rq.path_params["group_id"])
    authorize(rq, "os-server-groups:delete", {"project_id": group.project_id})
    logic.delete_group(rq.db, group)
    return 204, None


def add_routes(s: Any) -> None:
    s.add("/v2.1/os-server-groups", get=index, post=create)
    s.add("/v2.1/os-server-groups/{group_id}", get=show, delete=delete)
