"""Network flavors and service profiles (`flavors`) and the service providers they name
(`service-type`), as Neutron's flavors plugin: admins write, any project reads flavors,
only admins read service profiles. A profile names a driver of a served provider (or only
`metainfo`); a profile associated with a flavor is not changed or deleted
(`ServiceProfileInUse`). Nothing here picks a router's driver: the flavors are stored and
shown (no `l3-flavors`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import (
    ID,
    REQUIRED,
    Attr,
    Invalid,
    boolean,
    list_of,
    string,
    uuid_value,
)
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.flavors.models import Flavor, FlavorServiceProfile, ServiceProfile
from stackling.network.querying import Listing

EXTENSIONS.extend([
    Extension("service-type", "Neutron Service Type Management",
              "API for retrieving service providers for Neutron advanced services",
              "2013-01-20T00:00:00-00:00"),
    Extension("flavors", "Neutron Service Flavors",
              "Flavor specification for Neutron advanced services.",
              "2015-09-17T10:00:00-00:00"),
])

POLICIES: dict[str, str] = {
    "get_service_provider": "role:reader",
    "create_flavor": pol.ADMIN,
    "get_flavor": "role:reader",
    "update_flavor": pol.ADMIN,
    "delete_flavor": pol.ADMIN,
    "create_service_profile": pol.ADMIN,
    "get_service_profile": pol.ADMIN,
    "update_service_profile": pol.ADMIN,
    "delete_service_profile": pol.ADMIN,
    "get_flavor_service_profile": pol.READER,
    "create_flavor_service_profile": pol.ADMIN,
    "delete_flavor_service_profile": pol.ADMIN,
}

# The service providers of what is served: the L3 plugin's four built-in router drivers,
# as Neutron lists them with no `service_providers` configured.
_L3_DRIVERS = "neutron.services.l3_router.service_providers."
SERVICE_PROVIDERS: list[dict[str, Any]] = [
    {"service_type": "L3_ROUTER_NAT", "name": name, "default": False,
     "driver": _L3_DRIVERS + driver}
    for name, driver in (("dvrha", "dvrha.DvrHaDriver"), ("dvr", "dvr.DvrDriver"),
                         ("ha", "ha.HaDriver"), ("single_node", "single_node.SingleNodeDriver"))]
# Service plugin types a flavor may name (neutron-lib's `type:service_plugin_type`: a
# loaded service plugin), i.e. the plugins whose APIs this service serves.
SERVICE_TYPES = ("L3_ROUTER_NAT", "FLAVORS", "QOS", "METERING", "LOGGING", "PORTFORWARDING",
                 "NETWORK_SEGMENT_RANGE", "CONNTRACKHELPER", "LOCAL_IP", "trunk", "segments")


# (db, flavor id) -> None before a flavor is deleted; raises to refuse (routers using it)
DELETE_CHECKS: list[Callable[[Session, str], None]] = []


class InvalidServiceType(errors.InvalidInput):
    message = "Invalid service type: %(service_type)s."


class FlavorNotFound(errors.NotFound):
    message = "Flavor %(flavor_id)s could not be found."


class ServiceProfileNotFound(errors.NotFound):
    message = "Service Profile %(sp_id)s could not be found."


class ServiceProfileInUse(errors.InUse):
    message = "Service Profile %(sp_id)s is used by some service instance."


class FlavorServiceProfileBindingExists(errors.Conflict):
    message = "Service Profile %(sp_id)s is already associated with flavor %(fl_id)s."


class FlavorServiceProfileBindingNotFound(errors.NotFound):
    message = "Service Profile %(sp_id)s is not associated with flavor %(fl_id)s."


class ServiceProfileDriverNotFound(errors.NotFound):
    message = "Service Profile driver %(driver)s could not be found."


class ServiceProfileEmpty(errors.InvalidInput):
    message = "Service Profile needs either a driver or metainfo."


class ServiceProfileDisabled(errors.ServiceUnavailable):
    message = "Service Profile is not enabled."


class FlavorDisabled(errors.ServiceUnavailable):
    message = "Flavor is not enabled."


def _service_type(value: Any) -> str:
    if value not in SERVICE_TYPES:
        raise InvalidServiceType(service_type=value)
    return value


def _description(value: Any) -> str:
    return "" if value is None else string(1024)(value)  # type:string_or_none


def _metainfo(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"'{value}' is not a valid string")
    return string(4096)(value)


FLAVOR_ATTRS: dict[str, Attr] = {
    "id": ID,
    "name": Attr(post=True, put=True, default="", convert=string(255), filter=True, sort=True),
    "description": Attr(post=True, put=True, default="", convert=_description, filter=True,
                        sort=True),
    "service_type": Attr(post=True, default=REQUIRED, convert=_service_type, filter=True,
                         sort=True, query=str),
    "service_profiles": Attr(post=True, put=True, default=list,
                             convert=list_of(uuid_value)),
    "enabled": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                    sort=True),
}
PROFILE_ATTRS: dict[str, Attr] = {
    "id": ID,
    "description": Attr(post=True, put=True, default="", convert=_description, filter=True,
                        sort=True),
    "driver": Attr(post=True, put=True, default="", convert=string(1024), filter=True,
                   sort=True),
    "metainfo": Attr(post=True, put=True, default="", convert=_metainfo, sort=True),
    "enabled": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                    sort=True),
}
_F, _P, _B = Flavor, ServiceProfile, FlavorServiceProfile
FLAVOR_LISTING = Listing(attrs=FLAVOR_ATTRS, columns={
    "id": _F.id, "name": _F.name, "description": _F.description,
    "service_type": _F.service_type, "enabled": _F.enabled}, id_column=_F.id)
PROFILE_LISTING = Listing(attrs=PROFILE_ATTRS, columns={
    "id": _P.id, "description": _P.description, "driver": _P.driver,
    "metainfo": _P.metainfo, "enabled": _P.enabled}, id_column=_P.id)


def _target(ctx: RequestContext) -> dict[str, Any]:
    return {"project_id": ctx.project_id}


# ------------------------------------------------------------------ service providers
def list_service_providers(db: Session, ctx: RequestContext,
                           filters: dict[str, list[str]]) -> list[dict[str, Any]]:
    if not pol.allowed(db, ctx, "get_service_provider", _target(ctx)):
        return []
    out = []
    for provider in SERVICE_PROVIDERS:
        view = {k: provider[k] for k in ("service_type", "name", "default")}
        if all(str(view.get(k)).lower() in {v.lower() for v in values}
               for k, values in filters.items() if k in view):
            out.append(view)
    return out


# ------------------------------------------------------------------ flavors
def flavor_views(db: Session, flavors: list[Flavor]) -> list[dict[str, Any]]:
    profiles: dict[str, list[str]] = {f.id: [] for f in flavors}
    if flavors:
        for flavor_id, sp_id in db.execute(select(_B.flavor_id, _B.service_profile_id).where(
                _B.flavor_id.in_(list(profiles))).order_by(_B.service_profile_id)):
            profiles[flavor_id].append(sp_id)
    return [{"id": f.id, "name": f.name, "description": f.description,
             "service_type": f.service_type, "enabled": f.enabled,
             "service_profiles": profiles[f.id]} for f in flavors]


def list_flavors(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Flavor)
    if not pol.allowed(db, ctx, "get_flavor", _target(ctx)):
        stmt = stmt.where(_F.id.is_(None))
    return FLAVOR_LISTING.page(db, stmt, params)


def get_flavor(db: Session, ctx: RequestContext, flavor_id: str,
               action: str = "get_flavor") -> Flavor:
    flavor = db.get(Flavor, flavor_id)
    if flavor is None or not pol.allowed(db, ctx, "get_flavor", _target(ctx)):
        raise FlavorNotFound(flavor_id=flavor_id)
    if action != "get_flavor":
        pol.authorize(db, ctx, action, _target(ctx))
    return flavor


def create_flavor(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Flavor:
    pol.authorize(db, ctx, "create_flavor", _target(ctx))
    # `service_profiles` is accepted and ignored, as upstream: associations go through
    # /flavors/{id}/service_profiles
    flavor = Flavor(id=uuid_str(), name=attrs.get("name", ""),
                    description=attrs.get("description", ""),
                    service_type=attrs["service_type"], enabled=attrs.get("enabled", True))
    db.add(flavor)
    db.flush()
    return flavor


def update_flavor(db: Session, ctx: RequestContext, flavor_id: str,
                  attrs: dict[str, Any]) -> Flavor:
    flavor = get_flavor(db, ctx, flavor_id, "update_flavor")
    for key in ("name", "description", "enabled"):
        if key in attrs:
            setattr(flavor, key, attrs[key])
    db.flush()
    return flavor


def delete_flavor(db: Session, ctx: RequestContext, flavor_id: str) -> None:
    flavor = get_flavor(db, ctx, flavor_id, "delete_flavor")
    for check in DELETE_CHECKS:
        check(db, flavor.id)
    db.delete(flavor)
    db.flush()


def next_providers(db: Session, ctx: RequestContext, flavor_id: str) -> list[dict[str, Any]]:
    """The provider of the flavor's first service profile (Neutron's `next_providers`)."""
    get_flavor(db, ctx, flavor_id)
    sp_id = db.scalar(select(_B.service_profile_id).where(_B.flavor_id == flavor_id)
                      .order_by(_B.service_profile_id).limit(1))
    if sp_id is None:
        raise FlavorServiceProfileBindingNotFound(sp_id="", fl_id=flavor_id)
    profile = db.get(ServiceProfile, sp_id)
    assert profile is not None  # the foreign key
    if not profile.enabled:
        raise ServiceProfileDisabled()
    provider = next((p for p in SERVICE_PROVIDERS if p["driver"] == profile.driver), None)
    if provider is None:
        raise ServiceProfileDriverNotFound(driver=profile.driver)
    return [{"driver": profile.driver, "provider": provider["name"],
             "metainfo": profile.metainfo}]


# ------------------------------------------------------------------ associations
def associate(db: Session, ctx: RequestContext, flavor_id: str, body: Any) -> str:
    flavor = get_flavor(db, ctx, flavor_id, "create_flavor_service_profile")
    if not isinstance(body, dict) or not isinstance(body.get("service_profile"), dict):
        raise errors.BadRequest("Unable to find 'service_profile' in request body")
    item = body["service_profile"]
    unknown = [k for k in item if k != "id"]
    if unknown:
        raise errors.BadRequest(f"Unrecognized attribute(s) '{', '.join(unknown)}'")
    if "id" not in item:
        raise errors.BadRequest("Failed to parse request. Required attribute 'id' not "
                                "specified")
    try:
        sp_id = uuid_value(item["id"])
    except Invalid as exc:
        raise errors.BadRequest(f"Invalid input for id. Reason: {exc}.") from None
    if db.get(ServiceProfile, sp_id) is None:
        raise ServiceProfileNotFound(sp_id=sp_id)
    if db.get(FlavorServiceProfile, (flavor.id, sp_id)) is not None:
        raise FlavorServiceProfileBindingExists(sp_id=sp_id, fl_id=flavor.id)
    try:
        with db.begin_nested():
            db.add(FlavorServiceProfile(flavor_id=flavor.id, service_profile_id=sp_id))
    except IntegrityError:  # a concurrent association (or the profile went)
        raise FlavorServiceProfileBindingExists(sp_id=sp_id, fl_id=flavor.id) from None
    return sp_id


def disassociate(db: Session, ctx: RequestContext, flavor_id: str, sp_id: str) -> None:
    flavor = get_flavor(db, ctx, flavor_id, "delete_flavor_service_profile")
    gone = db.execute(delete(FlavorServiceProfile).where(
        _B.flavor_id == flavor.id, _B.service_profile_id == sp_id))
    if not gone.rowcount:  # type: ignore[attr-defined]
        raise FlavorServiceProfileBindingNotFound(sp_id=sp_id, fl_id=flavor.id)


# ------------------------------------------------------------------ service profiles
def profile_view(sp: ServiceProfile) -> dict[str, Any]:
    return {"id": sp.id, "description": sp.description, "driver": sp.driver,
            "metainfo": sp.metainfo, "enabled": sp.enabled}


def list_profiles(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(ServiceProfile)
    if not pol.allowed(db, ctx, "get_service_profile", _target(ctx)):
        stmt = stmt.where(_P.id.is_(None))
    return PROFILE_LISTING.page(db, stmt, params)


def get_profile(db: Session, ctx: RequestContext, sp_id: str,
                action: str = "get_service_profile") -> ServiceProfile:
    profile = db.get(ServiceProfile, sp_id)
    if profile is None or not pol.allowed(db, ctx, action, _target(ctx)):
        raise ServiceProfileNotFound(sp_id=sp_id)
    return profile


def _check_driver(driver: str) -> None:
    if driver and driver not in {p["driver"] for p in SERVICE_PROVIDERS}:
        raise ServiceProfileDriverNotFound(driver=driver)


def _in_use(db: Session, sp_id: str) -> None:
    if db.scalar(select(_B.flavor_id).where(_B.service_profile_id == sp_id).limit(1)):
        raise ServiceProfileInUse(sp_id=sp_id)


def create_profile(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> ServiceProfile:
    pol.authorize(db, ctx, "create_service_profile", _target(ctx))
    driver, metainfo = attrs.get("driver", ""), attrs.get("metainfo", "")
    if driver:
        _check_driver(driver)
    elif not metainfo:
        raise ServiceProfileEmpty()
    profile = ServiceProfile(id=uuid_str(), description=attrs.get("description", ""),
                             driver=driver, metainfo=metainfo,
                             enabled=attrs.get("enabled", True))
    db.add(profile)
    db.flush()
    return profile


def update_profile(db: Session, ctx: RequestContext, sp_id: str,
                   attrs: dict[str, Any]) -> ServiceProfile:
    if attrs.get("driver"):
        _check_driver(attrs["driver"])
    profile = get_profile(db, ctx, sp_id, "update_service_profile")
    _in_use(db, profile.id)
    for key in ("description", "driver", "metainfo", "enabled"):
        if key in attrs:
            setattr(profile, key, attrs[key])
    db.flush()
    return profile


def delete_profile(db: Session, ctx: RequestContext, sp_id: str) -> None:
    profile = get_profile(db, ctx, sp_id, "delete_service_profile")
    _in_use(db, profile.id)
    try:
        with db.begin_nested():
            db.delete(profile)
    except IntegrityError:  # associated meanwhile: the foreign key refuses
        raise ServiceProfileInUse(sp_id=sp_id) from None
