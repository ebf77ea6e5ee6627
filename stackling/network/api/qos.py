"""`/v2.0/qos/policies[/{qos_policy_id}]`, the rules of each type under a policy and
`/v2.0/qos/rule-types[/{rule_type}]` (`qos` and its companions)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network import errors
from stackling.network.api import common
from stackling.network.attributes import Invalid, boolean
from stackling.network.qos import bindings  # noqa: F401  (qos_policy_id of ports, networks)
from stackling.network.qos import policies as qos


def list_policies(rq: ApiRequest) -> Any:
    params = common.list_params(rq, qos.LISTING)
    page = qos.list_policies(rq.db, rq.ctx, params)
    return common.list_body(rq, "policies", qos.render(rq.db, rq.ctx, page.rows), params,
                            page)


def show_policy(rq: ApiRequest) -> Any:
    policy = qos.get_readable(rq.db, rq.ctx, rq.path_params["qos_policy_id"])
    return common.show_body(rq, "policy", qos.render(rq.db, rq.ctx, [policy])[0])


def create_policy(rq: ApiRequest) -> Any:
    return common.create(rq, "policy", "policies", qos.ATTRS,
                         lambda attrs: qos.create_policy(rq.db, rq.ctx, attrs),
                         lambda objs: qos.render(rq.db, rq.ctx, objs))


def update_policy(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "policy", qos.ATTRS)
    policy = qos.update_policy(rq.db, rq.ctx, rq.path_params["qos_policy_id"], attrs,
                               common.if_match(rq))
    return {"policy": qos.render(rq.db, rq.ctx, [policy])[0]}


def delete_policy(rq: ApiRequest) -> Any:
    qos.delete_policy(rq.db, rq.ctx, rq.path_params["qos_policy_id"], common.if_match(rq))


def _rule_handlers(rule_type: qos.RuleType) -> dict[str, Any]:
    attrs = qos.rule_attrs(rule_type)
    key = f"{rule_type.resource}_id"  # e.g. bandwidth_limit_rule_id

    def list_rules(rq: ApiRequest) -> Any:
        rules = qos.list_rules(rq.db, rq.ctx, rule_type, rq.path_params["qos_policy_id"])
        fields = common.fields_of(rq)
        return {rule_type.collection: [select_fields(qos.rule_view(r), fields)
                                       for r in rules]}

    def show_rule(rq: ApiRequest) -> Any:
        rule = qos.get_rule(rq.db, rq.ctx, rule_type, rq.path_params["qos_policy_id"],
                            rq.path_params[key])
        return common.show_body(rq, rule_type.resource, qos.rule_view(rule))

    def create_rule(rq: ApiRequest) -> Any:
        policy_id = rq.path_params["qos_policy_id"]
        return common.create(
            rq, rule_type.resource, rule_type.collection, attrs,
            lambda a: qos.create_rule(rq.db, rq.ctx, rule_type, policy_id, a),
            lambda objs: [qos.rule_view(r) for r in objs])

    def update_rule(rq: ApiRequest) -> Any:
        changes = common.update_attrs(rq, rule_type.resource, attrs)
        rule = qos.update_rule(rq.db, rq.ctx, rule_type, rq.path_params["qos_policy_id"],
                               rq.path_params[key], changes)
        return {rule_type.resource: qos.rule_view(rule)}

    def delete_rule(rq: ApiRequest) -> Any:
        qos.delete_rule(rq.db, rq.ctx, rule_type, rq.path_params["qos_policy_id"],
                        rq.path_params[key])

    return {"collection": {"get": list_rules, "post": create_rule},
            "member": {"get": show_rule, "put": update_rule, "delete": delete_rule}}


def list_rule_types(rq: ApiRequest) -> Any:
    try:
        flags = {k: boolean(rq.query.get(k)) for k in ("all_rules", "all_supported")
                 if rq.query.get(k) is not None}
    except Invalid as exc:
        raise errors.BadRequest(str(exc)) from None
    types = qos.rule_types(rq.db, rq.ctx, **flags)
    return {"rule_types": [select_fields(t, common.fields_of(rq)) for t in types]}


def show_rule_type(rq: ApiRequest) -> Any:
    return common.show_body(rq, "rule_type",
                            qos.rule_type_details(rq.db, rq.ctx, rq.path_params["rule_type"]))


def register(s: Service) -> None:
    s.add("/v2.0/qos/policies", get=list_policies, post=create_policy)
    s.add("/v2.0/qos/policies/{qos_policy_id}", get=show_policy, put=update_policy,
          delete=delete_policy)
    for rule_type in qos.RULE_TYPES.values():
        handlers = _rule_handlers(rule_type)
        s.add(f"/v2.0/qos/policies/{{qos_policy_id}}/{rule_type.collection}",
              **handlers["collection"])
        s.add(f"/v2.0/qos/policies/{{qos_policy_id}}/{rule_type.collection}/"
              f"{{{rule_type.resource}_id}}",
              **handlers["member"])
    s.add("/v2.0/qos/rule-types", get=list_rule_types)
    s.add("/v2.0/qos/rule-types/{rule_type}", get=show_rule_type)
