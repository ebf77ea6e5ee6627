"""Catalog management as Keystone's: regions (a tree), services and their endpoints."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.errors import BadRequest, Conflict, Forbidden, NotFound
from stackling.identity import logic
from stackling.identity.models import CatalogService, Endpoint, Region

INTERFACES = ("public", "internal", "admin")
# the substitutions Keystone allows in an endpoint URL (`$(...)s` is the legacy spelling)
URL_SUBSTITUTIONS = ("tenant_id", "project_id", "user_id", "public_bind_host",
                     "admin_bind_host", "compute_host", "admin_port", "public_port",
                     "public_endpoint", "admin_endpoint")


def _not_in(attribute: str, target: str) -> BadRequest:
    return BadRequest(f"Expecting to find {attribute} in {target}. The server could not comply "
                      "with the request since it is either malformed or otherwise incorrect. "
                      "The client is assumed to be in error.")


# ------------------------------------------------------------------ regions
def get_region(db: Session, region_id: str) -> Region:
    region = db.get(Region, region_id)
    if region is None:
        raise NotFound(f"Could not find region: {region_id}.")
    return region


def list_regions(db: Session, parent_region_id: str | None = None) -> list[Region]:
    stmt = select(Region).order_by(Region.id)
    if parent_region_id is not None:
        stmt = stmt.where(Region.parent_region_id == parent_region_id)
    return list(db.scalars(stmt))


def _check_parent(db: Session, region_id: str, parent_id: str | None) -> None:
    """The parent exists and is not the region itself nor one of its descendants."""
    seen = {region_id}
    while parent_id is not None:
        if parent_id in seen:
            raise BadRequest(f"The specified parent region {parent_id} would create a circular "
                             "region hierarchy.")
        seen.add(parent_id)
        parent_id = get_region(db, parent_id).parent_region_id


def create_region(db: Session, values: dict[str, Any]) -> Region:
    region_id = values.get("id") or logic.new_id()
    _check_parent(db, region_id, values.get("parent_region_id"))
    region = Region(id=region_id, description=values.get("description") or "",
                    parent_region_id=values.get("parent_region_id"),
                    extra=values.get("extra") or {})
    try:
        with db.begin_nested():
            db.add(region)
    except IntegrityError:
        raise Conflict(f"Conflict occurred attempting to store region - Duplicate ID, "
                       f"{region_id}.") from None
    return region


def update_region(db: Session, region: Region, values: dict[str, Any]) -> Region:
    if "parent_region_id" in values:
        _check_parent(db, region.id, values["parent_region_id"])
        region.parent_region_id = values["parent_region_id"]
    if "description" in values:
        region.description = values["description"] or ""
    if values.get("extra"):
        region.extra = {**(region.extra or {}), **values["extra"]}
    return region


def _subtree(db: Session, region_id: str) -> list[str]:
    ids, frontier = [region_id], [region_id]
    while frontier:
        frontier = list(db.scalars(select(Region.id).where(Region.parent_region_id.in_(frontier))))
        ids.extend(frontier)
    return ids


def delete_region(db: Session, region: Region) -> None:
    """With its child regions, as Keystone; refused while any of them holds an endpoint."""
    ids = _subtree(db, region.id)
    if db.scalar(select(func.count()).select_from(Endpoint).where(Endpoint.region_id.in_(ids))):
        raise Forbidden(f"Unable to delete region {region.id} because it or its child regions "
                        "have associated endpoints.")
    for region_id in reversed(ids):
        db.delete(db.get(Region, region_id))
        db.flush()


# ------------------------------------------------------------------ services
def get_service(db: Session, service_id: str) -> CatalogService:
    svc = db.get(CatalogService, service_id)
    if svc is None:
        raise NotFound(f"Could not find service: {service_id}.")
    return svc


def create_service(db: Session, values: dict[str, Any]) -> CatalogService:
    svc = CatalogService(id=logic.new_id(), type=values["type"], name=values.get("name") or "",
                         enabled=values.get("enabled", True), extra=values.get("extra") or {})
    db.add(svc)
    return svc


def update_service(db: Session, svc: CatalogService, values: dict[str, Any]) -> CatalogService:
    for key in ("type", "name", "enabled"):
        if key in values:
            setattr(svc, key, values[key] if key != "name" else values[key] or "")
    if values.get("extra"):
        svc.extra = {**(svc.extra or {}), **values["extra"]}
    return svc


def delete_service(db: Session, svc: CatalogService) -> None:
    for ep in db.scalars(select(Endpoint).where(Endpoint.service_id == svc.id)):
        db.delete(ep)
    db.delete(svc)


# ------------------------------------------------------------------ endpoints
def get_endpoint(db: Session, endpoint_id: str) -> Endpoint:
    ep = db.get(Endpoint, endpoint_id)
    if ep is None:
        raise NotFound(f"Could not find endpoint: {endpoint_id}.")
    return ep


def _endpoint_values(db: Session, values: dict[str, Any]) -> dict[str, Any]:
    """Checked endpoint fields; the legacy `region` names (and makes) the region, as
    Keystone's v3 API still accepts it."""
    out = {k: values[k] for k in ("service_id", "interface", "url", "enabled") if k in values}
    if values.get("extra"):
        out["extra"] = values["extra"]
    if "interface" in out and out["interface"] not in INTERFACES:
        raise BadRequest(f"Invalid input for field 'interface': {out['interface']!r} does not "
                         "match '^(admin|internal|public)$'")
    if "url" in out:
        try:
            out["url"].replace("$(", "%(") % dict.fromkeys(URL_SUBSTITUTIONS, "")
        except (KeyError, TypeError, ValueError):
            raise BadRequest(f"Cannot create an endpoint with an invalid URL: {out['url']}."
                             ) from None
    if "service_id" in out and db.get(CatalogService, out["service_id"]) is None:
        raise _not_in("endpoint service_id", "service table")
    if values.get("region_id") is not None:
        if db.get(Region, values["region_id"]) is None:
            raise _not_in("endpoint region_id", "region table")
        out["region_id"] = values["region_id"]
    elif values.get("region") is not None:
        if db.get(Region, values["region"]) is None:
            create_region(db, {"id": values["region"]})
        out["region_id"] = values["region"]
    elif "region_id" in values:
        out["region_id"] = None
    return out


def create_endpoint(db: Session, values: dict[str, Any]) -> Endpoint:
    ep = Endpoint(id=logic.new_id(), **{"enabled": True, **_endpoint_values(db, values)})
    db.add(ep)
    return ep


def update_endpoint(db: Session, ep: Endpoint, values: dict[str, Any]) -> Endpoint:
    for key, value in _endpoint_values(db, values).items():
        setattr(ep, key, {**(ep.extra or {}), **value} if key == "extra" else value)
    return ep
