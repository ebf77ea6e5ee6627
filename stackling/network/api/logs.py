"""`/v2.0/log/logs[/{id}]` and `/v2.0/log/loggable-resources` (`logging`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network.api import common
from stackling.network.logapi import logs


def list_loggable_resources(rq: ApiRequest) -> Any:
    return {"loggable_resources": [select_fields(i, common.fields_of(rq))
                                   for i in logs.loggable_resources(rq.db, rq.ctx)]}


def list_logs(rq: ApiRequest) -> Any:
    params = common.list_params(rq, logs.LISTING)
    page = logs.list_logs(rq.db, rq.ctx, params)
    return common.list_body(rq, "logs", [logs.view(x) for x in page.rows], params, page)


def show_log(rq: ApiRequest) -> Any:
    return common.show_body(rq, "log", logs.view(logs.get_log(rq.db, rq.ctx,
                                                              rq.path_params["log_id"])))


def create_log(rq: ApiRequest) -> Any:
    return common.create(rq, "log", "logs", logs.ATTRS,
                         lambda attrs: logs.create_log(rq.db, rq.ctx, attrs),
                         lambda objs: [logs.view(x) for x in objs])


def update_log(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "log", logs.ATTRS)
    return {"log": logs.view(logs.update_log(rq.db, rq.ctx, rq.path_params["log_id"], attrs))}


def delete_log(rq: ApiRequest) -> Any:
    logs.delete_log(rq.db, rq.ctx, rq.path_params["log_id"])


def register(s: Service) -> None:
    s.add("/v2.0/log/loggable-resources", get=list_loggable_resources)
    s.add("/v2.0/log/logs", get=list_logs, post=create_log)
    s.add("/v2.0/log/logs/{log_id}", get=show_log, put=update_log, delete=delete_log)
