"""What every orchestration handler module shares: Heat's authorization, the request
body, the path's stack and resource type, starting a stack action (the route table is in
`api/__init__.py`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.orchestration import stacks as logic
from stackling.orchestration.errors import BadRequest, Forbidden, InvalidTenant


def authorize(rq: ApiRequest, action: str) -> None:
    """Heat's checks: the URL's project is the token's, then the policy rule."""
    tenant = rq.path_params.get("tenant_id")
    if tenant is not None and tenant != rq.ctx.project_id and not _admin_read(rq):
        raise InvalidTenant(target=tenant, actual=rq.ctx.project_id)
    rq.authorize(action, {"project_id": rq.ctx.project_id}, exc=Forbidden(action=action))


def _admin_read(rq: ApiRequest) -> bool:
    """An admin reading: Heat lets an admin name another project's stack (its tenant in
    the URL, the stack by id), which the console's views of other projects rely on. Writes
    stay in the caller's project: an action runs as its caller."""
    return rq.ctx.is_admin and rq.method in ("GET", "HEAD")


def path_stack(rq: ApiRequest) -> Any:
    """The stack named by the path's `stack_name` and `stack_id` (Heat's 404 otherwise)."""
    return logic.get_stack(rq.db, rq.ctx, rq.path_params["stack_name"],
                           rq.path_params["stack_id"], any_project=_admin_read(rq))


def resource_class(rq: ApiRequest) -> Any:
    """The plugin class of the path's `type_name`, or Heat's 404."""
    from stackling.orchestration.errors import EntityNotFound
    from stackling.orchestration.resources import load_all

    name = rq.path_params["type_name"]
    cls = load_all().get(name)
    if cls is None:
        raise EntityNotFound(entity="Resource Type", name=name)
    return cls


def body(rq: ApiRequest) -> Any:
    data = rq.json(bad_request=BadRequest, malformed="The request body could not be "
                   "parsed as JSON.", required=False)
    return data if data is not None else {}


def wake(rq: ApiRequest) -> None:
    worker = rq.runtime.state.get("orchestration.worker")
    if worker is not None:
        rq.after_commit(worker.wake)


def start_action(rq: ApiRequest, stack: Any) -> None:
    """A new stack action: its first step now, in this request (a small stack answers
    COMPLETE), unless the stack holds nested stacks (a large tree would hold the answer
    back); what is left, the workers run."""
    from stackling.orchestration import worker

    if rq.runtime.state.get("orchestration.worker") is not None and \
            not logic.has_nested(stack):
        stepped = worker.step_in_request(rq.db, rq.runtime, stack.id)
        if stepped is not None and stepped.finished:
            rq.after_commit(lambda: worker.observe_finished(stack.id, stepped))
            return
    wake(rq)
