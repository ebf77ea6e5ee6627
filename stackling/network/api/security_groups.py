"""`/v2.0/security-groups[/{id}]` and `/v2.0/security-group-rules[/{id}]`."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.core import security_groups as sgs


def list_groups(rq: ApiRequest) -> Any:
    params = common.list_params(rq, sgs.SG_LISTING)
    page = sgs.list_groups(rq.db, rq.ctx, params)
    return common.list_body(rq, "security_groups", sgs.render_groups(rq.db, page.rows, rq.ctx),
                            params, page)


def show_group(rq: ApiRequest) -> Any:
    sg = sgs.get_visible(rq.db, rq.ctx, rq.path_params["sg_id"])
    return common.show_body(rq, "security_group", sgs.render_groups(rq.db, [sg], rq.ctx)[0])


def create_group(rq: ApiRequest) -> Any:
    return common.create(rq, "security_group", "security_groups", sgs.SG_ATTRS,
                         lambda attrs: sgs.create_group(rq.db, rq.ctx, attrs),
                         lambda objs: sgs.render_groups(rq.db, objs, rq.ctx))


def update_group(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "security_group", sgs.SG_ATTRS)
    sg = sgs.update_group(rq.db, rq.ctx, rq.path_params["sg_id"], attrs, common.if_match(rq))
    return {"security_group": sgs.render_groups(rq.db, [sg], rq.ctx)[0]}


def delete_group(rq: ApiRequest) -> Any:
    sgs.delete_group(rq.db, rq.ctx, rq.path_params["sg_id"], common.if_match(rq))


def list_rules(rq: ApiRequest) -> Any:
    params = common.list_params(rq, sgs.RULE_LISTING)
    page = sgs.list_rules(rq.db, rq.ctx, params)
    return common.list_body(rq, "security_group_rules", sgs.render_rules(rq.db, page.rows),
                            params, page)


def show_rule(rq: ApiRequest) -> Any:
    rule = sgs.get_rule(rq.db, rq.ctx, rq.path_params["rule_id"])
    return common.show_body(rq, "security_group_rule", sgs.render_rules(rq.db, [rule])[0])


def create_rule(rq: ApiRequest) -> Any:
    return common.create(rq, "security_group_rule", "security_group_rules", sgs.RULE_ATTRS,
                         lambda attrs: sgs.create_rule(rq.db, rq.ctx, attrs),
                         lambda objs: sgs.render_rules(rq.db, objs))


def delete_rule(rq: ApiRequest) -> Any:
    sgs.delete_rule(rq.db, rq.ctx, rq.path_params["rule_id"], common.if_match(rq))


def register(s: Service) -> None:
    s.add("/v2.0/security_groups", get=list_groups, post=create_group)
    s.add("/v2.0/security_groups/{sg_id}", get=show_group, put=update_group,
          delete=delete_group)
    s.add("/v2.0/security_group_rules", get=list_rules, post=create_rule)
    s.add("/v2.0/security_group_rules/{rule_id}", get=show_rule, delete=delete_rule)
