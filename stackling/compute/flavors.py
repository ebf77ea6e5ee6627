"""Flavors: the bootstrap set, listing, admin create/delete and extra specs."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import bindparam, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import BadRequest, NotFound
from stackling.common.listing import ListParams, Page, paginate
from stackling.compute.errors import FlavorExists, FlavorIdExists, FlavorNotFound
from stackling.compute.models import Flavor

# Nova's historical default flavors (id, name, ram MB, vcpus, root disk GB).
DEFAULT_FLAVORS = (
    ("1", "m1.tiny", 512, 1, 1),
    ("2", "m1.small", 2048, 1, 20),
    ("3", "m1.medium", 4096, 2, 40),
    ("4", "m1.large", 8192, 4, 80),
    ("5", "m1.xlarge", 16384, 8, 160),
)


def bootstrap_flavors(db: Session, runtime: Any) -> None:
    for flavorid, name, ram, vcpus, disk in DEFAULT_FLAVORS:
        db.add(Flavor(flavorid=flavorid, name=name, memory_mb=ram, vcpus=vcpus, root_gb=disk,
                      ephemeral_gb=0, swap=0, rxtx_factor=1.0, is_public=True,
                      extra_specs={}))


_BY_FLAVORID = select(Flavor).where(Flavor.flavorid == bindparam("flavorid"))  # built once


def get_flavor(db: Session, ctx: RequestContext, flavorid: str) -> Flavor:
    flavor = db.scalars(_BY_FLAVORID, {"flavorid": str(flavorid)}).first()
    if flavor is None or (not flavor.is_public and not ctx.is_admin):
        raise FlavorNotFound(flavor_id=flavorid)
    return flavor


def list_flavors(db: Session, ctx: RequestContext, filters: dict[str, str],
                 params: ListParams) -> Page:
    stmt = select(Flavor)
    is_public = filters.get("is_public")
    if not ctx.is_admin or is_public is None:
        stmt = stmt.where(Flavor.is_public.is_(True))
    elif is_public.lower() not in ("none",):
        stmt = stmt.where(Flavor.is_public.is_(is_public.lower() in ("true", "1", "t", "yes")))
    visible = stmt  # the marker must be a flavor the caller can see (as nova's query)
    for key, column in (("minRam", Flavor.memory_mb), ("minDisk", Flavor.root_gb)):
        if key in filters:
            try:
                stmt = stmt.where(column >= int(filters[key]))
            except ValueError:
                raise BadRequest(f"Invalid {key} filter [{filters[key]}]") from None
    if params.marker:
        marker = db.scalars(visible.with_only_columns(Flavor.id).where(
            Flavor.flavorid == params.marker)).first()
        if marker is None:
            raise BadRequest(f"marker [{params.marker}] not found")
        params.marker = str(marker)
    columns = {"flavorid": Flavor.flavorid, "name": Flavor.name, "memory_mb": Flavor.memory_mb,
               "vcpus": Flavor.vcpus, "root_gb": Flavor.root_gb, "id": Flavor.id,
               "created_at": Flavor.created_at, "swap": Flavor.swap,
               "ephemeral_gb": Flavor.ephemeral_gb, "rxtx_factor": Flavor.rxtx_factor}
    if not params.sorts:
        params.sorts = [("flavorid", True)]
    params.marker = params.marker and int(params.marker)  # type: ignore[assignment]
    return paginate(db, stmt, columns=columns, id_column=Flavor.id, params=params,
                    marker_scope=visible)


def create_flavor(db: Session, ctx: RequestContext, values: dict[str, Any]) -> Flavor:
    flavorid = values.get("id") or str(uuid.uuid4())
    if db.scalars(select(Flavor.id).where(Flavor.flavorid == flavorid)).first() is not None:
        raise FlavorIdExists(flavor_id=flavorid)
    if db.scalars(select(Flavor.id).where(Flavor.name == values["name"])).first() is not None:
        raise FlavorExists(name=values["name"])
    flavor = Flavor(flavorid=flavorid, name=values["name"], memory_mb=int(values["ram"]),
                    vcpus=int(values["vcpus"]), root_gb=int(values["disk"]),
                    ephemeral_gb=int(values.get("OS-FLV-EXT-DATA:ephemeral") or 0),
                    swap=int(values.get("swap") or 0),
                    rxtx_factor=float(values.get("rxtx_factor") or 1.0),
                    is_public=values.get("os-flavor-access:is_public", True) in (
                        True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes"),
                    description=values.get("description"), extra_specs={})
    try:
        with db.begin_nested():
            db.add(flavor)
    except IntegrityError:
        raise FlavorExists(name=values["name"]) from None
    return flavor


def delete_flavor(db: Session, ctx: RequestContext, flavorid: str) -> None:
    flavor = get_flavor(db, ctx, flavorid)
    db.delete(flavor)
    db.flush()


def set_extra_specs(db: Session, ctx: RequestContext, flavorid: str,
                    specs: dict[str, Any]) -> dict[str, str]:
    flavor = get_flavor(db, ctx, flavorid)
    merged = dict(flavor.extra_specs or {})
    merged.update({k: str(v) for k, v in specs.items()})
    flavor.extra_specs = merged
    db.flush()
    return merged


def delete_extra_spec(db: Session, ctx: RequestContext, flavorid: str, key: str) -> None:
    flavor = get_flavor(db, ctx, flavorid)
    specs = dict(flavor.extra_specs or {})
    if key not in specs:
        raise NotFound(f"Flavor {flavorid} has no extra specs with key {key}.")
    specs.pop(key)
    flavor.extra_specs = specs
    db.flush()


def flavor_snapshot(flavor: Flavor) -> dict[str, Any]:
    """The copy of a flavor an instance keeps (it survives the flavor's deletion)."""
    return {"flavorid": flavor.flavorid, "name": flavor.name, "memory_mb": flavor.memory_mb,
            "vcpus": flavor.vcpus, "root_gb": flavor.root_gb,
            "ephemeral_gb": flavor.ephemeral_gb, "swap": flavor.swap,
            "extra_specs": dict(flavor.extra_specs or {})}


_REF = select(Flavor.flavorid, Flavor.name, Flavor.is_public).where(
    or_(Flavor.flavorid == bindparam("v"), Flavor.name == bindparam("v")))  # built once


def flavor_ref(db: Session, ctx: RequestContext, name_or_id: str) -> str:
    """The id of the flavor `get_flavor` finds by id, else `get_flavor_by_name` by name
    (FlavorNotFound as theirs), read in one query."""
    by_id = by_name = None
    for flavorid, name, is_public in db.execute(_REF, {"v": str(name_or_id)}):
        if not is_public and not ctx.is_admin:
            continue
        if flavorid == str(name_or_id):
            by_id = flavorid
        elif name == name_or_id and by_name is None:
            by_name = flavorid
    found = by_id or by_name
    if found is None:
        raise FlavorNotFound(flavor_id=name_or_id)
    return found


def get_flavor_by_name(db: Session, ctx: RequestContext, name: str) -> Flavor:
    flavor = db.scalars(select(Flavor).where(Flavor.name == name)).first()
    if flavor is None or (not flavor.is_public and not ctx.is_admin):
        raise FlavorNotFound(flavor_id=name)
    return flavor


def set_description(db: Session, ctx: RequestContext, flavorid: str,
                    description: str | None) -> Flavor:
    flavor = get_flavor(db, ctx, flavorid)
    flavor.description = description
    db.flush()
    return flavor
