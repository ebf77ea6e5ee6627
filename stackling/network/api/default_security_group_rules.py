"""`/v2.0/default-security-group-rules[/{default_rule_id}]` (`security-groups-default-rules`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.default_rules import rules

RESOURCES.append(("default_security_group_rule", "default_security_group_rules"))


def list_rules(rq: ApiRequest) -> Any:
    params = common.list_params(rq, rules.LISTING)
    page = rules.list_rules(rq.db, rq.ctx, params)
    return common.list_body(rq, "default_security_group_rules",
                            [rules.view(r) for r in page.rows], params, page)


def show_rule(rq: ApiRequest) -> Any:
    rule = rules.get_rule(rq.db, rq.ctx, rq.path_params["default_rule_id"])
    return common.show_body(rq, "default_security_group_rule", rules.view(rule))


def create_rule(rq: ApiRequest) -> Any:
    return common.create(rq, "default_security_group_rule", "default_security_group_rules",
                         rules.ATTRS, lambda attrs: rules.create_rule(rq.db, rq.ctx, attrs),
                         lambda objs: [rules.view(r) for r in objs])


def delete_rule(rq: ApiRequest) -> Any:
    rules.delete_rule(rq.db, rq.ctx, rq.path_params["default_rule_id"])


def register(s: Service) -> None:
    s.add("/v2.0/default_security_group_rules", get=list_rules, post=create_rule)
    s.add("/v2.0/default_security_group_rules/{default_rule_id}", get=show_rule, delete=delete_rule)
