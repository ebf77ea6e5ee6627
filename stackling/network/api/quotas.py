"""`/v2.0/quotas`, `/v2.0/quotas/{project_id}[/default|/details]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors, quotas
from stackling.network.extensions import EXTENSIONS, Extension


def list_quotas(rq: ApiRequest) -> Any:
    return {"quotas": quotas.list_quotas(rq.db, rq.ctx)}


def show_quota(rq: ApiRequest) -> Any:
    return {"quota": quotas.show(rq.db, rq.ctx, rq.path_params["project_id"])}


def show_default(rq: ApiRequest) -> Any:
    return {"quota": quotas.show_default(rq.db, rq.ctx, rq.path_params["project_id"])}


def show_details(rq: ApiRequest) -> Any:
    return {"quota": quotas.details(rq.db, rq.ctx, rq.path_params["project_id"])}


def update_quota(rq: ApiRequest) -> Any:
    body = rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")
    values, check_limit = quotas.parse_update(body)
    return {"quota": quotas.update(rq.db, rq.ctx, rq.path_params["project_id"], values,
                                   check_limit)}


def reset_quota(rq: ApiRequest) -> Any:
    quotas.reset(rq.db, rq.ctx, rq.path_params["project_id"])


def own_project(rq: ApiRequest) -> Any:
    """`GET /v2.0/quotas/project` (and the deprecated `/tenant`): the caller's project id."""
    key = "tenant" if rq.request.url.path.rstrip("/").removesuffix(".json").endswith(
        "/tenant") else "project"
    if not rq.ctx.project_id:
        raise errors.BadRequest("Tenant/project-id was missing from the request context")
    return {key: {f"{key}_id": rq.ctx.project_id}}


def register(s: Service) -> None:
    s.add("/v2.0/quotas", get=list_quotas)
    # before the {project_id} route, which would take these names as ids
    s.add("/v2.0/quotas/project", get=own_project)
    s.add("/v2.0/quotas/tenant", get=own_project)
    s.add("/v2.0/quotas/{project_id}", get=show_quota, put=update_quota, delete=reset_quota)
    s.add("/v2.0/quotas/{project_id}/default", get=show_default)
    s.add("/v2.0/quotas/{project_id}/details", get=show_details)


EXTENSIONS.extend([
    Extension("quotas", "Quota management support", "Expose functions for quotas "
              "management per project", "2012-07-29T10:00:00-00:00"),
    Extension("quota_details", "Quota details management support",
              "Expose functions for quotas usage statistics per project",
              "2017-02-10T10:00:00-00:00"),
    Extension("quota-check-limit", "Quota engine limit check", "Support for checking the "
              "resource usage before applying a new quota limit",
              "2021-12-07T10:00:00-00:00"),
])
