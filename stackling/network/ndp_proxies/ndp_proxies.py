"""NDP proxies (`l3-ndp-proxy`) and the router's `enable_ndp_proxy`
(`router-extend-ndp-proxy`), as Neutron's NDP proxy plugin.

A proxy names an internal port and one of its IPv6 addresses on a subnet the router has
an interface on; the router must have `enable_ndp_proxy`, which needs an external gateway
on a network with an IPv6 subnet and an IPv6 address scope (and, on update, an IPv6
address on the gateway port). The internal network's IPv6 address scope must be the
external network's (409 `AddressScopeConflict`). While proxies exist, the router's
gateway, its IPv6 gateway addresses and the interfaces on their subnets stay (409s); a
proxy goes with its port. No dataplane: nothing answers neighbour solicitations (README).
"""

from __future__ import annotations

from typing import Any

import netaddr
from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    ID,
    PROJECT,
    REQUIRED,
    Attr,
    integer,
    ip_or_none,
    string,
    uuid_value,
)
from stackling.network.core import networks, ports
from stackling.network.core.models import IPAllocation, Port
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import routers
from stackling.network.l3.models import Router
from stackling.network.ndp_proxies.models import NDPProxy
from stackling.network.querying import Listing

EXTENSIONS.append(Extension("l3-ndp-proxy", "L3 NDP Proxy",
                            "Router support for L3 NDP proxy", "2021-08-03T10:00:00-00:00"))
EXTENSIONS.append(Extension("router-extend-ndp-proxy", "Expose NDP proxy attribute for "
                            "router", "Expose NDP proxy attribute for router",
                            "2021-08-03T10:00:00-00:00"))

POLICIES: dict[str, str] = {
    "create_ndp_proxy": pol.MEMBER,
    "get_ndp_proxy": pol.READER,
    "update_ndp_proxy": pol.MEMBER,
    "delete_ndp_proxy": pol.MEMBER,
    "create_router:enable_ndp_proxy": pol.MEMBER,
    "update_router:enable_ndp_proxy": pol.MEMBER,
}
V6 = 6


class NDPProxyNotFound(errors.NotFound):
    message = "Ndp proxy %(id)s could not be found."


class RouterGatewayInUseByNDPProxy(errors.Conflict):
    message = ("Unable to unset external gateway of router %(router_id)s, There are one or "
               "more ndp proxies still in use on the router.")


class RouterInterfaceInUseByNDPProxy(errors.Conflict):
    message = ("Unable to remove subnet %(subnet_id)s from router %(router_id)s, There are "
               "one or more ndp proxies still in use on the subnet.")


class AddressScopeConflict(errors.Conflict):
    message = ("The IPv6 address scope %(ext_address_scope)s of external network conflict "
               "with internal network's IPv6 address scope %(internal_address_scope)s.")


class RouterGatewayNotValid(errors.Conflict):
    message = "Can not enable ndp proxy on router %(router_id)s, %(reason)s."


class RouterNDPProxyNotEnable(errors.Conflict):
    message = ("The enable_ndp_proxy parameter of router %(router_id)s must be set as True "
               "while create ndp proxy entry on it.")


class PortUnreachableRouter(errors.Conflict):
    message = "The port %(port_id)s cannot reach the router %(router_id)s by IPv6 subnet."


class InvalidAddress(errors.BadRequest):
    message = "The address %(address)s is invalid, reason: %(reason)s."


class RouterIPv6GatewayInUse(errors.Conflict):
    message = ("Can't remove the IPv6 subnet from external gateway of router %(router_id)s, "
               "the IPv6 subnet in use by the router's ndp proxy.")


ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": Attr(post=True, put=True, default="", convert=string(255), filter=True, sort=True),
    "description": Attr(post=True, put=True, default="", convert=string(255), filter=True,
                        sort=True),
    "router_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True, sort=True),
    "port_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True, sort=True),
    "ip_address": Attr(post=True, default=None, convert=ip_or_none, filter=True, sort=True),
    "created_at": Attr(),
    "updated_at": Attr(),
    "revision_number": Attr(filter=True, sort=True, query=integer()),
}
_N = NDPProxy
LISTING = Listing(attrs=ATTRS, columns={
    "id": _N.id, "project_id": _N.project_id, "tenant_id": _N.project_id, "name": _N.name,
    "description": _N.description, "router_id": _N.router_id, "port_id": _N.port_id,
    "ip_address": _N.ip_address, "revision_number": _N.revision_number}, id_column=_N.id)


def view(p: NDPProxy) -> dict[str, Any]:
    return {"id": p.id, "name": p.name, "description": p.description,
            "project_id": p.project_id, "tenant_id": p.project_id, "router_id": p.router_id,
            "port_id": p.port_id, "ip_address": p.ip_address,
            "created_at": standard.iso(p.created_at), "updated_at": standard.iso(p.updated_at),
            "revision_number": p.revision_number}


def _target(p: NDPProxy) -> dict[str, Any]:
    return {"project_id": p.project_id, "tenant_id": p.project_id}


def _admin(ctx: RequestContext) -> RequestContext:
    return ctx if ctx.is_service else ctx.elevated()


# ------------------------------------------------------------------ what the router needs
def _v6_ips(db: Session, port_ids: list[str]) -> list[tuple[str, str]]:
    """(subnet_id, address) of the IPv6 fixed IPs of `port_ids`, in order."""
    if not port_ids:
        return []
    rows = db.execute(select(IPAllocation.subnet_id, IPAllocation.ip_address)
                      .where(IPAllocation.port_id.in_(port_ids))
                      .order_by(IPAllocation.port_id, IPAllocation.ordinal))
    return [(s, ip) for s, ip in rows if netaddr.IPAddress(ip).version == V6]


def _v6_scope(db: Session, ctx: RequestContext, network_id: str) -> str | None:
    net = networks.get_visible(db, _admin(ctx), network_id)
    return networks.render(db, _admin(ctx), [net])[0]["ipv6_address_scope"]


def _ext_supports_ndp(db: Session, ctx: RequestContext, network_id: str) -> bool:
    """Neutron's _check_ext_gw_network: an IPv6 address scope and an IPv6 subnet."""
    if not _v6_scope(db, ctx, network_id):
        return False
    return any(s.ip_version == V6 for s in ports.network_subnets(db, network_id))


def _gateway_supports_ndp(db: Session, ctx: RequestContext, router: Router) -> bool:
    """Neutron's _gateway_is_valid: also an IPv6 address on the gateway port."""
    if not router.gw_port_id or not router.gw_network_id:
        return False
    return (_ext_supports_ndp(db, ctx, router.gw_network_id)
            and bool(_v6_ips(db, [router.gw_port_id])))


def write_router(db: Session, ctx: RequestContext, router: Router, attrs: dict[str, Any],
                 created: bool) -> None:
    """routers.ROUTER_WRITERS: `enable_ndp_proxy` on a create or update (after its
    gateway change)."""
    state = attrs.get("enable_ndp_proxy")
    if state is not None:
        pol.authorize(db, ctx, f"{'create' if created else 'update'}_router:enable_ndp_proxy",
                      routers.target(router))
    if created:
        gw = attrs.get("external_gateway_info")
        if not gw and state is True:
            raise RouterGatewayNotValid(router_id=router.id, reason="The request body not "
                                        "contain external gateway information")
        if state is None and not gw or gw and state is False:
            return
        if state is True and router.gw_network_id and not _ext_supports_ndp(
                db, ctx, router.gw_network_id):
            raise RouterGatewayNotValid(
                router_id=router.id, reason=f"The external network {router.gw_network_id} "
                "don't support IPv6 ndp proxy, the network has no IPv6 subnets or has no "
                "IPv6 address scope")
        # unspecified: enable_ndp_proxy_by_default, upstream's default False
        router.enable_ndp_proxy = state is True
        return
    if state is False:
        router.enable_ndp_proxy = False
        return
    supported = _gateway_supports_ndp(db, ctx, router)
    if state is True and not supported:
        raise RouterGatewayNotValid(
            router_id=router.id, reason="The router has no external gateway or the external "
            "gateway port has no IPv6 address or IPv6 address scope")
    # unspecified: as upstream, the state follows whether the gateway supports it
    router.enable_ndp_proxy = supported if state is None else state


def _has_proxies(db: Session, router_id: str) -> bool:
    return db.scalar(select(_N.id).where(_N.router_id == router_id).limit(1)) is not None


def check_gateway_remove(db: Session, router: Router, attrs: dict[str, Any]) -> None:
    """routers.GATEWAY_REMOVE_CHECKS (upstream's ROUTER_GATEWAY BEFORE_DELETE)."""
    if _has_proxies(db, router.id):
        raise RouterGatewayInUseByNDPProxy(router_id=router.id)
    if attrs.get("enable_ndp_proxy"):
        raise RouterGatewayNotValid(router_id=router.id,
                                    reason="The router's external gateway will be unset")
    router.enable_ndp_proxy = False  # upstream drops the state with the gateway


def check_gateway_ips(db: Session, router: Router, ext_ips: list[dict[str, str]]) -> None:
    """routers.GATEWAY_IPS_CHECKS: an NDP-proxying router keeps an IPv6 gateway address."""
    if not router.enable_ndp_proxy:
        return
    if any(f.get("ip_address") and netaddr.IPAddress(f["ip_address"]).version == V6
           for f in ext_ips):
        return
    subnet_ids = {f["subnet_id"] for f in ext_ips if f.get("subnet_id")}
    if any(s.ip_version == V6 for s in ports.network_subnets(db, router.gw_network_id or "")
           if s.id in subnet_ids):
        return
    raise RouterIPv6GatewayInUse(router_id=router.id)


def check_interface_remove(db: Session, router: Router, subnet: Any) -> None:
    """routers.INTERFACE_REMOVE_CHECKS: no proxy's address on the subnet."""
    rows = db.execute(select(_N.ip_address, _N.port_id).where(_N.router_id == router.id))
    for ip, port_id in rows:
        for sid, addr in _v6_ips(db, [port_id]):
            if sid == subnet.id and netaddr.IPAddress(addr) == netaddr.IPAddress(ip):
                raise RouterInterfaceInUseByNDPProxy(router_id=router.id, subnet_id=subnet.id)


routers.ROUTER_WRITERS.append(write_router)
routers.GATEWAY_REMOVE_CHECKS.append(check_gateway_remove)
routers.GATEWAY_IPS_CHECKS.append(check_gateway_ips)
routers.INTERFACE_REMOVE_CHECKS.append(check_interface_remove)


# ------------------------------------------------------------------ NDP proxies
def list_ndp_proxies(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(NDPProxy)
    if not (ctx.is_admin or ctx.is_service):
        stmt = stmt.where(_N.project_id == ctx.project_id)
        if not pol.allowed(db, ctx, "get_ndp_proxy", {"project_id": ctx.project_id}):
            stmt = stmt.where(_N.id.is_(None))
    return LISTING.page(db, stmt, params)


def get_ndp_proxy(db: Session, ctx: RequestContext, proxy_id: str,
                  action: str = "get_ndp_proxy") -> NDPProxy:
    proxy = db.get(NDPProxy, proxy_id)
    if proxy is None or not pol.allowed(db, ctx, "get_ndp_proxy", _target(proxy)):
        raise NDPProxyNotFound(id=proxy_id)
    if action != "get_ndp_proxy":
        pol.authorize(db, ctx, action, _target(proxy))
    return proxy


def _pick_address(port: Port, router_id: str, requested: str | None,
                  port_v6: list[tuple[str, str]], router_subnets: set[str]) -> str:
    """Neutron's _check_port: the proxied address of `port`."""
    if not port_v6:
        raise errors.BadResourceRequest(
            f"Requested port {port.id} must allocate one IPv6 address at least", "ndp_proxy")
    if requested is None:
        for sid, addr in port_v6:
            if sid in router_subnets:
                return addr
        raise PortUnreachableRouter(port_id=port.id, router_id=router_id)
    want = netaddr.IPAddress(requested)
    sid = next((s for s, a in port_v6 if netaddr.IPAddress(a) == want), None)
    if sid is None:
        raise InvalidAddress(address=requested,
                             reason=f"This address not belong to the port {port.id}")
    if sid not in router_subnets:
        raise InvalidAddress(address=requested,
                             reason=f"This address cannot reach the router {router_id}")
    return str(want)


def create_ndp_proxy(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> NDPProxy:
    project_id = attrs["project_id"]
    pol.authorize(db, ctx, "create_ndp_proxy", {"project_id": project_id})
    router_id = attrs["router_id"]
    port = ports.get_visible(db, ctx, attrs["port_id"])
    # the router's ports on the port's network, as upstream asks before the router
    router_ports = list(db.scalars(
        select(Port.id).where(Port.device_id == router_id, Port.network_id == port.network_id)))
    if not router_ports:
        raise PortUnreachableRouter(router_id=router_id, port_id=port.id)
    router = routers.get_visible(db, ctx, router_id, for_update=True)
    if not (router.gw_port_id and router.enable_ndp_proxy):
        raise RouterNDPProxyNotEnable(router_id=router.id)
    ext_scope = _v6_scope(db, ctx, router.gw_network_id or "")
    router_subnets = {s for s, _ in _v6_ips(db, router_ports)}
    address = _pick_address(port, router.id, attrs.get("ip_address"),
                            _v6_ips(db, [port.id]), router_subnets)
    internal_scope = _v6_scope(db, ctx, port.network_id)
    if ext_scope != internal_scope:
        raise AddressScopeConflict(ext_address_scope=ext_scope,
                                   internal_address_scope=internal_scope)
    now = utcnow()
    proxy = NDPProxy(project_id=project_id, name=attrs.get("name", ""),
                     description=attrs.get("description", ""), router_id=router.id,
                     port_id=port.id, ip_address=address, created_at=now, updated_at=now,
                     revision_number=0)
    db.add(proxy)
    db.flush()
    return proxy


def update_ndp_proxy(db: Session, ctx: RequestContext, proxy_id: str,
                     attrs: dict[str, Any]) -> NDPProxy:
    proxy = get_ndp_proxy(db, ctx, proxy_id, "update_ndp_proxy")
    for key in ("name", "description"):
        if key in attrs:
            setattr(proxy, key, attrs[key])
    standard.touch(proxy)
    db.flush()
    return proxy


def delete_ndp_proxy(db: Session, ctx: RequestContext, proxy_id: str) -> None:
    proxy = get_ndp_proxy(db, ctx, proxy_id, "delete_ndp_proxy")
    # the router's lock: a gateway or interface removal checks under it
    routers.get_visible(db, _admin(ctx), proxy.router_id, for_update=True)
    db.delete(proxy)
    db.flush()
