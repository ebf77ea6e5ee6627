"""Glance routes for the metadata definitions catalog (`/v2/metadefs/...`) and its
schemas (`/v2/schemas/metadefs/...`): parse, check Glance's metadef policies, one call
into image/metadefs.py, render. A namespace the caller may not see is a 404 before any
policy check, as Glance answers."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest, Forbidden, NotFound
from stackling.common.http import ApiRequest, Service, no_content
from stackling.image import metadefs
from stackling.image.models import MetadefNamespace


def _authorize(rq: ApiRequest, action: str, ns: MetadefNamespace | None = None) -> None:
    target = None if ns is None else {"project_id": ns.owner, "owner": ns.owner,
                                      "visibility": ns.visibility}
    rq.authorize(action, target, exc=Forbidden(
        f"You are not authorized to complete {action} action."))


def _ns(rq: ApiRequest, action: str, for_update: bool = False) -> MetadefNamespace:
    ns = metadefs.get_namespace(rq.db, rq.ctx, rq.path_params["namespace"], for_update)
    _authorize(rq, action, ns)
    return ns


def _body(rq: ApiRequest) -> Any:
    return rq.json(malformed="Body expected in request.")


# ------------------------------------------------------------------ namespaces
def list_namespaces(rq: ApiRequest) -> Any:
    _authorize(rq, "get_metadef_namespaces")
    _authorize(rq, "list_metadef_resource_types")
    q = rq.query
    limit = None
    if q.get("limit") is not None:
        try:
            limit = int(q["limit"])
        except ValueError:
            raise BadRequest("limit param must be an integer") from None
        if limit < 0:
            raise BadRequest("limit param must be positive")
    types = [t for t in (q.get("resource_types") or "").split(",") if t]
    rows = metadefs.list_namespaces(
        rq.db, rq.ctx, resource_types=types, visibility=q.get("visibility"),
        sort_key=q.get("sort_key", "created_at"), sort_dir=q.get("sort_dir", "desc"),
        limit=limit, marker=q.get("marker"))
    body: dict[str, Any] = {"namespaces": [metadefs.namespace_view(rq.db, n) for n in rows],
                            "first": "/v2/metadefs/namespaces",
                            "schema": "/v2/schemas/metadefs/namespaces"}
    if rows and limit is not None and len(rows) == limit:
        query = [(k, v) for k, v in q.multi_items() if k != "marker"]
        query.append(("marker", rows[-1].namespace))
        body["next"] = "/v2/metadefs/namespaces?" + "&".join(f"{k}={v}" for k, v in query)
    return body


def create_namespace(rq: ApiRequest) -> Any:
    _authorize(rq, "add_metadef_namespace")
    ns = metadefs.create_namespace(rq.db, rq.ctx, _body(rq))
    return 201, metadefs.namespace_view(rq.db, ns, detail=True)


def show_namespace(rq: ApiRequest) -> Any:
    ns = metadefs.get_namespace(rq.db, rq.ctx, rq.path_params["namespace"])
    try:
        _authorize(rq, "get_metadef_namespace", ns)
    except Forbidden:  # outside the caller's project: Glance hides it
        raise metadefs.NamespaceNotFound(namespace=ns.namespace) from None
    for action in ("list_metadef_resource_types", "get_metadef_objects",
                   "get_metadef_properties", "get_metadef_tags"):
        _authorize(rq, action, ns)
    return metadefs.namespace_view(rq.db, ns, detail=True,
                                   resource_type=rq.query.get("resource_type"))


def update_namespace(rq: ApiRequest) -> Any:
    ns = _ns(rq, "modify_metadef_namespace", for_update=True)
    ns = metadefs.update_namespace(rq.db, rq.ctx, ns.namespace, _body(rq))
    return metadefs.namespace_view(rq.db, ns)


def delete_namespace(rq: ApiRequest) -> Any:
    ns = _ns(rq, "delete_metadef_namespace", for_update=True)
    metadefs.delete_namespace(rq.db, rq.ctx, ns.namespace)
    return no_content()


def _delete_all(kind: str, action: str) -> Any:
    def handler(rq: ApiRequest) -> Any:
        ns = _ns(rq, action, for_update=True)
        metadefs.delete_contents(rq.db, rq.ctx, ns.namespace, kind)
        return no_content()
    return handler


# ------------------------------------------------------------------ objects
def list_objects(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_objects")
    return {"objects": [metadefs.object_view(ns, o) for o in metadefs.list_objects(rq.db, ns)],
            "schema": "v2/schemas/metadefs/objects"}


def create_object(rq: ApiRequest) -> Any:
    ns = _ns(rq, "add_metadef_object", for_update=True)
    return 201, metadefs.object_view(ns, metadefs.create_object(rq.db, rq.ctx, ns, _body(rq)))


def show_object(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_object")
    return metadefs.object_view(ns, metadefs.get_object(rq.db, ns, rq.path_params["name"]))


def update_object(rq: ApiRequest) -> Any:
    ns = _ns(rq, "modify_metadef_object", for_update=True)
    return metadefs.object_view(ns, metadefs.update_object(rq.db, ns, rq.path_params["name"],
                                                           _body(rq)))


def delete_object(rq: ApiRequest) -> Any:
    ns = _ns(rq, "delete_metadef_object", for_update=True)
    metadefs.delete_object(rq.db, ns, rq.path_params["name"])
    return no_content()


# ------------------------------------------------------------------ properties
def list_properties(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_properties")
    return {"properties": {p.name: metadefs.property_view(p, named=False)
                           for p in metadefs.list_properties(rq.db, ns)}}


def create_property(rq: ApiRequest) -> Any:
    ns = _ns(rq, "add_metadef_property", for_update=True)
    return 201, metadefs.property_view(metadefs.create_property(rq.db, rq.ctx, ns, _body(rq)))


def show_property(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_property")
    name = rq.path_params["name"]
    prefix = next((a.get("prefix") for a in metadefs.associations(rq.db, ns)
                   if a["name"] == rq.query.get("resource_type")), None)
    if prefix and name.startswith(prefix):  # Glance: the prefixed name, given the type
        name = name[len(prefix):]
    return metadefs.property_view(metadefs.get_property(rq.db, ns, name))


def update_property(rq: ApiRequest) -> Any:
    ns = _ns(rq, "modify_metadef_property", for_update=True)
    return metadefs.property_view(metadefs.update_property(rq.db, ns, rq.path_params["name"],
                                                           _body(rq)))


def delete_property(rq: ApiRequest) -> Any:
    ns = _ns(rq, "remove_metadef_property", for_update=True)
    metadefs.delete_property(rq.db, ns, rq.path_params["name"])
    return no_content()


# ------------------------------------------------------------------ tags
def list_tags(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_tags")
    return {"tags": [metadefs.tag_view(t) for t in metadefs.list_tags(rq.db, ns)]}


def create_tags(rq: ApiRequest) -> Any:
    ns = _ns(rq, "add_metadef_tags", for_update=True)
    append = rq.headers.get("x-openstack-append", "").lower() == "true"
    tags = metadefs.create_tags(rq.db, rq.ctx, ns, _body(rq), append)
    return 201, {"tags": [{"name": t.name} for t in tags]}


def create_tag(rq: ApiRequest) -> Any:
    ns = _ns(rq, "add_metadef_tag", for_update=True)
    return 201, metadefs.tag_view(metadefs.create_tag(rq.db, rq.ctx, ns,
                                                      rq.path_params["name"]))


def show_tag(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_tag")
    return metadefs.tag_view(metadefs.get_tag(rq.db, ns, rq.path_params["name"]))


def update_tag(rq: ApiRequest) -> Any:
    ns = _ns(rq, "modify_metadef_tag", for_update=True)
    return metadefs.tag_view(metadefs.update_tag(rq.db, ns, rq.path_params["name"],
                                                 _body(rq)))


def delete_tag(rq: ApiRequest) -> Any:
    ns = _ns(rq, "delete_metadef_tag", for_update=True)
    metadefs.delete_tag(rq.db, ns, rq.path_params["name"])
    return no_content()


# ------------------------------------------------------------------ resource types
def list_resource_types(rq: ApiRequest) -> Any:
    _authorize(rq, "list_metadef_resource_types")
    return {"resource_types": [metadefs.resource_type_view(r)
                               for r in metadefs.list_resource_types(rq.db)]}


def list_associations(rq: ApiRequest) -> Any:
    ns = _ns(rq, "get_metadef_resource_type")
    return {"resource_type_associations": metadefs.associations(rq.db, ns)}


def create_association(rq: ApiRequest) -> Any:
    ns = _ns(rq, "add_metadef_resource_type_association", for_update=True)
    return 201, metadefs.associate(rq.db, rq.ctx, ns, _body(rq))


def delete_association(rq: ApiRequest) -> Any:
    ns = _ns(rq, "remove_metadef_resource_type_association", for_update=True)
    metadefs.dissociate(rq.db, ns, rq.path_params["name"])
    return no_content()


# ------------------------------------------------------------------ schemas
_FIELDS = {
    "namespace": ("namespace", "display_name", "description", "visibility", "protected",
                  "owner", "created_at", "updated_at", "schema", "self",
                  "resource_type_associations", "properties", "objects", "tags"),
    "object": ("name", "description", "required", "properties", "created_at", "updated_at",
               "schema", "self"),
    "property": ("name", "title", "description", "type", "default", "readonly", "operators",
                 "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "items",
                 "uniqueItems", "minItems", "maxItems", "additionalItems"),
    "tag": ("name", "created_at", "updated_at"),
    "resource_type_association": ("name", "prefix", "properties_target", "created_at",
                                  "updated_at"),
}
_PLURALS = {"namespaces": "namespace", "objects": "object", "properties": "property",
            "tags": "tag", "resource_type_associations": "resource_type_association"}
_REQUIRED = {"namespace": ["namespace"], "object": ["name"], "property": ["name", "title",
                                                                          "type"],
             "tag": ["name"], "resource_type_association": ["name"]}


def _schema(kind: str) -> dict[str, Any]:
    return {"name": kind, "properties": {k: {} for k in _FIELDS[kind]},
            "required": _REQUIRED[kind], "additionalProperties": False}


def schema(rq: ApiRequest) -> Any:
    """`/v2/schemas/metadefs/{kind}`: one of each kind, and the lists (`namespaces`...,
    `resource_type` naming an association as Glance's route does)."""
    kind = rq.path_params["kind"]
    kind = {"resource_type": "resource_type_association",
            "resource_types": "resource_type_associations"}.get(kind, kind)
    if kind in _FIELDS:
        return _schema(kind)
    if kind in _PLURALS:
        return {"name": kind, "properties": {
            kind: {"type": "array", "items": _schema(_PLURALS[kind])},
            "first": {"type": "string"}, "next": {"type": "string"},
            "schema": {"type": "string"}}, "links": [
            {"rel": "first", "href": "{first}"}, {"rel": "next", "href": "{next}"},
            {"rel": "describedby", "href": "{schema}"}]}
    raise NotFound()


def add_routes(s: Service) -> None:
    base = "/v2/metadefs/namespaces"
    s.add(base, get=list_namespaces, post=create_namespace)
    s.add(base + "/{namespace}", get=show_namespace, put=update_namespace,
          delete=delete_namespace)
    s.add(base + "/{namespace}/objects", get=list_objects, post=create_object,
          delete=_delete_all("objects", "delete_metadef_object"))
    s.add(base + "/{namespace}/objects/{name}", get=show_object, put=update_object,
          delete=delete_object)
    s.add(base + "/{namespace}/properties", get=list_properties, post=create_property,
          delete=_delete_all("properties", "remove_metadef_property"))
    s.add(base + "/{namespace}/properties/{name}", get=show_property, put=update_property,
          delete=delete_property)
    s.add(base + "/{namespace}/tags", get=list_tags, post=create_tags,
          delete=_delete_all("tags", "delete_metadef_tags"))
    s.add(base + "/{namespace}/tags/{name}", get=show_tag, post=create_tag, put=update_tag,
          delete=delete_tag)
    s.add(base + "/{namespace}/resource_types", get=list_associations,
          post=create_association)
    s.add(base + "/{namespace}/resource_types/{name}", delete=delete_association)
    s.add("/v2/metadefs/resource_types", get=list_resource_types)
    s.add("/v2/schemas/metadefs/{kind}", get=schema)
