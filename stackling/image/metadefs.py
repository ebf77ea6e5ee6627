"""Glance's metadata definitions catalog (`/v2/metadefs`): plain functions over a session
and a request context. Namespaces are visible to their owner's project, or to all when
public (Glance's `ADMIN_OR_PROJECT_READER_GET_NAMESPACE`); one hidden from the caller is
a 404. A protected namespace (as Glance's shipped ones) and its contents cannot be deleted.

`load_shipped` seeds the namespaces Glance ships (data/metadefs.json, made from Glance's
etc/metadefs/*.json, as `glance-manage db_load_metadefs` loads them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import unique_or, utcnow
from stackling.common.errors import BadRequest, Conflict, Forbidden, NotFound
from stackling.image.models import (
    MetadefNamespace,
    MetadefObject,
    MetadefProperty,
    MetadefResourceType,
    MetadefResourceTypeAssociation,
    MetadefTag,
)

SHIPPED = Path(__file__).parent / "data" / "metadefs.json"
VISIBILITIES = ("public", "private")
NAMESPACE_KEYS = ("namespace", "display_name", "description", "visibility", "protected")


class NamespaceNotFound(NotFound):
    message = "Metadata definition namespace=%(namespace)s was not found."


def _time(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _stamp(row: Any) -> dict[str, str]:
    return {"created_at": _time(row.created_at), "updated_at": _time(row.updated_at)}


# ------------------------------------------------------------------ namespaces
def visible(ctx: RequestContext, ns: MetadefNamespace) -> bool:
    return ctx.is_admin or ns.visibility == "public" or ns.owner == ctx.project_id


def get_namespace(db: Session, ctx: RequestContext, name: str,
                  for_update: bool = False) -> MetadefNamespace:
    stmt = select(MetadefNamespace).where(MetadefNamespace.namespace == name)
    if for_update:
        stmt = stmt.with_for_update()
    ns = db.scalars(stmt).first()
    if ns is None or not visible(ctx, ns):
        raise NamespaceNotFound(namespace=name)
    return ns


def list_namespaces(db: Session, ctx: RequestContext, *, resource_types: list[str],
                    visibility: str | None, sort_key: str, sort_dir: str,
                    limit: int | None, marker: str | None) -> list[MetadefNamespace]:
    if visibility is not None and visibility not in VISIBILITIES:
        raise BadRequest(f"Invalid visibility value: {visibility}")
    if sort_key not in ("created_at", "updated_at", "namespace", "display_name", "id"):
        raise BadRequest(f"Invalid sort key: {sort_key}")
    if sort_dir not in ("asc", "desc"):
        raise BadRequest(f"Invalid sort direction: {sort_dir}")
    col = getattr(MetadefNamespace, sort_key)
    stmt = select(MetadefNamespace).order_by(
        col.asc() if sort_dir == "asc" else col.desc(),
        MetadefNamespace.id.asc() if sort_dir == "asc" else MetadefNamespace.id.desc())
    if not ctx.is_admin:
        stmt = stmt.where(or_(MetadefNamespace.visibility == "public",
                              MetadefNamespace.owner == ctx.project_id))
    if visibility is not None:
        stmt = stmt.where(MetadefNamespace.visibility == visibility)
    if resource_types:
        stmt = stmt.where(MetadefNamespace.id.in_(
            select(MetadefResourceTypeAssociation.namespace_id).join(
                MetadefResourceType, MetadefResourceType.id
                == MetadefResourceTypeAssociation.resource_type_id).where(
                MetadefResourceType.name.in_(resource_types))))
    rows = list(db.scalars(stmt))
    if marker is not None:
        names = [r.namespace for r in rows]
        if marker not in names:
            raise NamespaceNotFound(namespace=marker)
        rows = rows[names.index(marker) + 1:]
    return rows if limit is None else rows[:limit]


def _check_namespace_body(body: Any, partial: bool = False) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("Body expected in request.")
    for key in ("self", "schema", "created_at", "updated_at"):
        if key in body:
            raise Forbidden(f"Attribute '{key}' is read-only.")
    if not partial and not body.get("namespace"):
        raise BadRequest("'namespace' is a required property")
    if "namespace" in body and (not isinstance(body["namespace"], str)
                                or len(body["namespace"]) > 80):
        raise BadRequest(f"{body['namespace']!r} is too long")
    if body.get("visibility") not in (None, *VISIBILITIES):
        raise BadRequest(f"{body['visibility']!r} is not one of ['public', 'private']")
    if "protected" in body and not isinstance(body["protected"], bool):
        raise BadRequest(f"{body['protected']!r} is not of type 'boolean'")
    return body


def create_namespace(db: Session, ctx: RequestContext, body: Any) -> MetadefNamespace:
    """A namespace, with the objects, properties, tags and resource type associations
    its body may hold (as Glance's create)."""
    body = _check_namespace_body(body)
    ns = MetadefNamespace(namespace=body["namespace"], display_name=body.get("display_name"),
                          description=body.get("description"),
                          visibility=body.get("visibility") or "private",
                          protected=bool(body.get("protected", False)),
                          owner=body.get("owner") or ctx.project_id)
    with unique_or(db, lambda: Conflict(f"Namespace {body['namespace']} already exists")):
        db.add(ns)
        db.flush()
    for obj in body.get("objects") or []:
        create_object(db, ctx, ns, obj)
    for name, schema in (body.get("properties") or {}).items():
        create_property(db, ctx, ns, {**schema, "name": name})
    for tag in body.get("tags") or []:
        create_tag(db, ctx, ns, tag.get("name") if isinstance(tag, dict) else None)
    for assoc in body.get("resource_type_associations") or []:
        associate(db, ctx, ns, assoc)
    return ns


def update_namespace(db: Session, ctx: RequestContext, name: str, body: Any
                     ) -> MetadefNamespace:
    ns = get_namespace(db, ctx, name, for_update=True)
    body = _check_namespace_body(body, partial=True)
    for key in NAMESPACE_KEYS:
        if key in body:
            setattr(ns, key, body[key])
    if "owner" in body:
        ns.owner = body["owner"]
    ns.updated_at = utcnow()
    with unique_or(db, lambda: Conflict(f"Namespace {body.get('namespace')} already exists")):
        db.flush()
    return ns


def _unprotected(ns: MetadefNamespace, what: str) -> None:
    if ns.protected:
        raise Forbidden(f"{what} is protected and cannot be deleted.")


def delete_namespace(db: Session, ctx: RequestContext, name: str) -> None:
    ns = get_namespace(db, ctx, name, for_update=True)
    _unprotected(ns, f"Metadata definition namespace {ns.namespace}")
    db.delete(ns)
    db.flush()


def delete_contents(db: Session, ctx: RequestContext, name: str, kind: str) -> None:
    """`DELETE .../objects | properties | tags`: all of that kind at once."""
    model = {"objects": MetadefObject, "properties": MetadefProperty, "tags": MetadefTag}[kind]
    ns = get_namespace(db, ctx, name, for_update=True)
    _unprotected(ns, f"Metadata definition namespace {ns.namespace}")
    db.execute(delete(model).where(model.namespace_id == ns.id))  # type: ignore[attr-defined]
    db.flush()


def namespace_view(db: Session, ns: MetadefNamespace, detail: bool = False,
                   resource_type: str | None = None) -> dict[str, Any]:
    """As Glance renders one: the details (objects, properties, tags) when shown, empty
    collections left out; `resource_type` prefixes property names with its prefix."""
    view: dict[str, Any] = {k: getattr(ns, k) for k in NAMESPACE_KEYS}
    view.update(owner=ns.owner, **_stamp(ns), self=f"/v2/metadefs/namespaces/{ns.namespace}",
                schema="/v2/schemas/metadefs/namespace")
    view = {k: v for k, v in view.items() if v is not None}
    assocs = associations(db, ns)
    if assocs:
        view["resource_type_associations"] = assocs
    if not detail:
        return view
    prefix = next((a.get("prefix") for a in assocs if a["name"] == resource_type), None) or ""
    objects = [object_view(ns, o, prefix) for o in _rows(db, MetadefObject, ns)]
    if objects:
        view["objects"] = objects
    props = {prefix + p.name: property_view(p, named=False) for p in
             _rows(db, MetadefProperty, ns)}
    if props:
        view["properties"] = props
    tags = [{"name": t.name} for t in _rows(db, MetadefTag, ns)]
    if tags:
        view["tags"] = tags
    return view


def _rows(db: Session, model: Any, ns: MetadefNamespace) -> list[Any]:
    return list(db.scalars(select(model).where(model.namespace_id == ns.id)
                           .order_by(model.id)))


# ------------------------------------------------------------------ objects
def _named(db: Session, model: Any, ns: MetadefNamespace, name: str, what: str) -> Any:
    row = db.scalars(select(model).where(model.namespace_id == ns.id,
                                         model.name == name)).first()
    if row is None:
        raise NotFound(f"The metadata definition {what} with name={name} was not found in "
                       f"namespace={ns.namespace}.")
    return row


def _check_named(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("Body expected in request.")
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise BadRequest("'name' is a required property")
    if len(name) > 80:
        raise BadRequest(f"{name!r} is too long")
    return body


def _exists(what: str, name: str, ns: MetadefNamespace) -> Conflict:
    return Conflict(f"A metadata definition {what} with name={name} already exists in "
                    f"namespace={ns.namespace}.")


def get_object(db: Session, ns: MetadefNamespace, name: str) -> MetadefObject:
    return _named(db, MetadefObject, ns, name, "object")


def list_objects(db: Session, ns: MetadefNamespace) -> list[MetadefObject]:
    return _rows(db, MetadefObject, ns)


def create_object(db: Session, ctx: RequestContext, ns: MetadefNamespace, body: Any
                  ) -> MetadefObject:
    body = _check_named(body)
    obj = MetadefObject(namespace_id=ns.id, name=body["name"],
                        description=body.get("description"), required=body.get("required"),
                        properties=body.get("properties"))
    with unique_or(db, lambda: _exists("object", body["name"], ns)):
        db.add(obj)
        db.flush()
    return obj


def update_object(db: Session, ns: MetadefNamespace, name: str, body: Any) -> MetadefObject:
    body = _check_named(body)
    obj = get_object(db, ns, name)
    obj.name, obj.description = body["name"], body.get("description")
    obj.required, obj.properties = body.get("required"), body.get("properties")
    obj.updated_at = utcnow()
    with unique_or(db, lambda: _exists("object", body["name"], ns)):
        db.flush()
    return obj


def delete_object(db: Session, ns: MetadefNamespace, name: str) -> None:
    obj = get_object(db, ns, name)
    _unprotected(ns, f"Metadata definition object {name}")
    db.delete(obj)
    db.flush()


def object_view(ns: MetadefNamespace, obj: MetadefObject, prefix: str = "") -> dict[str, Any]:
    view: dict[str, Any] = {
        "name": obj.name, "description": obj.description,
        "required": [prefix + r for r in obj.required] if obj.required else obj.required,
        "properties": {prefix + k: v for k, v in (obj.properties or {}).items()},
        **_stamp(obj), "self": f"/v2/metadefs/namespaces/{ns.namespace}/objects/{obj.name}",
        "schema": "v2/schemas/metadefs/object"}
    return {k: v for k, v in view.items() if v is not None}


# ------------------------------------------------------------------ properties
def get_property(db: Session, ns: MetadefNamespace, name: str) -> MetadefProperty:
    return _named(db, MetadefProperty, ns, name, "property")


def list_properties(db: Session, ns: MetadefNamespace) -> list[MetadefProperty]:
    return _rows(db, MetadefProperty, ns)


def _check_property(body: Any) -> dict[str, Any]:
    body = _check_named(body)
    if not body.get("title"):
        raise BadRequest("'title' is a required property")
    if not body.get("type"):
        raise BadRequest("'type' is a required property")
    if body["type"] not in ("array", "boolean", "integer", "number", "object", "string"):
        raise BadRequest(f"{body['type']!r} is not one of ['array', 'boolean', 'integer', "
                         f"'number', 'object', 'string', None]")
    return body


def create_property(db: Session, ctx: RequestContext, ns: MetadefNamespace, body: Any
                    ) -> MetadefProperty:
    body = _check_property(body)
    prop = MetadefProperty(namespace_id=ns.id, name=body["name"],
                           json_schema={k: v for k, v in body.items() if k != "name"})
    with unique_or(db, lambda: _exists("property", body["name"], ns)):
        db.add(prop)
        db.flush()
    return prop


def update_property(db: Session, ns: MetadefNamespace, name: str, body: Any
                    ) -> MetadefProperty:
    body = _check_property(body)
    prop = get_property(db, ns, name)
    prop.name = body["name"]
    prop.json_schema = {k: v for k, v in body.items() if k != "name"}
    prop.updated_at = utcnow()
    with unique_or(db, lambda: _exists("property", body["name"], ns)):
        db.flush()
    return prop


def delete_property(db: Session, ns: MetadefNamespace, name: str) -> None:
    prop = get_property(db, ns, name)
    _unprotected(ns, f"Metadata definition property {name}")
    db.delete(prop)
    db.flush()


def property_view(prop: MetadefProperty, named: bool = True) -> dict[str, Any]:
    return {**({"name": prop.name} if named else {}), **(prop.json_schema or {})}


# ------------------------------------------------------------------ tags
def get_tag(db: Session, ns: MetadefNamespace, name: str) -> MetadefTag:
    return _named(db, MetadefTag, ns, name, "tag")


def list_tags(db: Session, ns: MetadefNamespace) -> list[MetadefTag]:
    return _rows(db, MetadefTag, ns)


def create_tag(db: Session, ctx: RequestContext, ns: MetadefNamespace, name: Any
               ) -> MetadefTag:
    _check_named({"name": name})
    tag = MetadefTag(namespace_id=ns.id, name=name)
    with unique_or(db, lambda: _exists("tag", name, ns)):
        db.add(tag)
        db.flush()
    return tag


def create_tags(db: Session, ctx: RequestContext, ns: MetadefNamespace, body: Any,
                append: bool) -> list[MetadefTag]:
    """`POST .../tags`: the tags of the body, replacing the namespace's unless `append`
    (Glance's `X-Openstack-Append`); a name twice in the body is a 409."""
    if not isinstance(body, dict) or not isinstance(body.get("tags"), list):
        raise BadRequest("'tags' is a required property")
    names = [t.get("name") if isinstance(t, dict) else None for t in body["tags"]]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise Conflict(f"Duplicate tags ({', '.join(sorted(map(str, dupes)))}) in request.")
    if not append:
        db.execute(delete(MetadefTag).where(MetadefTag.namespace_id == ns.id))
    return [create_tag(db, ctx, ns, n) for n in names]


def update_tag(db: Session, ns: MetadefNamespace, name: str, body: Any) -> MetadefTag:
    body = _check_named(body)
    tag = get_tag(db, ns, name)
    tag.name, tag.updated_at = body["name"], utcnow()
    with unique_or(db, lambda: _exists("tag", body["name"], ns)):
        db.flush()
    return tag


def delete_tag(db: Session, ns: MetadefNamespace, name: str) -> None:
    tag = get_tag(db, ns, name)
    _unprotected(ns, f"Metadata definition tag {name}")
    db.delete(tag)
    db.flush()


def tag_view(tag: MetadefTag) -> dict[str, Any]:
    return {"name": tag.name, **_stamp(tag)}


# ------------------------------------------------------------------ resource types
def list_resource_types(db: Session) -> list[MetadefResourceType]:
    return list(db.scalars(select(MetadefResourceType).order_by(MetadefResourceType.name)))


def resource_type_view(rt: MetadefResourceType) -> dict[str, Any]:
    return {"name": rt.name, **_stamp(rt)}


def associations(db: Session, ns: MetadefNamespace) -> list[dict[str, Any]]:
    rows = db.execute(select(MetadefResourceTypeAssociation, MetadefResourceType).join(
        MetadefResourceType, MetadefResourceType.id
        == MetadefResourceTypeAssociation.resource_type_id).where(
        MetadefResourceTypeAssociation.namespace_id == ns.id).order_by(
        MetadefResourceType.name)).all()
    return [association_view(a, rt) for a, rt in rows]


def association_view(a: MetadefResourceTypeAssociation, rt: MetadefResourceType
                     ) -> dict[str, Any]:
    view = {"name": rt.name, "prefix": a.prefix, "properties_target": a.properties_target,
            **_stamp(a)}
    return {k: v for k, v in view.items() if v is not None}


def _resource_type(db: Session, name: str, protected: bool = False) -> MetadefResourceType:
    """The resource type `name`, made on first use (as Glance's association does)."""
    rt = db.scalars(select(MetadefResourceType).where(MetadefResourceType.name == name)).first()
    if rt is None:
        rt = MetadefResourceType(name=name, protected=protected)
        with unique_or(db, lambda: Conflict(f"Resource type {name} already exists")):
            db.add(rt)
            db.flush()
    return rt


def associate(db: Session, ctx: RequestContext, ns: MetadefNamespace, body: Any,
              protected: bool = False) -> dict[str, Any]:
    body = _check_named(body)
    rt = _resource_type(db, body["name"], protected)
    a = MetadefResourceTypeAssociation(namespace_id=ns.id, resource_type_id=rt.id,
                                       prefix=body.get("prefix"),
                                       properties_target=body.get("properties_target"))
    with unique_or(db, lambda: Conflict(f"The metadata definition resource-type association of "
                                f"resource-type={rt.name} to namespace={ns.namespace}, "
                                f"already exists.")):
        db.add(a)
        db.flush()
    return association_view(a, rt)


def dissociate(db: Session, ns: MetadefNamespace, name: str) -> None:
    rt = db.scalars(select(MetadefResourceType).where(MetadefResourceType.name == name)).first()
    a = None if rt is None else db.get(MetadefResourceTypeAssociation, (ns.id, rt.id))
    if a is None:
        raise NotFound(f"The metadata definition resource-type association of "
                       f"resource-type={name} to namespace={ns.namespace}, was not found.")
    _unprotected(ns, f"Metadata definition resource-type-association {name}")
    db.delete(a)
    db.flush()


# ------------------------------------------------------------------ the shipped catalog
def load_shipped(db: Session, ctx: RequestContext, owner: str | None) -> int:
    """Glance's shipped namespaces (resource types made protected, as its loader does),
    skipping any already present; returns how many were loaded."""
    shipped = json.loads(SHIPPED.read_text())["namespaces"]
    have = set(db.scalars(select(MetadefNamespace.namespace)))
    loaded = 0
    for doc in shipped:
        if doc["namespace"] in have:
            continue
        ns = MetadefNamespace(namespace=doc["namespace"], display_name=doc.get("display_name"),
                              description=doc.get("description"),
                              visibility=doc.get("visibility") or "private",
                              protected=bool(doc.get("protected")), owner=owner)
        db.add(ns)
        db.flush()
        for obj in doc.get("objects") or []:
            db.add(MetadefObject(namespace_id=ns.id, name=obj["name"],
                                 description=obj.get("description"),
                                 required=obj.get("required"),
                                 properties=obj.get("properties")))
        for name, schema in (doc.get("properties") or {}).items():
            db.add(MetadefProperty(namespace_id=ns.id, name=name, json_schema=schema))
        for tag in doc.get("tags") or []:
            db.add(MetadefTag(namespace_id=ns.id, name=tag["name"]))
        for assoc in doc.get("resource_type_associations") or []:
            rt = _resource_type(db, assoc["name"], protected=True)
            db.add(MetadefResourceTypeAssociation(
                namespace_id=ns.id, resource_type_id=rt.id, prefix=assoc.get("prefix"),
                properties_target=assoc.get("properties_target")))
        loaded += 1
    db.flush()
    return loaded
