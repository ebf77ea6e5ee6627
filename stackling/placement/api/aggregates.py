"""/resource_providers/{uuid}/aggregates (from 1.1; with generations from 1.19)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import aggregates, errors, schemas
from stackling.placement.api.resource_providers import get_provider
from stackling.placement.api.util import extract_json, handler, respond


def _body(rq: ApiRequest, aggs: list[str], generation: int) -> dict[str, Any]:
    body: dict[str, Any] = {"aggregates": aggs}
    if rq.version.matches("1.19"):
        body["resource_provider_generation"] = generation
    return body


@handler("placement:resource_providers:aggregates:list", since="1.1")
def get_aggregates(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    return respond(rq, _body(rq, aggregates.of_provider(rq.db, rp.id), rp.generation))


@handler("placement:resource_providers:aggregates:update", since="1.1", body=True)
def set_aggregates(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    with_generation = rq.version.matches("1.19")
    if with_generation:
        data = extract_json(rq, schemas.PUT_AGGREGATES_1_19)
        wanted, generation = data["aggregates"], data["resource_provider_generation"]
        if generation != rp.generation:
            raise errors.ConcurrentUpdate(
                "Resource provider's generation already changed. Please update the "
                "generation and try again.")
    else:
        wanted, generation = extract_json(rq, schemas.PUT_AGGREGATES), None
    new_generation = aggregates.set_for_provider(rq.db, rp, wanted, generation,
                                                 increment_generation=with_generation)
    return respond(rq, _body(rq, aggregates.of_provider(rq.db, rp.id), new_generation))
