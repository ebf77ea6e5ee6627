"""`/v2.0/metering/metering-labels[/{id}]` and `/v2.0/metering/metering-label-rules[/{id}]`
(`metering`, admin-only)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.metering import labels


def list_labels(rq: ApiRequest) -> Any:
    params = common.list_params(rq, labels.LABEL_LISTING)
    page = labels.list_labels(rq.db, rq.ctx, params)
    return common.list_body(rq, "metering_labels", [labels.label_view(x) for x in page.rows],
                            params, page)


def show_label(rq: ApiRequest) -> Any:
    label = labels.get_label(rq.db, rq.ctx, rq.path_params["metering_label_id"])
    return common.show_body(rq, "metering_label", labels.label_view(label))


def create_label(rq: ApiRequest) -> Any:
    return common.create(rq, "metering_label", "metering_labels", labels.LABEL_ATTRS,
                         lambda attrs: labels.create_label(rq.db, rq.ctx, attrs),
                         lambda objs: [labels.label_view(x) for x in objs])


def delete_label(rq: ApiRequest) -> Any:
    labels.delete_label(rq.db, rq.ctx, rq.path_params["metering_label_id"])


def list_rules(rq: ApiRequest) -> Any:
    params = common.list_params(rq, labels.RULE_LISTING)
    page = labels.list_rules(rq.db, rq.ctx, params)
    return common.list_body(rq, "metering_label_rules", labels.rule_views(rq.db, page.rows),
                            params, page)


def show_rule(rq: ApiRequest) -> Any:
    rule = labels.get_rule(rq.db, rq.ctx, rq.path_params["metering_label_rule_id"])
    return common.show_body(rq, "metering_label_rule", labels.rule_views(rq.db, [rule])[0])


def create_rule(rq: ApiRequest) -> Any:
    return common.create(rq, "metering_label_rule", "metering_label_rules", labels.RULE_ATTRS,
                         lambda attrs: labels.create_rule(rq.db, rq.ctx, attrs),
                         lambda objs: labels.rule_views(rq.db, objs))


def delete_rule(rq: ApiRequest) -> Any:
    labels.delete_rule(rq.db, rq.ctx, rq.path_params["metering_label_rule_id"])


def register(s: Service) -> None:
    s.add("/v2.0/metering/metering-labels", get=list_labels, post=create_label)
    s.add("/v2.0/metering/metering-labels/{metering_label_id}", get=show_label,
          delete=delete_label)
    s.add("/v2.0/metering/metering-label-rules", get=list_rules, post=create_rule)
    s.add("/v2.0/metering/metering-label-rules/{metering_label_rule_id}", get=show_rule,
          delete=delete_rule)
