"""Subnets: CIDR (given or allocated from a subnet pool), gateway, allocation pools,
DNS servers, host routes, IPv6 modes, segment association, service types.

Subnet creation takes the network's row lock first, so the "no overlapping CIDRs in one
network" rule holds under concurrency on every backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import netaddr
from sqlalchemy import (
    Integer,
    String,
    bindparam,
    cast,
    delete,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    NAME,
    REQUIRED,
    STANDARD,
    Attr,
    Invalid,
    boolean,
    cidr,
    dict_of,
    integer,
    ip_address,
    ip_or_none,
    ip_version,
    list_of,
    one_of,
    string,
    uuid_or_none,
    uuid_value,
)
from stackling.network.core import ipam, networks, subnetpools
from stackling.network.core.models import IPAllocation, Network, Port, Subnet, Tag
from stackling.network.querying import Listing
from stackling.network.segments import subnet_segments

MAX_DNS_NAMESERVERS = 5
IPV6_MIN_MTU = 1280  # RFC 8200: a link carrying IPv6 passes 1280-byte packets
MAX_HOST_ROUTES = 20
IPV6_MODES = ("slaac", "dhcpv6-stateful", "dhcpv6-stateless")
ROUTER_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                 "network:ha_router_replicated_interface", "network:router_gateway")
AUTO_DELETE_OWNERS = networks.AUTO_DELETE_OWNERS


def _pools(value: Any) -> list[dict[str, str]]:
    return list_of(dict_of({"start": (ip_address, True), "end": (ip_address, True)}))(value)


def _routes(value: Any) -> list[dict[str, str]]:
    routes = list_of(dict_of({"destination": (cidr, True), "nexthop": (ip_address, True)}))(
        value)
    for r in routes:
        r["destination"] = str(netaddr.IPNetwork(r["destination"]).cidr)
    return routes


def _nameservers(value: Any) -> list[str]:
    servers = list_of(ip_address)(value)
    if len(set(servers)) != len(servers):
        raise Invalid(f"Duplicate nameserver in {servers}")
    return servers


def _service_types(value: Any) -> list[str]:
    types = list_of(string(255))(value)
    for t in types:
        # any type under upstream's device-owner prefixes (network:, neutron:, compute:)
        if not (t.startswith(("network:", "neutron:", "compute:")) or t == "compute"):
            raise Invalid(f"Invalid service type {t}")
    return types


_MODE = one_of(*IPV6_MODES, nullable=True)

ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": NAME,
    "description": DESCRIPTION,
    "network_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True, sort=True),
    "ip_version": Attr(post=True, default=REQUIRED, convert=ip_version, filter=True, sort=True,
                       query=integer()),
    "cidr": Attr(post=True, convert=cidr, filter=True, sort=True),
    "prefixlen": Attr(post=True, convert=integer(0, 128)),
    "subnetpool_id": Attr(post=True, convert=uuid_or_none, filter=True, sort=True),
    "use_default_subnetpool": Attr(post=True, convert=boolean),
    "gateway_ip": Attr(post=True, put=True, convert=ip_or_none, filter=True, sort=True),
    "allocation_pools": Attr(post=True, put=True, convert=_pools),
    "dns_nameservers": Attr(post=True, put=True, convert=_nameservers),
    "host_routes": Attr(post=True, put=True, convert=_routes),
    "enable_dhcp": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                        sort=True),
    "ipv6_ra_mode": Attr(post=True, convert=_MODE, filter=True, sort=True),
    "ipv6_address_mode": Attr(post=True, convert=_MODE, filter=True, sort=True),
    "segment_id": Attr(post=True, put=True, convert=uuid_or_none, filter=True, sort=True),
    "service_types": Attr(post=True, put=True, convert=_service_types, filter=True),
    "router:external": Attr(filter=True, query=boolean),
}


def _external(values: list[Any]) -> Any:
    return Subnet.network_id.in_(select(Network.id).where(
        Network.router_external.is_(bool(values[0]))))


LISTING_COLUMNS = {
    "id": Subnet.id, "name": Subnet.name, "description": Subnet.description,
    "network_id": Subnet.network_id, "ip_version": Subnet.ip_version, "cidr": Subnet.cidr,
    "subnetpool_id": Subnet.subnetpool_id, "gateway_ip": Subnet.gateway_ip,
    "enable_dhcp": Subnet.enable_dhcp, "ipv6_ra_mode": Subnet.ipv6_ra_mode,
    "ipv6_address_mode": Subnet.ipv6_address_mode, "segment_id": Subnet.segment_id,
    "project_id": Subnet.project_id, "tenant_id": Subnet.project_id,
    "revision_number": Subnet.revision_number,
}
LISTING = Listing(attrs=ATTRS, columns=LISTING_COLUMNS, id_column=Subnet.id,
                  special={"router:external": _external,
                           "service_types": lambda v: Subnet.id.is_not(None)},
                  extra_filters=("shared",), readable=("get_subnet", ("segment_id",)))


# ------------------------------------------------------------------ visibility and views
def _visible(ctx: RequestContext) -> Any:
    # An external network's subnets stay its owner's (upstream: only `access_as_shared`
    # reveals them), although the network itself is visible to all.
    from stackling.network.rbac import visibility

    return visibility.subnet_clause(ctx)


def get_visible(db: Session, ctx: RequestContext, subnet_id: str) -> Subnet:
    subnet = db.get(Subnet, subnet_id)
    if subnet is None:
        raise errors.SubnetNotFound(subnet_id=subnet_id)
    if not (ctx.is_admin or ctx.is_service or subnet.project_id == ctx.project_id):
        from stackling.network.rbac import visibility

        if not visibility.subnet_visible(db, ctx, subnet, db.get(Network, subnet.network_id)):
            raise errors.SubnetNotFound(subnet_id=subnet_id)
    return subnet


def list_subnets(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Subnet.__table__)  # rows, not ORM objects: lists are read-only
    clause = _visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    shared = params.filters.pop("shared", None)
    if shared is not None:  # its network shared with the caller's project, RBAC included
        from stackling.network.rbac import visibility

        stmt = stmt.where(Subnet.network_id.in_(select(Network.id).where(
            visibility.networks_shared_filter(ctx, shared))))
    return LISTING.page(db, stmt, params)


def render(db: Session, ctx: RequestContext, subnets: Sequence[Subnet],
           tags: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    if not subnets:
        return []
    hide = pol.ReadFilter(db, ctx, "get_subnet", ("segment_id",))
    known = standard.take_known(subnets)
    if known is not None:  # just created: nothing to read back
        return [hide.apply(view(s, *k)) for s, k in zip(subnets, known, strict=True)]
    net_ids = list({s.network_id for s in subnets})
    external: dict[str, bool] = {}
    if tags is None:  # one statement per 500: their networks' external flags, tags
        tags = {s.id: [] for s in subnets}
        for i in range(0, len(subnets), 500):
            chunk = subnets[i:i + 500]
            for kind, owner, tag, flag in db.execute(_PARTS, {
                    "nets": list({s.network_id for s in chunk}), "ids": [s.id for s in chunk]}):
                if kind == 0:
                    external[owner] = bool(flag)
                else:
                    tags[owner].append(tag)
    else:
        external = {i: e for i, e in db.execute(select(Network.id, Network.router_external)
                                                .where(Network.id.in_(net_ids)))}
    return [hide.apply(view(s, external.get(s.network_id, False), tags.get(s.id, [])))
            for s in subnets]


def _parts() -> Any:
    """(kind, id, tag, flag) rows: the bound `nets`' `router:external` flags (kind 0)
    and the bound subnet `ids`' tags by tag (kind 1), as one UNION ALL."""
    union = union_all(
        select(literal_column("0").label("kind"), Network.id.label("owner"),
               cast(null(), String(255)).label("tag"),
               cast(Network.router_external, Integer).label("flag"))
        .where(Network.id.in_(bindparam("nets", expanding=True))),
        select(literal_column("1"), Tag.resource_id, Tag.tag, cast(null(), Integer))
        .where(Tag.resource_id.in_(bindparam("ids", expanding=True))))
    cols = union.selected_columns
    return union.order_by(cols.kind, cols.tag)


_PARTS = _parts()  # built once: every rendered subnet asks


def view(s: Subnet, external: bool, tags: list[str]) -> dict[str, Any]:
    return {
        "id": s.id, "name": s.name, "tenant_id": s.project_id, "project_id": s.project_id,
        "network_id": s.network_id, "ip_version": s.ip_version,
        "subnetpool_id": s.subnetpool_id, "enable_dhcp": s.enable_dhcp,
        "ipv6_ra_mode": s.ipv6_ra_mode, "ipv6_address_mode": s.ipv6_address_mode,
        "gateway_ip": s.gateway_ip, "cidr": s.cidr,
        "allocation_pools": [dict(p) for p in s.allocation_pools or []],
        "host_routes": [dict(r) for r in s.host_routes or []],
        "dns_nameservers": list(s.dns_nameservers or []),
        "service_types": list(s.service_types or []), "segment_id": s.segment_id,
        "router:external": external,
        **standard.standard_view(s, tags),
    }


# ------------------------------------------------------------------ validation
def _bad(msg: str) -> errors.InvalidInput:
    return errors.InvalidInput(error_message=msg)


def default_pools(net: netaddr.IPNetwork, gateway: str | None) -> list[dict[str, str]]:
    """Whole range minus network/broadcast (IPv4 <= /30), minus the IPv6 subnet-router
    anycast address, minus the gateway."""
    first, last = net.first, net.last
    if net.version == 4 and net.prefixlen <= 30:
        first, last = first + 1, last - 1
    elif net.version == 6 and net.prefixlen < 127:
        first += 1
    if first > last:
        return []
    ranges = [(first, last)]
    if gateway is not None:
        g = int(netaddr.IPAddress(gateway))
        split = []
        for lo, hi in ranges:
            if lo <= g <= hi:
                if lo < g:
                    split.append((lo, g - 1))
                if g < hi:
                    split.append((g + 1, hi))
            else:
                split.append((lo, hi))
        ranges = split
    v = net.version
    return [{"start": str(netaddr.IPAddress(lo, v)), "end": str(netaddr.IPAddress(hi, v))}
            for lo, hi in ranges]


def _check_pools(net: netaddr.IPNetwork, pools: list[dict[str, str]],
                 gateway: str | None) -> list[dict[str, str]]:
    first, last = net.first, net.last
    if net.version == 4 and net.prefixlen <= 30:
        first, last = first + 1, last - 1
    elif net.version == 6:
        first += 1
    ranges = []
    for p in pools:
        start, end = netaddr.IPAddress(p["start"]), netaddr.IPAddress(p["end"])
        label = f"{p['start']}-{p['end']}"
        if start.version != net.version or end.version != net.version or start > end:
            raise errors.InvalidAllocationPool(pool=label)
        if int(start) < first or int(end) > last:
            raise errors.OutOfBoundsAllocationPool(pool=label, subnet_cidr=str(net))
        ranges.append((int(start), int(end), label))
    ranges.sort()
    for (_, hi, a), (lo, _, b) in zip(ranges, ranges[1:], strict=False):
        if lo <= hi:
            raise errors.OverlappingAllocationPools(pool_1=a, pool_2=b, subnet_cidr=str(net))
    if gateway is not None:
        g = int(netaddr.IPAddress(gateway))
        for lo, hi, label in ranges:
            if lo <= g <= hi:
                raise errors.GatewayConflictWithAllocationPools(ip_address=gateway, pool=label)
    return [{"start": str(netaddr.IPAddress(lo, net.version)),
             "end": str(netaddr.IPAddress(hi, net.version))} for lo, hi, _ in ranges]


def _check_gateway(net: netaddr.IPNetwork, gateway: str) -> None:
    g = netaddr.IPAddress(gateway)
    if g.version != net.version:
        raise _bad("Gateway IP version inconsistent with allocation pool version")
    if g in net and net.version == 4 and net.prefixlen <= 30 and int(g) in (net.first,
                                                                             net.last):
        raise _bad("Gateway is not valid on subnet")
    if net.version == 6 and int(g) == net.first and net.prefixlen < 127:
        # neutron refuses the subnet-router anycast address as a gateway
        raise _bad("Gateway is not valid on subnet")


def _check_common(net: netaddr.IPNetwork, attrs: dict[str, Any], subnet_id: str) -> None:
    servers = attrs.get("dns_nameservers") or []
    if len(servers) > MAX_DNS_NAMESERVERS:
        raise errors.DNSNameServersExhausted(subnet_id=subnet_id, quota=MAX_DNS_NAMESERVERS)
    routes = attrs.get("host_routes") or []
    if len(routes) > MAX_HOST_ROUTES:
        raise errors.HostRoutesExhausted(subnet_id=subnet_id, quota=MAX_HOST_ROUTES)
    for route in routes:
        if (netaddr.IPNetwork(route["destination"]).version != net.version
                or netaddr.IPAddress(route["nexthop"]).version != net.version):
            raise _bad(f"Host route {route} does not match the IP version of the subnet")


def _check_ipv6_modes(version: int, net: netaddr.IPNetwork, attrs: dict[str, Any]) -> None:
    ra, addr = attrs.get("ipv6_ra_mode"), attrs.get("ipv6_address_mode")
    if version == 4:
        if ra or addr:
            raise _bad("ipv6_ra_mode or ipv6_address_mode cannot be set when enable_dhcp is "
                       "set to False" if not attrs.get("enable_dhcp", True) else
                       "ipv6_ra_mode or ipv6_address_mode cannot be set when ip_version is 4")
        return
    if ra and addr and ra != addr:
        raise _bad(f"ipv6_ra_mode set to '{ra}' with ipv6_address_mode set to '{addr}' is not "
                   "valid. If both attributes are set, they must be the same value")
    if (ra or addr) and not attrs.get("enable_dhcp", True):
        raise _bad("ipv6_ra_mode or ipv6_address_mode cannot be set when enable_dhcp is set "
                   "to False")
    if addr in ("slaac", "dhcpv6-stateless") or ra in ("slaac", "dhcpv6-stateless"):
        if net.prefixlen != 64:
            raise _bad(f"Invalid CIDR {net} for IPv6 address mode. OpenStack uses the EUI-64 "
                       "address format, which requires the prefix to be /64")


# ------------------------------------------------------------------ create
def create_subnet(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Subnet:
    # read locked: subnet changes take turns per network (overlap checks)
    net_row = networks.get_visible(db, ctx, attrs["network_id"], for_update=True)
    tgt = {**networks.target(net_row), "project_id": attrs["project_id"]}
    pol.authorize(db, ctx, "create_subnet", tgt)
    pol.authorize_attrs(db, ctx, "create_subnet", attrs, ("segment_id", "service_types"), tgt,
                        {"segment_id": None, "service_types": []})
    quotas.check(db, attrs["project_id"], "subnet")
    version = attrs["ip_version"]
    requested_cidr = attrs.get("cidr")
    pool = _subnet_pool(db, ctx, attrs, version)
    if requested_cidr is not None and "prefixlen" in attrs:
        raise errors.BadRequest("Invalid input for operation: cidr and prefixlen must not "
                                "be supplied together.")
    if requested_cidr is not None:
        net = netaddr.IPNetwork(requested_cidr).cidr
        if net.version != version:
            raise _bad(f"Cannot use IPv{net.version} CIDR {requested_cidr} for an "
                       f"IPv{version} subnet")
    if pool is not None:
        if pool.ip_version != version:
            raise _bad(f"Cannot allocate IPv{version} subnet from IPv{pool.ip_version} "
                       "subnet pool")
        chosen = subnetpools.allocate(
            db, pool, attrs["project_id"], prefixlen=attrs.get("prefixlen"),
            requested=str(net) if requested_cidr is not None else None)
        net = netaddr.IPNetwork(chosen)
    elif requested_cidr is None:
        raise errors.BadRequest("Bad subnets request: a cidr must be specified in the "
                                "absence of a subnet pool")
    elif "prefixlen" in attrs:
        raise errors.BadRequest("Invalid input for operation: prefixlen requires a subnet "
                                "pool")
    if net.prefixlen == 0:
        raise _bad("0.0.0.0/0 is not allowed as a subnet CIDR" if version == 4 else
                   "::/0 is not allowed as a subnet CIDR")
    if version == 6 and net.first == 0:
        raise _bad(f"IPv6 subnet {net} beginning with :: is not allowed")
    if version == 6 and net_row.mtu is not None and net_row.mtu < IPV6_MIN_MTU:
        raise errors.Conflict(f"IPv6 subnet cannot be created on network {net_row.id}: its "
                              f"MTU {net_row.mtu} is below the IPv6 minimum of {IPV6_MIN_MTU}")
    enable_dhcp = attrs.get("enable_dhcp", True)
    if enable_dhcp and ((version == 4 and net.prefixlen > 30) or
                        (version == 6 and net.prefixlen > 126)):
        raise _bad("Subnet prefix length is incompatible with DHCP service enabled")
    _check_ipv6_modes(version, net, attrs)
    if "gateway_ip" in attrs:
        gateway = attrs["gateway_ip"]
        if gateway is not None:
            _check_gateway(net, gateway)
    elif version == 4 and net.prefixlen >= 31:
        gateway = None
    else:
        gateway = str(netaddr.IPAddress(net.first + 1, version))
    if "allocation_pools" in attrs:
        pools = _check_pools(net, attrs["allocation_pools"], gateway)
    else:
        pools = default_pools(net, gateway)
    _check_common(net, attrs, "")
    siblings = db.execute(_SIBLINGS, {"net": net_row.id}).all()  # for both checks below
    _check_overlap(db, net_row.id, net, siblings=siblings)
    segment_id = attrs.get("segment_id")
    subnet_segments.check_segment(db, net_row.id, segment_id,
                                  attrs.get("service_types") or [], siblings=siblings)
    now = utcnow()
    subnet = Subnet(project_id=attrs["project_id"], network_id=net_row.id,
                    name=attrs.get("name", ""), description=attrs.get("description", ""),
                    ip_version=version, cidr=str(net), gateway_ip=gateway,
                    enable_dhcp=enable_dhcp, ipv6_ra_mode=attrs.get("ipv6_ra_mode"),
                    ipv6_address_mode=attrs.get("ipv6_address_mode"),
                    subnetpool_id=pool.id if pool is not None else None,
                    segment_id=segment_id, allocation_pools=pools,
                    dns_nameservers=attrs.get("dns_nameservers") or [],
                    host_routes=attrs.get("host_routes") or [],
                    service_types=attrs.get("service_types") or [],
                    created_at=now, updated_at=now, revision_number=0)
    db.add(subnet)
    db.flush()
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "subnet", subnet.id, tags, new=True)
    if ipam.is_slaac(subnet):
        _add_slaac_to_ports(db, subnet)
    subnet_segments.after_create(db, subnet)  # peer routes, segment provider
    # what render() would read back (its network's external flag, locked above; tags)
    subnet.known_parts = (bool(net_row.router_external), sorted(tags))  # type: ignore[attr-defined]
    return subnet


def _subnet_pool(db: Session, ctx: RequestContext, attrs: dict[str, Any], version: int
                 ) -> Any:
    use_default = attrs.get("use_default_subnetpool", False)
    pool_id = attrs.get("subnetpool_id")
    if use_default and pool_id:
        raise errors.BadRequest("Invalid input for operation: subnetpool_id and "
                                "use_default_subnetpool cannot both be specified.")
    if use_default:
        pool = subnetpools.default_pool(db, version)
        if pool is None:
            raise errors.BadRequest(f"No default subnetpool found for IPv{version}")
        return pool
    if pool_id:
        return subnetpools.get_visible(db, ctx, pool_id)
    return None


# The network's subnets, as a create's overlap and segment checks need them (built once).
_SIBLINGS = select(Subnet.id, Subnet.cidr, Subnet.segment_id, Subnet.service_types).where(
    Subnet.network_id == bindparam("net"))


def _check_overlap(db: Session, network_id: str, net: netaddr.IPNetwork,
                   except_id: str | None = None, *, siblings: Any = None) -> None:
    """`siblings`: the network's `_SIBLINGS` rows, when the caller read them."""
    rows = db.execute(select(Subnet.id, Subnet.cidr).where(
        Subnet.network_id == network_id)) if siblings is None else \
        ((r[0], r[1]) for r in siblings)
    for sid, other in rows:
        if sid == except_id:
            continue
        o = netaddr.IPNetwork(other)
        if o.version == net.version and (net.first <= o.last and o.first <= net.last):
            raise _bad(f"Requested subnet with cidr: {net} for network: {network_id} "
                       f"overlaps with another subnet")


def _add_slaac_to_ports(db: Session, subnet: Subnet) -> None:
    """A new SLAAC/stateless subnet gives every non-router port its EUI-64 address."""
    for port_id, mac, owner in db.execute(select(Port.id, Port.mac_address, Port.device_owner)
                                          .where(Port.network_id == subnet.network_id)):
        if owner in ROUTER_OWNERS:
            continue
        ordinal = db.scalar(select(IPAllocation.ordinal).where(IPAllocation.port_id == port_id)
                            .order_by(IPAllocation.ordinal.desc()).limit(1))
        ipam.allocate_specific(db, subnet, ipam.eui64(subnet, mac), port_id,
                               (ordinal or 0) + 1)


# ------------------------------------------------------------------ update / delete
def _check_gateway_unused(db: Session, subnet: Subnet) -> None:
    """A router interface holding the gateway address pins it (moved or removed: 409)."""
    port_id = db.scalar(select(IPAllocation.port_id).join(Port, Port.id == IPAllocation.port_id)
                        .where(IPAllocation.subnet_id == subnet.id,
                               IPAllocation.ip_address == subnet.gateway_ip,
                               Port.device_owner.in_(ROUTER_OWNERS)).limit(1))
    if port_id is not None:
        raise errors.GatewayIpInUse(ip_address=subnet.gateway_ip, port_id=port_id)


def update_subnet(db: Session, ctx: RequestContext, subnet_id: str, attrs: dict[str, Any],
                  if_match: int | None = None) -> Subnet:
    subnet = get_visible(db, ctx, subnet_id)
    net_row = db.get_one(Network, subnet.network_id)
    tgt = {**networks.target(net_row), "project_id": subnet.project_id}
    pol.authorize(db, ctx, "update_subnet", tgt)
    pol.authorize_attrs(db, ctx, "update_subnet", attrs, ("segment_id", "service_types"), tgt)
    standard.check_revision(subnet, if_match)
    before = subnet_segments.SubnetState.of(subnet)
    net = netaddr.IPNetwork(subnet.cidr)
    gateway = attrs.get("gateway_ip", subnet.gateway_ip)
    if "gateway_ip" in attrs and gateway is not None:
        _check_gateway(net, gateway)
    if "gateway_ip" in attrs and gateway != subnet.gateway_ip and subnet.gateway_ip:
        _check_gateway_unused(db, subnet)
    if "allocation_pools" in attrs or "gateway_ip" in attrs:
        pools = attrs.get("allocation_pools", subnet.allocation_pools)
        if "allocation_pools" not in attrs and "gateway_ip" in attrs and gateway is not None \
                and any(_in_pool(gateway, p) for p in pools):
            # neutron rebuilds the default pools around a moved gateway
            pools = default_pools(net, gateway) if pools == default_pools(
                net, subnet.gateway_ip) else pools
        subnet.allocation_pools = _check_pools(net, pools, gateway)
        subnet.gateway_ip = gateway
    _check_common(net, {**{"dns_nameservers": subnet.dns_nameservers,
                           "host_routes": subnet.host_routes}, **attrs}, subnet.id)
    if "enable_dhcp" in attrs:
        enable = attrs["enable_dhcp"]
        if enable and ((net.version == 4 and net.prefixlen > 30) or
                       (net.version == 6 and net.prefixlen > 126)):
            raise _bad("Subnet prefix length is incompatible with DHCP service enabled")
        if not enable and (subnet.ipv6_address_mode or subnet.ipv6_ra_mode):
            raise _bad("ipv6_ra_mode or ipv6_address_mode cannot be set when enable_dhcp is "
                       "set to False")
        subnet.enable_dhcp = enable
    if "segment_id" in attrs and attrs["segment_id"] != subnet.segment_id:
        subnet_segments.check_segment_update(db, subnet, attrs["segment_id"])
        subnet.segment_id = attrs["segment_id"]
    for key in ("name", "description", "dns_nameservers", "host_routes", "service_types"):
        if key in attrs:
            setattr(subnet, key, attrs[key])
    standard.touch(subnet)
    standard.touch(net_row)  # a network shows its subnets: a subnet change revises it
    db.flush()
    subnet_segments.after_update(db, subnet, before)  # peer routes, segment provider
    return subnet


def _in_pool(ip: str, pool: dict[str, str]) -> bool:
    v = int(netaddr.IPAddress(ip))
    return int(netaddr.IPAddress(pool["start"])) <= v <= int(netaddr.IPAddress(pool["end"]))


def delete_subnet(db: Session, ctx: RequestContext, subnet_id: str,
                  if_match: int | None = None) -> None:
    subnet = get_visible(db, ctx, subnet_id)
    net_row = db.get_one(Network, subnet.network_id)
    pol.authorize(db, ctx, "delete_subnet", {**networks.target(net_row),
                                             "project_id": subnet.project_id})
    standard.check_revision(subnet, if_match)
    in_use = db.scalar(select(IPAllocation.port_id).join(Port, Port.id == IPAllocation.port_id)
                       .where(IPAllocation.subnet_id == subnet.id,
                              Port.device_owner.not_in(AUTO_DELETE_OWNERS)).limit(1))
    if in_use is not None and not ipam.is_slaac(subnet):
        raise errors.SubnetInUse(subnet_id=subnet.id)
    if in_use is not None:
        # SLAAC addresses of ordinary ports go with the subnet, router ports keep it busy
        busy = db.scalar(select(IPAllocation.port_id).join(Port, Port.id == IPAllocation.port_id)
                         .where(IPAllocation.subnet_id == subnet.id,
                                Port.device_owner.in_(ROUTER_OWNERS)).limit(1))
        if busy is not None:
            raise errors.SubnetInUse(subnet_id=subnet.id)
    db.execute(delete(IPAllocation).where(IPAllocation.subnet_id == subnet.id))
    standard.delete_tags(db, [subnet.id])
    gone = subnet_segments.SubnetState.of(subnet)
    db.delete(subnet)
    db.flush()
    subnet_segments.after_delete(db, gone)  # peer routes, segment provider


standard.register_taggable("subnets", standard.Taggable(
    "subnet", get_visible,
    lambda db, ctx, s: pol.authorize(db, ctx, "update_subnet", {
        "project_id": s.project_id,
        **{k: v for k, v in networks.target(db.get_one(Network, s.network_id)).items()
           if k != "project_id"}})))
