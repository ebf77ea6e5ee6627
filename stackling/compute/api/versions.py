"""Version discovery: /compute/, /compute/v2/, /compute/v2.1/ (no token)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.compute import microversions

V21_UPDATED = "2013-07-23T11:33:21Z"
V20_UPDATED = "2025-07-04T12:00:00Z"


def _v20(rq: ApiRequest) -> dict[str, Any]:
    return {"id": "v2.0", "status": "DEPRECATED", "version": "", "min_version": "",
            "updated": V20_UPDATED, "links": [{"rel": "self", "href": f"{rq.service_url}/v2/"}]}


def _v21(rq: ApiRequest) -> dict[str, Any]:
    return {"id": "v2.1", "status": "CURRENT", "version": str(microversions.MAX),
            "min_version": str(microversions.MIN), "updated": V21_UPDATED,
            "links": [{"rel": "self", "href": f"{rq.service_url}/v2.1/"}]}


def _with_media(entry: dict[str, Any], media_version: str) -> dict[str, Any]:
    entry = dict(entry)
    entry["links"] = [*entry["links"], {"rel": "describedby", "type": "text/html",
                                        "href": "http://docs.openstack.org/"}]
    entry["media-types"] = [{"base": "application/json",
                             "type": f"application/vnd.openstack.compute+json;version={media_version}"}]
    return entry


def root(rq: ApiRequest) -> Any:
    return {"versions": [_v20(rq), _v21(rq)]}


def v21(rq: ApiRequest) -> Any:
    return {"version": _with_media(_v21(rq), "2.1")}


def v20(rq: ApiRequest) -> Any:
    return {"version": _with_media(_v20(rq), "2")}

