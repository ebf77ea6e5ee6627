"""os-quota-sets (show, update, delete, defaults, detail; `?user_id=`) and
os-quota-class-sets (show, update), with Nova's bodies per microversion."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.common.listing import to_bool
from stackling.compute import quotas
from stackling.compute.api.common import authorize, body, known_query, takes_query, version

ADMIN = "rule:context_is_admin"
READER = "rule:context_is_admin or rule:project_reader_api"

# Nova's secure-RBAC defaults.
POLICIES = {
    "os_compute_api:os-quota-sets:show": READER,
    "os_compute_api:os-quota-sets:detail": READER,
    "os_compute_api:os-quota-sets:defaults": "@",
    "os_compute_api:os-quota-sets:update": ADMIN,
    "os_compute_api:os-quota-sets:delete": ADMIN,
    "os_compute_api:os-quota-class-sets:show": ADMIN,
    "os_compute_api:os-quota-class-sets:update": ADMIN,
    "os_compute_api:limits:other_project": ADMIN,
}

_LIMIT = {"type": ["integer", "string"], "pattern": "^-?[0-9]+$", "minimum": -1,
          "maximum": quotas.MAX_INT}
_BOOL = {"type": ["boolean", "string"],
         "enum": [True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
                  "y", "t", False, "False", "FALSE", "false", "0", "OFF", "Off", "off",
                  "NO", "No", "no", "n", "f"]}


def _shown(rq: ApiRequest, *, network_until: str = "2.36") -> tuple[str, ...]:
    """The resources the body carries at this microversion (Nova's FILTERED_QUOTAS)."""
    mv = version(rq)
    out: tuple[str, ...] = quotas.RESOURCES
    if mv.matches("2.57"):
        out = tuple(r for r in out if r not in quotas.INJECTED)
    if not mv.matches(network_until):
        out = out + quotas.NETWORK_LEGACY
    return out


def _schema(resources: tuple[str, ...], key: str, *, force: bool) -> dict[str, Any]:
    props: dict[str, Any] = {r: _LIMIT for r in resources}
    if force:
        props["force"] = _BOOL
    return {"type": "object", "properties": {key: {
        "type": "object", "properties": props, "additionalProperties": False}},
        "required": [key], "additionalProperties": False}


def _render(resources: tuple[str, ...], values: dict[str, Any], ident: str | None,
            legacy: Any = -1) -> dict[str, Any]:
    out: dict[str, Any] = {"id": ident} if ident is not None else {}
    for r in resources:
        out[r] = values.get(r, legacy)
    return out


def _project(rq: ApiRequest, action: str) -> str:
    project_id = rq.path_params["project_id"]
    authorize(rq, f"os-quota-sets:{action}", {"project_id": project_id})
    if action != "delete":  # as Nova: every call but delete checks the project exists
        quotas.verify_project(rq.db, project_id)
    return project_id


def _user(rq: ApiRequest) -> str | None:
    return rq.query.get("user_id") or None


# ------------------------------------------------------------------ os-quota-sets
@takes_query("user_id")
def show(rq: ApiRequest) -> Any:
    known_query(rq, {"user_id"})
    project_id = _project(rq, "show")
    values = quotas.limits(rq.db, project_id, _user(rq))
    return {"quota_set": _render(_shown(rq), values, project_id)}


@takes_query("user_id")
def detail(rq: ApiRequest) -> Any:
    known_query(rq, {"user_id"})
    project_id = _project(rq, "detail")
    values: dict[str, Any] = quotas.details(rq.db, project_id, _user(rq))
    legacy = {"limit": -1, "in_use": 0, "reserved": 0}
    return {"quota_set": _render(_shown(rq), values, project_id, legacy)}


def defaults(rq: ApiRequest) -> Any:
    project_id = _project(rq, "defaults")
    return {"quota_set": _render(_shown(rq), quotas.defaults(rq.db), project_id)}


def update(rq: ApiRequest) -> Any:
    known_query(rq, {"user_id"})
    project_id = _project(rq, "update")
    user_id = _user(rq)
    shown = _shown(rq)
    data = body(rq, _schema(shown, "quota_set", force=True))["quota_set"]
    force = to_bool(data.pop("force", False))
    values = {k: int(v) for k, v in data.items() if k in quotas.RESOURCES}
    if not force:
        quotas.validate_update(rq.db, project_id, user_id, values)
    quotas.set_limits(rq.db, project_id, user_id, values)
    return {"quota_set": _render(shown, quotas.limits(rq.db, project_id, user_id), None)}


def delete(rq: ApiRequest) -> Any:
    known_query(rq, {"user_id"})
    project_id = _project(rq, "delete")
    quotas.reset(rq.db, project_id, _user(rq))
    return 202, None


# ------------------------------------------------------------------ os-quota-class-sets
def class_show(rq: ApiRequest) -> Any:
    name = rq.path_params["class_name"]
    authorize(rq, "os-quota-class-sets:show")
    values = quotas.class_limits(rq.db, name)
    return {"quota_class_set": _render(_shown(rq, network_until="2.50"), values, name)}


def class_update(rq: ApiRequest) -> Any:
    name = rq.path_params["class_name"]
    authorize(rq, "os-quota-class-sets:update")
    shown = _shown(rq, network_until="2.50")
    data = body(rq, _schema(shown, "quota_class_set", force=False))["quota_class_set"]
    values = {k: int(v) for k, v in data.items() if k in quotas.RESOURCES}
    quotas.set_class_limits(rq.db, name, values)
    return {"quota_class_set": _render(shown, quotas.class_limits(rq.db, name), None)}


def add_routes(s: Any) -> None:
    s.add("/v2.1/os-quota-sets/{project_id}", get=show, put=update, delete=delete)
    s.add("/v2.1/os-quota-sets/{project_id}/defaults", get=defaults)
    s.add("/v2.1/os-quota-sets/{project_id}/detail", get=detail)
    s.add("/v2.1/os-quota-class-sets/{class_name}", get=class_show, put=class_update)
