"""A stack's data as a whole: export (served), and abandon, adopt and snapshots, which
stackling does not offer. Upstream also refuses abandon and adopt unless enabled
(`enable_stack_abandon`/`enable_stack_adopt`, off by default), with the same 400."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.orchestration import stacks as logic
from stackling.orchestration.api.common import authorize
from stackling.orchestration.api.common import path_stack as _stack
from stackling.orchestration.errors import EntityNotFound, NotSupported


def export(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:export")
    return logic.export_stack(rq.db, _stack(rq))


def abandon(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:abandon")
    _stack(rq)
    raise NotSupported(feature="Stack Abandon")


def list_snapshots(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:list_snapshots")
    _stack(rq)
    return {"snapshots": []}


def snapshot(rq: ApiRequest) -> Any:
    authorize(rq, "stacks:snapshot")
    _stack(rq)
    raise NotSupported(feature="Stack Snapshot")


def _no_snapshot(rq: ApiRequest, action: str) -> Any:
    authorize(rq, action)
    _stack(rq)
    raise EntityNotFound(entity="Snapshot", name=rq.path_params["snapshot_id"])


def show_snapshot(rq: ApiRequest) -> Any:
    return _no_snapshot(rq, "stacks:show_snapshot")


def delete_snapshot(rq: ApiRequest) -> Any:
    return _no_snapshot(rq, "stacks:delete_snapshot")


def restore_snapshot(rq: ApiRequest) -> Any:
    return _no_snapshot(rq, "stacks:restore_snapshot")
