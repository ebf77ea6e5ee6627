"""/resource_classes and /resource_classes/{name} (from 1.2)."""

from __future__ import annotations

import re
from typing import Any

from stackling.common.http import ApiRequest
from stackling.placement import errors, resource_classes, schemas
from stackling.placement.api.util import (
    check_content,
    empty,
    extract_json,
    handler,
    href,
    location,
    respond,
)

_CUSTOM_RE = re.compile(schemas.CUSTOM_PATTERN)


def _view(rq: ApiRequest, name: str) -> dict[str, Any]:
    return {"name": name,
            "links": [{"rel": "self", "href": href(rq, f"/resource_classes/{name}")}]}


@handler("placement:resource_classes:list", since="1.2")
def list_classes(rq: ApiRequest) -> Any:
    return respond(rq, {"resource_classes": [_view(rq, n)
                                             for n in resource_classes.list_names(rq.db)]})


@handler("placement:resource_classes:create", since="1.2", body=True)
def create_class(rq: ApiRequest) -> Any:
    data = extract_json(rq, schemas.POST_RESOURCE_CLASS)
    name = data["name"]
    resource_classes.create(rq.db, name)
    return empty(201, location(rq, f"/resource_classes/{name}"))


@handler("placement:resource_classes:show", since="1.2")
def show_class(rq: ApiRequest) -> Any:
    name = rq.path_params["name"]
    if not resource_classes.exists_named(rq.db, name):
        raise errors.NotFound(f"No such resource class {name}.")
    return respond(rq, _view(rq, name))


@handler("placement:resource_classes:update", since="1.2")
def update_class(rq: ApiRequest) -> Any:
    name = rq.path_params["name"]
    if not rq.version.matches("1.7"):
        # 1.2 - 1.6: rename a custom class (JSON body {"name": ...}).
        check_content(rq, True)
        data = extract_json(rq, schemas.PUT_RESOURCE_CLASS)
        resource_classes.rename(rq.db, name, data["name"])
        return respond(rq, _view(rq, data["name"]))
    if not _CUSTOM_RE.match(name):
        raise errors.BadRequest(f"Error in update resource class: Resource class {name} is "
                                "not a valid custom resource class name: it must start with "
                                "CUSTOM_ and use A-Z, 0-9 and _")
    created = resource_classes.ensure(rq.db, name)
    return empty(201 if created else 204, location(rq, f"/resource_classes/{name}"))


@handler("placement:resource_classes:delete", since="1.2")
def delete_class(rq: ApiRequest) -> Any:
    resource_classes.delete_custom(rq.db, rq.path_params["name"])
    return empty()
