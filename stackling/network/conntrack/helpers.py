"""Conntrack helpers of routers (`l3-conntrack-helper`), as Neutron's plugin: a helper
module for a protocol and port on a router, one of Neutron's default
`allowed_conntrack_helpers` (helper, protocol) pairs; duplicates are Neutron's 400."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import ID, REQUIRED, Attr, integer, one_of, string
from stackling.network.conntrack.models import ConntrackHelper
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import routers
from stackling.network.querying import Listing

EXTENSIONS.append(Extension("l3-conntrack-helper", "Router conntrack helpers",
                            "Router conntrack helpers extension",
                            "2019-07-29T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "create_router_conntrack_helper": pol.MEMBER,
    "get_router_conntrack_helper": pol.READER,
    "update_router_conntrack_helper": pol.MEMBER,
    "delete_router_conntrack_helper": pol.MEMBER,
}
# Neutron's default `allowed_conntrack_helpers`
ALLOWED = {("amanda", "udp"), ("ftp", "tcp"), ("h323", "udp"), ("h323", "tcp"),
           ("irc", "tcp"), ("netbios-ns", "udp"), ("pptp", "tcp"), ("sane", "tcp"),
           ("sip", "udp"), ("sip", "tcp"), ("snmp", "udp"), ("tftp", "udp")}
PROTOCOLS = ("tcp", "udp", "dccp", "sctp", "udplite")


class ConntrackHelperNotFound(errors.NotFound):
    message = "Conntrack Helper %(id)s could not be found."


class ConntrackHelperNotAllowed(errors.BadRequest):
    message = "Conntrack Helper %(helper)s is not allowed."


ATTRS: dict[str, Attr] = {
    "id": ID,
    "protocol": Attr(post=True, put=True, default=REQUIRED, convert=one_of(*PROTOCOLS),
                     filter=True, sort=True),
    "port": Attr(post=True, put=True, default=REQUIRED, convert=integer(1, 65535),
                 filter=True, sort=True),
    "helper": Attr(post=True, put=True, default=REQUIRED, convert=string(64), filter=True,
                   sort=True),
}
_C = ConntrackHelper
LISTING = Listing(attrs=ATTRS, columns={"id": _C.id, "protocol": _C.protocol, "port": _C.port,
                                        "helper": _C.helper}, id_column=_C.id)


def view(h: ConntrackHelper) -> dict[str, Any]:
    return {"id": h.id, "protocol": h.protocol, "port": h.port, "helper": h.helper}


def _router(db: Session, ctx: RequestContext, router_id: str, action: str) -> Any:
    router = routers.get_visible(db, ctx, router_id)
    pol.authorize(db, ctx, action, routers.target(router))
    return router


def list_helpers(db: Session, ctx: RequestContext, router_id: str, params: ListParams) -> Page:
    router = _router(db, ctx, router_id, "get_router_conntrack_helper")
    return LISTING.page(db, select(_C).where(_C.router_id == router.id), params)


def get_helper(db: Session, ctx: RequestContext, router_id: str, helper_id: str,
               action: str = "get_router_conntrack_helper") -> ConntrackHelper:
    router = _router(db, ctx, router_id, action)
    helper = db.get(ConntrackHelper, helper_id)
    if helper is None or helper.router_id != router.id:
        raise ConntrackHelperNotFound(id=helper_id)
    return helper


def _check(helper: ConntrackHelper) -> None:
    if (helper.helper, helper.protocol) not in ALLOWED:
        raise ConntrackHelperNotAllowed(helper=helper.helper)


def _save(db: Session, helper: ConntrackHelper) -> None:
    try:
        with db.begin_nested():
            db.add(helper)
            db.flush()
    except IntegrityError:
        params = {"router_id": helper.router_id, "protocol": helper.protocol,
                  "port": helper.port, "helper": helper.helper}
        raise errors.BadResourceRequest(
            "A duplicate conntrack helper entry with same attributes already exists, "
            f"conflicting values are {params}", "conntrack_helper") from None


def create_helper(db: Session, ctx: RequestContext, router_id: str, attrs: dict[str, Any]
                  ) -> ConntrackHelper:
    router = _router(db, ctx, router_id, "create_router_conntrack_helper")
    helper = ConntrackHelper(id=uuid_str(), router_id=router.id, protocol=attrs["protocol"],
                             port=attrs["port"], helper=attrs["helper"])
    _check(helper)
    _save(db, helper)
    return helper


def update_helper(db: Session, ctx: RequestContext, router_id: str, helper_id: str,
                  attrs: dict[str, Any]) -> ConntrackHelper:
    helper = get_helper(db, ctx, router_id, helper_id, "update_router_conntrack_helper")
    with db.no_autoflush:
        for key in ("protocol", "port", "helper"):
            if key in attrs:
                setattr(helper, key, attrs[key])
        _check(helper)
    _save(db, helper)
    return helper


def delete_helper(db: Session, ctx: RequestContext, router_id: str, helper_id: str) -> None:
    helper = get_helper(db, ctx, router_id, helper_id, "delete_router_conntrack_helper")
    db.delete(helper)
    db.flush()
