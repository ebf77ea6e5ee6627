"""GET / : the version document (no token needed)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement.api.util import respond
from stackling.placement.microversions import MAX_VERSION, MIN_VERSION


def home(rq: ApiRequest) -> Any:
    version = {"id": "v1.0", "max_version": str(MAX_VERSION), "min_version": str(MIN_VERSION),
               "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}
    return respond(rq, {"versions": [version]})
