"""`PUT /v2.0/routers/{router_id}/add_external_gateways`, `update_external_gateways` and
`remove_external_gateways` (`external-gateway-multihoming`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.l3 import gateways
from stackling.network.l3 import routers as l3


def _action(change: Callable[..., Any]) -> Callable[[ApiRequest], Any]:
    def handler(rq: ApiRequest) -> Any:
        body = rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")
        router = change(rq.db, rq.ctx, rq.path_params["router_id"], gateways.parse_body(body))
        return {"router": l3.render(rq.db, rq.ctx, [router])[0]}

    return handler


def register(s: Service) -> None:
    s.add("/v2.0/routers/{router_id}/add_external_gateways",
          put=_action(gateways.add_external_gateways))
    s.add("/v2.0/routers/{router_id}/update_external_gateways",
          put=_action(gateways.update_external_gateways))
    s.add("/v2.0/routers/{router_id}/remove_external_gateways",
          put=_action(gateways.remove_external_gateways))
