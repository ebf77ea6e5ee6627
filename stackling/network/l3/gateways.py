"""Multiple external gateways per router (`external-gateway-multihoming`), as Neutron's
extra-gateways mixin: `PUT /v2.0/routers/{id}/add_external_gateways`,
`update_external_gateways` and `remove_external_gateways` take
`{"router": {"external_gateways": [{"network_id", "external_fixed_ips", "enable_snat"}]}}`
and answer `{"router": ...}`; a router shows `external_gateways` (its compatibility
gateway, the one `external_gateway_info` shows, first).

Extra gateways are more `network:router_gateway` ports in `network_router_port`; the
compatibility one stays `gw_port_id`. When it goes while extra ones remain, the oldest
becomes it. A requested gateway is matched to a port by its network and, where more
than one port is on that network, by its fixed IPs (some shared: a partial match, all:
a full one). Every change holds the router's row lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import netaddr
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import Invalid
from stackling.network.core import networks, ports
from stackling.network.core.models import IPAllocation, Port
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import routers
from stackling.network.l3.models import FloatingIP, Router, RouterPort

EXTENSIONS.append(Extension("external-gateway-multihoming",
                            "Support for multiple external gateways per router",
                            "Allow multiple external gateway ports per router",
                            "2023-01-18T00:00:00-00:00"))

POLICIES: dict[str, str] = {
    **{f"{action}{suffix}": pol.MEMBER
       for action in ("add_external_gateways", "update_external_gateways")
       for suffix in ("", ":external_gateways", ":external_gateways:network_id")},
    **{f"{action}:external_gateways:{attr}": pol.ADMIN
       for action in ("add_external_gateways", "update_external_gateways")
       for attr in ("enable_snat", "external_fixed_ips")},
    "remove_external_gateways": pol.MEMBER,
    "remove_external_gateways:external_gateways": pol.MEMBER,
}


class UnableToMatchGateways(errors.BadRequest):
    message = ("Unable to match a requested gateway port to existing gateway ports for "
               "router %(router_id)s: %(reason)s.")


class UnableToRemoveGateways(errors.Conflict):
    message = "Unable to remove external gateways of router %(router_id)s: %(reason)s."


# ------------------------------------------------------------------ body and views
def parse_body(body: Any) -> list[dict[str, Any]] | None:
    """The requested gateways; None when the body names none (nothing changes)."""
    if not isinstance(body, dict) or not isinstance(body.get("router"), dict):
        raise errors.BadRequest("Unable to find 'router' in request body")
    if "external_gateways" not in body["router"]:
        return None
    raw = body["router"]["external_gateways"]
    if raw == {} or raw is None:
        return []
    if not isinstance(raw, list):
        raise errors.InvalidInput(error_message=f"'{raw}' is not a list")
    out = []
    for item in raw:
        try:
            gw = routers._gateway_info(item)
        except Invalid as e:
            raise errors.InvalidInput(error_message=str(e)) from None
        if not gw:
            raise errors.InvalidInput(error_message="Each external gateway needs a "
                                      "network_id")
        out.append(gw)
    return out


def render_gateways(db: Session, rows: Sequence[Router], out: list[dict[str, Any]]) -> None:
    """routers.RENDER_EXTENSIONS: `external_gateways` (one query per page)."""
    ids = [r.id for r in rows]
    gws: dict[str, dict[str, dict[str, Any]]] = {i: {} for i in ids}
    if ids:
        for router_id, port_id, net_id, subnet_id, ip in db.execute(
                select(RouterPort.router_id, RouterPort.port_id, Port.network_id,
                       IPAllocation.subnet_id, IPAllocation.ip_address)
                .join(Port, Port.id == RouterPort.port_id)
                .outerjoin(IPAllocation, IPAllocation.port_id == RouterPort.port_id)
                .where(RouterPort.router_id.in_(ids), RouterPort.port_type == routers.GATEWAY)
                .order_by(Port.created_at, Port.id, IPAllocation.ordinal)):
            gw = gws[router_id].setdefault(port_id, {"network_id": net_id,
                                                     "external_fixed_ips": []})
            if subnet_id is not None:
                gw["external_fixed_ips"].append({"ip_address": ip, "subnet_id": subnet_id})
    for r, view in zip(rows, out, strict=True):
        mine = gws[r.id]
        first = [mine.pop(r.gw_port_id)] if r.gw_port_id in mine else []
        view["external_gateways"] = first + list(mine.values())


routers.RENDER_EXTENSIONS.append(render_gateways)


# ------------------------------------------------------------------ helpers
def _authorize(db: Session, ctx: RequestContext, action: str, gws: list[dict[str, Any]],
               router: Router) -> None:
    tgt = routers.target(router)
    pol.authorize(db, ctx, action, tgt)
    pol.authorize(db, ctx, f"{action}:external_gateways", tgt)
    if action == "remove_external_gateways":
        return
    for gw in gws:
        pol.authorize(db, ctx, f"{action}:external_gateways:network_id", tgt)
        if "enable_snat" in gw:
            pol.authorize(db, ctx, f"{action}:external_gateways:enable_snat", tgt)
        if gw.get("external_fixed_ips"):
            pol.authorize(db, ctx, f"{action}:external_gateways:external_fixed_ips", tgt)


def _validate(db: Session, ctx: RequestContext, gw: dict[str, Any]) -> list[Any]:
    """Neutron's _validate_gw_info: an external network the caller sees, fixed IPs on its
    subnets and not their gateway addresses; its subnets."""
    net = networks.get_visible(db, ctx, gw["network_id"])
    if not net.router_external:
        raise errors.bad_router(f"Network {net.id} is not an external network")
    subs = ports.network_subnets(db, net.id)
    gateways = {s.gateway_ip for s in subs if s.gateway_ip}
    for entry in gw.get("external_fixed_ips") or []:
        if entry.get("ip_address") in gateways:
            raise errors.bad_router(f"External IP {entry['ip_address']} is the same as the "
                                    "gateway IP")
        if entry.get("subnet_id") and entry["subnet_id"] not in {s.id for s in subs}:
            raise errors.bad_router(f"Subnet {entry['subnet_id']} is not on external network "
                                    f"{net.id}")
    return subs


def _add_extra(db: Session, ctx: RequestContext, router: Router, gw: dict[str, Any]) -> None:
    subs = _validate(db, ctx, gw)
    # a second port on an external network the router reaches already is fine (upstream's
    # overlap check skips it); another network must not put the router on a subnet twice
    if gw["network_id"] not in {n for _, n in routers.gateway_ports(db, router.id)}:
        routers._check_dup_subnets(db, routers._attached(db, router.id), subs, overlap=False)
    attrs: dict[str, Any] = {"project_id": "", "network_id": gw["network_id"]}
    if gw.get("external_fixed_ips"):
        attrs["fixed_ips"] = gw["external_fixed_ips"]
    routers._create_port(db, ctx, router, attrs, routers.GATEWAY, subs)


def _match(db: Session, router: Router, gws: list[dict[str, Any]]
           ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]],
                      list[dict[str, Any]]]:
    """Neutron's _match_requested_gateway_ports: (full matches, partial matches, the
    gateways no port is on the network of), ports by id."""
    full: dict[str, dict[str, Any]] = {}
    partial: dict[str, dict[str, Any]] = {}
    missing: list[dict[str, Any]] = []
    on_router = routers.gateway_ports(db, router.id)
    for gw in gws:
        candidates = [p for p, n in on_router if n == gw["network_id"]]
        if not candidates:
            missing.append(gw)
            continue
        wanted = gw.get("external_fixed_ips") or []
        if not wanted:
            if len(candidates) == 1:
                partial[candidates[0]] = gw
                continue
            raise UnableToMatchGateways(
                router_id=router.id, reason=f"multiple gateway ports are attached to the "
                f"same network {gw['network_id']} but external_fixed_ips parameter is not "
                "specified in the request")
        target = {netaddr.IPAddress(f["ip_address"]) for f in wanted if f.get("ip_address")}
        for port_id in candidates:
            current = {netaddr.IPAddress(ip) for _, ip in routers.port_ips(db, port_id)}
            if current & target:
                partial[port_id] = gw
                if current == target:
                    full[port_id] = gw
                break
        else:
            raise UnableToMatchGateways(
                router_id=router.id, reason="could not match a gateway port attached to "
                f"network {gw['network_id']} based on the specified fixed IPs")
    return full, partial, missing


def _delete_extra(db: Session, ctx: RequestContext, router: Router, port_id: str) -> None:
    """An extra gateway goes unless it is the last on a network the router's floating IPs
    are on (upstream's check)."""
    port = db.get_one(Port, port_id)
    on_net = [p for p, n in routers.gateway_ports(db, router.id) if n == port.network_id]
    fips = db.scalar(select(func.count()).select_from(FloatingIP).where(
        FloatingIP.router_id == router.id,
        FloatingIP.floating_network_id == port.network_id)) or 0
    if fips and len(on_net) < 2:
        raise errors.RouterExternalGatewayInUseByFloatingIp(router_id=router.id,
                                                          net_id=port.network_id)
    routers._delete_port(db, ctx, port_id)


def _locked(db: Session, ctx: RequestContext, router_id: str, action: str,
            gws: list[dict[str, Any]]) -> Router:
    router = routers.get_visible(db, ctx, router_id)
    _authorize(db, ctx, action, gws, router)
    return routers.get_visible(db, ctx, router_id, for_update=True)


def _done(db: Session, router: Router) -> Router:
    standard.touch(router)
    db.flush()
    return router


# ------------------------------------------------------------------ the three actions
def add_external_gateways(db: Session, ctx: RequestContext, router_id: str,
                          gws: list[dict[str, Any]] | None) -> Router:
    router = _locked(db, ctx, router_id, "add_external_gateways", gws or [])
    if not gws:
        return router
    for gw in gws:
        _validate(db, ctx, gw)
    rest = gws
    if not routers.gateway_ports(db, router.id):
        routers._set_gateway(db, ctx, router, gws[0])  # the compatibility gateway
        rest = gws[1:]
    for gw in rest:
        _add_extra(db, ctx, router, gw)
    return _done(db, router)


def remove_external_gateways(db: Session, ctx: RequestContext, router_id: str,
                             gws: list[dict[str, Any]] | None) -> Router:
    router = _locked(db, ctx, router_id, "remove_external_gateways", gws or [])
    if not gws:
        return router
    if not routers.gateway_ports(db, router.id):
        raise UnableToRemoveGateways(router_id=router.id,
                                     reason="the router does not have any external gateways")
    for gw in gws:
        _validate(db, ctx, gw)
    _, partial, missing = _match(db, router, gws)
    if missing:
        raise UnableToMatchGateways(
            router_id=router.id, reason="could not match gateway port IDs for gateway info "
            "with networks " + ", ".join(g["network_id"] for g in missing))
    compat = partial.pop(router.gw_port_id or "", None)
    for port_id in partial:
        _delete_extra(db, ctx, router, port_id)
    if compat is not None:
        routers._set_gateway(db, ctx, router, None)  # the oldest extra one takes its place
    return _done(db, router)


def update_external_gateways(db: Session, ctx: RequestContext, router_id: str,
                             gws: list[dict[str, Any]] | None) -> Router:
    router = _locked(db, ctx, router_id, "update_external_gateways", gws or [])
    if gws is None:
        return router
    if not gws:  # an empty list removes every gateway
        routers.remove_extra_gateways(db, ctx, router)
        routers._set_gateway(db, ctx, router, None)
        return _done(db, router)
    for gw in gws:
        _validate(db, ctx, gw)
    # the first is the compatibility gateway: an existing port it matches becomes it
    _, partial, _ = _match(db, router, gws[:1])
    if partial:
        port_id = next(iter(partial))
        router.gw_port_id, router.gw_network_id = port_id, gws[0]["network_id"]
        db.flush()
    routers._set_gateway(db, ctx, router, gws[0])
    full, partial, missing = _match(db, router, gws[1:])
    for port_id, gw in partial.items():
        if gw.get("external_fixed_ips") and port_id not in full:
            ports.update_port(db, ctx.elevated() if not ctx.is_service else ctx, port_id,
                              {"fixed_ips": gw["external_fixed_ips"]})
    # the list replaces the router's gateways: ports it names no more go
    keep = set(partial) | {router.gw_port_id}
    for port_id, _ in routers.gateway_ports(db, router.id):
        if port_id not in keep:
            _delete_extra(db, ctx, router, port_id)
    for gw in missing:
        _add_extra(db, ctx, router, gw)
    return _done(db, router)
