"""Who may name a device in a port's `device_id`: neutron's
`_enforce_device_owner_not_router_intf_or_device_id`, widened to servers.

A non-admin may not bind a port to another project's router (`network:router_*`
owners) or server (`compute:*` owners): that port would show in the victim's interface
list and outlive the device. A device that does not exist is not checked (as upstream).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors
from stackling.network.compute_hooks import compute

ROUTER_DEVICE_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                        "network:ha_router_replicated_interface", "network:router_gateway")


class DeviceIDNotOwnedByTenant(errors.Conflict):
    message = ("The following device_id %(device_id)s is not owned by your tenant or matches "
               "another tenants router.")


def _device_project(db: Session, device_owner: str, device_id: str) -> str | None:
    if device_owner in ROUTER_DEVICE_OWNERS:
        from stackling.network.l3.models import Router

        return db.scalar(select(Router.project_id).where(Router.id == device_id))
    if device_owner.startswith("compute:"):
        # compute registers the look-up (none without compute: no servers to protect)
        return compute().server_project(db, device_id)
    return None


def check_device_owner(db: Session, ctx: RequestContext, project_id: str,
                       device_owner: str | None, device_id: str | None) -> None:
    """409 DeviceIDNotOwnedByTenant when `device_id` is another project's router or server."""
    if ctx.is_admin or ctx.is_service or not device_owner or not device_id:
        return
    owner = _device_project(db, device_owner, device_id)
    if owner is not None and owner != project_id:
        raise DeviceIDNotOwnedByTenant(device_id=device_id)
