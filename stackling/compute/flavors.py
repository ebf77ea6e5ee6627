"""Flavors: the bootstrap set, listing, admin create/delete, extra specs and access.

A private flavor is seen by admins and by the projects granted it (os-flavor-access), as
Nova's flavor queries: public OR granted to the caller's project."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import bindparam, delete, exists, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import BadRequest, Conflict, NotFound
from stackling.common.listing import ListParams, Page, paginate
from stackling.compute.errors import FlavorExists, FlavorIdExists, FlavorNotFound
from stackling.compute.group_models import FlavorProject
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


def _granted(project_id: str | None) -> Any:
    return exists().where(FlavorProject.flavor_id == Flavor.id,
                          FlavorProject.project_id == (project_id or ""))


def _visible(db: Session, ctx: RequestContext, flavor: Flavor) -> bool:
    if flavor.is_public or ctx.is_admin:
        return True
    return db.scalar(select(_granted(ctx.project_id))) or False


def get_flavor(db: Session, ctx: RequestContext, flavorid: str) -> Flavor:
    flavor = db.scalars(_BY_FLAVORID, {"flavorid": str(flavorid)}).first()
    if flavor is None or not _visible(db, ctx, flavor):
        raise FlavorNotFound(flavor_id=flavorid)
    return flavor


# oslo's strutils.bool_from_string(strict=True), which Nova's is_public filter uses
_TRUE = ("1", "t", "true", "on", "y", "yes")
_FALSE = ("0", "f", "false", "off", "n", "no")


def list_flavors(db: Session, ctx: RequestContext, filters: dict[str, str],
                 params: ListParams) -> Page:
    stmt = select(Flavor)
    is_public = filters.get("is_public")
    wanted: bool | None = True  # Nova: public (and granted) unless an admin asks otherwise
    if ctx.is_admin and is_public is not None:
        value = is_public.strip().lower()
        if value == "none":
            wanted = None
        elif value in _TRUE or value in _FALSE:
            wanted = value in _TRUE
        else:
            raise BadRequest(f"Invalid is_public filter [{is_public}]")
    if wanted is True:
        stmt = stmt.where(or_(Flavor.is_public.is_(True), _granted(ctx.project_id)))
    elif wanted is False:
        stmt = stmt.where(Flavor.is_public.is_(False))
    visible = stmt  # the marker must be a flavor the caller can see (as nova's query)
    if "name" in filters:  # 2.102: Nova's REGEXP over the names the caller can see
        stmt = stmt.where(Flavor.id.in_(_named(db, visible, filters["name"])))
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


def _named(db: Session, visible: Any, pattern: str) -> list[int]:
    """The ids of the visible flavors whose name the pattern matches (searched, as
    REGEXP does); a pattern that is no regular expression matches as plain text."""
    from stackling.common.patterns import PatternError, PatternTooCostly, UserPattern

    rows = db.execute(visible.with_only_columns(Flavor.id, Flavor.name)).all()
    try:
        rx = UserPattern(pattern)
        return [i for i, name in rows if rx.search(name)]
    except PatternTooCostly as err:
        raise BadRequest(f"Invalid filter {pattern!r}: {err}") from None
    except PatternError:
        return [i for i, name in rows if pattern in name]


def create_flavor(db: Session, ctx: RequestContext, values: dict[str, Any]) -> Flavor:
    # Nova keeps a number as its string; no id (or null) is a new uuid
    flavorid = str(uuid.uuid4()) if values.get("id") is None else str(values["id"])
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
    db.execute(delete(FlavorProject).where(FlavorProject.flavor_id == flavor.id))
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


_REF = select(Flavor.flavorid, Flavor.name, Flavor.is_public, Flavor.id).where(
    or_(Flavor.flavorid == bindparam("v"), Flavor.name == bindparam("v")))  # built once


def flavor_ref(db: Session, ctx: RequestContext, name_or_id: str) -> str:
    """The id of the flavor `get_flavor` finds by id, else `get_flavor_by_name` by name
    (FlavorNotFound as theirs), read in one query."""
    by_id = by_name = None
    for flavorid, name, is_public, pk in db.execute(_REF, {"v": str(name_or_id)}):
        if not is_public and not ctx.is_admin and not db.scalar(select(exists().where(
                FlavorProject.flavor_id == pk, FlavorProject.project_id == ctx.project_id))):
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
    if flavor is None or not _visible(db, ctx, flavor):
        raise FlavorNotFound(flavor_id=name)
    return flavor


def set_description(db: Session, ctx: RequestContext, flavorid: str,
                    description: str | None) -> Flavor:
    flavor = get_flavor(db, ctx, flavorid)
    flavor.description = description
    db.flush()
    return flavor


# ------------------------------------------------------------------ flavor access
class FlavorAccessExists(Conflict):
    message = ("Flavor access already exists for flavor %(flavor_id)s and project "
               "%(project_id)s combination.")


class FlavorAccessNotFound(NotFound):
    message = "Flavor access not found for %(flavor_id)s / %(project_id)s combination."


class PublicFlavorAccess(Conflict):
    message = "Can not add access to a public flavor."


class NoAccessListForPublic(NotFound):
    message = "Access list not available for public flavors."


def access_list(db: Session, flavor: Flavor) -> list[dict[str, str]]:
    projects = db.scalars(select(FlavorProject.project_id).where(
        FlavorProject.flavor_id == flavor.id).order_by(FlavorProject.id))
    return [{"flavor_id": flavor.flavorid, "tenant_id": p} for p in projects]


def list_access(db: Session, ctx: RequestContext, flavorid: str) -> list[dict[str, str]]:
    flavor = get_flavor(db, ctx, flavorid)
    if flavor.is_public:
        raise NoAccessListForPublic()
    return access_list(db, flavor)


def add_access(db: Session, ctx: RequestContext, flavorid: str, project_id: str, *,
               refuse_public: bool) -> list[dict[str, str]]:
    """Grant `project_id` the flavor; the unique (flavor, project) row makes a second
    grant, even a concurrent one, the 409 FlavorAccessExists."""
    flavor = get_flavor(db, ctx, flavorid)
    if refuse_public and flavor.is_public:  # from 2.7
        raise PublicFlavorAccess()
    try:
        with db.begin_nested():
            db.add(FlavorProject(flavor_id=flavor.id, project_id=project_id))
    except IntegrityError:
        raise FlavorAccessExists(flavor_id=flavor.flavorid, project_id=project_id) from None
    return access_list(db, flavor)


def remove_access(db: Session, ctx: RequestContext, flavorid: str,
                  project_id: str) -> list[dict[str, str]]:
    flavor = get_flavor(db, ctx, flavorid)
    gone = db.execute(delete(FlavorProject).where(FlavorProject.flavor_id == flavor.id,
                                                  FlavorProject.project_id == project_id))
    if not gone.rowcount:
        raise FlavorAccessNotFound(flavor_id=flavor.flavorid, project_id=project_id)
    return access_list(db, flavor)
