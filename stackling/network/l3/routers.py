"""Routers (`router`, `ext-gw-mode`, `extraroute`): the external gateway, interfaces on
subnets, and extra routes.

A router's ports are ordinary core ports (created and deleted through `ports`, their
addresses through IPAM) recorded in `network_router_port`: the gateway
(`network:router_gateway`, owned by no project) and the interfaces
(`network:router_interface`, owned by the router's project). Every change to a router's
ports first takes the router's row lock, so the "one port per subnet, no overlapping
CIDRs" checks hold under concurrency; a router row cannot go while a router port row
still references it (foreign key without cascade).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import netaddr
from sqlalchemy import (
    Integer,
    String,
    bindparam,
    cast,
    delete,
    func,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import insert_absent, utcnow
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    NAME,
    STANDARD,
    Attr,
    Invalid,
    boolean,
    cidr,
    dict_of,
    ip_address,
    list_of,
    string,
    uuid_value,
)
from stackling.network.core import networks, ports, subnets
from stackling.network.core.models import IPAllocation, Port, Subnet, Tag
from stackling.network.l3.models import FloatingIP, Router, RouterPort, RouterRoute
from stackling.network.querying import Listing

GATEWAY = "network:router_gateway"
INTERFACE = "network:router_interface"
MAX_ROUTES = 30  # neutron's [DEFAULT] max_routes

# What extension modules (NDP proxies, ...) check or add, as upstream's callbacks:
# (db, ctx, router, attrs, created) -> None after a create/update applied its gateway;
ROUTER_WRITERS: list[Callable[[Session, RequestContext, Any, dict[str, Any], bool], None]] = []
# (db, router, attrs) -> None before the gateway goes (attrs: the update's, or {});
GATEWAY_REMOVE_CHECKS: list[Callable[[Session, Any, dict[str, Any]], None]] = []
# (db, router, external_fixed_ips) -> None before the gateway's addresses change;
GATEWAY_IPS_CHECKS: list[Callable[[Session, Any, list[dict[str, str]]], None]] = []
# (db, router, subnet) -> None before an interface on the subnet goes. Each raises to refuse.
INTERFACE_REMOVE_CHECKS: list[Callable[[Session, Any, Any], None]] = []
# (db, routers, rendered views) -> None adds attributes (one query per page).
RENDER_EXTENSIONS: list[Callable[[Session, Sequence[Any], list[dict[str, Any]]], None]] = []


# ------------------------------------------------------------------ attributes
def _fixed_ips(value: Any) -> list[dict[str, str]]:
    return list_of(dict_of({"subnet_id": (uuid_value, False),
                            "ip_address": (ip_address, False)}))(value)


def _gateway_info(value: Any) -> dict[str, Any] | None:
    """`external_gateway_info`: None or {} clears the gateway."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise Invalid(f"'{value}' is not a dictionary")
    if not value:
        return {}
    return dict_of({"network_id": (uuid_value, True), "enable_snat": (boolean, False),
                    "external_fixed_ips": (_fixed_ips, False)})(value)


def _routes(value: Any) -> list[dict[str, str]]:
    routes = list_of(dict_of({"destination": (cidr, True), "nexthop": (ip_address, True)}),
                     nullable_as_empty=True)(value)
    out, seen = [], set()
    for route in routes:
        dest = str(netaddr.IPNetwork(route["destination"]).cidr)
        key = (dest, route["nexthop"])
        if key in seen:
            raise Invalid(f"Duplicate hostroute '{route}'")
        seen.add(key)
        out.append({"destination": dest, "nexthop": route["nexthop"]})
    return out


def _boolean_or_none(value: Any) -> bool | None:
    """neutron-lib's convert_to_boolean_if_not_none (`ha`, `distributed`: null is the
    default)."""
    return None if value is None else boolean(value)


ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": NAME,
    "description": DESCRIPTION,
    "admin_state_up": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                           sort=True),
    "status": Attr(filter=True, sort=True),
    "external_gateway_info": Attr(post=True, put=True, convert=_gateway_info),
    "routes": Attr(put=True, convert=_routes),
    "distributed": Attr(post=True, put=True, convert=_boolean_or_none, filter=True,
                        query=boolean),
    "ha": Attr(post=True, put=True, convert=_boolean_or_none, filter=True, query=boolean),
    "availability_zone_hints": Attr(post=True, convert=list_of(string(255))),
    "availability_zones": Attr(),
    "flavor_id": Attr(post=True, convert=uuid_value, filter=True, sort=True),
    "enable_ndp_proxy": Attr(post=True, put=True, convert=boolean),
}


LISTING = Listing(
    attrs=ATTRS,
    columns={"id": Router.id, "name": Router.name, "description": Router.description,
             "admin_state_up": Router.admin_state_up, "status": Router.status,
             "project_id": Router.project_id, "tenant_id": Router.project_id,
             "revision_number": Router.revision_number, "ha": Router.ha,
             "distributed": Router.distributed, "flavor_id": Router.flavor_id},
    id_column=Router.id,
    readable=("get_router", ("distributed", "ha")),
)


# ------------------------------------------------------------------ visibility and views
def _visible(ctx: RequestContext) -> Any:
    if ctx.is_admin or ctx.is_service:
        return None
    return Router.project_id == ctx.project_id


def get_visible(db: Session, ctx: RequestContext, router_id: str, *,
                for_update: bool = False) -> Router:
    """The router, or 404 RouterNotFound if it does not exist or is not the caller's.

    `for_update` takes its row lock: changes to one router's ports are serialised."""
    router = db.get(Router, router_id, with_for_update=True, populate_existing=True) \
        if for_update else db.get(Router, router_id)
    if router is None or not (ctx.is_admin or ctx.is_service
                              or router.project_id == ctx.project_id):
        raise errors.RouterNotFound(router_id=router_id)
    return router


def target(router: Router) -> dict[str, Any]:
    return {"project_id": router.project_id, "tenant_id": router.project_id}


def list_routers(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Router)
    clause = _visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def render(db: Session, ctx: RequestContext, routers: Sequence[Router]
           ) -> list[dict[str, Any]]:
    """API dicts for `routers` (three queries per page, whatever its size)."""
    if not routers:
        return []
    hide = pol.ReadFilter(db, ctx, "get_router", ("distributed", "ha"))
    known = standard.take_known(routers)
    if known is not None:  # just created: nothing to read back
        made = [hide.apply(view(r, *k)) for r, k in zip(routers, known, strict=True)]
        for extend in RENDER_EXTENSIONS:
            extend(db, routers, made)
        return made
    gw_ips: dict[str, list[dict[str, str]]] = {r.gw_port_id: [] for r in routers
                                               if r.gw_port_id}
    routes: dict[str, list[dict[str, str]]] = {r.id: [] for r in routers}
    tags: dict[str, list[str]] = {r.id: [] for r in routers}
    for i in range(0, len(routers), 500):  # one statement per 500: gateway IPs, routes, tags
        chunk = routers[i:i + 500]
        for kind, owner, a, b, _ in db.execute(_PARTS, {
                "ids": [r.id for r in chunk],
                "ports": [r.gw_port_id for r in chunk if r.gw_port_id]}):
            if kind == 0:
                gw_ips[owner].append({"subnet_id": a, "ip_address": b})
            elif kind == 1:
                routes[owner].append({"destination": a, "nexthop": b})
            else:
                tags[owner].append(a)
    out = [hide.apply(view(r, gw_ips.get(r.gw_port_id or "", []), routes[r.id], tags[r.id]))
           for r in routers]
    for extend in RENDER_EXTENSIONS:
        extend(db, routers, out)
    return out


def _parts() -> Any:
    """(kind, owner, a, b, n) rows of one UNION ALL: the bound gateway `ports`' fixed IPs
    (by ordinal), the bound routers' (`ids`) routes (by destination, nexthop) and tags."""
    ids = bindparam("ids", expanding=True)
    no_str, no_int = cast(null(), String(255)), cast(null(), Integer)
    union = union_all(
        select(literal_column("0").label("kind"), IPAllocation.port_id.label("owner"),
               IPAllocation.subnet_id.label("a"), IPAllocation.ip_address.label("b"),
               IPAllocation.ordinal.label("n"))
        .where(IPAllocation.port_id.in_(bindparam("ports", expanding=True))),
        select(literal_column("1"), RouterRoute.router_id, RouterRoute.destination,
               RouterRoute.nexthop, no_int).where(RouterRoute.router_id.in_(ids)),
        select(literal_column("2"), Tag.resource_id, Tag.tag, no_str, no_int)
        .where(Tag.resource_id.in_(ids)))
    cols = union.selected_columns
    return union.order_by(cols.kind, cols.n, cols.a, cols.b)


_PARTS = _parts()  # built once: every rendered router asks


def view(r: Router, gw_ips: list[dict[str, str]], routes: list[dict[str, str]],
         tags: list[str]) -> dict[str, Any]:
    gateway = None
    if r.gw_port_id:
        gateway = {"network_id": r.gw_network_id, "enable_snat": r.enable_snat,
                   "external_fixed_ips": gw_ips}
    return {
        "id": r.id, "name": r.name, "tenant_id": r.project_id, "project_id": r.project_id,
        "admin_state_up": r.admin_state_up, "status": r.status,
        "external_gateway_info": gateway, "routes": routes, "distributed": r.distributed,
        "ha": r.ha, "availability_zone_hints": list(r.availability_zone_hints or []),
        "availability_zones": ["nova"], "flavor_id": r.flavor_id,
        "enable_ndp_proxy": bool(r.gw_port_id and r.enable_ndp_proxy),
        **standard.standard_view(r, tags),
    }


# ------------------------------------------------------------------ helpers
def _admin(ctx: RequestContext) -> RequestContext:
    return ctx if ctx.is_service else ctx.elevated()


def _check_ha_dvr_change(router: Router, attrs: dict[str, Any]) -> None:
    """Neutron's rules for changing `ha` / `distributed` (l3_hamode_db, l3_dvr_db): `ha`
    only on a router that is down once this update applies; `distributed` only on one
    that is down before it too (`router-admin-state-down-before-update`)."""
    down_after = not attrs.get("admin_state_up", router.admin_state_up)
    if attrs.get("ha") is not None and attrs["ha"] != router.ha and not down_after:
        raise errors.bad_router("Cannot change HA attribute of active routers. Please set "
                                "router admin_state_up to False prior to upgrade")
    if (attrs.get("distributed") is not None and attrs["distributed"] != router.distributed
            and (router.admin_state_up or not down_after)):
        raise errors.bad_router("Cannot change the 'distributed' attribute of active "
                                "routers. Please set router admin_state_up to False prior "
                                "to upgrade")


@dataclass
class _Attached:
    port_id: str
    port_type: str
    network_id: str
    ips: list[tuple[str, str]]  # (subnet_id, ip_address)


def _attached(db: Session, router_id: str) -> list[_Attached]:
    """The router's ports with their addresses (one query)."""
    rows = db.execute(
        select(RouterPort.port_id, RouterPort.port_type, Port.network_id,
               IPAllocation.subnet_id, IPAllocation.ip_address)
        .join(Port, Port.id == RouterPort.port_id)
        .outerjoin(IPAllocation, IPAllocation.port_id == RouterPort.port_id)
        .where(RouterPort.router_id == router_id)
        .order_by(RouterPort.port_id, IPAllocation.ordinal))
    out: dict[str, _Attached] = {}
    for port_id, port_type, network_id, subnet_id, ip in rows:
        item = out.setdefault(port_id, _Attached(port_id, port_type, network_id, []))
        if subnet_id is not None:
            item.ips.append((subnet_id, ip))
    return list(out.values())


def port_ips(db: Session, port_id: str) -> list[tuple[str, str]]:
    """(subnet_id, ip_address) of a port's fixed IPs, in order."""
    return [(s, ip) for s, ip in db.execute(
        select(IPAllocation.subnet_id, IPAllocation.ip_address)
        .where(IPAllocation.port_id == port_id).order_by(IPAllocation.ordinal))]


def _subnet_rows(db: Session, ids: set[str]) -> dict[str, Subnet]:
    if not ids:
        return {}
    return {s.id: s for s in db.scalars(select(Subnet).where(Subnet.id.in_(ids)))}


def _check_dup_subnets(db: Session, attached: list[_Attached], new: Sequence[Subnet],
                       *, overlap: bool = True) -> None:
    """400 when the router already has a port on one of `new`, or (for interfaces) an
    interface subnet overlaps one of them (neutron's _check_for_dup_router_subnets; a
    gateway may overlap the interfaces, as upstream)."""
    new_ids = {s.id for s in new}
    for item in attached:
        for subnet_id, _ in item.ips:
            if subnet_id in new_ids:
                raise errors.bad_router(f"Router already has a port on subnet {subnet_id}")
    if not overlap:
        return
    interface_subnets = {sid for a in attached if a.port_type == INTERFACE for sid, _ in a.ips}
    for existing in _subnet_rows(db, interface_subnets).values():
        old = netaddr.IPNetwork(existing.cidr)
        for s in new:
            cur = netaddr.IPNetwork(s.cidr)
            if old.version == cur.version and (cur in old or old in cur):
                raise errors.bad_router(f"Cidr {s.cidr} of subnet {s.id} overlaps with cidr "
                                     f"{existing.cidr} of subnet {existing.id}")


def _create_port(db: Session, ctx: RequestContext, router: Router, attrs: dict[str, Any],
                 port_type: str, subnets: list[Subnet] | None = None) -> Port:
    # ACTIVE from the start: the (virtual) L3 agent wires router ports at once
    port = ports.create_port(db, _admin(ctx), {
        "admin_state_up": True, "name": "", "device_id": router.id,
        "device_owner": port_type, **attrs}, subnets=subnets, status="ACTIVE")
    db.add(RouterPort(port_id=port.id, router_id=router.id, port_type=port_type))
    db.flush()
    return port


def _delete_port(db: Session, ctx: RequestContext, port_id: str) -> None:
    db.execute(delete(RouterPort).where(RouterPort.port_id == port_id))
    ports.delete_port(db, _admin(ctx), port_id, l3_port_check=False)


# ------------------------------------------------------------------ gateway
def _fips_use_router(db: Session, router_id: str) -> bool:
    return db.scalar(select(FloatingIP.id).where(FloatingIP.router_id == router_id)
                     .limit(1)) is not None


def _remove_gateway(db: Session, ctx: RequestContext, router: Router,
                    attrs: dict[str, Any] | None = None) -> None:
    if not router.gw_port_id:
        return
    if _fips_use_router(db, router.id):
        raise errors.RouterExternalGatewayInUseByFloatingIp(router_id=router.id,
                                                          net_id=router.gw_network_id)
    for check in GATEWAY_REMOVE_CHECKS:
        check(db, router, attrs or {})
    port_id = router.gw_port_id
    router.gw_port_id = None
    router.gw_network_id = None
    db.flush()
    _delete_port(db, ctx, port_id)


def _set_gateway(db: Session, ctx: RequestContext, router: Router,
                 info: dict[str, Any] | None, *, new: bool = False,
                 attrs: dict[str, Any] | None = None) -> Port | None:
    """Set (or clear) the gateway; the new gateway port, if one was made. `new`: the
    router was made in this request (no gateway, no ports yet); `attrs`: the request's."""
    network_id = (info or {}).get("network_id")
    if not network_id:
        _remove_gateway(db, ctx, router, attrs)
        router.enable_snat = True
        promote_gateway(db, router)
        return None
    net = networks.get_visible(db, ctx, network_id)
    if not net.router_external:
        raise errors.bad_router(f"Network {network_id} is not an external network")
    ext_ips = info.get("external_fixed_ips") or []  # type: ignore[union-attr]
    ext_subnets = ports.network_subnets(db, net.id)  # the gateway port's candidates too
    gateways = {s.gateway_ip for s in ext_subnets if s.gateway_ip}
    for entry in ext_ips:
        if entry.get("ip_address") in gateways:
            raise errors.bad_router(f"External IP {entry['ip_address']} is the same as the "
                                 "gateway IP")
        if entry.get("subnet_id") and entry["subnet_id"] not in {s.id for s in ext_subnets}:
            raise errors.bad_router(f"Subnet {entry['subnet_id']} is not on external network "
                                 f"{net.id}")
    router.enable_snat = info.get("enable_snat", True)  # type: ignore[union-attr]
    if router.gw_port_id and router.gw_network_id == net.id:
        if ext_ips and _ips_changed(db, router.gw_port_id, ext_ips):
            for check in GATEWAY_IPS_CHECKS:
                check(db, router, ext_ips)
            ports.update_port(db, _admin(ctx), router.gw_port_id, {"fixed_ips": ext_ips})
        return None
    if not new:
        _remove_gateway(db, ctx, router, attrs)
        _check_dup_subnets(db, _attached(db, router.id), ext_subnets, overlap=False)
    attrs: dict[str, Any] = {"project_id": "", "network_id": net.id}
    if ext_ips:
        attrs["fixed_ips"] = ext_ips
    port = _create_port(db, ctx, router, attrs, GATEWAY, ext_subnets)
    router.gw_port_id = port.id
    router.gw_network_id = net.id
    return port


def gateway_ports(db: Session, router_id: str) -> list[tuple[str, str]]:
    """(port id, network id) of every gateway port of the router (the compatibility one
    and `external-gateway-multihoming`'s extra ones), oldest first."""
    return [(p, n) for p, n in db.execute(
        select(RouterPort.port_id, Port.network_id).join(Port, Port.id == RouterPort.port_id)
        .where(RouterPort.router_id == router_id, RouterPort.port_type == GATEWAY)
        .order_by(Port.created_at, Port.id))]


def promote_gateway(db: Session, router: Router) -> None:
    """A router whose compatibility gateway went while extra gateways remain takes the
    oldest of them as its gateway (`external_gateway_info`), as upstream."""
    if router.gw_port_id:
        return
    remaining = gateway_ports(db, router.id)
    if remaining:
        router.gw_port_id, router.gw_network_id = remaining[0]
        db.flush()


def remove_extra_gateways(db: Session, ctx: RequestContext, router: Router) -> None:
    """Delete the router's gateway ports other than its compatibility one."""
    for port_id, _ in gateway_ports(db, router.id):
        if port_id != router.gw_port_id:
            _delete_port(db, ctx, port_id)


def _ips_changed(db: Session, port_id: str, ext_ips: list[dict[str, str]]) -> bool:
    current = list(db.execute(select(IPAllocation.subnet_id, IPAllocation.ip_address)
                              .where(IPAllocation.port_id == port_id)))
    if {f["subnet_id"] for f in ext_ips if f.get("subnet_id")} != {s for s, _ in current}:
        return True
    return {f["ip_address"] for f in ext_ips if f.get("ip_address")} != {i for _, i in current}


def _authorize_gateway(db: Session, ctx: RequestContext, action: str, info: Any,
                       tgt: dict[str, Any]) -> None:
    pol.authorize(db, ctx, f"{action}:external_gateway_info", tgt)
    if not info:
        return
    pol.authorize(db, ctx, f"{action}:external_gateway_info:network_id", tgt)
    if "enable_snat" in info:
        pol.authorize(db, ctx, f"{action}:external_gateway_info:enable_snat", tgt)
    if info.get("external_fixed_ips"):
        pol.authorize(db, ctx, f"{action}:external_gateway_info:external_fixed_ips", tgt)


# ------------------------------------------------------------------ create / update / delete
def create_router(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Router:
    tgt = {"project_id": attrs["project_id"]}
    pol.authorize(db, ctx, "create_router", tgt)
    pol.authorize_attrs(db, ctx, "create_router", attrs, ("distributed", "ha"), tgt,
                        {"distributed": False, "ha": False})
    if "external_gateway_info" in attrs:
        _authorize_gateway(db, ctx, "create_router", attrs["external_gateway_info"], tgt)
    quotas.check(db, attrs["project_id"], "router")
    now = utcnow()
    router = Router(project_id=attrs["project_id"], name=attrs.get("name", ""),
                    description=attrs.get("description", ""),
                    admin_state_up=attrs.get("admin_state_up", True), status="ACTIVE",
                    availability_zone_hints=attrs.get("availability_zone_hints") or [],
                    enable_snat=True, created_at=now, updated_at=now, revision_number=0,
                    ha=bool(attrs.get("ha")), distributed=bool(attrs.get("distributed")))
    db.add(router)
    db.flush()
    gw_port = None
    if attrs.get("external_gateway_info"):
        gw_port = _set_gateway(db, ctx, router, attrs["external_gateway_info"], new=True)
    for write in ROUTER_WRITERS:
        write(db, ctx, router, attrs, True)
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "router", router.id, tags, new=True)
    db.flush()
    # what render() would read back (gateway addresses, no routes yet, tags), known already
    gw_ips = list(gw_port.__dict__["known_parts"][0]) if gw_port is not None else []
    router.known_parts = (gw_ips, [], sorted(tags))  # type: ignore[attr-defined]
    return router


def update_router(db: Session, ctx: RequestContext, router_id: str, attrs: dict[str, Any],
                  if_match: int | None = None) -> Router:
    router = get_visible(db, ctx, router_id)
    tgt = target(router)
    pol.authorize(db, ctx, "update_router", tgt)
    pol.authorize_attrs(db, ctx, "update_router", attrs, ("distributed", "ha"), tgt)
    if "external_gateway_info" in attrs:
        _authorize_gateway(db, ctx, "update_router", attrs["external_gateway_info"], tgt)
    standard.check_revision(router, if_match)
    router = get_visible(db, ctx, router_id, for_update=True)
    _check_ha_dvr_change(router, attrs)
    if "external_gateway_info" in attrs:
        _set_gateway(db, ctx, router, attrs["external_gateway_info"], attrs=attrs)
    for write in ROUTER_WRITERS:
        write(db, ctx, router, attrs, False)
    for key in ("name", "description", "admin_state_up"):
        if key in attrs:
            setattr(router, key, attrs[key])
    for key in ("ha", "distributed"):
        if attrs.get(key) is not None:
            setattr(router, key, attrs[key])
    if "routes" in attrs:
        _replace_routes(db, router, attrs["routes"])
    standard.touch(router)
    db.flush()
    return router


def delete_router(db: Session, ctx: RequestContext, router_id: str,
                  if_match: int | None = None) -> None:
    router = get_visible(db, ctx, router_id)
    pol.authorize(db, ctx, "delete_router", target(router))
    standard.check_revision(router, if_match)
    router = get_visible(db, ctx, router_id, for_update=True)
    if db.scalar(select(RouterPort.port_id).where(RouterPort.router_id == router.id,
                                                  RouterPort.port_type != GATEWAY).limit(1)):
        raise errors.RouterInUse(router_id=router.id)
    _remove_gateway(db, ctx, router)
    remove_extra_gateways(db, ctx, router)
    standard.delete_tags(db, [router.id])
    db.delete(router)
    db.flush()


# ------------------------------------------------------------------ extra routes
def _validate_routes(db: Session, router: Router, routes: list[dict[str, str]]) -> None:
    if len(routes) > MAX_ROUTES:
        raise errors.RoutesExhausted(router_id=router.id, quota=MAX_ROUTES)
    attached = _attached(db, router.id)
    own_ips = {ip for a in attached for _, ip in a.ips}
    cidrs = [netaddr.IPNetwork(s.cidr) for s in
             _subnet_rows(db, {sid for a in attached for sid, _ in a.ips}).values()]
    for route in routes:
        hop = netaddr.IPAddress(route["nexthop"])
        if not any(hop.version == c.version and hop in c for c in cidrs):
            raise errors.InvalidRoutes(routes=route, reason="the nexthop is not connected with "
                                                         "router")
        if route["nexthop"] in own_ips:
            raise errors.InvalidRoutes(routes=route, reason="the nexthop is used by router")


def _replace_routes(db: Session, router: Router, routes: list[dict[str, str]]) -> None:
    _validate_routes(db, router, routes)
    db.execute(delete(RouterRoute).where(RouterRoute.router_id == router.id))
    # an identical concurrent update's routes are "already there", not a 500
    insert_absent(db, RouterRoute, [{"router_id": router.id, **r} for r in routes])


def _current_routes(db: Session, router_id: str) -> list[dict[str, str]]:
    return [{"destination": d, "nexthop": n} for d, n in db.execute(
        select(RouterRoute.destination, RouterRoute.nexthop)
        .where(RouterRoute.router_id == router_id))]


def parse_routes_body(body: Any) -> list[dict[str, str]]:
    """`{"router": {"routes": [...]}}` of add_extraroutes/remove_extraroutes."""
    if not isinstance(body, dict) or not isinstance(body.get("router"), dict):
        raise errors.BadRequest("Unable to find 'router' in request body")
    inner = body["router"]
    unknown = [k for k in inner if k != "routes"]
    if unknown or "routes" not in inner:
        raise errors.BadRequest("Must specify exactly one key 'routes' in the body")
    try:
        return _routes(inner["routes"])
    except Invalid as exc:
        raise errors.BadRequest(f"Invalid input for routes. Reason: {exc}.") from None


def change_routes(db: Session, ctx: RequestContext, router_id: str,
                  routes: list[dict[str, str]], *, add: bool) -> Router:
    """add_extraroutes / remove_extraroutes: a set union or difference, atomically."""
    router = get_visible(db, ctx, router_id)
    pol.authorize(db, ctx, "add_extraroutes" if add else "remove_extraroutes",
                  target(router))
    router = get_visible(db, ctx, router_id, for_update=True)
    current = _current_routes(db, router.id)
    keys = {(r["destination"], r["nexthop"]) for r in routes}
    if add:
        new = current + [r for r in routes
                         if (r["destination"], r["nexthop"]) not in
                         {(c["destination"], c["nexthop"]) for c in current}]
    else:
        new = [c for c in current if (c["destination"], c["nexthop"]) not in keys]
    _replace_routes(db, router, new)
    standard.touch(router)
    db.flush()
    return router


# ------------------------------------------------------------------ interfaces
def parse_interface_info(body: Any, *, for_removal: bool = False) -> dict[str, str]:
    """neutron's _validate_interface_info: subnet_id and/or port_id, as UUIDs."""
    if not isinstance(body, dict):
        body = {}
    port_given, subnet_given = "port_id" in body, "subnet_id" in body
    if not (port_given or subnet_given):
        raise errors.bad_router("Either subnet_id or port_id must be specified")
    out = {}
    for key in ("port_id", "subnet_id"):
        if key in body:
            try:
                out[key] = uuid_value(body[key])
            except Invalid as exc:
                raise errors.bad_router(str(exc)) from None
    if not for_removal and port_given and subnet_given:
        raise errors.bad_router("Cannot specify both subnet-id and port-id")
    return out


def _interface_info(router: Router, port: Port, subnet_ids: list[str]) -> dict[str, Any]:
    return {"id": router.id, "tenant_id": port.project_id, "project_id": port.project_id,
            "port_id": port.id, "network_id": port.network_id,
            "subnet_id": subnet_ids[-1] if subnet_ids else None, "subnet_ids": subnet_ids}


def add_router_interface(db: Session, ctx: RequestContext, router_id: str,
                         info: dict[str, str]) -> dict[str, Any]:
    # one read, locking (nothing was locked before it: the lock order is unchanged)
    router = get_visible(db, ctx, router_id, for_update=True)
    pol.authorize(db, ctx, "add_router_interface", target(router))
    attached = _attached(db, router.id)
    if "port_id" in info:
        port, subnet_ids = _add_by_port(db, ctx, router, attached, info["port_id"])
    else:
        port, subnet_ids = _add_by_subnet(db, ctx, router, attached, info["subnet_id"])
    standard.touch(router)
    db.flush()
    return _interface_info(router, port, subnet_ids)


def _add_by_port(db: Session, ctx: RequestContext, router: Router, attached: list[_Attached],
                 port_id: str) -> tuple[Port, list[str]]:
    port = ports.get_visible(db, ctx, port_id)
    if port.device_id:
        raise errors.PortInUse(port_id=port.id, net_id=port.network_id, device_id=port.device_id)
    ips = port_ips(db, port.id)
    if not ips:
        raise errors.bad_router("Router port must have at least one fixed IP")
    subnet_rows = _subnet_rows(db, {s for s, _ in ips})
    new = [subnet_rows[s] for s in dict.fromkeys(s for s, _ in ips)]
    if any(s.ip_version == 6 for s in new):
        for item in attached:
            if (item.port_type == INTERFACE and item.network_id == port.network_id
                    and any(":" in ip for _, ip in item.ips)):
                raise errors.bad_router(
                    "Cannot have multiple router ports with the same network id if both "
                    f"contain IPv6 subnets. Existing port {item.port_id} has IPv6 subnet(s) "
                    f"and network id {item.network_id}")
    _check_dup_subnets(db, attached, new)
    if len([s for s in new if s.ip_version == 4]) > 1:
        raise errors.bad_router("Cannot have multiple IPv4 subnets on router port")
    port.device_id = router.id
    port.device_owner = INTERFACE
    port.status = "ACTIVE"
    standard.touch(port)
    db.add(RouterPort(port_id=port.id, router_id=router.id, port_type=INTERFACE))
    db.flush()
    return port, [s.id for s in new]


def _add_by_subnet(db: Session, ctx: RequestContext, router: Router,
                   attached: list[_Attached], subnet_id: str) -> tuple[Port, list[str]]:
    subnet = subnets.get_visible(db, ctx, subnet_id)
    if not subnet.gateway_ip:
        raise errors.bad_router("Subnet for router interface must have a gateway IP")
    if subnet.ip_version == 6 and subnet.ipv6_ra_mode is None \
            and subnet.ipv6_address_mode is not None:
        raise errors.bad_router(f"IPv6 subnet {subnet.id} configured to receive RAs from an "
                             "external router cannot be added to Neutron Router.")
    _check_dup_subnets(db, attached, [subnet])
    fixed_ip = {"subnet_id": subnet.id, "ip_address": subnet.gateway_ip}
    if subnet.ip_version == 6:
        # another IPv6 prefix of the same network joins the existing IPv6 interface port
        for item in attached:
            if (item.port_type == INTERFACE and item.network_id == subnet.network_id
                    and any(":" in ip for _, ip in item.ips)):
                wanted = [{"subnet_id": s, "ip_address": ip} for s, ip in item.ips]
                port = ports.update_port(db, _admin(ctx), item.port_id,
                                         {"fixed_ips": [*wanted, fixed_ip]})
                return port, [subnet.id]
    port = _create_port(db, ctx, router, {"project_id": router.project_id,
                                          "network_id": subnet.network_id,
                                          "fixed_ips": [fixed_ip]}, INTERFACE)
    return port, [subnet.id]


def _confirm_not_in_use(db: Session, router: Router, subnet: Subnet) -> None:
    net = netaddr.IPNetwork(subnet.cidr)
    for (ip,) in db.execute(select(FloatingIP.fixed_ip_address)
                            .where(FloatingIP.router_id == router.id)):
        if ip and netaddr.IPAddress(ip) in net:
            raise errors.RouterInterfaceInUseByFloatingIP(router_id=router.id,
                                                       subnet_id=subnet.id)
    for route in _current_routes(db, router.id):
        hop = netaddr.IPAddress(route["nexthop"])
        if hop.version == net.version and hop in net:
            raise errors.RouterInterfaceInUseByRoute(router_id=router.id, subnet_id=subnet.id)
    for check in INTERFACE_REMOVE_CHECKS:
        check(db, router, subnet)


def remove_router_interface(db: Session, ctx: RequestContext, router_id: str,
                            info: dict[str, str]) -> dict[str, Any]:
    router = get_visible(db, ctx, router_id, for_update=True)  # one read, locking
    pol.authorize(db, ctx, "remove_router_interface", target(router))
    attached = [a for a in _attached(db, router.id) if a.port_type == INTERFACE]
    subnet_id = info.get("subnet_id")
    if "port_id" in info:
        item = next((a for a in attached if a.port_id == info["port_id"]), None)
        if item is None:
            raise errors.RouterInterfaceNotFound(router_id=router.id, port_id=info["port_id"])
        port_subnets = [s for s, _ in item.ips]
        if subnet_id and subnet_id not in port_subnets:
            raise errors.SubnetMismatchForPort(port_id=item.port_id, subnet_id=subnet_id)
        rows = _subnet_rows(db, set(port_subnets))
        for sid in port_subnets:
            _confirm_not_in_use(db, router, rows[sid])
        port = db.get_one(Port, item.port_id)
        result = _interface_info(router, port, port_subnets)
        result["subnet_id"] = port_subnets[0] if port_subnets else None
        _delete_port(db, ctx, item.port_id)
    else:
        subnet = subnets.get_visible(db, ctx, subnet_id or "")
        _confirm_not_in_use(db, router, subnet)
        item = next((a for a in attached if subnet.id in {s for s, _ in a.ips}), None)
        if item is None:
            raise errors.RouterInterfaceNotFoundForSubnet(router_id=router.id,
                                                       subnet_id=subnet.id)
        port = db.get_one(Port, item.port_id)
        result = _interface_info(router, port, [subnet.id])
        if len({s for s, _ in item.ips}) > 1:
            keep = [{"subnet_id": s, "ip_address": ip} for s, ip in item.ips if s != subnet.id]
            ports.update_port(db, _admin(ctx), item.port_id, {"fixed_ips": keep})
        else:
            _delete_port(db, ctx, item.port_id)
    standard.touch(router)
    db.flush()
    return result


# ------------------------------------------------------------------ for other modules
def interface_count(db: Session, router_id: str) -> int:
    return db.scalar(select(func.count()).select_from(RouterPort).where(
        RouterPort.router_id == router_id, RouterPort.port_type == INTERFACE)) or 0


standard.register_taggable("routers", standard.Taggable(
    "router", get_visible,
    lambda db, ctx, r: pol.authorize(db, ctx, "update_router", target(r))))
