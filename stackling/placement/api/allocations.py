"""/allocations/{consumer_uuid}, POST /allocations and /resource_providers/{uuid}/allocations."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import allocations, errors, schemas
from stackling.placement.allocations import NO_CHECK, ConsumerWrite
from stackling.placement.api.resource_providers import get_provider
from stackling.placement.api.util import consumer_uuid, empty, extract_json, handler, respond
from stackling.placement.providers import normalize_uuid


def _put_schema(rq: ApiRequest) -> dict[str, Any]:
    for since, schema in (("1.38", schemas.ALLOCATION_1_38), ("1.34", schemas.ALLOCATION_1_34),
                          ("1.28", schemas.ALLOCATION_1_28), ("1.12", schemas.ALLOCATION_1_12),
                          ("1.8", schemas.ALLOCATION_1_8)):
        if rq.version.matches(since):
            return schema
    return schemas.ALLOCATION


def _post_schema(rq: ApiRequest) -> dict[str, Any]:
    for since, schema in (("1.38", schemas.POST_ALLOCATIONS_1_38),
                          ("1.34", schemas.POST_ALLOCATIONS_1_34),
                          ("1.28", schemas.POST_ALLOCATIONS_1_28)):
        if rq.version.matches(since):
            return schema
    return schemas.POST_ALLOCATIONS_1_13


def to_write(rq: ApiRequest, consumer: str, data: dict[str, Any]) -> ConsumerWrite:
    """One consumer's body (any microversion's form) as a ConsumerWrite."""
    raw = data["allocations"]
    if isinstance(raw, list):  # < 1.12
        by_rp: dict[str, dict[str, int]] = {}
        for item in raw:
            rp = item["resource_provider"]["uuid"]
            by_rp.setdefault(normalize_uuid(rp) or rp, {}).update(item["resources"])
    else:
        by_rp = {normalize_uuid(rp) or rp: dict(entry["resources"]) for rp, entry in raw.items()}
    write = ConsumerWrite(consumer, by_rp)
    if "project_id" in data:
        write.project_id, write.user_id = data["project_id"], data["user_id"]
    write.generation = data["consumer_generation"] if rq.version.matches("1.28") else NO_CHECK
    if rq.version.matches("1.38"):
        write.consumer_type = data["consumer_type"]
    return write


@handler("placement:allocations:list")
def list_for_consumer(rq: ApiRequest) -> Any:
    found = allocations.for_consumer(rq.db, rq.path_params["consumer_uuid"])
    body: dict[str, Any] = {"allocations": found.allocations}
    if found.allocations and rq.version.matches("1.12"):
        body["project_id"], body["user_id"] = found.project_id, found.user_id
        if rq.version.matches("1.28"):
            body["consumer_generation"] = found.generation
        if rq.version.matches("1.38"):
            body["consumer_type"] = found.consumer_type or allocations.UNKNOWN_CONSUMER_TYPE
    return respond(rq, body)


@handler("placement:allocations:update", body=True)
def set_for_consumer(rq: ApiRequest) -> Any:
    consumer = consumer_uuid(rq)
    data = extract_json(rq, _put_schema(rq))
    allocations.replace_all(rq.db, [to_write(rq, consumer, data)])
    return empty()


@handler("placement:allocations:manage", since="1.13", body=True)
def set_allocations(rq: ApiRequest) -> Any:
    data = extract_json(rq, _post_schema(rq))
    writes = [to_write(rq, normalize_uuid(c) or c, body) for c, body in data.items()]
    try:
        allocations.replace_all(rq.db, writes)
    except errors.BadRequest as exc:
        raise errors.BadRequest(exc.text.replace("Unable to allocate inventory for consumer",
                                                 "Unable to allocate inventory")) from None
    return empty()


@handler("placement:allocations:delete")
def delete_for_consumer(rq: ApiRequest) -> Any:
    consumer = rq.path_params["consumer_uuid"]
    if not allocations.delete_for_consumer(rq.db, consumer):
        raise errors.NotFound(f"No allocations for consumer '{consumer}'")
    return empty()


@handler("placement:resource_providers:allocations:list")
def list_for_provider(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    found = allocations.for_provider(rq.db, rp.id)
    if not rq.version.matches("1.28"):
        found = {c: {"resources": v["resources"]} for c, v in found.items()}
    return respond(rq, {"allocations": found, "resource_provider_generation": rp.generation})
