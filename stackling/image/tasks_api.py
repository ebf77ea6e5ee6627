"""Glance routes for image actions (deactivate, reactivate) and the tasks API."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest, Forbidden
from stackling.common.http import ApiRequest, Service, no_content
from stackling.common.listing import parse_list_params
from stackling.image import logic, policy, tasks


def _authorize(rq: ApiRequest, action: str, target: dict[str, Any] | None = None) -> None:
    rq.authorize(action, target, exc=Forbidden(
        f"You are not authorized to complete {action} action."))


def deactivate(rq: ApiRequest) -> Any:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    _authorize(rq, "deactivate", policy.target(image))
    logic.deactivate(rq.db, rq.ctx, image.id)
    return no_content()


def reactivate(rq: ApiRequest) -> Any:
    image = logic.get_image(rq.db, rq.ctx, rq.path_params["image_id"])
    _authorize(rq, "reactivate", policy.target(image))
    logic.reactivate(rq.db, rq.ctx, image.id)
    return no_content()


def list_tasks(rq: ApiRequest) -> Any:
    _authorize(rq, "get_tasks")
    params = parse_list_params(rq.query, filterable=("type", "status"),
                               sortable=("created_at", "updated_at", "status", "type", "id"),
                               ignored=("sort",))
    if params.limit is None:
        params.limit = 25
    if not params.sorts:
        params.sorts = [("created_at", False)]
    filters = {k: v[-1] for k, v in params.filters.items()}
    try:
        page = tasks.list_tasks(rq.db, rq.ctx, filters, params)
    except tasks.TaskNotFound:
        raise BadRequest(f"marker {params.marker} could not be found.") from None
    body: dict[str, Any] = {"tasks": [tasks.view(t, stub=True) for t in page.rows],
                            "first": "/v2/tasks", "schema": "/v2/schemas/tasks"}
    if page.has_more and page.rows:
        query = [(k, v) for k, v in rq.query.multi_items() if k != "marker"]
        query.append(("marker", page.rows[-1].id))
        body["next"] = "/v2/tasks?" + "&".join(f"{k}={v}" for k, v in query)
    return body


def create_task(rq: ApiRequest) -> Any:
    """`POST /v2/tasks` (Glance's deprecated tasks API, admins by default): an `import`
    task runs in the request (importing.legacy_import_task); the other types are Glance's
    own, created by its imports, and fail at once as Glance's executor fails them."""
    _authorize(rq, "add_task")
    body = rq.json(malformed="Malformed JSON in request body.")
    if not isinstance(body, dict):
        raise BadRequest("Malformed JSON in request body.")
    for key in ("type", "input"):
        if key not in body:
            raise BadRequest(f"Task '{key}' is required")
    if body["type"] not in tasks.TYPES:
        raise BadRequest(f"Failed validating 'enum' in schema['properties']['type']: "
                         f"{body['type']!r} is not one of {list(tasks.TYPES)}")
    if not isinstance(body["input"], dict):
        raise BadRequest(f"Failed validating 'type' in schema['properties']['input']: "
                         f"{body['input']!r} is not of type 'object'")
    extra = sorted(set(body) - {"type", "input"})
    if extra:
        raise BadRequest(f"Attribute '{extra[0]}' is read-only.")
    if body["type"] == "import":
        from pathlib import Path

        from stackling.image import importing, stores

        task = importing.legacy_import_task(
            rq.db, rq.ctx, body["input"], Path(rq.settings.data_dir) / "images",
            rq.settings.image, rq.settings.http.image_size_cap,
            stores.configured(rq.settings))
    else:
        task = tasks.record(rq.db, rq.ctx, body["type"], body["input"], status="failure",
                            message=f"Task type {body['type']} is run by Glance's own "
                                    "imports only")
    return 201, tasks.view(task), {"Location": f"{rq.service_url}/v2/tasks/{task.id}"}


def show_task(rq: ApiRequest) -> Any:
    _authorize(rq, "get_task")
    return tasks.view(tasks.get_task(rq.db, rq.ctx, rq.path_params["task_id"]))


def add_routes(s: Service) -> None:
    s.add("/v2/images/{image_id}/actions/deactivate", post=deactivate)
    s.add("/v2/images/{image_id}/actions/reactivate", post=reactivate)
    s.add("/v2/tasks", get=list_tasks, post=create_task)
    s.add("/v2/tasks/{task_id}", get=show_task)
