"""/software_configs and /software_deployments (Heat answers 200 to their POSTs)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from stackling.common.http import ApiRequest, Service
from stackling.orchestration import software
from stackling.orchestration.api.common import authorize
from stackling.orchestration.errors import BadRequest

T = "/v1/{tenant_id}"


def _body(rq: ApiRequest) -> Any:
    data = rq.json(bad_request=BadRequest, malformed="The request body could not be "
                   "parsed as JSON.", required=False)
    return data if data is not None else {}


def _limit(rq: ApiRequest) -> int | None:
    value = rq.query.get("limit")
    if value in (None, ""):
        return None
    try:
        n = int(value)
        if n < 0:
            raise ValueError
    except ValueError:
        raise BadRequest("Only integer is acceptable by 'limit'.") from None
    return n


def list_configs(rq: ApiRequest) -> Any:
    authorize(rq, "software_configs:index")
    all_projects = str(rq.query.get("tenant_safe", "true")).lower() == "false"
    if all_projects:
        authorize(rq, "software_configs:global_index")
    rows = software.list_configs(rq.db, rq.ctx, _limit(rq), rq.query.get("marker"),
                                 all_projects)
    return {"software_configs": [software.config_view(r, full=False) for r in rows]}


def create_config(rq: ApiRequest) -> Any:
    authorize(rq, "software_configs:create")
    return {"software_config": software.config_view(
        software.create_config(rq.db, rq.ctx, _body(rq)))}


def show_config(rq: ApiRequest) -> Any:
    authorize(rq, "software_configs:show")
    return {"software_config": software.config_view(
        software.get_config(rq.db, rq.ctx, rq.path_params["config_id"]))}


def delete_config(rq: ApiRequest) -> Any:
    authorize(rq, "software_configs:delete")
    software.delete_config(rq.db, rq.ctx, rq.path_params["config_id"])
    return Response(status_code=204)


def list_deployments(rq: ApiRequest) -> Any:
    authorize(rq, "software_deployments:index")
    rows = software.list_deployments(rq.db, rq.ctx, rq.query.get("server_id"))
    return {"software_deployments": [software.deployment_view(r) for r in rows]}


def create_deployment(rq: ApiRequest) -> Any:
    authorize(rq, "software_deployments:create")
    return {"software_deployment": software.deployment_view(
        software.create_deployment(rq.db, rq.ctx, _body(rq)))}


def show_deployment(rq: ApiRequest) -> Any:
    authorize(rq, "software_deployments:show")
    return {"software_deployment": software.deployment_view(
        software.get_deployment(rq.db, rq.ctx, rq.path_params["deployment_id"]))}


def update_deployment(rq: ApiRequest) -> Any:
    authorize(rq, "software_deployments:update")
    row = software.update_deployment(rq.db, rq.ctx, rq.path_params["deployment_id"],
                                     _body(rq))
    worker = rq.runtime.state.get("orchestration.worker")
    if worker is not None:  # a SoftwareDeployment may be waiting on it
        rq.after_commit(worker.wake)
    return {"software_deployment": software.deployment_view(row)}


def delete_deployment(rq: ApiRequest) -> Any:
    authorize(rq, "software_deployments:delete")
    software.delete_deployment(rq.db, rq.ctx, rq.path_params["deployment_id"])
    return Response(status_code=204)


def metadata(rq: ApiRequest) -> Any:
    authorize(rq, "software_deployments:metadata")
    return {"metadata": software.server_metadata(rq.db, rq.ctx, rq.path_params["server_id"])}


def add_routes(svc: Service) -> None:
    svc.add(T + "/software_configs", get=list_configs, post=create_config)
    svc.add(T + "/software_configs/{config_id}", get=show_config, delete=delete_config)
    svc.add(T + "/software_deployments", get=list_deployments, post=create_deployment)
    svc.add(T + "/software_deployments/metadata/{server_id}", get=metadata)
    svc.add(T + "/software_deployments/{deployment_id}", get=show_deployment,
            put=update_deployment, delete=delete_deployment)
