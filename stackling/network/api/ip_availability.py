"""`/v2.0/network-ip-availabilities[/{network_id}]` (admin only)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network.api import common
from stackling.network.core import ip_availability
from stackling.network.extensions import EXTENSIONS, Extension


def list_availabilities(rq: ApiRequest) -> Any:
    items = ip_availability.list_availabilities(rq.db, rq.ctx, rq.query)
    fields = common.fields_of(rq)
    return {"network_ip_availabilities": [select_fields(i, fields) for i in items]}


def show_availability(rq: ApiRequest) -> Any:
    item = ip_availability.get_availability(rq.db, rq.ctx, rq.path_params["network_id"])
    return common.show_body(rq, "network_ip_availability", item)


def register(s: Service) -> None:
    s.add("/v2.0/network_ip_availabilities", get=list_availabilities)
    s.add("/v2.0/network_ip_availabilities/{network_id}", get=show_availability)


EXTENSIONS.append(
    Extension("network-ip-availability", "Network IP Availability",
              "Provides IP availability data for each network and subnet.",
              "2015-09-24T00:00:00-00:00"))
