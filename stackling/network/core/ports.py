"""Ports: MAC addresses, fixed IPs (through `ipam`), security groups, port security,
allowed address pairs and the port binding (`binding:*`, set by compute).

A port is DOWN until bound; setting `binding:host_id` binds it (vif_type `ovs`) and
makes it ACTIVE, clearing it unbinds. MACs are unique per network (constraint); a
generated MAC that collides is regenerated, a requested one is a 409 MacAddressInUse.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import netaddr
from sqlalchemy import (
    Integer,
    String,
    bindparam,
    cast,
    delete,
    exists,
    insert,
    literal_column,
    null,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, make_transient_to_detached

from stackling.common.context import RequestContext
from stackling.common.db import insert_absent, utcnow, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    NAME,
    REQUIRED,
    STANDARD,
    Attr,
    any_dict,
    boolean,
    cidr_or_ip,
    dict_of,
    ip_address,
    list_of,
    mac_address,
    mac_or_none,
    one_of,
    string,
    uuid_value,
)
from stackling.network.core import ipam, networks, security_groups
from stackling.network.core.device_owner import check_device_owner
from stackling.network.core.models import (
    AllowedAddressPair,
    IPAllocation,
    Network,
    Port,
    PortSecurityGroup,
    SecurityGroup,
    Subnet,
    Tag,
)
from stackling.network.netconfig import get_config
from stackling.network.querying import Listing
from stackling.network.segments import routed

VNIC_TYPES = ("normal", "direct", "macvtap", "baremetal", "direct-physical",
              "virtio-forwarder", "smart-nic", "vdpa", "accelerator-direct",
              "accelerator-direct-physical", "remote-managed")
ROUTER_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                 "network:ha_router_replicated_interface", "network:router_gateway",
                 "network:router_centralized_snat")
# Ports only the L3 code may delete (neutron: "delete via the router API").
L3_OWNERS = ("network:router_interface", "network:router_interface_distributed",
             "network:ha_router_replicated_interface", "network:router_gateway",
             "network:floatingip")
MAC_ATTEMPTS = 16

# What extension modules (trunks, ...) add to ports, without ports knowing them:
# (db, rendered views) -> None adds attributes; (db, port, facts) -> None before a
# delete raises to refuse it; (db, port) -> None after an update follows its changes.
RENDER_EXTENSIONS: list[Callable[[Session, list[dict[str, Any]]], None]] = []
DELETE_CHECKS: list[Callable[[Session, Port, Mapping[str, Any]], None]] = []
# What a delete's checks and clean-ups need to know of the port, read with its row in
# one statement (a hook with nothing to do costs no query): name -> a scalar expression
# correlated to Port; DELETE_CHECKS get the values as `facts`.
DELETE_FACTS: dict[str, Any] = {}
# What extensions render a new port from that belongs to its network (the network's QoS
# policy), read with the network and its subnets on create: name -> a scalar expression
# correlated to Network; the values are the new port's `standard.written`.
NETWORK_FACTS: dict[str, Any] = {}
AFTER_UPDATE: list[Callable[[Session, Port], None]] = []
# Attributes extensions add whose reading a `get_port:<name>` rule decides (QoS's
# admin-only `resource_request`), hidden after the extensions ran.
RULED_READS: list[str] = []
# (db, ctx, port, attrs, created) -> None stores an extension's attributes.
ATTR_WRITERS: list[Callable[[Session, RequestContext, Port, dict[str, Any], bool], None]] = []
# A render extension's twin for ports made in this request: (views, what the writers
# wrote: standard.written) -> None, with no query.
RENDER_NEW: dict[Callable[..., None], Callable[
    [Session, list[dict[str, Any]], list[dict[str, Any]]], None]] = {}


def _fixed_ips(value: Any) -> list[dict[str, str]]:
    return list_of(dict_of({"subnet_id": (uuid_value, False),
                            "ip_address": (ip_address, False)}))(value)


def _pairs(value: Any) -> list[dict[str, str]]:
    pairs = list_of(dict_of({"ip_address": (cidr_or_ip, True),
                             "mac_address": (mac_address, False)}),
                    nullable_as_empty=True)(value)
    return pairs


def _sg_ids(value: Any) -> list[str]:
    if value is None:
        return []
    ids = list_of(uuid_value)(value)
    return list(dict.fromkeys(ids))


ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": NAME,
    "description": DESCRIPTION,
    "network_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                       sort=True),
    "admin_state_up": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                           sort=True),
    "mac_address": Attr(post=True, put=True, convert=mac_or_none, filter=True, sort=True),
    "fixed_ips": Attr(post=True, put=True, convert=_fixed_ips, filter=True),
    "device_id": Attr(post=True, put=True, default="", convert=string(255), filter=True,
                      sort=True),
    "device_owner": Attr(post=True, put=True, default="", convert=string(255), filter=True,
                         sort=True),
    "status": Attr(filter=True, sort=True),
    "security_groups": Attr(post=True, put=True, convert=_sg_ids, filter=True),
    "port_security_enabled": Attr(post=True, put=True, convert=boolean, filter=True),
    "allowed_address_pairs": Attr(post=True, put=True, convert=_pairs),
    "binding:host_id": Attr(post=True, put=True, convert=string(255, nullable=True),
                            filter=True),
    "binding:vnic_type": Attr(post=True, put=True, default="normal",
                              convert=one_of(*VNIC_TYPES), filter=True),
    "binding:profile": Attr(post=True, put=True, convert=any_dict),
    "binding:vif_type": Attr(filter=True),
    "binding:vif_details": Attr(),
    "ip_allocation": Attr(filter=True, sort=True),
}
BINDING_READ = pol.BINDING_READ


def _fixed_ips_filter(values: list[Any]) -> Any:
    clauses = []
    for value in values:
        k, sep, v = str(value).partition("=")
        if not sep:
            raise errors.BadRequest(f"Invalid fixed_ips filter: {value}")
        if k == "ip_address":
            clauses.append(IPAllocation.ip_address == v)
        elif k == "subnet_id":
            clauses.append(IPAllocation.subnet_id == v)
        elif k == "ip_address_substr":
            clauses.append(IPAllocation.ip_address.contains(v, autoescape=True))
        else:
            raise errors.BadRequest(f"Invalid fixed_ips filter: {value}")
    return Port.id.in_(select(IPAllocation.port_id).where(or_(*clauses)))


LISTING = Listing(
    attrs=ATTRS,
    columns={"id": Port.id, "name": Port.name, "description": Port.description,
             "network_id": Port.network_id, "admin_state_up": Port.admin_state_up,
             "mac_address": Port.mac_address, "device_id": Port.device_id,
             "device_owner": Port.device_owner, "status": Port.status,
             "port_security_enabled": Port.port_security_enabled,
             "binding:host_id": Port.binding_host_id,
             "binding:vnic_type": Port.binding_vnic_type,
             "binding:vif_type": Port.binding_vif_type,
             "ip_allocation": Port.ip_allocation, "project_id": Port.project_id,
             "tenant_id": Port.project_id, "revision_number": Port.revision_number},
    id_column=Port.id,
    special={"fixed_ips": _fixed_ips_filter,
             "security_groups": lambda values: Port.id.in_(
                 select(PortSecurityGroup.port_id).where(
                     PortSecurityGroup.security_group_id.in_(values)))},
    readable=("get_port", BINDING_READ),
)


# ------------------------------------------------------------------ visibility and views
def _visible(ctx: RequestContext) -> Any:
    if ctx.is_admin or ctx.is_service:
        return None
    return or_(Port.project_id == ctx.project_id, Port.network_id.in_(
        select(Network.id).where(Network.project_id == ctx.project_id)))


def get_visible(db: Session, ctx: RequestContext, port_id: str) -> Port:
    port = db.get(Port, port_id)
    if port is None:
        raise errors.PortNotFound(port_id=port_id)
    if not (ctx.is_admin or ctx.is_service or port.project_id == ctx.project_id):
        net = db.get(Network, port.network_id)
        if net is None or net.project_id != ctx.project_id:
            raise errors.PortNotFound(port_id=port_id)
    return port


# The port, its network and whether that network is routed (`routed.is_routed`: a subnet
# bound to a segment), in one statement: what an update or delete starts from.
_PORT_AND_NETWORK = (
    select(Port, Network, exists(select(Subnet.id).where(
        Subnet.network_id == Port.network_id, Subnet.segment_id.is_not(None)))
        .correlate(Port).label("routed"))
    .join(Network, Network.id == Port.network_id).where(Port.id == bindparam("port")))


def _visible_with_network(db: Session, ctx: RequestContext, port_id: str
                          ) -> tuple[Port, Network, bool]:
    """`get_visible`, plus the port's network and whether it is routed."""
    row = db.execute(_PORT_AND_NETWORK, {"port": port_id}).first()
    if row is None:
        raise errors.PortNotFound(port_id=port_id)
    port, net, routed_net = row
    if not (ctx.is_admin or ctx.is_service or port.project_id == ctx.project_id
            or net.project_id == ctx.project_id):
        raise errors.PortNotFound(port_id=port_id)
    return port, net, bool(routed_net)


def list_ports(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Port.__table__)  # rows, not ORM objects: lists are read-only
    clause = _visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def render(db: Session, ctx: RequestContext, ports: Sequence[Port],
           tags: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """API dicts for `ports`: one query per page (of 500), whatever its size."""
    if not ports:
        return []
    hide = pol.ReadFilter(db, ctx, "get_port", (*BINDING_READ, *RULED_READS))
    known = standard.take_known(ports)
    if known is not None:  # just created: nothing to read back
        made = [hide.apply(view(standard.values(p), *k)) for p, k in zip(ports, known,
                                                                          strict=True)]
        written = [standard.take_written(p) for p in ports]
        for extend in RENDER_EXTENSIONS:
            fresh = RENDER_NEW.get(extend)
            if fresh is None:
                extend(db, made)
            else:
                fresh(db, made, written)
        return [hide.apply(v) for v in made] if RULED_READS else made
    ids = [p.id for p in ports]
    fixed: dict[str, list[dict[str, str]]] = {i: [] for i in ids}
    groups: dict[str, list[str]] = {i: [] for i in ids}
    pairs: dict[str, list[dict[str, str]]] = {i: [] for i in ids}
    tagged: dict[str, list[str]] = {i: [] for i in ids}
    stmt = _PARTS if tags is None else _PARTS_UNTAGGED
    for chunk in _chunks(ids):  # one statement for the four child tables
        for kind, port_id, a, b, _ in db.execute(stmt, {"ids": chunk}):
            if kind == 0:
                fixed[port_id].append({"subnet_id": a, "ip_address": b})
            elif kind == 1:
                groups[port_id].append(a)
            elif kind == 2:
                pairs[port_id].append({"ip_address": a, "mac_address": b})
            else:
                tagged[port_id].append(a)
    if tags is None:
        tags = tagged
    out = []
    for p in ports:
        d = standard.values(p)
        i = d["id"]
        out.append(hide.apply(view(d, fixed[i], groups[i], pairs[i], tags.get(i, []))))
    for extend in RENDER_EXTENSIONS:
        extend(db, out)
    return [hide.apply(v) for v in out] if RULED_READS else out


def _parts(with_tags: bool) -> Any:
    """A port page's fixed IPs (by ordinal), security groups, address pairs and tags
    (each by value) as one UNION ALL: (kind, port_id, a, b, ordinal)."""
    ids = bindparam("ids", expanding=True)
    no_str, no_int = cast(null(), String(255)), cast(null(), Integer)
    parts = [
        select(literal_column("0").label("kind"), IPAllocation.port_id.label("owner"),
               IPAllocation.subnet_id.label("a"), IPAllocation.ip_address.label("b"),
               IPAllocation.ordinal.label("n")).where(IPAllocation.port_id.in_(ids)),
        select(literal_column("1"), PortSecurityGroup.port_id,
               PortSecurityGroup.security_group_id, no_str, no_int)
        .where(PortSecurityGroup.port_id.in_(ids)),
        select(literal_column("2"), AllowedAddressPair.port_id, AllowedAddressPair.ip_address,
               AllowedAddressPair.mac_address, no_int)
        .where(AllowedAddressPair.port_id.in_(ids)),
    ]
    if with_tags:
        parts.append(select(literal_column("3"), Tag.resource_id, Tag.tag, no_str, no_int)
                     .where(Tag.resource_id.in_(ids)))
    union = union_all(*parts)
    cols = union.selected_columns
    return union.order_by(cols.kind, cols.n, cols.a, cols.b)


_PARTS = _parts(True)  # built once: every rendered port asks
_PARTS_UNTAGGED = _parts(False)


def _chunks(ids: list[str], n: int = 500) -> list[list[str]]:
    return [ids[i:i + n] for i in range(0, len(ids), n)]


def view(p: dict[str, Any], fixed_ips: list[dict[str, str]], security_groups: list[str],
         pairs: list[dict[str, str]], tags: list[str]) -> dict[str, Any]:
    return {
        "id": p["id"], "name": p["name"], "network_id": p["network_id"],
        "tenant_id": p["project_id"], "project_id": p["project_id"],
        "mac_address": p["mac_address"], "admin_state_up": p["admin_state_up"],
        "status": p["status"], "device_id": p["device_id"], "device_owner": p["device_owner"],
        "fixed_ips": fixed_ips, "allowed_address_pairs": pairs,
        "security_groups": security_groups,
        "port_security_enabled": p["port_security_enabled"],
        "binding:host_id": p["binding_host_id"], "binding:profile": p["binding_profile"] or {},
        "binding:vif_type": p["binding_vif_type"],
        "binding:vif_details": p["binding_vif_details"] or {},
        "binding:vnic_type": p["binding_vnic_type"], "ip_allocation": p["ip_allocation"],
        "dns_name": p["dns_name"],
        **standard.standard_values(p, tags),
    }


# ------------------------------------------------------------------ helpers
def _random_mac(base: str) -> str:
    octets = base.split(":")
    out = [o if i < 3 or o != "00" else f"{random.randint(0, 255):02x}"
           for i, o in enumerate(octets)]
    return ":".join(out)


def _target(net: Network, project_id: str, device_owner: str = "") -> dict[str, Any]:
    return {**networks.target(net), "project_id": project_id, "tenant_id": project_id,
            "device_owner": device_owner}


def _bind(port: Port, host: str | None) -> None:
    port.binding_host_id = host or ""
    if port.binding_host_id:
        port.binding_vif_type = "ovs"
        port.binding_vif_details = {"connectivity": "l2", "port_filter": True,
                                    "ovs_hybrid_plug": False, "datapath_type": "system",
                                    "bridge_name": "br-int"}
        port.status = "ACTIVE"
    else:
        port.binding_vif_type = "unbound"
        port.binding_vif_details = {}
        port.status = "DOWN"


bind = _bind  # for extensions: trunk sub-ports are bound where their parent is


def _security_groups(db: Session, ctx: RequestContext, project_id: str,
                     ids: list[str]) -> list[str]:
    if not ids:
        return []
    found = {sg_id: owner for sg_id, owner in db.execute(
        select(SecurityGroup.id, SecurityGroup.project_id).where(SecurityGroup.id.in_(ids)))}
    admin = ctx.is_admin or ctx.is_service
    from stackling.network.rbac.visibility import granted_ids

    foreign = [i for i in ids if i in found and not admin and found[i] != project_id]
    shared = granted_ids(db, "security_group", foreign, project_id)  # none: no query
    missing = [i for i in ids if i not in found
               or not (admin or found[i] == project_id or i in shared)]
    if missing:
        raise errors.SecurityGroupNotFound(id=", ".join(missing))
    return ids


def _set_security_groups(db: Session, port: Port, ids: list[str]) -> None:
    # Rows another identical request already made are "already there" (insert_absent),
    # so concurrent identical updates both succeed instead of one unique violation.
    db.execute(delete(PortSecurityGroup).where(PortSecurityGroup.port_id == port.id,
                                               PortSecurityGroup.security_group_id.not_in(ids)))
    insert_absent(db, PortSecurityGroup, [{"port_id": port.id, "security_group_id": i}
                                          for i in ids])
    db.expire(port, ["security_group_bindings"])


def _set_pairs(db: Session, port: Port, pairs: list[dict[str, str]]) -> None:
    seen = set()
    rows = []
    for pair in pairs:
        mac = pair.get("mac_address") or port.mac_address
        key = (pair["ip_address"], mac)
        if key in seen:
            raise errors.DuplicateAddressPairInRequest(mac_address=mac,
                                                       ip_address=pair["ip_address"])
        seen.add(key)
        rows.append({"port_id": port.id, "ip_address": pair["ip_address"], "mac_address": mac})
    # As security groups above: an identical concurrent update's rows are already there.
    keep = [(r["ip_address"], r["mac_address"]) for r in rows]
    stale = [(ip, mac) for ip, mac in db.execute(
        select(AllowedAddressPair.ip_address, AllowedAddressPair.mac_address).where(
            AllowedAddressPair.port_id == port.id)) if (ip, mac) not in keep]
    for ip, mac in stale:
        db.execute(delete(AllowedAddressPair).where(
            AllowedAddressPair.port_id == port.id, AllowedAddressPair.ip_address == ip,
            AllowedAddressPair.mac_address == mac))
    insert_absent(db, AllowedAddressPair, rows)
    db.expire(port, ["allowed_address_pairs"])


_NETWORK_SUBNETS = (select(Subnet).where(Subnet.network_id == bindparam("network"))
                    .order_by(Subnet.created_at, Subnet.id))  # built once: every port asks


def network_subnets(db: Session, network_id: str) -> list[Subnet]:
    """The network's subnets, in the order port creation tries them."""
    return list(db.scalars(_NETWORK_SUBNETS, {"network": network_id}))


_WITH_SUBNETS: list[Any] = []  # built on first use (after the extensions registered)


def _network_with_subnets(db: Session, ctx: RequestContext, network_id: str
                          ) -> tuple[Network, list[Subnet], dict[str, Any]]:
    """`networks.get_visible`, the network's subnets (`network_subnets`) and its
    NETWORK_FACTS, in one statement."""
    if not _WITH_SUBNETS:
        _WITH_SUBNETS.append((list(NETWORK_FACTS), select(
            Network, Subnet, *(e.label(f"fact_{n}") for n, e in NETWORK_FACTS.items()))
            .outerjoin(Subnet, Subnet.network_id == Network.id)
            .where(Network.id == bindparam("network"))
            .order_by(Subnet.created_at, Subnet.id)))
    names, stmt = _WITH_SUBNETS[0]
    rows = db.execute(stmt, {"network": network_id}).all()
    net = networks.visible_or_404(db, ctx, rows[0][0] if rows else None, network_id)
    return (net, [r[1] for r in rows if r[1] is not None],
            dict(zip(names, rows[0][2:], strict=True)))


class _Subnets:
    """The network's subnets, loaded once per request."""

    def __init__(self, db: Session, network_id: str, known: list[Subnet] | None = None
                 ) -> None:
        self.all = list(db.scalars(_NETWORK_SUBNETS, {"network": network_id})) \
            if known is None else list(known)
        self.by_id = {s.id: s for s in self.all}

    def containing(self, ip: str) -> Subnet | None:
        addr = netaddr.IPAddress(ip)
        for s in self.all:
            if addr in netaddr.IPNetwork(s.cidr):
                return s
        return None

    def for_owner(self, device_owner: str) -> list[Subnet]:
        """Candidate subnets for automatic allocation (service types first)."""
        typed = [s for s in self.all if s.service_types and device_owner in s.service_types]
        plain = [s for s in self.all if not s.service_types]
        if device_owner == "network:dhcp":
            plain = [s for s in self.all if s.enable_dhcp and s not in typed]
        return typed + plain


def _allocate(db: Session, port: Port, subnets: _Subnets, requested: list[dict[str, str]] | None,
              keep: dict[tuple[str, str], int] | None = None) -> list[dict[str, str]]:
    """Give the port its fixed IPs: `requested` (None = automatic). `keep` holds the
    (subnet_id, ip) pairs the port already has and keeps (on update). Returns the new
    addresses in order."""
    is_router = port.device_owner in ROUTER_OWNERS
    made: list[dict[str, str]] = []
    ordinal = max(keep.values(), default=-1) + 1 if keep else 0
    keep = keep or {}
    if requested is None:
        candidates = subnets.for_owner(port.device_owner)
        if subnets.all and not candidates:
            raise errors.IpAddressGenerationFailureNoMatchingSubnet(
                network_id=port.network_id, service_type=port.device_owner)
        v4 = [s for s in candidates if s.ip_version == 4]
        v6_stateful = [s for s in candidates if s.ip_version == 6 and not ipam.is_slaac(s)]
        v6_slaac = [s for s in candidates if ipam.is_slaac(s)]
        for group in (v4, v6_stateful):
            if not group:
                continue
            for subnet in group:
                ip = ipam.allocate_any(db, subnet, port.id, ordinal, port.device_owner)
                if ip:
                    made.append({"subnet_id": subnet.id, "ip_address": ip})
                    ordinal += 1
                    break
            else:
                raise errors.IpAddressGenerationFailure(net_id=port.network_id)
        if not is_router:
            for subnet in v6_slaac:
                ip = ipam.allocate_specific(db, subnet, ipam.eui64(subnet, port.mac_address),
                                            port.id, ordinal)
                made.append({"subnet_id": subnet.id, "ip_address": ip})
                ordinal += 1
        return made
    for entry in requested:
        subnet_id, ip = entry.get("subnet_id"), entry.get("ip_address")
        if (subnet_id, ip) in keep:
            continue
        if subnet_id is not None:
            subnet = subnets.by_id.get(subnet_id)
            if subnet is None:
                raise errors.InvalidInput(
                    error_message=f"Failed to create port on network {port.network_id}, "
                                  f"because fixed_ips included invalid subnet {subnet_id}")
        elif ip is not None:
            subnet = subnets.containing(ip)
            if subnet is None:
                raise errors.InvalidIpForNetwork(ip_address=ip)
        else:
            raise errors.InvalidInput(error_message="IP allocation requires subnet_id or "
                                                    "ip_address")
        if ipam.is_slaac(subnet) and not is_router:
            eui = ipam.eui64(subnet, port.mac_address)
            if ip is not None and ip != eui:
                raise errors.InvalidInput(
                    error_message=f"IPv6 address {ip} cannot be directly assigned to a port "
                                  f"on subnet {subnet.id} with {subnet.ipv6_address_mode} "
                                  "address mode")
            ip = eui
        if ip is not None:
            ip = ipam.allocate_specific(db, subnet, ip, port.id, ordinal)
        else:
            ip = ipam.allocate_any(db, subnet, port.id, ordinal, port.device_owner)
            if ip is None:
                raise errors.IpAddressGenerationFailure(net_id=port.network_id)
        made.append({"subnet_id": subnet.id, "ip_address": ip})
        ordinal += 1
    return made


def _check_fixed_ip_policy(db: Session, ctx: RequestContext, action: str, net: Network,
                           fixed_ips: list[dict[str, str]], tgt: dict[str, Any]) -> None:
    if any("ip_address" in f for f in fixed_ips):
        pol.authorize(db, ctx, f"{action}:fixed_ips:ip_address", tgt)
    if any("subnet_id" in f for f in fixed_ips) and not net.shared:
        from stackling.network.rbac.visibility import granted_ids

        # allowed by the rule, or else by the network being shared with us (the rule is
        # evaluated in memory; the RBAC read only when it says no)
        if not (pol.allowed(db, ctx, f"{action}:fixed_ips:subnet_id", tgt)
                or granted_ids(db, "network", [net.id], ctx.project_id)):
            raise errors.PolicyNotAuthorized(action=f"{action}:fixed_ips:subnet_id")


# ------------------------------------------------------------------ create
def create_port(db: Session, ctx: RequestContext, attrs: dict[str, Any], *,
                subnets: list[Subnet] | None = None, status: str | None = None) -> Port:
    """POST /v2.0/ports. For the L3 code: `subnets` are the network's subnets when the
    caller has read them already (in `_NETWORK_SUBNETS` order); `status` is the port's
    status from its insert on (router and floating IP ports)."""
    facts: dict[str, Any] = {}
    if subnets is None:
        net, subnets, facts = _network_with_subnets(db, ctx, attrs["network_id"])
    else:
        net = networks.get_visible(db, ctx, attrs["network_id"])
    project_id = attrs["project_id"]
    owner = attrs.get("device_owner", "")
    tgt = _target(net, project_id, owner)
    pol.authorize(db, ctx, "create_port", tgt)
    if not owner.startswith("network:"):  # router/DHCP ports are made by neutron itself
        quotas.check(db, project_id, "port")
    admin = ctx.is_admin or ctx.is_service
    from stackling.network.rbac.visibility import granted_ids

    if not (admin or net.shared or net.project_id == project_id
            or granted_ids(db, "network", [net.id], project_id)):
        # visible (external) but not shared: only its owner or an admin may plug into it
        raise errors.PolicyNotAuthorized(action="create_port:network_id")
    if owner.startswith("network:"):
        pol.authorize(db, ctx, "create_port:device_owner", tgt)
    check_device_owner(db, ctx, project_id, owner, attrs.get("device_id"))
    pol.authorize_attrs(db, ctx, "create_port", attrs,
                        ("mac_address", "binding:host_id", "binding:profile",
                         "allowed_address_pairs", "port_security_enabled"), tgt,
                        {"allowed_address_pairs": [], "binding:profile": {},
                         "binding:host_id": "", "port_security_enabled":
                             net.port_security_enabled})
    fixed = attrs.get("fixed_ips")
    if fixed:
        _check_fixed_ip_policy(db, ctx, "create_port", net, fixed, tgt)
    port_security = attrs.get("port_security_enabled", net.port_security_enabled)
    sg_ids = attrs.get("security_groups")
    if sg_ids and not port_security:
        raise errors.PortSecurityAndIPRequiredForSecurityGroups()
    if sg_ids is None:
        sg_ids = []
        if port_security and not owner.startswith("network:"):
            default = security_groups.ensure_default(db, project_id)
            sg_ids = [default] if default else []
    else:
        sg_ids = _security_groups(db, ctx, project_id, sg_ids)
    pairs = attrs.get("allowed_address_pairs") or []
    if pairs and not port_security:
        raise errors.AddressPairAndPortSecurityRequired()
    now = utcnow()
    port = Port(id=uuid_str(), project_id=project_id, network_id=net.id,
                name=attrs.get("name", ""), description=attrs.get("description", ""),
                admin_state_up=attrs.get("admin_state_up", True), device_id=attrs.get(
                    "device_id", ""), device_owner=owner, port_security_enabled=port_security,
                binding_vnic_type=attrs.get("binding:vnic_type", "normal"),
                binding_profile=attrs.get("binding:profile") or {},
                ip_allocation="none" if fixed == [] else "immediate",
                created_at=now, updated_at=now, revision_number=1)
    _bind(port, attrs.get("binding:host_id"))
    standard.written(port).update(facts)
    if status is not None:
        port.status = status
    on_net = _Subnets(db, net.id, subnets)
    routed_net = any(s.segment_id for s in on_net.all)
    if routed_net and fixed is None:  # routed network: subnets the host reaches, or defer
        usable = routed.candidate_subnets(db, net.id, on_net.all, port.binding_host_id, False)
        if usable is None:
            port.ip_allocation = "deferred"
        on_net.all = usable or []
    _insert_port(db, net, port, attrs.get("mac_address"))
    made = _allocate(db, port, on_net, fixed)
    if routed_net:
        routed.after_port_write(db, port.id, net.id, port.binding_host_id, set())
    if sg_ids:
        db.execute(_INSERT_GROUPS, [{"port_id": port.id, "security_group_id": i}
                                               for i in sg_ids])
    pair_views: list[dict[str, str]] = []
    if pairs:
        _set_pairs(db, port, pairs)
        pair_views = [{"ip_address": a.ip_address, "mac_address": a.mac_address}
                      for a in port.allowed_address_pairs]
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "port", port.id, tags, new=True)
    for write in ATTR_WRITERS:
        write(db, ctx, port, attrs, True)
    db.flush()
    # what render() would read back, known already (saves four queries per create)
    port.known_parts = (made, list(sg_ids), pair_views, sorted(tags))  # type: ignore[attr-defined]
    return port


_INSERT_GROUPS = insert(PortSecurityGroup)  # built once: most ports get a group


def _insert_port(db: Session, net: Network, port: Port, mac: str | None) -> None:
    base = get_config(db).base_mac
    stmt = _SKIP_TAKEN_MAC.get(db.get_bind().dialect.name)
    if stmt is not None:
        # SQLite, PostgreSQL: a MAC taken on the network skips the row (ON CONFLICT DO
        # NOTHING on that unique key; the row count tells), no savepoint: SQLite's writers
        # run one at a time, so no other error can fail the insert; on PostgreSQL a
        # network deleted meanwhile (its foreign key) ends the request: 404
        port.mac_address = mac or ""  # set below, per attempt
        row = _row_of(port)
        for _ in range(MAC_ATTEMPTS):
            port.mac_address = row["mac_address"] = mac or _random_mac(base)
            try:
                inserted = db.execute(stmt, row).rowcount == 1  # type: ignore[attr-defined]
            except IntegrityError:  # PostgreSQL: the network was deleted meanwhile
                raise errors.NetworkNotFound(net_id=net.id) from None
            if inserted:
                make_transient_to_detached(port)  # the row is there: persistent as loaded
                db.add(port)
                return
            if mac is not None:
                raise errors.MacAddressInUse(net_id=net.id, mac=mac)
        raise errors.MacAddressInUse(net_id=net.id, mac=port.mac_address)
    # PostgreSQL, MariaDB: in a savepoint, catching the duplicate key (or a concurrent
    # delete's foreign key violation) without aborting the transaction
    for _ in range(MAC_ATTEMPTS):
        port.mac_address = mac or _random_mac(base)
        try:
            with db.begin_nested():
                db.add(port)
                db.flush()
            return
        except IntegrityError:
            # the savepoint rollback made `port` transient again: retry with a new MAC
            if mac is not None:
                raise errors.MacAddressInUse(net_id=net.id, mac=mac) from None
    raise errors.MacAddressInUse(net_id=net.id, mac=port.mac_address)


def _row_of(port: Port) -> dict[str, Any]:
    """The new port's column values (scalar column defaults for those not set)."""
    row = {}
    for column in Port.__table__.columns:
        if column.key in port.__dict__:
            row[column.key] = port.__dict__[column.key]
        else:
            default = column.default
            if default is None or not default.is_scalar:
                raise ValueError(f"port column {column.key} needs a value")  # a bug
            row[column.key] = default.arg  # type: ignore[attr-defined]
            setattr(port, column.key, default.arg)  # type: ignore[attr-defined]
    return row


def _skip_taken_mac() -> dict[str, Any]:
    from sqlalchemy.dialects.postgresql import insert as pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    key = ["network_id", "mac_address"]  # only that unique key: any other error raises
    table = Port.__table__  # a Core insert: its result has the row count
    return {name: ins(table).on_conflict_do_nothing(index_elements=key)
            .execution_options(preserve_rowcount=True)
            for name, ins in (("sqlite", sqlite_insert), ("postgresql", pg_insert))}


_SKIP_TAKEN_MAC = _skip_taken_mac()  # built once: every port insert runs one


# ------------------------------------------------------------------ update
def update_port(db: Session, ctx: RequestContext, port_id: str, attrs: dict[str, Any],
                if_match: int | None = None) -> Port:
    port, net, routed_net = _visible_with_network(db, ctx, port_id)
    tgt = _target(net, port.project_id, port.device_owner)
    pol.authorize(db, ctx, "update_port", tgt)
    owner = attrs.get("device_owner", port.device_owner)
    if "device_owner" in attrs and owner.startswith("network:") and owner != port.device_owner:
        pol.authorize(db, ctx, "update_port:device_owner", tgt)
    if "device_owner" in attrs or "device_id" in attrs:
        check_device_owner(db, ctx, port.project_id, owner,
                           attrs.get("device_id", port.device_id))
    pol.authorize_attrs(db, ctx, "update_port", attrs,
                        ("mac_address", "binding:host_id", "binding:profile",
                         "allowed_address_pairs", "port_security_enabled"), tgt)
    standard.check_revision(port, if_match)
    old_segments = routed.segments_of_port(db, port.id) if routed_net else set()
    port_security = attrs.get("port_security_enabled", port.port_security_enabled)
    pairs = attrs.get("allowed_address_pairs")
    if not port_security:
        sgs = attrs["security_groups"] if "security_groups" in attrs else \
            [b.security_group_id for b in port.security_group_bindings]
        if sgs:
            raise (errors.PortSecurityAndIPRequiredForSecurityGroups()
                   if "security_groups" in attrs else errors.PortSecurityPortHasSecurityGroup())
        if pairs or (pairs is None and port.allowed_address_pairs):
            raise errors.AddressPairAndPortSecurityRequired()
    if "mac_address" in attrs:
        mac = attrs["mac_address"]
        if port.binding_host_id and mac != port.mac_address:
            raise errors.InUse(f"Unable to complete operation on port {port.id}, port is "
                               "already bound, port type: ovs, old_mac "
                               f"{port.mac_address}, new_mac {mac}.")
        if mac != port.mac_address:
            _change_mac(db, net, port, mac)
    for key, column in (("name", "name"), ("description", "description"),
                        ("admin_state_up", "admin_state_up"), ("device_id", "device_id"),
                        ("device_owner", "device_owner"),
                        ("port_security_enabled", "port_security_enabled"),
                        ("binding:vnic_type", "binding_vnic_type")):
        if key in attrs:
            setattr(port, column, attrs[key])
    if "binding:profile" in attrs:
        port.binding_profile = attrs["binding:profile"] or {}
    if "binding:host_id" in attrs:
        _bind(port, attrs["binding:host_id"])
    if "security_groups" in attrs:
        _set_security_groups(db, port, _security_groups(db, ctx, port.project_id,
                                                        attrs["security_groups"]))
    if pairs is not None:
        _set_pairs(db, port, pairs)
    if "fixed_ips" in attrs:
        _check_fixed_ip_policy(db, ctx, "update_port", net, attrs["fixed_ips"], tgt)
        _replace_fixed_ips(db, port, attrs["fixed_ips"])
    if routed_net:
        _routed_binding(db, port, "fixed_ips" in attrs, old_segments)
    for write in ATTR_WRITERS:
        write(db, ctx, port, attrs, False)
    standard.touch(port)
    if "binding:host_id" in attrs:
        for after in AFTER_UPDATE:
            after(db, port)
    db.flush()
    return port


def _routed_binding(db: Session, port: Port, fixed_given: bool, old_segments: set[str]
                    ) -> None:
    """Routed networks: a deferred port gets its address when first bound to a host (from
    a subnet on a segment the host reaches); then the segment checks and placement."""
    if (port.binding_host_id and not fixed_given and port.ip_allocation == "deferred"
            and not old_segments and not port.fixed_ips):
        subnets = _Subnets(db, port.network_id)
        subnets.all = routed.candidate_subnets(db, port.network_id, subnets.all,
                                               port.binding_host_id, False) or []
        _allocate(db, port, subnets, None)
        db.expire(port, ["fixed_ips"])
    routed.after_port_write(db, port.id, port.network_id, port.binding_host_id, old_segments)


def _change_mac(db: Session, net: Network, port: Port, mac: str | None) -> None:
    base = get_config(db).base_mac
    for _ in range(MAC_ATTEMPTS):
        new = mac or _random_mac(base)
        try:
            with db.begin_nested():
                port.mac_address = new
                db.flush()
            return
        except IntegrityError:
            if mac is not None:
                raise errors.MacAddressInUse(net_id=net.id, mac=mac) from None
    raise errors.MacAddressInUse(net_id=net.id, mac=mac)


def _replace_fixed_ips(db: Session, port: Port, requested: list[dict[str, str]]) -> None:
    ipam.lock_port(db, port.id)
    db.expire(port, ["fixed_ips"])  # as a concurrent update of this port left them
    current = [(a.subnet_id, a.ip_address, a.ordinal) for a in port.fixed_ips]
    keep: dict[tuple[str, str], int] = {}
    wanted: list[dict[str, str]] = []
    for entry in requested:
        sid, ip = entry.get("subnet_id"), entry.get("ip_address")
        match = next(((s, i, o) for s, i, o in current
                      if (s, i) not in keep and (ip is None or i == ip)
                      and (sid is None or s == sid) and (sid is not None or ip is not None)),
                     None)
        if match is not None:
            keep[(match[0], match[1])] = match[2]
            entry = {"subnet_id": match[0], "ip_address": match[1]}
        wanted.append(entry)
    if port.device_owner not in ROUTER_OWNERS:
        # neutron keeps SLAAC/DHCPv6-stateless addresses of ordinary ports
        slaac = {a.subnet_id for a in port.fixed_ips if ipam.is_slaac(a_subnet(db, a))}
        for s, i, o in current:
            if s in slaac and (s, i) not in keep:
                keep[(s, i)] = o
    ipam.release_port(db, port.id, list(keep))
    db.expire(port, ["fixed_ips"])
    subnets = _Subnets(db, port.network_id)
    _allocate(db, port, subnets, wanted, keep=keep)
    port.ip_allocation = "none" if not requested else "immediate"


def a_subnet(db: Session, allocation: IPAllocation) -> Subnet:
    return db.get_one(Subnet, allocation.subnet_id)


# ------------------------------------------------------------------ delete
def _delete_facts() -> dict[str, Any]:
    from stackling.network.l3.models import FloatingIP

    return {"floatingips": exists(select(FloatingIP.id).where(
                FloatingIP.fixed_port_id == Port.id)).correlate(Port),
            "tagged": exists(select(Tag.tag).where(Tag.resource_id == Port.id))
            .correlate(Port),
            **DELETE_FACTS}


_FOR_DELETE: list[Any] = []  # the statement, built on first use (after the extensions)


def _for_delete(db: Session, ctx: RequestContext, port_id: str
                ) -> tuple[Port, Network, dict[str, Any]]:
    """`_visible_with_network` and what the delete needs to know (`_delete_facts`)."""
    if not _FOR_DELETE:
        facts = _delete_facts()
        _FOR_DELETE.append((list(facts), _PORT_AND_NETWORK.add_columns(
            *(expr.label(f"fact_{name}") for name, expr in facts.items()))))
    names, stmt = _FOR_DELETE[0]
    row = db.execute(stmt, {"port": port_id}).first()
    if row is None:
        raise errors.PortNotFound(port_id=port_id)
    port, net, routed_net = row[:3]
    if not (ctx.is_admin or ctx.is_service or port.project_id == ctx.project_id
            or net.project_id == ctx.project_id):
        raise errors.PortNotFound(port_id=port_id)
    return port, net, {"routed": bool(routed_net), **dict(zip(names, row[3:], strict=True))}


def delete_port(db: Session, ctx: RequestContext, port_id: str, if_match: int | None = None,
                *, l3_port_check: bool = True) -> None:
    port, net, facts = _for_delete(db, ctx, port_id)
    pol.authorize(db, ctx, "delete_port", _target(net, port.project_id, port.device_owner))
    standard.check_revision(port, if_match)
    if l3_port_check and port.device_owner in L3_OWNERS:
        raise errors.ServicePortInUse(port_id=port.id,
                                      reason=f"has device owner {port.device_owner}")
    for check in DELETE_CHECKS:
        check(db, port, facts)
    if facts["floatingips"]:
        _disassociate_floatingips(db, port.id)
    old_segments = routed.segments_of_port(db, port.id) if facts["routed"] else set()
    if facts["tagged"]:
        standard.delete_tags(db, [port.id])
    db.expunge(port)
    # its addresses, security groups, address pairs and extension rows go with it
    # (ON DELETE CASCADE). A trunk or local IP that claimed it after the read above (a
    # concurrent writer on PostgreSQL or MariaDB) is refused by their foreign keys.
    try:
        db.execute(delete(Port).where(Port.id == port.id))
    except IntegrityError:
        raise errors.ServicePortInUse(port_id=port.id,
                                      reason="claimed by a trunk or a local IP") from None
    if old_segments:  # its segments' reserved counts and its IPv4 usage
        routed.after_port_change(db, port.id, old_segments, deleted=True)


def _disassociate_floatingips(db: Session, port_id: str) -> None:
    """A port is going away: its floating IPs stay, unassociated (neutron's
    disassociate_floatingips, which its L3 plugin runs before a port delete)."""
    from stackling.network.l3.models import FloatingIP

    db.execute(update(FloatingIP).where(FloatingIP.fixed_port_id == port_id).values(
        fixed_port_id=None, fixed_ip_address=None, router_id=None, status="DOWN",
        revision_number=FloatingIP.revision_number + 1, updated_at=utcnow()))


standard.register_taggable("ports", standard.Taggable(
    "port", get_visible,
    lambda db, ctx, p: pol.authorize(db, ctx, "update_port", _target(
        db.get_one(Network, p.network_id), p.project_id, p.device_owner))))
