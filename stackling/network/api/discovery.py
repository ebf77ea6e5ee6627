"""Version discovery: `GET /` and `GET /v2.0` (no token needed)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service

# (resource, collection) pairs listed by `GET /v2.0`; other modules may append.
RESOURCES: list[tuple[str, str]] = [
    ("subnet", "subnets"),
    ("subnetpool", "subnetpools"),
    ("network", "networks"),
    ("port", "ports"),
    ("security_group", "security_groups"),
    ("security_group_rule", "security_group_rules"),
]


def versions(rq: ApiRequest) -> Any:
    return {"versions": [{"id": "v2.0", "status": "CURRENT",
                          "links": [{"rel": "self", "href": f"{rq.service_url}/v2.0/"}]}]}


def resources(rq: ApiRequest) -> Any:
    base = f"{rq.service_url}/v2.0"
    return {"resources": [{"name": name, "collection": coll,
                           "links": [{"rel": "self", "href": f"{base}/{coll}"}]}
                          for name, coll in RESOURCES]}


def register(s: Service) -> None:
    s.add("/", public=True, inline=True, get=versions)
    s.add("/v2.0", public=True, inline=True, get=resources)
    s.add("/v2.0/", public=True, inline=True, get=resources)
