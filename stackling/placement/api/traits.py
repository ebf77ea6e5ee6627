"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (from 1.6)."""

from __future__ import annotations

import re
from typing import Any

from stackling.common.http import ApiRequest
from stackling.common.listing import to_bool
from stackling.placement import errors, schemas, traits
from stackling.placement.api.resource_providers import get_provider
from stackling.placement.api.util import (
    empty,
    extract_json,
    handler,
    location,
    respond,
    validate_query,
)

_CUSTOM_RE = re.compile(schemas.CUSTOM_PATTERN)


@handler("placement:traits:list", since="1.6")
def list_traits(rq: ApiRequest) -> Any:
    params = validate_query(rq, schemas.LIST_TRAITS)
    name_in, starts_with, associated = None, None, None
    if "name" in params:
        value = params["name"]
        if value.startswith("in:"):
            name_in = [n.strip() for n in value[3:].split(",")]
        elif value.startswith("startswith:"):
            starts_with = value[len("startswith:"):]
        else:
            raise errors.BadRequest(f"Badly formatted name parameter. Expected name query "
                                    f"string parameter in form: ?name=[in|startswith]:"
                                    f"[name1,name2|prefix]. Got: \"{value}\"")
    if "associated" in params:
        try:
            associated = to_bool(params["associated"])
        except ValueError:
            raise errors.BadRequest(
                "The query parameter \"associated\" only accepts \"true\" or \"false\"") from None
    return respond(rq, {"traits": traits.list_names(rq.db, name_in=name_in,
                                                    starts_with=starts_with,
                                                    associated=associated)})


@handler("placement:traits:show", since="1.6")
def show_trait(rq: ApiRequest) -> Any:
    name = rq.path_params["name"]
    if not traits.exists_named(rq.db, name):
        raise errors.NotFound(f"No such trait(s): {name}.")
    return empty(204)


@handler("placement:traits:update", since="1.6")
def put_trait(rq: ApiRequest) -> Any:
    name = rq.path_params["name"]
    if not _CUSTOM_RE.match(name):
        raise errors.BadRequest("The trait is invalid. A valid trait must be no longer than "
                                "255 characters, start with the prefix \"CUSTOM_\" and use "
                                "following characters: \"A\"-\"Z\", \"0\"-\"9\" and \"_\"")
    created = traits.ensure_custom(rq.db, name)
    return empty(201 if created else 204, location(rq, f"/traits/{name}"))


@handler("placement:traits:delete", since="1.6")
def delete_trait(rq: ApiRequest) -> Any:
    traits.delete_custom(rq.db, rq.path_params["name"])
    return empty()


@handler("placement:resource_providers:traits:list", since="1.6")
def list_provider_traits(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    return respond(rq, {"traits": traits.of_provider(rq.db, rp.id),
                        "resource_provider_generation": rp.generation})


@handler("placement:resource_providers:traits:update", since="1.6", body=True)
def set_provider_traits(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    data = extract_json(rq, schemas.SET_TRAITS_FOR_PROVIDER)
    if data["resource_provider_generation"] != rp.generation:
        raise errors.ConcurrentUpdate("Resource provider's generation already changed. "
                                      "Please update the generation and try again.")
    try:
        generation = traits.set_for_provider(rq.db, rp, data["traits"],
                                             data["resource_provider_generation"])
    except errors.TraitNotFound as exc:
        raise errors.BadRequest(exc.text) from None
    return respond(rq, {"traits": traits.of_provider(rq.db, rp.id),
                        "resource_provider_generation": generation})


@handler("placement:resource_providers:traits:delete", since="1.6")
def delete_provider_traits(rq: ApiRequest) -> Any:
    rp = get_provider(rq)
    traits.set_for_provider(rq.db, rp, [], None)
    return empty()
