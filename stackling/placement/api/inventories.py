"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import errors, inventories, schemas
from stackling.placement.api.resource_providers import get_provider
from stackling.placement.api.util import empty, extract_json, handler, location, respond


def _reserved_may_equal_total(rq: ApiRequest) -> bool:
    return rq.version.matches("1.26")


def _generation_conflict() -> errors.ConcurrentUpdate:
    return errors.ConcurrentUpdate("resource provider generation conflict")


@handler("placement:resource_providers:inventories:list")
def list_inventories(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    return respond(rq, {"inventories": inventories.of_provider(rq.db, rp.id),
                        "resource_provider_generation": rp.generation})


@handler("placement:resource_providers:inventories:update", body=True)
def set_inventories(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    data = extract_json(rq, schemas.PUT_INVENTORIES)
    if data["resource_provider_generation"] != rp.generation:
        raise _generation_conflict()
    try:
        generation = inventories.set_all(rq.db, rp, data["inventories"],
                                         data["resource_provider_generation"],
                                         reserved_may_equal_total=_reserved_may_equal_total(rq))
    except errors.ResourceClassNotFound as exc:
        raise errors.BadRequest("Unknown resource class in inventory for resource provider "
                                f"{rp.uuid}: {exc.text}") from None
    except errors.BadRequest as exc:
        raise errors.BadRequest(f"Unable to update inventory for resource provider {rp.uuid}: "
                                f"{exc.text}") from None
    except errors.InventoryInUse as exc:
        raise errors.InventoryInUse(f"update conflict: {exc.text}") from None
    return respond(rq, {"inventories": inventories.of_provider(rq.db, rp.id),
                        "resource_provider_generation": generation})


@handler("placement:resource_providers:inventories:delete", since="1.5", absent=405)
def delete_inventories(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    try:
        inventories.set_all(rq.db, rp, {}, None)
    except errors.InventoryInUse as exc:
        raise errors.InventoryInUse(exc.text) from None
    return empty()


@handler("placement:resource_providers:inventories:create", body=True)
def create_inventory(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    data = extract_json(rq, schemas.POST_INVENTORY)
    rc = data.pop("resource_class")
    try:
        record, generation = inventories.add_one(
            rq.db, rp, rc, data, reserved_may_equal_total=_reserved_may_equal_total(rq))
    except (errors.ResourceClassNotFound, errors.BadRequest) as exc:
        raise errors.BadRequest(f"Unable to create inventory for resource provider {rp.uuid}: "
                                f"{exc.text}") from None
    return respond(rq, {**record, "resource_provider_generation": generation}, 201,
                   headers=location(rq, f"/resource_providers/{rp.uuid}/inventories/{rc}"))


@handler("placement:resource_providers:inventories:show")
def show_inventory(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    rc = rq.path_params["resource_class"]
    record = inventories.of_provider(rq.db, rp.id).get(rc)
    if record is None:
        raise errors.InventoryNotFound(resource_class=rc, rp_uuid=rp.uuid)
    return respond(rq, {**record, "resource_provider_generation": rp.generation})


@handler("placement:resource_providers:inventories:update", body=True)
def update_inventory(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    rc = rq.path_params["resource_class"]
    data = extract_json(rq, schemas.BASE_INVENTORY)
    generation = data.pop("resource_provider_generation")
    if generation != rp.generation:
        raise _generation_conflict()
    try:
        record, new_generation = inventories.update_one(
            rq.db, rp, rc, data, generation,
            reserved_may_equal_total=_reserved_may_equal_total(rq))
    except errors.BadRequest as exc:
        if exc.text.startswith("No inventory record"):
            raise
        raise errors.BadRequest(f"Unable to update inventory for resource provider {rp.uuid}: "
                                f"{exc.text}") from None
    return respond(rq, {**record, "resource_provider_generation": new_generation})


@handler("placement:resource_providers:inventories:delete")
def delete_inventory(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    inventories.delete_one(rq.db, rp, rq.path_params["resource_class"])
    return empty()
