"""Identity v3 routes for project tags (`/v3/projects/{id}/tags[/{tag}]`).

Reads: the project's own tokens or an admin; writes: admins (Keystone's defaults give
them to system and domain admins, which stackling's `admin` stands for)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service, no_content
from stackling.identity import logic, project_tags
from stackling.identity.api import _require_admin
from stackling.identity.models import Project

POLICIES = ("list_project_tags", "get_project_tag", "update_project_tags", "create_project_tag",
            "delete_project_tags", "delete_project_tag")


def _project(rq: ApiRequest, action: str) -> Project:
    project_id = rq.path_params["project_id"]
    if not (action in ("list_project_tags", "get_project_tag") and project_id == rq.ctx.project_id):
        _require_admin(rq, action)
    return logic.get_project(rq.db, project_id)


def _tags_body(rq: ApiRequest, project: Project) -> dict[str, Any]:
    """As Keystone wraps them: the tags and a self link."""
    return {"links": {"self": f"{rq.service_url}/v3/projects/{project.id}/tags"},
            "tags": list(project.tags or [])}


def list_tags(rq: ApiRequest) -> Any:
    return _tags_body(rq, _project(rq, "list_project_tags"))


def replace_tags(rq: ApiRequest) -> Any:
    project = _project(rq, "update_project_tags")
    body = rq.json()
    project.tags = project_tags.checked(body.get("tags") if isinstance(body, dict) else body)
    return _tags_body(rq, project)


def delete_tags(rq: ApiRequest) -> Any:
    _project(rq, "delete_project_tags").tags = []
    return no_content()


def check_tag(rq: ApiRequest) -> Any:
    project_tags.require(_project(rq, "get_project_tag"), rq.path_params["tag"])
    return no_content()


def put_tag(rq: ApiRequest) -> Any:
    project = _project(rq, "create_project_tag")
    project_tags.add(project, rq.path_params["tag"])
    location = f"{rq.service_url}/v3/projects/{project.id}/tags/{rq.path_params['tag']}"
    return no_content(201, {"Location": location})


def delete_tag(rq: ApiRequest) -> Any:
    project_tags.remove(_project(rq, "delete_project_tag"), rq.path_params["tag"])
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/projects/{project_id}/tags", get=list_tags, put=replace_tags, delete=delete_tags)
    s.add("/v3/projects/{project_id}/tags/{tag}", get=check_tag, head=check_tag, put=put_tag,
          delete=delete_tag)
