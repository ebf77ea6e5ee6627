"""The L3 exceptions (routers, floating IPs, auto-allocation, quotas), by their upstream
names and messages (neutron-lib's l3 exceptions, neutron's extraroute and auto_allocate
exceptions)."""

from __future__ import annotations

from typing import Any

from stackling.network import errors


class BadResourceRequest(errors.InvalidInput):
    """neutron-lib's `BadRequest(resource=..., msg=...)`: type `BadRequest`."""

    error_type = "BadRequest"
    message = "Bad %(resource)s request: %(msg)s."

    def __init__(self, msg: str, resource: str = "router") -> None:
        super().__init__(resource=resource, msg=msg)


def bad_router(msg: str) -> BadResourceRequest:
    return BadResourceRequest(msg, "router")


def bad_floatingip(msg: str) -> BadResourceRequest:
    return BadResourceRequest(msg, "floatingip")


class RouterNotFound(errors.NotFound):
    message = "Router %(router_id)s could not be found"


class RouterInUse(errors.InUse):
    message = "Router %(router_id)s %(reason)s"

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("reason", "still has ports")
        super().__init__(**kwargs)


class RouterInterfaceNotFound(errors.NotFound):
    message = "Router %(router_id)s does not have an interface with id %(port_id)s"


class RouterInterfaceNotFoundForSubnet(errors.NotFound):
    message = "Router %(router_id)s has no interface on subnet %(subnet_id)s"


class RouterInterfaceInUseByFloatingIP(errors.InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s cannot be "
               "deleted, as it is required by one or more floating IPs.")


class RouterInterfaceInUseByRoute(errors.InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s cannot be "
               "deleted, as it is required by one or more routes.")


class RouterExternalGatewayInUseByFloatingIp(errors.InUse):
    message = ("Gateway cannot be updated for router %(router_id)s, since a gateway to "
               "external network %(net_id)s is required by one or more floating IPs.")


class InvalidRoutes(errors.InvalidInput):
    message = "Invalid format for routes: %(routes)s, %(reason)s"


class RoutesExhausted(errors.BadRequest):
    error_type = "RoutesExhausted"
    message = ("Unable to complete operation for %(router_id)s. The number of routes "
               "exceeds the maximum %(quota)s.")


class PortInUse(errors.InUse):
    message = ("Unable to complete operation on port %(port_id)s for network %(net_id)s. "
               "Port already has an attached device %(device_id)s.")


class SubnetMismatchForPort(errors.BadRequest):
    error_type = "SubnetMismatchForPort"
    message = "Subnet on port %(port_id)s does not match the requested subnet %(subnet_id)s."


class FloatingIPNotFound(errors.NotFound):
    message = "Floating IP %(floatingip_id)s could not be found"


class ExternalGatewayForFloatingIPNotFound(errors.NotFound):
    message = ("External network %(external_network_id)s is not reachable from subnet "
               "%(subnet_id)s.  Therefore, cannot associate Port %(port_id)s with a "
               "Floating IP.")


class FloatingIPPortAlreadyAssociated(errors.InUse):
    message = ("Cannot associate floating IP %(floating_ip_address)s (%(fip_id)s) with port "
               "%(port_id)s using fixed IP %(fixed_ip)s, as that fixed IP already has a "
               "floating IP on external network %(net_id)s.")


class ExternalIpAddressExhausted(errors.BadRequest):
    error_type = "ExternalIpAddressExhausted"
    message = "Unable to find any IP address on external network %(net_id)s."


class AutoAllocationFailure(errors.Conflict):
    message = "Deployment error: %(reason)s."


class OverQuota(errors.Conflict):
    message = "Quota exceeded for resources: %(overs)s."


class QuotaNotAuthorized(errors.NotAuthorized):
    error_type = "NotAuthorized"
    message = "Only admin is authorized to access quotas for another project"
