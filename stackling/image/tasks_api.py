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


def show_task(rq: ApiRequest) -> Any:
    _authorize(rq, "get_task")
    return tasks.view(tasks.get_task(rq.db, rq.ctx, rq.path_params["task_id"]))


def add_routes(s: Service) -> None:
    s.add("/v2/images/{image_id}/actions/deactivate", post=deactivate)
    s.add("/v2/images/{image_id}/actions/reactivate", post=reactivate)
    s.add("/v2/tasks", get=list_tasks)
    s.add("/v2/tasks/{task_id}", get=show_task)
