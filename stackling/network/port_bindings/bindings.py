"""Port bindings (`binding-extended`), as Neutron's ML2 plugin serves them: a compute
port has one ACTIVE binding (its `binding:host_id`, `binding:vnic_type`,
`binding:profile`, `binding:vif_type`, `binding:vif_details`) and any number of INACTIVE
ones, one per host (Nova's live migration: the destination's binding is made INACTIVE,
activated once the guest runs there, and the source's, INACTIVE by then, deleted).

Activation goes through `ports.update_port` (as an admin), so everything that follows a
port's host (routed segments, trunk sub-ports, placement, the dataplane) follows an
activation too; a host set through `binding:host_id` (compute's own moves) drops an
INACTIVE binding for that host, so a port never has both. Writes of one port's bindings
take the port's row lock.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import REQUIRED, Attr, any_dict, one_of, string
from stackling.network.core import ports
from stackling.network.core.models import Port
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.port_bindings.models import PortBinding
from stackling.network.segments import routed

EXTENSIONS.append(Extension("binding-extended", "Port Bindings Extended",
                            "Expose port bindings of a virtual port to external application",
                            "2017-07-17T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "get_port_binding": pol.SERVICE,
    "create_port_binding": pol.SERVICE,
    "delete_port_binding": pol.SERVICE,
    "activate": pol.SERVICE,
}
ACTIVE, INACTIVE = "ACTIVE", "INACTIVE"
COMPUTE = "compute:"


class PortBindingNotFound(errors.NotFound):
    message = "Binding for port %(port_id)s for host %(host)s could not be found."


class PortBindingAlreadyExists(errors.Conflict):
    message = "Binding for port %(port_id)s on host %(host)s already exists."


class PortBindingAlreadyActive(errors.Conflict):
    message = "Binding for port %(port_id)s on host %(host)s is already active."


ATTRS: dict[str, Attr] = {
    "host": Attr(post=True, default=REQUIRED, convert=string(255), filter=True),
    "vnic_type": Attr(post=True, default="normal", convert=one_of(*ports.VNIC_TYPES),
                      filter=True),
    "profile": Attr(post=True, convert=any_dict),
    "vif_type": Attr(filter=True),
    "vif_details": Attr(),
    "status": Attr(filter=True),
}
FILTERS = ("host", "vnic_type", "vif_type", "status")


def _view(host: str, vnic: str, vif_type: str, profile: Any, details: Any,
          status: str) -> dict[str, Any]:
    return {"host": host, "vif_type": vif_type, "vnic_type": vnic, "status": status,
            "profile": profile or {}, "vif_details": details or {}}


def active_view(port: Port) -> dict[str, Any]:
    return _view(port.binding_host_id, port.binding_vnic_type, port.binding_vif_type,
                 port.binding_profile, port.binding_vif_details, ACTIVE)


def inactive_view(b: PortBinding) -> dict[str, Any]:
    return _view(b.host, b.vnic_type, b.vif_type, b.profile, b.vif_details, INACTIVE)


def _admin(ctx: RequestContext) -> RequestContext:
    return ctx if ctx.is_service else ctx.elevated()


def _allowed(db: Session, ctx: RequestContext, action: str, port: Port) -> bool:
    return pol.allowed(db, ctx, action, {"project_id": port.project_id,
                                         "tenant_id": port.project_id})


def _compute_port(db: Session, ctx: RequestContext, port_id: str, *,
                  lock: bool = False) -> Port:
    """The port (404 PortNotFound when the caller cannot see it), a compute port (400)."""
    port = ports.get_visible(db, ctx, port_id)
    if lock:
        port = db.get_one(Port, port.id, with_for_update=True, populate_existing=True)
    if not port.device_owner.startswith(COMPUTE):
        raise errors.BadResourceRequest(
            f"Invalid port {port.id}. Operation only valid on compute ports", "port")
    return port


def _inactive(db: Session, port_id: str, host: str) -> PortBinding | None:
    return db.get(PortBinding, (port_id, host))


# ------------------------------------------------------------------ reads
def list_bindings(db: Session, ctx: RequestContext, port_id: str,
                  filters: dict[str, list[str]]) -> list[dict[str, Any]]:
    port = _compute_port(db, ctx, port_id)
    if not _allowed(db, ctx, "get_port_binding", port):
        return []  # filtered out by the policy, as upstream
    out = [active_view(port)] if port.binding_host_id else []
    out += [inactive_view(b) for b in db.scalars(
        select(PortBinding).where(PortBinding.port_id == port.id).order_by(PortBinding.host))]
    return [b for b in out
            if all(str(b[k]) in values for k, values in filters.items() if k in FILTERS)]


def get_binding(db: Session, ctx: RequestContext, port_id: str, host: str,
                action: str = "get_port_binding") -> tuple[Port, dict[str, Any]]:
    port = _compute_port(db, ctx, port_id, lock=action != "get_port_binding")
    if not _allowed(db, ctx, "get_port_binding", port):
        raise PortBindingNotFound(port_id=port.id, host=host)
    if action != "get_port_binding":
        pol.authorize(db, ctx, action, {"project_id": port.project_id,
                                        "tenant_id": port.project_id})
    if host and host == port.binding_host_id:
        return port, active_view(port)
    row = _inactive(db, port.id, host)
    if row is None:
        raise PortBindingNotFound(port_id=port.id, host=host)
    return port, inactive_view(row)


# ------------------------------------------------------------------ writes
def create_binding(db: Session, ctx: RequestContext, port_id: str,
                   attrs: dict[str, Any]) -> dict[str, Any]:
    # the policy first (403 for a project), then the port, as upstream
    pol.authorize(db, ctx, "create_port_binding", {"project_id": ctx.project_id})
    port = _compute_port(db, _admin(ctx), port_id, lock=True)
    host = attrs["host"]
    if not host:
        raise errors.BadResourceRequest("Invalid host: an empty string", "binding")
    if host == port.binding_host_id or _inactive(db, port.id, host) is not None:
        raise PortBindingAlreadyExists(port_id=port.id, host=host)
    vnic, profile = attrs.get("vnic_type", "normal"), attrs.get("profile") or {}
    if not port.binding_host_id:
        # no ACTIVE binding: this one is, as the port's own binding
        port = ports.update_port(db, _admin(ctx), port.id, {
            "binding:host_id": host, "binding:vnic_type": vnic, "binding:profile": profile})
        return active_view(port)
    # a routed network's port binds only where its addresses' segment reaches (upstream's
    # failed binding is a 500 PortBindingError; here the update's 409)
    if routed.is_routed(db, port.network_id):
        routed.check_host_compatible(db, port.id, port.network_id, host)
    # bound on that host as the port would be (a dry run of the binding on a copy)
    shadow = Port(binding_host_id="")
    ports.bind(shadow, host)
    row = PortBinding(port_id=port.id, host=host, vnic_type=vnic, profile=profile,
                      vif_type=shadow.binding_vif_type,
                      vif_details=dict(shadow.binding_vif_details))
    try:
        with db.begin_nested():
            db.add(row)
    except IntegrityError:  # the key: one binding per (port, host)
        raise PortBindingAlreadyExists(port_id=port.id, host=host) from None
    return inactive_view(row)


def activate(db: Session, ctx: RequestContext, port_id: str, host: str) -> dict[str, Any]:
    port = _compute_port(db, _admin(ctx), port_id, lock=True)
    if not _allowed(db, ctx, "get_port_binding", port):
        raise PortBindingNotFound(port_id=port.id, host=host)
    pol.authorize(db, ctx, "activate", {"project_id": port.project_id,
                                        "tenant_id": port.project_id})
    if host == port.binding_host_id:
        raise PortBindingAlreadyActive(port_id=port.id, host=host)
    row = _inactive(db, port.id, host)
    if row is None:
        raise PortBindingNotFound(port_id=port.id, host=host)
    old = (port.binding_host_id, port.binding_vnic_type, port.binding_vif_type,
           dict(port.binding_profile or {}), dict(port.binding_vif_details or {}))
    vnic, profile = row.vnic_type, dict(row.profile or {})
    db.delete(row)
    db.flush()
    port = ports.update_port(db, _admin(ctx), port.id, {
        "binding:host_id": host, "binding:vnic_type": vnic, "binding:profile": profile})
    if old[0]:  # the binding it replaces stays, INACTIVE
        db.add(PortBinding(port_id=port.id, host=old[0], vnic_type=old[1], vif_type=old[2],
                           profile=old[3], vif_details=old[4]))
        db.flush()
    return active_view(port)


def delete_binding(db: Session, ctx: RequestContext, port_id: str, host: str) -> None:
    port, binding = get_binding(db, ctx, port_id, host, "delete_port_binding")
    if binding["status"] == ACTIVE:
        # the port loses its binding (upstream deletes its ACTIVE row the same way)
        ports.update_port(db, _admin(ctx), port.id, {"binding:host_id": ""})
        return
    db.execute(delete(PortBinding).where(PortBinding.port_id == port.id,
                                         PortBinding.host == host))
    db.flush()


def follow_host(db: Session, ctx: RequestContext, port: Port, attrs: dict[str, Any],
                created: bool) -> None:
    """ports.ATTR_WRITERS: a port bound to a host (compute's moves set `binding:host_id`)
    has no INACTIVE binding there any more."""
    if created or not attrs.get("binding:host_id"):
        return
    db.execute(delete(PortBinding).where(PortBinding.port_id == port.id,
                                         PortBinding.host == port.binding_host_id))


ports.ATTR_WRITERS.append(follow_host)
