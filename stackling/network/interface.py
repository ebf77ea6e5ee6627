"""The network service's in-process interface, for compute and orchestration.

What Nova's neutron client and Heat's neutron plugin do over HTTP, as direct calls in
the caller's transaction. Semantics, policy and dict shapes are the REST API's:

- every function takes `(db, ctx, ...)`; `ctx` is checked exactly as an HTTP caller with
  that context would be (a member sees only what it may see; provider and binding
  attributes are hidden from non-admins). Compute binds ports with `ctx.elevated()`.
- bodies are the inner resource dicts of the REST API (`{"network_id": ..., "fixed_ips":
  [...]}`); the wrapped form `{"port": {...}}` is accepted too. They go through the same
  attribute validation as a POST/PUT (unknown attributes, types, CIDRs...).
- results are the REST API's resource dicts (`{"id", "fixed_ips", "mac_address", ...}`);
  list functions return lists of them.
- errors are the same Neutron `ApiError`s (`NetworkNotFound`, `PortNotFound`,
  `IpAddressGenerationFailure`, `PolicyNotAuthorized`, ...), with their HTTP status.
- filters are keyword arguments with the REST query names and values
  (`list_ports(db, ctx, device_id=server_id)`, `list_networks(db, ctx, shared=True)`);
  a list value ORs (`id=[a, b]`); `fields=[...]` selects attributes.

Nothing here commits: the caller's transaction does.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.listing import ListParams, select_fields
from stackling.network import compute_hooks
from stackling.network.attributes import Attr, parse_create, parse_update
from stackling.network.compute_hooks import Aggregate, ComputeHooks
from stackling.network.core import networks, ports, security_groups, subnets
from stackling.network.errors import NetworkNotFound
from stackling.network.querying import Listing, params_from

__all__ = [
    "create_network", "create_port", "delete_port", "get_network", "get_port", "get_subnet",
    "list_networks", "list_ports", "list_security_groups", "list_subnets", "update_port",
    "get_auto_allocated_topology", "floating_ips_by_port", "list_floating_ips",
    "get_floating_ip", "create_floating_ip", "update_floating_ip", "delete_floating_ip",
    "get_security_group", "create_security_group", "delete_security_group",
    # routed networks (stackling/network/README.md, "Routed networks")
    "segments_for_host", "hosts_for_segment", "segment_of_port", "segment_aggregate_uuid",
    "network_segment_aggregates", "segment_free_ipv4", "is_routed_network",
    # compute's side (network.compute_hooks)
    "ComputeHooks", "Aggregate", "register_compute", "record_hosts", "port_headroom",
    # the routed-network audit (stackling audit, GET /audit)
    "check_routed_segments", "check_routed_ports",
    # errors callers raise or catch by type (every error is an ApiError with its status)
    "NetworkNotFound",
]


def _unwrap(body: Any, resource: str) -> Any:
    if isinstance(body, dict) and set(body) == {resource} and isinstance(body[resource], dict):
        return body[resource]
    return body


def _params(listing: Listing, filters: dict[str, Any]) -> ListParams:
    return params_from(filters, listing)


def _create_attrs(ctx: RequestContext, body: Any, resource: str, attrs: dict[str, Attr]
                  ) -> dict[str, Any]:
    return parse_create(ctx, _unwrap(body, resource), attrs)


def _update_attrs(ctx: RequestContext, body: Any, resource: str, attrs: dict[str, Attr]
                  ) -> dict[str, Any]:
    return parse_update(ctx, {resource: _unwrap(body, resource)}, resource, attrs)


# ------------------------------------------------------------------ networks
def list_networks(db: Session, ctx: RequestContext, **filters: Any) -> list[dict[str, Any]]:
    params = _params(networks.LISTING, filters)
    rows = networks.list_networks(db, ctx, params).rows
    return [select_fields(n, params.fields) for n in networks.render(db, ctx, rows)]


def get_network(db: Session, ctx: RequestContext, network_id: str) -> dict[str, Any]:
    return networks.render(db, ctx, [networks.get_visible(db, ctx, network_id)])[0]


def create_network(db: Session, ctx: RequestContext, body: Any) -> dict[str, Any]:
    net = networks.create_network(db, ctx, _create_attrs(ctx, body or {}, "network",
                                                         networks.ATTRS))
    return networks.render(db, ctx, [net])[0]


# ------------------------------------------------------------------ subnets
def list_subnets(db: Session, ctx: RequestContext, **filters: Any) -> list[dict[str, Any]]:
    params = _params(subnets.LISTING, filters)
    rows = subnets.list_subnets(db, ctx, params).rows
    return [select_fields(s, params.fields) for s in subnets.render(db, ctx, rows)]


def get_subnet(db: Session, ctx: RequestContext, subnet_id: str) -> dict[str, Any]:
    return subnets.render(db, ctx, [subnets.get_visible(db, ctx, subnet_id)])[0]


# ------------------------------------------------------------------ ports
def list_ports(db: Session, ctx: RequestContext, **filters: Any) -> list[dict[str, Any]]:
    params = _params(ports.LISTING, filters)
    rows = ports.list_ports(db, ctx, params).rows
    return [select_fields(p, params.fields) for p in ports.render(db, ctx, rows)]


def get_port(db: Session, ctx: RequestContext, port_id: str) -> dict[str, Any]:
    return ports.render(db, ctx, [ports.get_visible(db, ctx, port_id)])[0]


def create_port(db: Session, ctx: RequestContext, body: Any) -> dict[str, Any]:
    port = ports.create_port(db, ctx, _create_attrs(ctx, body, "port", ports.ATTRS))
    return ports.render(db, ctx, [port])[0]


def update_port(db: Session, ctx: RequestContext, port_id: str, body: Any) -> dict[str, Any]:
    port = ports.update_port(db, ctx, port_id, _update_attrs(ctx, body, "port", ports.ATTRS))
    return ports.render(db, ctx, [port])[0]


def delete_port(db: Session, ctx: RequestContext, port_id: str) -> None:
    ports.delete_port(db, ctx, port_id)


# ------------------------------------------------------------------ security groups
def list_security_groups(db: Session, ctx: RequestContext, **filters: Any
                         ) -> list[dict[str, Any]]:
    params = _params(security_groups.SG_LISTING, filters)
    rows = security_groups.list_groups(db, ctx, params).rows
    return [select_fields(g, params.fields) for g in security_groups.render_groups(db, rows)]


# ------------------------------------------------------------------ auto-allocated topology
def get_auto_allocated_topology(db: Session, ctx: RequestContext, project_id: str,
                                dry_run: bool = False) -> dict[str, Any]:
    """`GET /v2.0/auto-allocated-topology/{project_id}[?fields=dry-run]`: the project's
    `{"id": network_id, "project_id", "tenant_id"}`, built on first use; 409
    AutoAllocationFailure when the deployment lacks a default external network or
    default subnet pools."""
    from stackling.network.l3 import auto_allocate

    return auto_allocate.get_topology(db, ctx, project_id, dry_run=dry_run)


# ------------------------------------------------------------------ floating IPs
def floating_ips_by_port(db: Session, port_ids: list[str]) -> dict[str, list[tuple[str, str]]]:
    """{port_id: [(fixed_ip_address, floating_ip_address), ...]} for the associated
    floating IPs of these ports, in one query (compute's `addresses`; no policy: the
    caller already may see the ports)."""
    from sqlalchemy import select

    from stackling.network.l3.models import FloatingIP

    out: dict[str, list[tuple[str, str]]] = {}
    if not port_ids:
        return out
    stmt = (select(FloatingIP.fixed_port_id, FloatingIP.fixed_ip_address,
                   FloatingIP.floating_ip_address)
            .where(FloatingIP.fixed_port_id.in_(port_ids))
            .order_by(FloatingIP.floating_ip_address))
    for port_id, fixed, floating in db.execute(stmt):
        out.setdefault(port_id, []).append((fixed or "", floating))
    return out


def list_floating_ips(db: Session, ctx: RequestContext, **filters: Any) -> list[dict[str, Any]]:
    from stackling.network.l3 import floatingips

    params = _params(floatingips.LISTING, filters)
    rows = floatingips.list_floatingips(db, ctx, params).rows
    return [select_fields(f, params.fields) for f in floatingips.render(db, rows)]


def get_floating_ip(db: Session, ctx: RequestContext, fip_id: str) -> dict[str, Any]:
    from stackling.network.l3 import floatingips

    return floatingips.render(db, [floatingips.get_visible(db, ctx, fip_id)])[0]


def create_floating_ip(db: Session, ctx: RequestContext, body: Any) -> dict[str, Any]:
    from stackling.network.l3 import floatingips

    fip = floatingips.create_floatingip(
        db, ctx, _create_attrs(ctx, body, "floatingip", floatingips.ATTRS))
    return floatingips.render(db, [fip])[0]


def update_floating_ip(db: Session, ctx: RequestContext, fip_id: str, body: Any
                       ) -> dict[str, Any]:
    from stackling.network.l3 import floatingips

    fip = floatingips.update_floatingip(
        db, ctx, fip_id, _update_attrs(ctx, body, "floatingip", floatingips.ATTRS))
    return floatingips.render(db, [fip])[0]


def delete_floating_ip(db: Session, ctx: RequestContext, fip_id: str) -> None:
    from stackling.network.l3 import floatingips

    floatingips.delete_floatingip(db, ctx, fip_id)


# ------------------------------------------------------------------ security groups (one)
def get_security_group(db: Session, ctx: RequestContext, sg_id: str) -> dict[str, Any]:
    return security_groups.render_groups(db, [security_groups.get_visible(db, ctx, sg_id)])[0]


def create_security_group(db: Session, ctx: RequestContext, body: Any) -> dict[str, Any]:
    sg = security_groups.create_group(
        db, ctx, _create_attrs(ctx, body, "security_group", security_groups.SG_ATTRS))
    return security_groups.render_groups(db, [sg])[0]


def delete_security_group(db: Session, ctx: RequestContext, sg_id: str) -> None:
    security_groups.delete_group(db, ctx, sg_id)


# ------------------------------------------------------------------ routed networks
# Binding a port on a routed network is the normal port update: `update_port(db,
# ctx.elevated(), port_id, {"binding:host_id": host, "device_owner": "compute:nova", ...})`.
# A deferred port gets its address there (409 HostNotConnectedToAnySegment /
# HostNotCompatibleWithFixedIps / IpAddressGenerationFailure when it cannot); a failed
# update changes nothing.
def segments_for_host(db: Session, host: str, network_id: str | None = None) -> list[str]:
    """Ids of the segments (of `network_id`, or of any network) the host reaches."""
    from stackling.network.segments import host_mapping

    return host_mapping.segments_for_host(db, host, network_id)


def hosts_for_segment(db: Session, segment_id: str) -> list[str]:
    from stackling.network.segments import host_mapping

    return host_mapping.hosts_for_segment(db, segment_id)


def segments_all(db: Session) -> list[dict[str, Any]]:
    """Every network segment (id, network_id, network_type, physical_network,
    segmentation_id, segment_index), for the dataplane's wiring."""
    from sqlalchemy import select

    from stackling.network.core.models import Segment

    return [{"id": s.id, "network_id": s.network_id, "network_type": s.network_type,
             "physical_network": s.physical_network, "segmentation_id": s.segmentation_id,
             "segment_index": s.segment_index, "name": s.name}
            for s in db.scalars(select(Segment).order_by(Segment.network_id,
                                                         Segment.segment_index, Segment.id))]


def hosts_physical_networks(db: Session) -> dict[str, list[str]]:
    """Each recorded compute host and the physical networks it reaches (its bridge
    mappings), for the dataplane's hosts."""
    from sqlalchemy import select

    from stackling.network.segments.models import NetworkHost

    return {h.host: sorted(h.physical_networks or [])
            for h in db.scalars(select(NetworkHost).order_by(NetworkHost.host))}


def segment_of_port(db: Session, port_id: str) -> str | None:
    """The segment of the port's first fixed IP; None without IPs or off routed networks."""
    from stackling.network.segments import routed

    return routed.segment_of_port(db, port_id)


def segment_aggregate_uuid(db: Session, segment_id: str) -> str | None:
    """The segment's host aggregate uuid (= the placement aggregate on its provider and on
    its hosts' providers); None while the segment has no IPv4 subnet with a pool."""
    from stackling.network.segments import routed

    return routed.aggregate_uuid(db, segment_id)


def network_segment_aggregates(db: Session, network_id: str, *,
                               with_free_ipv4: bool = False) -> list[str]:
    """The aggregate uuids of the network's segments (Nova's routed-network prefilter:
    `member_of=in:<these>`); `with_free_ipv4` keeps only segments with a free IPv4
    address in placement (capacity - usage > 0). [] for a non-routed network."""
    from stackling.network.segments import routed

    return routed.network_segment_aggregates(db, network_id, with_free_ipv4=with_free_ipv4)


def segment_free_ipv4(db: Session, segment_id: str) -> int:
    from stackling.network.segments import routed

    return routed.free_ipv4(db, segment_id)


def is_routed_network(db: Session, network_id: str) -> bool:
    from stackling.network.segments import routed

    return routed.is_routed(db, network_id)


# ------------------------------------------------------------------ for orchestration
# Create/update/delete of the objects Heat's Neutron resource types manage, with the REST
# API's validation, policy and errors (the bodies are the inner resource dicts).
def _crud(resource: str) -> tuple[Any, Any, Any]:
    from stackling.network.address_groups import address_groups as ags
    from stackling.network.core import security_groups as sgs
    from stackling.network.l3 import floatingips as fips
    from stackling.network.l3 import routers as l3
    from stackling.network.segments import segments
    from stackling.network.trunks import trunks

    return {
        "network": (networks, networks.ATTRS, lambda db, ctx, objs: networks.render(db, ctx, objs)),
        "subnet": (subnets, subnets.ATTRS, lambda db, ctx, objs: subnets.render(db, ctx, objs)),
        "router": (l3, l3.ATTRS, lambda db, ctx, objs: l3.render(db, ctx, objs)),
        "floatingip": (fips, fips.ATTRS, lambda db, ctx, objs: fips.render(db, objs)),
        "security_group": (sgs, sgs.SG_ATTRS, lambda db, ctx, objs: sgs.render_groups(db, objs)),
        "segment": (segments, segments.ATTRS, lambda db, ctx, objs: segments.render(db, objs)),
        "trunk": (trunks, trunks.ATTRS, lambda db, ctx, objs: trunks.render(db, objs)),
        "address_group": (ags, ags.ATTRS, lambda db, ctx, objs: ags.render(db, objs)),
    }[resource]


_VERBS = {"network": ("create_network", "update_network", "delete_network"),
          "subnet": ("create_subnet", "update_subnet", "delete_subnet"),
          "router": ("create_router", "update_router", "delete_router"),
          "floatingip": ("create_floatingip", "update_floatingip", "delete_floatingip"),
          "security_group": ("create_group", "update_group", "delete_group"),
          "segment": ("create_segment", "update_segment", "delete_segment"),
          "trunk": ("create_trunk", "update_trunk", "delete_trunk"),
          "address_group": ("create_group", "update_group", "delete_group")}


def create_resource(db: Session, ctx: RequestContext, resource: str, body: Any, *,
                    render: bool = True) -> dict[str, Any]:
    """POST /v2.0/{resource}s for network, subnet, router, floatingip, security_group,
    segment: the API's answer, or only `{"id"}` without `render` (a caller that needs no
    more saves the render's reads)."""
    module, attrs, renderer = _crud(resource)
    obj = getattr(module, _VERBS[resource][0])(db, ctx, _create_attrs(ctx, body, resource, attrs))
    return renderer(db, ctx, [obj])[0] if render else {"id": obj.id}


def update_resource(db: Session, ctx: RequestContext, resource: str, obj_id: str, body: Any,
                    *, render: bool = True) -> dict[str, Any]:
    module, attrs, renderer = _crud(resource)
    obj = getattr(module, _VERBS[resource][1])(db, ctx, obj_id,
                                                _update_attrs(ctx, body, resource, attrs))
    return renderer(db, ctx, [obj])[0] if render else {"id": obj.id}


def delete_resource(db: Session, ctx: RequestContext, resource: str, obj_id: str) -> None:
    module, _, _ = _crud(resource)
    getattr(module, _VERBS[resource][2])(db, ctx, obj_id)


def get_resource(db: Session, ctx: RequestContext, resource: str, obj_id: str) -> dict[str, Any]:
    module, _, render = _crud(resource)
    get = getattr(module, "get_visible", None) or getattr(module, f"get_{resource}")
    return render(db, ctx, [get(db, ctx, obj_id)])[0]


def add_router_interface(db: Session, ctx: RequestContext, router_id: str, body: Any
                         ) -> dict[str, Any]:
    from stackling.network.l3 import routers as l3

    return l3.add_router_interface(db, ctx, router_id, l3.parse_interface_info(body))


def remove_router_interface(db: Session, ctx: RequestContext, router_id: str, body: Any
                            ) -> dict[str, Any]:
    from stackling.network.l3 import routers as l3

    return l3.remove_router_interface(db, ctx, router_id,
                                      l3.parse_interface_info(body, for_removal=True))


def create_security_group_rule(db: Session, ctx: RequestContext, body: Any) -> dict[str, Any]:
    from stackling.network.core import security_groups as sgs

    rule = sgs.create_rule(db, ctx, _create_attrs(ctx, body, "security_group_rule",
                                                  sgs.RULE_ATTRS))
    return sgs.render_rules(db, [rule])[0]


def delete_security_group_rule(db: Session, ctx: RequestContext, rule_id: str) -> None:
    from stackling.network.core import security_groups as sgs

    sgs.delete_rule(db, ctx, rule_id)


def get_security_group_rule(db: Session, ctx: RequestContext, rule_id: str) -> dict[str, Any]:
    """`GET /v2.0/security-group-rules/{id}`'s rule (its 404 for unknown or hidden)."""
    from stackling.network.core import security_groups as sgs

    return sgs.render_rules(db, [sgs.get_rule(db, ctx, rule_id)])[0]


def list_floatingips(db: Session, ctx: RequestContext, **filters: Any) -> list[dict[str, Any]]:
    from stackling.network.l3 import floatingips as fips

    params = _params(fips.LISTING, filters)
    return [select_fields(f, params.fields)
            for f in fips.render(db, fips.list_floatingips(db, ctx, params).rows)]


# ------------------------------------------------------------------ compute's narrow reads
# What compute's boot reads of ports and networks, without rendering what it does not use
# (security groups, address pairs, tags, segments...): the same rows, visibility and
# errors as get_port/update_port/list_networks, fewer queries.
def port_brief(db: Session, ctx: RequestContext, port_id: str) -> dict[str, Any]:
    """`get_port`'s `id`, `project_id`, `network_id`, `device_id`, `status`,
    `mac_address`, `ip_allocation` and `fixed_ips`, with `ports.get_visible`'s 404s (the
    port's project, or its network's owner, or an admin), in one query."""
    from stackling.network import errors

    rows = list(db.execute(_BRIEF["port"], {"port": port_id}))
    if not rows:
        raise errors.PortNotFound(port_id=port_id)
    (pid, project_id, network_id, device_id, status, mac, ip_allocation, net_owner,
     _, _) = rows[0]
    if not (ctx.is_admin or ctx.is_service or project_id == ctx.project_id):
        if net_owner is None or net_owner != ctx.project_id:
            raise errors.PortNotFound(port_id=port_id)
    return {"id": pid, "project_id": project_id, "network_id": network_id,
            "device_id": device_id, "status": status, "mac_address": mac,
            "ip_allocation": ip_allocation,
            "fixed_ips": [{"subnet_id": r[-2], "ip_address": r[-1]} for r in rows
                          if r[-1] is not None]}


def _brief_statements() -> dict[str, Any]:
    from sqlalchemy import bindparam, select

    from stackling.network.core.models import IPAllocation, Network, Port, Subnet

    networks_brief = (
        select(Network.id, Network.name, Network.project_id, Network.shared,
               Network.router_external, Subnet.id.label("subnet_id"), Subnet.ip_version,
               Subnet.segment_id)
        .outerjoin(Subnet, Subnet.network_id == Network.id))
    return {
        "port": (
            select(Port.id, Port.project_id, Port.network_id, Port.device_id, Port.status,
                   Port.mac_address, Port.ip_allocation, Network.project_id.label("owner"),
                   IPAllocation.subnet_id, IPAllocation.ip_address)
            .outerjoin(Network, Network.id == Port.network_id)
            .outerjoin(IPAllocation, IPAllocation.port_id == Port.id)
            .where(Port.id == bindparam("port")).order_by(IPAllocation.ordinal)),
        "fixed_ips": (select(IPAllocation.subnet_id, IPAllocation.ip_address)
                      .where(IPAllocation.port_id == bindparam("port"))
                      .order_by(IPAllocation.ordinal)),
        "networks": networks_brief.where(Network.id.in_(bindparam("ids", expanding=True)))
        .order_by(Network.id, Subnet.created_at, Subnet.id),
        "networks_named": networks_brief.where(Network.name == bindparam("name"))
        .order_by(Network.id, Subnet.created_at, Subnet.id),
    }


_BRIEF = _brief_statements()  # built once, at import (requests share them)


def _port_brief(db: Session, port: Any) -> dict[str, Any]:
    fixed = [{"subnet_id": subnet_id, "ip_address": ip} for subnet_id, ip in db.execute(
        _BRIEF["fixed_ips"], {"port": port.id})]
    return {"id": port.id, "project_id": port.project_id, "network_id": port.network_id,
            "device_id": port.device_id, "status": port.status,
            "mac_address": port.mac_address, "ip_allocation": port.ip_allocation,
            "dns_name": port.dns_name or "", "fixed_ips": fixed}


def update_port_brief(db: Session, ctx: RequestContext, port_id: str, body: Any
                      ) -> dict[str, Any]:
    """`update_port`, answering `port_brief`'s keys plus `binding:vif_type` (when the
    caller may read it, as `update_port`'s answer)."""
    from stackling.network import policy as pol

    port = ports.update_port(db, ctx, port_id, _update_attrs(ctx, body, "port", ports.ATTRS))
    out = _port_brief(db, port)
    out["binding:vif_type"] = port.binding_vif_type
    return pol.ReadFilter(db, ctx, "get_port", ("binding:vif_type",)).apply(out)


class _NetworkRow:
    __slots__ = ("id", "project_id", "shared")

    def __init__(self, net_id: str, project_id: str, shared: bool) -> None:
        self.id, self.project_id, self.shared = net_id, project_id, shared


def network_briefs(db: Session, ctx: RequestContext, network_ids: list[str]
                   ) -> list[dict[str, Any]]:
    """`list_networks(db, ctx, id=network_ids)`'s `id`, `name`, `project_id`,
    `router:external` and `subnets`, plus `subnet_details` ([{"id", "ip_version",
    "segment_id"}] in `subnets`' order): one query (and an RBAC look-up per network that
    is neither the caller's nor shared, as `get_network`'s visibility check)."""
    if not network_ids:
        return []
    return _network_briefs(db, ctx, db.execute(_BRIEF["networks"],
                                               {"ids": list(dict.fromkeys(network_ids))}))


def network_briefs_named(db: Session, ctx: RequestContext, name: str
                         ) -> list[dict[str, Any]]:
    """`network_briefs` of the networks `list_networks(db, ctx, name=name)` answers (a
    name look-up reads those few columns, not every match's render)."""
    return _network_briefs(db, ctx, db.execute(_BRIEF["networks_named"], {"name": name}))


def _network_briefs(db: Session, ctx: RequestContext, rows: Any) -> list[dict[str, Any]]:
    from stackling.network.rbac import visibility

    out: dict[str, dict[str, Any]] = {}
    hidden: set[str] = set()
    for (net_id, name, project_id, shared, external, subnet_id, version,
         segment_id) in rows:
        if net_id in hidden:
            continue
        n = out.get(net_id)
        if n is None:
            if not visibility.network_visible(db, ctx, _NetworkRow(net_id, project_id, shared)):
                hidden.add(net_id)
                continue
            n = out[net_id] = {"id": net_id, "name": name, "project_id": project_id,
                               "router:external": external, "subnets": [],
                               "subnet_details": []}
        if subnet_id is not None:
            n["subnets"].append(subnet_id)
            n["subnet_details"].append({"id": subnet_id, "ip_version": version,
                                        "segment_id": segment_id})
    return list(out.values())


# ------------------------------------------------------------------ orchestration's look-ups
# A Heat resource naming a subnet or security group by id needs its id (and a subnet's
# network), with the same 404 as the GET: the visible row, not its render.
def subnet_brief(db: Session, ctx: RequestContext, subnet_id: str) -> dict[str, Any]:
    """`get_subnet`'s `id`, `name` and `network_id` (its 404 for unknown or hidden)."""
    subnet = subnets.get_visible(db, ctx, subnet_id)
    return {"id": subnet.id, "name": subnet.name, "network_id": subnet.network_id}


def security_group_brief(db: Session, ctx: RequestContext, group_id: str) -> dict[str, Any]:
    """`GET /security-groups/{id}`'s `id` and `name` (its 404 for unknown or hidden)."""
    group = security_groups.get_visible(db, ctx, group_id, rules=False)
    return {"id": group.id, "name": group.name}


# ------------------------------------------------------------------ for compute
# Compute calls these; network never imports compute: compute registers its side (servers'
# projects, segments' host aggregates) with `register_compute` when it is loaded.
def register_compute(hooks: ComputeHooks) -> None:
    compute_hooks.register(hooks)


def record_hosts(db: Session, hosts: list[tuple[str, list[str]]]) -> list[str]:
    """Compute's hosts with their physical networks (an L2 agent's bridge mappings): the
    segment host mappings follow; returns the hosts whose mappings changed."""
    from stackling.network.segments import host_mapping

    return host_mapping.record_hosts(db, hosts)


def port_headroom(db: Session, project_id: str) -> int | None:
    """How many more ports the project's quota allows (negative when over; None:
    unlimited)."""
    from stackling.network import quotas

    return quotas.headroom(db, project_id, "port")


# ------------------------------------------------------------------ for the audit
# Routed networks' derived state recomputed and compared (segments/consistency.py): each
# difference as `(check, resource, expected, actual, message)`.
def check_routed_segments(db: Session) -> list[tuple[str, str, Any, Any, str]]:
    from stackling.network.segments import consistency

    return [tuple(d) for d in consistency.check_segments(db)]  # type: ignore[misc]


def check_routed_ports(db: Session) -> list[tuple[str, str, Any, Any, str]]:
    from stackling.network.segments import consistency

    return [tuple(d) for d in consistency.check_ports(db)]  # type: ignore[misc]


def port_security_group_names(db: Session, port_ids: list[str]) -> list[str]:
    """The names of these ports' security groups, sorted, each once: what Nova shows as
    a server's `security_groups` (the groups of its ports). One query, no policy: the
    caller (compute) shows them to the server's owner."""
    from sqlalchemy import select

    from stackling.network.core.models import PortSecurityGroup, SecurityGroup

    if not port_ids:
        return []
    names = db.scalars(select(SecurityGroup.name).join(
        PortSecurityGroup, PortSecurityGroup.security_group_id == SecurityGroup.id).where(
        PortSecurityGroup.port_id.in_(port_ids)).distinct())
    return sorted(set(names))


# ------------------------------------------------------------------ QoS (port-resource-request)
def port_resource_request(db: Session, port_id: str) -> dict[str, Any] | None:
    """A port's `resource_request` (request groups of its QoS minimum-bandwidth and
    packet-rate rules), None when it asks for nothing; what Nova's scheduler reads."""
    from stackling.network.qos import bindings

    return bindings.port_resource_request(db, port_id)


# ------------------------------------------------------------------ trunk sub-ports
def add_trunk_subports(db: Session, ctx: RequestContext, trunk_id: str,
                       sub_ports: list[dict[str, Any]]) -> dict[str, Any]:
    """PUT /v2.0/trunks/{id}/add_subports: the trunk as the API answers it."""
    from stackling.network.trunks import trunks

    trunk = trunks.add_sub_ports(db, ctx, trunk_id, {"sub_ports": sub_ports})
    return trunks.render(db, [trunk])[0]


def remove_trunk_subports(db: Session, ctx: RequestContext, trunk_id: str,
                          sub_ports: list[dict[str, Any]]) -> dict[str, Any]:
    from stackling.network.trunks import trunks

    trunk = trunks.remove_sub_ports(db, ctx, trunk_id, {"sub_ports": sub_ports})
    return trunks.render(db, [trunk])[0]


def set_port_allocation(db: Session, port_id: str, mappings: dict[str, list[str]]) -> None:
    """After the scheduler's claim: the port's `binding:profile.allocation`, {request group
    id: provider uuid} for its resource request's groups (as Nova sets it)."""
    from stackling.network.qos import bindings

    bindings.set_allocation(db, port_id, mappings)


# ------------------------------------------------------------------ extra routes, QoS (Heat)
def change_extraroutes(db: Session, ctx: RequestContext, router_id: str,
                       routes: list[dict[str, str]], *, add: bool) -> dict[str, Any]:
    """PUT /v2.0/routers/{id}/add_extraroutes (or remove_extraroutes): the router."""
    from stackling.network.l3 import routers as l3

    parsed = l3.parse_routes_body({"router": {"routes": routes}})
    router = l3.change_routes(db, ctx, router_id, parsed, add=add)
    return l3.render(db, ctx, [router])[0]


def create_qos_policy(db: Session, ctx: RequestContext, body: Any) -> dict[str, Any]:
    from stackling.network.qos import policies as qos

    policy = qos.create_policy(db, ctx, _create_attrs(ctx, body, "policy", qos.ATTRS))
    return qos.render(db, ctx, [policy])[0]


def update_qos_policy(db: Session, ctx: RequestContext, policy_id: str, body: Any
                      ) -> dict[str, Any]:
    from stackling.network.qos import policies as qos

    policy = qos.update_policy(db, ctx, policy_id, _update_attrs(ctx, body, "policy", qos.ATTRS))
    return qos.render(db, ctx, [policy])[0]


def delete_qos_policy(db: Session, ctx: RequestContext, policy_id: str) -> None:
    from stackling.network.qos import policies as qos

    qos.delete_policy(db, ctx, policy_id)


def get_qos_policy(db: Session, ctx: RequestContext, policy_id: str) -> dict[str, Any]:
    from stackling.network.qos import policies as qos

    return qos.render(db, ctx, [qos.get_readable(db, ctx, policy_id, "get_policy")])[0]


def qos_rule(db: Session, ctx: RequestContext, rule_type: str, policy_id: str,
             rule_id: str | None = None, body: Any = None, *, delete: bool = False
             ) -> dict[str, Any] | None:
    """The QoS rule API of one type ("bandwidth_limit", ...): create (no rule_id), update
    (rule_id and body), delete, or show (rule_id only); the rule as the API answers it."""
    from stackling.network.qos import policies as qos

    kind = qos.rule_type_of(rule_type)
    attrs = qos.rule_attrs(kind)
    if rule_id is None:
        rule = qos.create_rule(db, ctx, kind, policy_id,
                               _create_attrs(ctx, body, kind.resource, attrs))
    elif delete:
        qos.delete_rule(db, ctx, kind, policy_id, rule_id)
        return None
    elif body is not None:
        rule = qos.update_rule(db, ctx, kind, policy_id, rule_id,
                               _update_attrs(ctx, body, kind.resource, attrs))
    else:
        rule = qos.get_rule(db, ctx, kind, policy_id, rule_id)
    return qos.rule_view(rule)


# ------------------------------------------------------------------ for the dataplane
# What the dataplane's agents read beyond the REST views, and their heartbeat (no policy:
# the dataplane acts as the agents, which read everything).
def report_agents(db: Session, host: str, agents: list[dict[str, Any]], *,
                  start: bool = False) -> None:
    """A heartbeat of the agents that run on `host` (dicts with `agent_type`, `binary`,
    `topic`, `availability_zone`, `configurations`): `openstack network agent list` shows
    them alive while their heartbeat is recent (network/agents.py)."""
    from stackling.network import agents as agents_

    agents_.report(db, host, agents, start=start)


def qos_rules_by_port(db: Session, ports: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """port id -> the rules of the QoS policy that applies to it (its own, else its
    network's for ports not owned by `network:*`, as upstream), each with its `type`."""
    from sqlalchemy import select

    from stackling.network.qos import bindings
    from stackling.network.qos.models import QosRule

    known = bindings.port_policies(db, [p["id"] for p in ports])
    chosen = {}
    for p in ports:
        own, net = known.get(p["id"], (None, None))
        policy = own or (net if not (p.get("device_owner") or "").startswith("network:") else None)
        if policy:
            chosen[p["id"]] = policy
    rules: dict[str, list[dict[str, Any]]] = {}
    if chosen:
        for rule in db.scalars(select(QosRule).where(
                QosRule.qos_policy_id.in_(sorted(set(chosen.values())))).order_by(QosRule.id)):
            rules.setdefault(rule.qos_policy_id, []).append(
                {"type": rule.type, "direction": rule.direction or "egress",
                 "max_kbps": rule.max_kbps, "max_burst_kbps": rule.max_burst_kbps,
                 "dscp_mark": rule.dscp_mark})
    return {port: rules.get(policy, []) for port, policy in chosen.items()}


def port_forwardings_all(db: Session) -> list[dict[str, Any]]:
    """Every floating IP port forwarding with its floating IP's address and router."""
    from sqlalchemy import select

    from stackling.network.l3.models import FloatingIP
    from stackling.network.port_forwarding import forwardings
    from stackling.network.port_forwarding.models import PortForwarding

    out = []
    for pf, address, router_id in db.execute(
            select(PortForwarding, FloatingIP.floating_ip_address, FloatingIP.router_id)
            .join(FloatingIP, FloatingIP.id == PortForwarding.floatingip_id)
            .order_by(PortForwarding.id)):
        out.append({**forwardings.view(pf), "floatingip_id": pf.floatingip_id,
                    "floating_ip_address": address, "router_id": router_id})
    return out


def trunks_all(db: Session) -> list[dict[str, Any]]:
    """Every trunk as the API shows it (`port_id`, `sub_ports` with `port_id`,
    `segmentation_type`, `segmentation_id`), for plugging sub-ports."""
    from sqlalchemy import select

    from stackling.network.trunks import trunks
    from stackling.network.trunks.models import Trunk

    return trunks.render(db, list(db.scalars(select(Trunk).order_by(Trunk.id))))
