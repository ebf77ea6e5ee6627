"""`/v2.0/rbac-policies[/{rbac_policy_id}]` (`rbac-policies`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network.api import common
from stackling.network.api.discovery import RESOURCES
from stackling.network.rbac import policies

RESOURCES.append(("rbac_policy", "rbac_policies"))


def list_policies(rq: ApiRequest) -> Any:
    params = common.list_params(rq, policies.LISTING)
    page = policies.list_policies(rq.db, rq.ctx, params)
    return common.list_body(rq, "rbac_policies", [policies.view(p) for p in page.rows],
                            params, page)


def show_policy(rq: ApiRequest) -> Any:
    p = policies.get_policy(rq.db, rq.ctx, rq.path_params["rbac_policy_id"])
    return common.show_body(rq, "rbac_policy", policies.view(p))


def create_policy(rq: ApiRequest) -> Any:
    return common.create(rq, "rbac_policy", "rbac_policies", policies.ATTRS,
                         lambda attrs: policies.create_policy(rq.db, rq.ctx, attrs),
                         lambda objs: [policies.view(p) for p in objs])


def update_policy(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "rbac_policy", policies.ATTRS)
    p = policies.update_policy(rq.db, rq.ctx, rq.path_params["rbac_policy_id"], attrs)
    return {"rbac_policy": policies.view(p)}


def delete_policy(rq: ApiRequest) -> Any:
    policies.delete_policy(rq.db, rq.ctx, rq.path_params["rbac_policy_id"])


def register(s: Service) -> None:
    s.add("/v2.0/rbac_policies", get=list_policies, post=create_policy)
    s.add("/v2.0/rbac_policies/{rbac_policy_id}", get=show_policy, put=update_policy,
          delete=delete_policy)
