"""Network logs (`logging`), as Neutron's logging plugin with its Open vSwitch driver:
`resource_type` `security_group` (the one loggable type), `event` ALL / ACCEPT / DROP,
an optional security group (`resource_id`) and port (`target_id`) the caller sees; with
both, the port must be in the group. Policies are Neutron's: admins and the project's
managers. No packets are logged: the objects are stored and shown (README)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    ID,
    PROJECT,
    REQUIRED,
    Attr,
    boolean,
    one_of,
    string,
    uuid_value,
)
from stackling.network.core import ports, security_groups
from stackling.network.core.models import PortSecurityGroup
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.logapi.models import Log
from stackling.network.querying import Listing

EXTENSIONS.append(Extension(
    "logging", "Logging API Extension",
    "Provides a logging API for resources such as security group and firewall.",
    "2017-01-01T10:00:00-00:00"))

# neutron-lib's ADMIN_OR_PROJECT_MANAGER
MANAGER = "rule:context_is_admin or (role:manager and project_id:%(project_id)s)"
POLICIES: dict[str, str] = {
    "get_loggable_resource": MANAGER,
    "create_log": MANAGER,
    "get_log": MANAGER,
    "update_log": MANAGER,
    "delete_log": MANAGER,
}
LOGGABLE_TYPES = ("security_group",)  # the Open vSwitch driver's
VNIC_TYPES = ("normal",)  # ports that driver logs on (vif types ovs / vhostuser)
VIF_TYPES = ("ovs", "vhostuser")


class LogResourceNotFound(errors.NotFound):
    message = "Log resource %(log_id)s could not be found."


class InvalidLogResourceType(errors.InvalidInput):
    message = "Invalid log resource_type: %(resource_type)s."


class LoggingTypeNotSupported(errors.Conflict):
    message = "Logging type %(log_type)s is not supported on port %(port_id)s."


class TargetResourceNotFound(errors.NotFound):
    message = "Target resource %(target_id)s could not be found."


class ResourceNotFound(errors.NotFound):
    message = "Resource %(resource_id)s could not be found."


class InvalidResourceConstraint(errors.InvalidInput):
    message = ("Invalid resource constraint between resource (%(resource)s "
               "%(resource_id)s) and target resource (%(target_resource)s %(target_id)s).")


def _uuid_or_none(value: Any) -> str | None:
    return None if value is None else uuid_value(value)


ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": Attr(post=True, put=True, default="", convert=string(255), filter=True, sort=True),
    "description": Attr(post=True, put=True, default="", convert=string(255), filter=True,
                        sort=True),
    "resource_type": Attr(post=True, default=REQUIRED, convert=string(36), filter=True,
                          sort=True),
    "resource_id": Attr(post=True, default=None, convert=_uuid_or_none, filter=True,
                        sort=True),
    "event": Attr(post=True, default="ALL", convert=one_of("ACCEPT", "DROP", "ALL"),
                  filter=True),
    "target_id": Attr(post=True, default=None, convert=_uuid_or_none, filter=True, sort=True),
    "enabled": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                    sort=True),
    "created_at": Attr(),
    "updated_at": Attr(),
    "revision_number": Attr(),
}
_L = Log
LISTING = Listing(attrs=ATTRS, columns={
    "id": _L.id, "project_id": _L.project_id, "tenant_id": _L.project_id, "name": _L.name,
    "description": _L.description, "resource_type": _L.resource_type,
    "resource_id": _L.resource_id, "event": _L.event, "target_id": _L.target_id,
    "enabled": _L.enabled}, id_column=_L.id)


def view(log: Log) -> dict[str, Any]:
    return {"id": log.id, "project_id": log.project_id, "tenant_id": log.project_id,
            "name": log.name, "description": log.description,
            "resource_type": log.resource_type, "resource_id": log.resource_id,
            "event": log.event, "target_id": log.target_id, "enabled": log.enabled,
            "created_at": standard.iso(log.created_at),
            "updated_at": standard.iso(log.updated_at),
            "revision_number": log.revision_number}


def loggable_resources(db: Session, ctx: RequestContext) -> list[dict[str, str]]:
    if not pol.allowed(db, ctx, "get_loggable_resource", {"project_id": ctx.project_id}):
        return []
    return [{"type": t} for t in LOGGABLE_TYPES]


def list_logs(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Log)
    if not (ctx.is_admin or ctx.is_service):
        if pol.allowed(db, ctx, "get_log", {"project_id": ctx.project_id}):
            stmt = stmt.where(_L.project_id == ctx.project_id)
        else:
            stmt = stmt.where(_L.id.is_(None))
    return LISTING.page(db, stmt, params)


def get_log(db: Session, ctx: RequestContext, log_id: str, action: str = "get_log") -> Log:
    log = db.get(Log, log_id)
    target = {"project_id": log.project_id} if log is not None else {}
    if log is None or not pol.allowed(db, ctx, "get_log", target):
        raise LogResourceNotFound(log_id=log_id)
    if action != "get_log":
        pol.authorize(db, ctx, action, target)
    return log


def _validate(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> None:
    """upstream's ResourceValidateRequest for `security_group`, with the caller's view."""
    if attrs["resource_type"] not in LOGGABLE_TYPES:
        raise InvalidLogResourceType(resource_type=attrs["resource_type"])
    sg_id, port_id = attrs.get("resource_id"), attrs.get("target_id")
    if sg_id:
        try:
            security_groups.get_visible(db, ctx, sg_id, rules=False)
        except errors.SecurityGroupNotFound:
            raise ResourceNotFound(resource_id=sg_id) from None
    if port_id:
        try:
            port = ports.get_visible(db, ctx, port_id)
        except errors.PortNotFound:
            raise TargetResourceNotFound(target_id=port_id) from None
        bound = port.binding_vif_type not in ("unbound", "binding_failed")
        if not (port.binding_vif_type in VIF_TYPES if bound
                else port.binding_vnic_type in VNIC_TYPES):
            raise LoggingTypeNotSupported(log_type="security_group", port_id=port_id)
    if sg_id and port_id and db.get(PortSecurityGroup, (port_id, sg_id)) is None:
        raise InvalidResourceConstraint(resource="security_group", resource_id=sg_id,
                                        target_resource="port", target_id=port_id)


def create_log(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Log:
    pol.authorize(db, ctx, "create_log", {"project_id": attrs["project_id"]})
    _validate(db, ctx, attrs)
    now = utcnow()
    log = Log(id=uuid_str(), project_id=attrs["project_id"], name=attrs.get("name", ""),
              description=attrs.get("description", ""), resource_type=attrs["resource_type"],
              resource_id=attrs.get("resource_id"), target_id=attrs.get("target_id"),
              event=attrs.get("event", "ALL"), enabled=attrs.get("enabled", True),
              created_at=now, updated_at=now, revision_number=0)
    db.add(log)
    db.flush()
    return log


def update_log(db: Session, ctx: RequestContext, log_id: str, attrs: dict[str, Any]) -> Log:
    log = get_log(db, ctx, log_id, "update_log")
    for key in ("name", "description", "enabled"):
        if key in attrs:
            setattr(log, key, attrs[key])
    standard.touch(log)
    db.flush()
    return log


def delete_log(db: Session, ctx: RequestContext, log_id: str) -> None:
    db.delete(get_log(db, ctx, log_id, "delete_log"))
    db.flush()
