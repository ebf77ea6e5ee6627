"""Identity v3 routes for catalog management: regions, services, endpoints.

Policies are Keystone's secure-RBAC defaults reduced to stackling's roles: anyone with a
token reads regions; admins write them and read and write services and endpoints."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from stackling.common.errors import BadRequest
from stackling.common.http import ApiRequest, Service, no_content
from stackling.common.listing import bool_from_string
from stackling.identity import catalog, filters, logic
from stackling.identity.api import (
    BOOL,
    STRING,
    _collection_links,
    _links,
    _require_admin,
    check,
    limit_lengths,
)
from stackling.identity.models import CatalogService, Endpoint, Region

POLICIES = ("create_region", "update_region", "delete_region", "create_service",
            "update_service", "delete_service", "get_endpoint", "create_endpoint",
            "update_endpoint", "delete_endpoint")
REGION_SPEC = {"id": (STRING, False), "description": (STRING, False),
               "parent_region_id": (STRING, False)}
SERVICE_SPEC = {"type": (STRING, True), "name": (STRING, False), "enabled": (BOOL, False),
                "description": (STRING, False)}
ENDPOINT_SPEC = {"service_id": (STRING, True), "interface": (STRING, True), "url": (STRING, True),
                 "region_id": (STRING, False), "region": (STRING, False), "enabled": (BOOL, False)}


def region_view(rq: ApiRequest, r: Region) -> dict[str, Any]:
    view = {"id": r.id, "description": r.description, "parent_region_id": r.parent_region_id,
            "links": _links(rq, f"regions/{r.id}")}
    for k, v in (r.extra or {}).items():
        view.setdefault(k, v)
    return view


def _region_values(body: dict[str, Any]) -> dict[str, Any]:
    """Known fields, and the rest kept as the region's extra attributes (as Keystone)."""
    return {**{k: body[k] for k in REGION_SPEC if k in body},
            "extra": {k: v for k, v in body.items() if k not in REGION_SPEC}}


def service_view(rq: ApiRequest, svc: CatalogService) -> dict[str, Any]:
    view = {"id": svc.id, "type": svc.type, "name": svc.name, "enabled": svc.enabled,
            "links": _links(rq, f"services/{svc.id}")}
    for k, v in (svc.extra or {}).items():
        view.setdefault(k, v)
    return view


def endpoint_view(rq: ApiRequest, ep: Endpoint) -> dict[str, Any]:
    view = {"id": ep.id, "service_id": ep.service_id, "interface": ep.interface,
            "region": ep.region_id, "region_id": ep.region_id, "enabled": ep.enabled,
            "url": ep.url.replace("%(base_url)s", rq.base_url),
            "links": _links(rq, f"endpoints/{ep.id}")}
    for k, v in (ep.extra or {}).items():
        view.setdefault(k, v)
    return view


def _endpoint_body(body: dict[str, Any]) -> dict[str, Any]:
    """Known fields, and the rest (a name, a description) kept as extras, as Keystone."""
    return {**body, "extra": {k: v for k, v in body.items()
                              if k not in ENDPOINT_SPEC and k != "id"}}


# column sizes (Keystone's schemas cap the same fields at 255)
LENGTHS = {"id": 255, "parent_region_id": 255, "type": 255, "region_id": 255, "region": 255,
           "service_id": 64}


def _body(rq: ApiRequest, wrapper: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = check(dict(logic.require_fields(rq.json(), wrapper)), spec, allow_extra=True)
    return limit_lengths(body, LENGTHS)


def _optional(spec: dict[str, Any]) -> dict[str, Any]:
    return {k: (kind, False) for k, (kind, _) in spec.items()}


# ------------------------------------------------------------------ regions
def list_regions(rq: ApiRequest) -> Any:
    regions = catalog.list_regions(rq.db, rq.query.get("parent_region_id"))
    return {"regions": [region_view(rq, r) for r in regions], "links": _collection_links(rq)}


def show_region(rq: ApiRequest) -> Any:
    return {"region": region_view(rq, catalog.get_region(rq.db, rq.path_params["region_id"]))}


def create_region(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_region")
    body = _body(rq, "region", REGION_SPEC)
    return 201, {"region": region_view(rq, catalog.create_region(rq.db, _region_values(body)))}


def put_region(rq: ApiRequest) -> Any:
    """PUT /v3/regions/{id}: create with the caller's id (Keystone's form of the call)."""
    _require_admin(rq, "create_region")
    body = _body(rq, "region", REGION_SPEC)
    region_id = rq.path_params["region_id"]
    limit_lengths({"id": region_id}, LENGTHS)
    if body.get("id") not in (None, region_id):
        raise BadRequest("Cannot change region ID")
    region = catalog.create_region(rq.db, {**_region_values(body), "id": region_id})
    return 201, {"region": region_view(rq, region)}


def update_region(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_region")
    region = catalog.get_region(rq.db, rq.path_params["region_id"])
    body = _body(rq, "region", REGION_SPEC)
    if body.get("id") not in (None, region.id):
        raise BadRequest("Cannot change region ID")
    return {"region": region_view(rq, catalog.update_region(rq.db, region,
                                                            _region_values(body)))}


def delete_region(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_region")
    catalog.delete_region(rq.db, catalog.get_region(rq.db, rq.path_params["region_id"]))
    return no_content()


# ------------------------------------------------------------------ services
def _service_values(body: dict[str, Any]) -> dict[str, Any]:
    values = {k: body[k] for k in ("type", "name", "enabled") if k in body}
    values["extra"] = {k: v for k, v in body.items() if k not in values and k != "id"}
    return values


def list_services(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_services")
    stmt = select(CatalogService).order_by(CatalogService.type)
    for key, column in (("type", CatalogService.type), ("name", CatalogService.name)):
        if rq.query.get(key):
            stmt = stmt.where(column == rq.query[key])
    columns = {"name": CatalogService.name, "type": CatalogService.type}
    rows = filters.filter_rows(rq.db.scalars(filters.apply_inexact(stmt, rq.query, columns)),
                               rq.query, columns)
    return {"services": [service_view(rq, s) for s in rows], "links": _collection_links(rq)}


def show_service(rq: ApiRequest) -> Any:
    _require_admin(rq, "get_service")
    return {"service": service_view(rq, catalog.get_service(rq.db, rq.path_params["service_id"]))}


def create_service(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_service")
    svc = catalog.create_service(rq.db, _service_values(_body(rq, "service", SERVICE_SPEC)))
    return 201, {"service": service_view(rq, svc)}


def update_service(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_service")
    svc = catalog.get_service(rq.db, rq.path_params["service_id"])
    body = _body(rq, "service", _optional(SERVICE_SPEC))
    if body.get("id") not in (None, svc.id):
        raise BadRequest("Cannot change service ID")
    return {"service": service_view(rq, catalog.update_service(rq.db, svc, _service_values(body)))}


def delete_service(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_service")
    catalog.delete_service(rq.db, catalog.get_service(rq.db, rq.path_params["service_id"]))
    return no_content()


# ------------------------------------------------------------------ endpoints
def list_endpoints(rq: ApiRequest) -> Any:
    _require_admin(rq, "list_endpoints")
    stmt = select(Endpoint).order_by(Endpoint.service_id, Endpoint.interface)
    for key, column in (("service_id", Endpoint.service_id), ("interface", Endpoint.interface),
                        ("region_id", Endpoint.region_id)):
        if rq.query.get(key):
            stmt = stmt.where(column == rq.query[key])
    if rq.query.get("enabled") is not None:
        stmt = stmt.where(Endpoint.enabled.is_(bool_from_string(rq.query["enabled"], True)))
    return {"endpoints": [endpoint_view(rq, e) for e in rq.db.scalars(stmt)],
            "links": _collection_links(rq)}


def show_endpoint(rq: ApiRequest) -> Any:
    _require_admin(rq, "get_endpoint")
    ep = catalog.get_endpoint(rq.db, rq.path_params["endpoint_id"])
    return {"endpoint": endpoint_view(rq, ep)}


def create_endpoint(rq: ApiRequest) -> Any:
    _require_admin(rq, "create_endpoint")
    ep = catalog.create_endpoint(rq.db, _endpoint_body(_body(rq, "endpoint", ENDPOINT_SPEC)))
    return 201, {"endpoint": endpoint_view(rq, ep)}


def update_endpoint(rq: ApiRequest) -> Any:
    _require_admin(rq, "update_endpoint")
    ep = catalog.get_endpoint(rq.db, rq.path_params["endpoint_id"])
    body = _body(rq, "endpoint", _optional(ENDPOINT_SPEC))
    if body.get("id") not in (None, ep.id):
        raise BadRequest("Cannot change endpoint ID")
    return {"endpoint": endpoint_view(rq, catalog.update_endpoint(rq.db, ep,
                                                                  _endpoint_body(body)))}


def delete_endpoint(rq: ApiRequest) -> Any:
    _require_admin(rq, "delete_endpoint")
    rq.db.delete(catalog.get_endpoint(rq.db, rq.path_params["endpoint_id"]))
    return no_content()


def add_routes(s: Service) -> None:
    s.add("/v3/regions", get=list_regions, post=create_region)
    s.add("/v3/regions/{region_id}", get=show_region, put=put_region, patch=update_region,
          delete=delete_region)
    s.add("/v3/services", get=list_services, post=create_service)
    s.add("/v3/services/{service_id}", get=show_service, patch=update_service,
          delete=delete_service)
    s.add("/v3/endpoints", get=list_endpoints, post=create_endpoint)
    s.add("/v3/endpoints/{endpoint_id}", get=show_endpoint, patch=update_endpoint,
          delete=delete_endpoint)
