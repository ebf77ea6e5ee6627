"""Software configs and deployments (Heat's /software_configs and /software_deployments):
plain logic over the two tables, used by the API and by the OS::Heat::Software* types.

A deployment waiting for its server (`IN_PROGRESS`) completes when it is signalled: a
`PUT /software_deployments/{id}` with a status (and output values), or a resource signal
to its SoftwareDeployment carrying `deploy_status_code`/outputs. Updates hold the
deployment's row (`SELECT ... FOR UPDATE`), so concurrent signals apply one after another."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.orchestration.errors import BadRequest, HeatError
from stackling.orchestration.software_models import SoftwareConfig, SoftwareDeployment

DEFAULT_GROUP = "Heat::Ungrouped"
STATUS_CODE = "deploy_status_code"
OUTPUT_KEYS = ("deploy_stdout", "deploy_stderr", "deploy_status_code")


class NotFound(HeatError):
    status = 404
    message = "%(message)s"


def _time(value: Any) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


# ------------------------------------------------------------------ configs
def _inputs(value: Any, field: str) -> list[dict[str, Any]]:
    if value in (None, ""):
        return []
    if not isinstance(value, list) or not all(isinstance(i, dict) and isinstance(
            i.get("name"), str) for i in value):
        raise BadRequest(f"{field} must be a list of maps, each with a name")
    out = []
    for item in value:
        item = dict(item)
        item.setdefault("type", "String")
        item.setdefault("description", None)
        if field == "inputs":
            item.setdefault("default", None)
            item.setdefault("replace_on_change", False)
        else:
            item.setdefault("error_output", False)
        out.append(item)
    return out


def create_config(db: Session, ctx: RequestContext, body: Any) -> SoftwareConfig:
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise BadRequest("options must be a map")
    row = SoftwareConfig(id=str(uuid.uuid4()), project_id=ctx.project_id,
                         name=body.get("name"), group=body.get("group") or DEFAULT_GROUP,
                         config=body.get("config"), inputs=_inputs(body.get("inputs"), "inputs"),
                         outputs=_inputs(body.get("outputs"), "outputs"), options=options,
                         created_at=utcnow())
    db.add(row)
    db.flush()
    return row


def get_config(db: Session, ctx: RequestContext, config_id: str) -> SoftwareConfig:
    row = db.get(SoftwareConfig, config_id)
    if row is None or (row.project_id != ctx.project_id and not ctx.is_admin):
        raise NotFound(message=f"Software config with id {config_id} not found")
    return row


def list_configs(db: Session, ctx: RequestContext, limit: int | None, marker: str | None,
                 all_projects: bool = False) -> list[SoftwareConfig]:
    q = select(SoftwareConfig).order_by(SoftwareConfig.created_at, SoftwareConfig.id)
    if not all_projects:
        q = q.where(SoftwareConfig.project_id == ctx.project_id)
    rows = list(db.scalars(q))
    if marker:
        ids = [r.id for r in rows]
        rows = rows[ids.index(marker) + 1:] if marker in ids else []
    return rows[:limit] if limit is not None else rows


def delete_config(db: Session, ctx: RequestContext, config_id: str) -> None:
    row = get_config(db, ctx, config_id)
    used = db.scalar(select(SoftwareDeployment.id).where(
        SoftwareDeployment.config_id == row.id).limit(1))
    if used is not None:
        raise BadRequest(f"Software config {config_id} is in use by a deployment")
    db.delete(row)


def config_view(row: SoftwareConfig, full: bool = True) -> dict[str, Any]:
    view = {"id": row.id, "name": row.name, "group": row.group,
            "creation_time": _time(row.created_at)}
    if full:
        view.update({"config": row.config, "inputs": row.inputs, "outputs": row.outputs,
                     "options": row.options, "project": row.project_id})
    return view


# ------------------------------------------------------------------ deployments
DEPLOYMENT_FIELDS = ("config_id", "server_id", "input_values", "action", "status",
                     "status_reason", "stack_user_project_id", "output_values")


def create_deployment(db: Session, ctx: RequestContext, body: Any) -> SoftwareDeployment:
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object")
    for key in ("config_id", "server_id"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise BadRequest(f"{key} is required")
    config = get_config(db, ctx, body["config_id"])
    row = SoftwareDeployment(
        id=body.get("id") or str(uuid.uuid4()), project_id=ctx.project_id,
        config_id=config.id, server_id=body["server_id"],
        input_values=_map(body.get("input_values"), "input_values"),
        output_values=_map(body.get("output_values"), "output_values"),
        action=body.get("action") or "INIT", status=body.get("status") or "COMPLETE",
        status_reason=body.get("status_reason") or "",
        stack_user_project_id=body.get("stack_user_project_id"), created_at=utcnow())
    db.add(row)
    db.flush()
    return row


def _map(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"{field} must be a map")
    return value


def get_deployment(db: Session, ctx: RequestContext | None, deployment_id: str,
                   lock: bool = False) -> SoftwareDeployment:
    q = select(SoftwareDeployment).where(SoftwareDeployment.id == deployment_id)
    if lock:
        q = q.with_for_update()
    row = db.scalars(q.execution_options(populate_existing=True)).first()
    if row is None or (ctx is not None and row.project_id != ctx.project_id
                       and not ctx.is_admin):
        raise NotFound(message=f"Deployment with id {deployment_id} not found")
    return row


def list_deployments(db: Session, ctx: RequestContext, server_id: str | None
                     ) -> list[SoftwareDeployment]:
    q = select(SoftwareDeployment).where(SoftwareDeployment.project_id == ctx.project_id)
    if server_id:
        q = q.where(SoftwareDeployment.server_id == server_id)
    return list(db.scalars(q.order_by(SoftwareDeployment.created_at, SoftwareDeployment.id)))


def update_deployment(db: Session, ctx: RequestContext | None, deployment_id: str,
                      body: Any) -> SoftwareDeployment:
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object")
    row = get_deployment(db, ctx, deployment_id, lock=True)
    if body.get("config_id") is not None and ctx is not None:
        row.config_id = get_config(db, ctx, body["config_id"]).id
    for key in ("input_values", "output_values"):
        if body.get(key) is not None:
            setattr(row, key, _map(body[key], key))
    for key in ("action", "status", "status_reason"):
        if body.get(key) is not None:
            setattr(row, key, str(body[key]))
    row.updated_at = utcnow()
    db.flush()
    return row


def signal_deployment(db: Session, deployment_id: str, details: Any,
                      error_outputs: list[str]) -> str:
    """A signal from the server (heat-config-notify's body): its outputs, FAILED when
    `deploy_status_code` is not 0 or an error output is set. Returns the event reason."""
    row = get_deployment(db, None, deployment_id, lock=True)
    details = details if isinstance(details, dict) else {}
    outputs = {k: v for k, v in details.items() if k != "deploy_signal_id"}
    failed = [k for k in error_outputs if outputs.get(k)]
    code = outputs.get(STATUS_CODE)
    if code not in (None, 0, "0"):
        failed.insert(0, STATUS_CODE)
    if failed:
        row.status = "FAILED"
        row.status_reason = ", ".join(
            f"{k} : Deployment exited with non-zero status code: {code}"
            if k == STATUS_CODE else f"{k} : {outputs.get(k)}" for k in failed)
    else:
        row.status, row.status_reason = "COMPLETE", "Outputs received"
    row.output_values = outputs
    row.updated_at = utcnow()
    db.flush()
    return f"deployment {deployment_id} {'failed' if failed else 'succeeded'}"


def delete_deployment(db: Session, ctx: RequestContext | None, deployment_id: str) -> None:
    db.delete(get_deployment(db, ctx, deployment_id, lock=True))


def deployment_view(row: SoftwareDeployment) -> dict[str, Any]:
    return {"id": row.id, "config_id": row.config_id, "server_id": row.server_id,
            "input_values": row.input_values, "output_values": row.output_values,
            "action": row.action, "status": row.status, "status_reason": row.status_reason,
            "creation_time": _time(row.created_at), "updated_time": _time(row.updated_at)}


def server_metadata(db: Session, ctx: RequestContext, server_id: str) -> list[dict[str, Any]]:
    """The configs deployed to a server, each with its deployment's input values (what
    a server's agent polls), ordered by config name then creation as upstream."""
    rows = list_deployments(db, ctx, server_id)
    out = []
    for dep in rows:
        config = db.get(SoftwareConfig, dep.config_id)
        if config is None:
            continue
        inputs = []
        for item in config.inputs or []:
            item = dict(item)
            if item["name"] in (dep.input_values or {}):
                item["value"] = dep.input_values[item["name"]]
            elif "value" not in item:
                item["value"] = item.get("default")
            inputs.append(item)
        view = config_view(config)
        view.pop("project", None)
        view.update({"inputs": inputs, "updated_time": _time(dep.updated_at or dep.created_at),
                     "deployment_id": dep.id})
        out.append(view)
    out.sort(key=lambda c: (c.get("name") or "", c["creation_time"] or ""))
    return out
