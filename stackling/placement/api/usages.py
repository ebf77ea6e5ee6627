"""/resource_providers/{uuid}/usages and /usages (from 1.9)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import schemas, usages
from stackling.placement.api.resource_providers import get_provider
from stackling.placement.api.util import authorize, handler, respond, validate_query


@handler("placement:resource_providers:usages")
def provider_usages(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    return respond(rq, {"usages": usages.of_provider(rq.db, rp.id),
                        "resource_provider_generation": rp.generation})


@handler(None, since="1.9")
def project_usages(rq: ApiRequest) -> Any:
    by_type = rq.version.matches("1.38")
    params = validate_query(rq, schemas.GET_USAGES_1_38 if by_type else schemas.GET_USAGES)
    # A reader of the project may see its own usage (quota checks), as upstream.
    authorize(rq, "placement:usages", {"project_id": params["project_id"]})
    return respond(rq, {"usages": usages.of_project(
        rq.db, params["project_id"], params.get("user_id"), params.get("consumer_type"),
        by_type=by_type)})
