"""`POST .../resources/{name}/signal`: with a Keystone token (Heat's `resource:signal`
rule), or with a wait condition handle's own `token` for that handle alone (upstream
gives the handle a stack-domain user's token that can do nothing but signal)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from starlette.responses import Response

from stackling.common import access_rules
from stackling.common.http import ApiRequest, request_path
from stackling.common.policy import require_project_scope
from stackling.observability import logs
from stackling.orchestration import signals
from stackling.orchestration.api.common import authorize
from stackling.orchestration.api.common import path_stack as _stack
from stackling.orchestration.errors import BadRequest, EntityNotFound
from stackling.orchestration.models import Stack


def _body(rq: ApiRequest) -> Any:
    return rq.json(bad_request=BadRequest, malformed="The request body could not be "
                   "parsed as JSON.", required=False)


def _authenticate(rq: ApiRequest) -> None:
    """What the router does for a route that is not public."""
    rq.ctx = rq.runtime.authenticate(rq.db, rq.request.headers, rq.request_id)
    logs.identify(rq.ctx.user_id, rq.ctx.project_id)
    if rq.ctx.access_rules is not None:
        access_rules.enforce(rq.ctx.access_rules, "orchestration", rq.method,
                             rq.service.prefix, request_path(rq.request))
    require_project_scope(rq.ctx)


def signal(rq: ApiRequest) -> Any:
    p = rq.path_params
    token = rq.request.headers.get("X-Auth-Token")
    if signals.token_matches(rq.db, p["stack_id"], p["resource_name"], token):
        stack = rq.db.scalar(select(Stack).where(Stack.id == p["stack_id"],
                                                 Stack.project_id == p["tenant_id"],
                                                 Stack.deleted_at.is_(None)))
        if stack is None or p["stack_name"] not in (stack.name, stack.id):
            raise EntityNotFound(entity="Stack", name=p["stack_name"])
    else:
        _authenticate(rq)
        authorize(rq, "resource:signal")
        stack = _stack(rq)
    signals.signal(rq.db, rq.runtime, stack, p["resource_name"], _body(rq))
    worker = rq.runtime.state.get("orchestration.worker")
    if worker is not None:
        rq.after_commit(worker.wake)
    return Response(status_code=200)
