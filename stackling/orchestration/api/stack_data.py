"""A stack's data as a whole: export, abandon and snapshots (create, list, show, delete,
restore). Adopt is a stack create (`adopt_stack_data`)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from stackling.common.http import ApiRequest, json_response
from stackling.orchestration import snapshots
from stackling.orchestration import stacks as logic
from stackling.orchestration.api.common import authorize, body, start_action
from stackling.orchestration.api.common import path_stack as _stack


def export(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:export")
    return logic.export_stack(rq.db, _stack(rq))


def abandon(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:abandon")
    from stackling.orchestration import abandon as logic_abandon

    return logic_abandon.abandon(rq.db, _stack(rq))


def list_snapshots(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:list_snapshots")
    return {"snapshots": [snapshots.view(s) for s in snapshots.list_for(rq.db, _stack(rq))]}


def snapshot(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:snapshot")
    stack = _stack(rq)
    made = snapshots.create(rq.db, rq.ctx, stack, body(rq))
    start_action(rq, stack)
    return snapshots.view(made)  # 200 with the snapshot itself, as upstream


def show_snapshot(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:show_snapshot")
    return {"snapshot": snapshots.view(snapshots.get(rq.db, _stack(rq),
                                                     rq.path_params["snapshot_id"]))}


def delete_snapshot(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:delete_snapshot")
    snapshots.remove(rq.db, _stack(rq), rq.path_params["snapshot_id"])
    return Response(status_code=204)


def restore_snapshot(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:restore_snapshot")
    stack = _stack(rq)
    snapshots.restore(rq.db, stack, rq.path_params["snapshot_id"])
    start_action(rq, stack)
    return json_response({"code": "202 Accepted", "title": "Accepted", "message":
                          "The request is accepted for processing."}, 202)
