"""/resource_providers and /resource_providers/{uuid}."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import errors, providers, resource_classes, schemas, traits
from stackling.placement.api import query
from stackling.placement.api.util import (
    empty,
    extract_json,
    handler,
    href,
    location,
    respond,
    validate_query,
)


def provider_links(rq: ApiRequest, rp_uuid: str) -> list[dict[str, str]]:
    url = href(rq, f"/resource_providers/{rp_uuid}")
    rels = ["inventories", "usages"]
    for rel, since in (("aggregates", "1.1"), ("traits", "1.6"), ("allocations", "1.11")):
        if rq.version.matches(since):
            rels.append(rel)
    return [{"rel": "self", "href": url}] + [{"rel": r, "href": f"{url}/{r}"} for r in rels]


def provider_view(rq: ApiRequest, rp: providers.Provider) -> dict[str, Any]:
    body: dict[str, Any] = {"uuid": rp.uuid, "name": rp.name, "generation": rp.generation,
                            "links": provider_links(rq, rp.uuid)}
    if rq.version.matches("1.14"):
        body["parent_provider_uuid"] = rp.parent_provider_uuid
        body["root_provider_uuid"] = rp.root_provider_uuid
    return body


def get_provider(rq: ApiRequest) -> providers.Provider:
    """The provider in the path; 404 with the phrase clients match on."""
    return providers.get(rq.db, rq.path_params["uuid"])


@handler("placement:resource_providers:list")
def list_providers(rq: ApiRequest) -> Any:
    schema = schemas.GET_RESOURCE_PROVIDERS
    for since, versioned in (("1.18", schemas.GET_RESOURCE_PROVIDERS_1_18),
                             ("1.14", schemas.GET_RESOURCE_PROVIDERS_1_14),
                             ("1.4", schemas.GET_RESOURCE_PROVIDERS_1_4),
                             ("1.3", schemas.GET_RESOURCE_PROVIDERS_1_3)):
        if rq.version.matches(since):
            schema = versioned
            break
    params = validate_query(rq, schema)
    f = providers.ProviderFilters(name=params.get("name"))
    if "uuid" in params:
        f.uuid = providers.normalize_uuid(params["uuid"])
    if "in_tree" in params:
        f.in_tree = query.parse_in_tree(params["in_tree"])
    if "member_of" in params:
        f.member_of, f.forbidden_aggs = query.parse_member_of(rq.query.getlist("member_of"),
                                                              rq.version)
    if "resources" in params:
        f.resources = query.parse_resources(params["resources"])
        missing = resource_classes.unknown(rq.db, f.resources)
        if missing:
            raise errors.BadRequest("Invalid resource class in resources parameter: "
                                    f"No such resource class {', '.join(missing)}.")
    if "required" in params:
        f.required, f.forbidden = query.parse_required(rq.query.getlist("required"), rq.version)
        names = set(f.forbidden).union(*f.required) if f.required else set(f.forbidden)
        missing = traits.unknown(rq.db, names)
        if missing:
            raise errors.BadRequest('Invalid trait(s) in "required" parameter: '
                                    f"No such trait(s): {', '.join(missing)}.")
    found = providers.list_providers(rq.db, f)
    last = max((p.updated_at for p in found if p.updated_at), default=None)
    return respond(rq, {"resource_providers": [provider_view(rq, p) for p in found]},
                   last_modified=last)


@handler("placement:resource_providers:create", body=True)
def create_provider(rq: ApiRequest) -> Any:
    schema = (schemas.POST_RESOURCE_PROVIDER_1_14 if rq.version.matches("1.14")
              else schemas.POST_RESOURCE_PROVIDER)
    data = extract_json(rq, schema)
    rp_uuid = providers.normalize_uuid(data["uuid"]) if data.get("uuid") else None
    parent = data.get("parent_provider_uuid")
    rp = providers.create(rq.db, data["name"], rp_uuid,
                          providers.normalize_uuid(parent) if parent else None)
    where = location(rq, f"/resource_providers/{rp.uuid}")
    if rq.version.matches("1.20"):
        return respond(rq, provider_view(rq, rp), headers=where, last_modified=rp.updated_at)
    return empty(201, where)


@handler("placement:resource_providers:show")
def show_provider(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    return respond(rq, provider_view(rq, rp), last_modified=rp.updated_at)


@handler("placement:resource_providers:update", body=True)
def update_provider(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    schema = (schemas.PUT_RESOURCE_PROVIDER_1_14 if rq.version.matches("1.14")
              else schemas.PUT_RESOURCE_PROVIDER)
    data = extract_json(rq, schema)
    kwargs: dict[str, Any] = {"name": data["name"]}
    if "parent_provider_uuid" in data:
        parent = data["parent_provider_uuid"]
        kwargs["parent_provider_uuid"] = providers.normalize_uuid(parent) if parent else None
    rp = providers.update_provider(rq.db, rp, allow_reparent=rq.version.matches("1.37"), **kwargs)
    return respond(rq, provider_view(rq, rp), last_modified=rp.updated_at)


@handler("placement:resource_providers:delete")
def delete_provider(rq: ApiRequest) -> Any:
    rp = providers.find(rq.db, rq.path_params["uuid"])
    if rp is None:
        raise errors.NotFound(f"No resource provider with uuid {rq.path_params['uuid']} "
                              "found for delete")
    providers.delete_provider(rq.db, rp)
    return empty()
