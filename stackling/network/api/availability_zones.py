"""`GET /v2.0/availability_zones` (`availability_zone`): one zone, `nova`, for networks
(and routers once L3 is served)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import parse_list_params, select_fields
from stackling.network import errors
from stackling.network.extensions import aliases


def list_zones(rq: ApiRequest) -> Any:
    params = parse_list_params(rq.query, filterable=("name", "resource", "state"),
                               error=errors.BadRequest)
    resources = ["network", "router"] if "router" in aliases() else ["network"]
    zones = [{"name": "nova", "resource": r, "state": "available"} for r in resources]
    for key, values in params.filters.items():
        zones = [z for z in zones if z[key] in values]
    return {"availability_zones": [select_fields(z, params.fields) for z in zones]}


def register(s: Service) -> None:
    s.add("/v2.0/availability_zones", get=list_zones)
