"""Networks: provider segments, external/default/shared flags, MTU, and their views."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    bindparam,
    cast,
    delete,
    exists,
    literal_column,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    NAME,
    STANDARD,
    Attr,
    boolean,
    integer,
    list_of,
    string,
)
from stackling.network.core.models import (
    IPAllocation,
    Network,
    Port,
    Segment,
    Subnet,
    SubnetPool,
    Tag,
)
from stackling.network.netconfig import get_config
from stackling.network.querying import Listing
from stackling.network.segments import segmentation
from stackling.network.segments.segmentation import SegmentSpec

PROVIDER = pol.PROVIDER
# Ports that go away with their network (neutron's AUTO_DELETE_PORT_OWNERS).
AUTO_DELETE_OWNERS = ("network:dhcp", "network:distributed", "network:floatingip_agent_gateway")


def _segments_conv(value: Any) -> list[dict[str, Any]]:
    from stackling.network.attributes import Invalid

    if not isinstance(value, list):
        raise Invalid(f"'{value}' is not a list")
    out = []
    for seg in value:
        if not isinstance(seg, dict):
            raise Invalid(f"'{seg}' is not a dictionary")
        unknown = set(seg) - set(PROVIDER)
        if unknown:
            raise Invalid(f"Unrecognized attribute(s) '{', '.join(sorted(unknown))}'")
        out.append(_provider_values(seg))
    return out


def _provider_values(seg: dict[str, Any]) -> dict[str, Any]:
    out = {}
    if "provider:network_type" in seg:
        out["provider:network_type"] = string(32)(seg["provider:network_type"])
    if "provider:physical_network" in seg:
        out["provider:physical_network"] = string(64, nullable=True)(
            seg["provider:physical_network"])
    if "provider:segmentation_id" in seg:
        out["provider:segmentation_id"] = integer(nullable=True)(
            seg["provider:segmentation_id"])
    return out


ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": NAME,
    "description": DESCRIPTION,
    "admin_state_up": Attr(post=True, put=True, default=True, convert=boolean, filter=True,
                           sort=True),
    "status": Attr(filter=True, sort=True),
    "shared": Attr(post=True, put=True, default=False, convert=boolean, filter=True),
    "subnets": Attr(),
    "mtu": Attr(post=True, put=True, convert=integer(0), filter=True, sort=True,
                query=integer()),
    "port_security_enabled": Attr(post=True, put=True, default=True, convert=boolean,
                                  filter=True),
    "router:external": Attr(post=True, put=True, convert=boolean, filter=True),
    "is_default": Attr(post=True, put=True, convert=boolean, filter=True),
    "provider:network_type": Attr(post=True, put=True, convert=string(32), filter=True),
    "provider:physical_network": Attr(post=True, put=True, convert=string(64, nullable=True),
                                      filter=True),
    "provider:segmentation_id": Attr(post=True, put=True, convert=integer(nullable=True),
                                     filter=True, query=integer()),
    "segments": Attr(post=True, put=True, convert=_segments_conv),
    "availability_zone_hints": Attr(post=True, convert=list_of(string(255)), sort=True),
    "availability_zones": Attr(),
    "ipv4_address_scope": Attr(),
    "ipv6_address_scope": Attr(),
    "l2_adjacency": Attr(),
}


DEFAULTS = {"shared": False, "router:external": False, "is_default": False}

# What extension modules (DNS, ...) add: (db, rendered views) -> None adds attributes;
# (db, ctx, obj, attrs, created) -> None stores theirs on a create or an update.
RENDER_EXTENSIONS: list[Callable[[Session, list[dict[str, Any]]], None]] = []
ATTR_WRITERS: list[Callable[[Session, RequestContext, Any, dict[str, Any], bool], None]] = []
# A render extension's twin for networks made in this request: (views, what the writers
# wrote: standard.written) -> None, with no query.
RENDER_NEW: dict[Callable[..., None], Callable[
    [Session, list[dict[str, Any]], list[dict[str, Any]]], None]] = {}


def _segment_filter(column: Any) -> Any:
    def clause(values: list[Any]) -> Any:
        return exists(select(Segment.id).where(Segment.network_id == Network.id,
                                               column.in_(values)))
    return clause


LISTING = Listing(
    attrs=ATTRS,
    columns={"id": Network.id, "name": Network.name, "description": Network.description,
             "admin_state_up": Network.admin_state_up, "status": Network.status,
             "shared": Network.shared, "mtu": Network.mtu,
             "port_security_enabled": Network.port_security_enabled,
             "router:external": Network.router_external, "is_default": Network.is_default,
             "project_id": Network.project_id, "tenant_id": Network.project_id,
             "revision_number": Network.revision_number,
             "availability_zone_hints": Network.id},
    id_column=Network.id,
    special={"provider:network_type": _segment_filter(Segment.network_type),
             "provider:physical_network": _segment_filter(Segment.physical_network),
             "provider:segmentation_id": _segment_filter(Segment.segmentation_id)},
    readable=("get_network", (*PROVIDER, "segments")),
)


# ------------------------------------------------------------------ visibility
def visible_clause(ctx: RequestContext) -> Any:
    from stackling.network.rbac import visibility

    return visibility.network_clause(ctx)


def can_see(ctx: RequestContext, net: Network) -> bool:
    return (ctx.is_admin or ctx.is_service or net.project_id == ctx.project_id
            or net.shared or net.router_external)


def get_visible(db: Session, ctx: RequestContext, network_id: str, *,
                for_update: bool = False) -> Network:
    net = db.get(Network, network_id, with_for_update=for_update) if for_update else \
        db.get(Network, network_id)
    return visible_or_404(db, ctx, net, network_id)


def visible_or_404(db: Session, ctx: RequestContext, net: Network | None, network_id: str
                   ) -> Network:
    """The network read (None: absent) if the caller sees it, else 404."""
    if net is None or not _rbac().visibility.network_visible(db, ctx, net):
        raise errors.NetworkNotFound(net_id=network_id)
    return net


def target(net: Network) -> dict[str, Any]:
    return {"project_id": net.project_id, "tenant_id": net.project_id,
            "network:tenant_id": net.project_id, "network:project_id": net.project_id}


# ------------------------------------------------------------------ views
def render(db: Session, ctx: RequestContext, nets: Sequence[Network]) -> list[dict[str, Any]]:
    """API dicts for `nets` (a few queries per page, not per network)."""
    if not nets:
        return []
    hide = pol.ReadFilter(db, ctx, "get_network", (*PROVIDER, "segments"))
    known = standard.take_known(nets)
    if known is not None:  # just created: nothing to read back
        made = [hide.apply(view(standard.values(n), [], k[0], {}, True, k[1]))
                for n, k in zip(nets, known, strict=True)]
        written = [standard.take_written(n) for n in nets]
        for extend in RENDER_EXTENSIONS:
            fresh = RENDER_NEW.get(extend)
            if fresh is None:
                extend(db, made)
            else:
                fresh(db, made, written)
        return made
    ids = [n.id for n in nets]
    subnets: dict[str, list[str]] = {i: [] for i in ids}
    scopes: dict[str, dict[int, Any]] = {i: {} for i in ids}
    l2: dict[str, bool] = dict.fromkeys(ids, True)
    segments: dict[str, list[tuple[str, str | None, int | None]]] = {i: [] for i in ids}
    tags: dict[str, list[str]] = {i: [] for i in ids}
    targeted: set[str] = set()
    for chunk in standard.chunks(ids, 500):  # one statement for the four child reads
        for kind, net_id, a, b, c, n, _, _ in db.execute(
                _PARTS, {"ids": chunk, "project": ctx.project_id or ""}):
            if kind == 0:  # a subnet: id, segment, address scope, IP version
                subnets[net_id].append(a)
                scopes[net_id].setdefault(n, c)
                if b is not None:
                    l2[net_id] = False
            elif kind == 1:  # a segment: type, physnet, segmentation id
                segments[net_id].append((a, b, n))
            elif kind == 2:
                tags[net_id].append(a)
            else:  # an RBAC policy shares it with the caller's project
                targeted.add(net_id)
    out = []
    for n in nets:
        d = standard.values(n)
        i = d["id"]
        if i in targeted:  # `shared` reads true when shared with the caller's project
            d = {**d, "shared": True}
        out.append(hide.apply(view(d, subnets[i], tags[i], scopes[i], l2[i], segments[i])))
    for extend in RENDER_EXTENSIONS:
        extend(db, out)
    return out


def _parts() -> Any:
    """A page of networks' subnets (by creation), segments (by index), tags (by tag) and
    RBAC grants to the bound `project`, as one UNION ALL of
    (kind, network_id, a, b, c, n, m, t) rows."""
    from stackling.network.rbac.models import RbacPolicy
    from stackling.network.rbac.visibility import SHARED, WILDCARD

    ids = bindparam("ids", expanding=True)
    no_str, no_int = cast(null(), String(255)), cast(null(), Integer)
    no_time = cast(null(), Subnet.created_at.type)
    union = union_all(
        select(literal_column("0").label("kind"), Subnet.network_id.label("owner"),
               Subnet.id.label("a"), Subnet.segment_id.label("b"),
               SubnetPool.address_scope_id.label("c"), Subnet.ip_version.label("n"),
               no_int.label("m"), Subnet.created_at.label("t"))
        .outerjoin(SubnetPool, SubnetPool.id == Subnet.subnetpool_id)
        .where(Subnet.network_id.in_(ids)),
        select(literal_column("1"), Segment.network_id, Segment.network_type,
               Segment.physical_network, no_str, Segment.segmentation_id,
               Segment.segment_index, no_time)
        .where(Segment.network_id.in_(ids), Segment.is_dynamic.is_(False)),
        select(literal_column("2"), Tag.resource_id, Tag.tag, no_str, no_str, no_int, no_int,
               no_time).where(Tag.resource_id.in_(ids)),
        select(literal_column("3"), RbacPolicy.object_id, no_str, no_str, no_str, no_int,
               no_int, no_time)
        .where(RbacPolicy.object_type == "network", RbacPolicy.object_id.in_(ids),
               RbacPolicy.action == SHARED,
               RbacPolicy.target_tenant.in_([WILDCARD, bindparam("project")])))
    cols = union.selected_columns
    return union.order_by(cols.kind, cols.t, cols.m, cols.a)


_PARTS = _parts()  # built once: every rendered network asks


def view(net: dict[str, Any], subnets: list[str], tags: list[str], scopes: dict[int, Any],
         l2_adjacency: bool, segs: list[tuple[str, str | None, int | None]]
         ) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": net["id"], "name": net["name"], "tenant_id": net["project_id"],
        "project_id": net["project_id"], "admin_state_up": net["admin_state_up"],
        "status": net["status"], "shared": net["shared"], "subnets": subnets,
        "mtu": net["mtu"], "port_security_enabled": net["port_security_enabled"],
        "router:external": net["router_external"], "is_default": net["is_default"],
        "availability_zone_hints": list(net["availability_zone_hints"] or []),
        "availability_zones": ["nova"],
        "ipv4_address_scope": scopes.get(4), "ipv6_address_scope": scopes.get(6),
        "l2_adjacency": l2_adjacency,
        **standard.standard_values(net, tags),
    }
    if len(segs) > 1:
        out["segments"] = [{"provider:network_type": t, "provider:physical_network": p,
                            "provider:segmentation_id": i} for t, p, i in segs]
    else:
        t, p, i = segs[0] if segs else (None, None, None)
        out["provider:network_type"] = t
        out["provider:physical_network"] = p
        out["provider:segmentation_id"] = i
    return out


# ------------------------------------------------------------------ reads
def list_networks(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(Network.__table__)  # rows, not ORM objects: lists are read-only
    clause = visible_clause(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    shared = params.filters.pop("shared", None)
    if shared is not None:  # shared with the caller's project, RBAC included
        stmt = stmt.where(_rbac().visibility.networks_shared_filter(ctx, shared))
    return LISTING.page(db, stmt, params)


# ------------------------------------------------------------------ create
def _requested_segments(attrs: dict[str, Any]) -> list[SegmentSpec] | None:
    given = {k: attrs[k] for k in PROVIDER if k in attrs}
    if "segments" in attrs:
        if given:
            raise errors.SegmentsSetInConjunctionWithProviders()
        specs = [_spec(seg) for seg in attrs["segments"]]
        if len(set(specs)) != len(specs):
            raise errors.SegmentsContainDuplicateEntry()
        return specs or None
    if not given:
        return None
    return [_spec(given)]


def _spec(values: dict[str, Any]) -> SegmentSpec:
    t = values.get("provider:network_type")
    if not t:
        raise errors.InvalidInput(error_message="network_type required")
    return SegmentSpec(t, values.get("provider:physical_network") or None,
                       values.get("provider:segmentation_id"))


def create_network(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Network:
    tgt = {"project_id": attrs["project_id"]}
    pol.authorize(db, ctx, "create_network", tgt)
    pol.authorize_attrs(db, ctx, "create_network", attrs,
                        ("shared", "router:external", "is_default", "segments", *PROVIDER), tgt,
                        DEFAULTS)
    quotas.check(db, attrs["project_id"], "network")
    cfg = get_config(db)
    external = bool(attrs.get("router:external", False))
    is_default = bool(attrs.get("is_default", False)) and external
    requested = _requested_segments(attrs)
    if requested is None:
        specs = [segmentation.allocate_project_segment(db, attrs["project_id"])]
    else:
        specs = [segmentation.reserve(db, s, attrs["project_id"]) for s in requested]
    max_mtu = min(segmentation.mtu(cfg, s.network_type, s.physical_network) for s in specs)
    mtu = attrs.get("mtu") or max_mtu
    if mtu > max_mtu:
        raise errors.InvalidInput(error_message=f"Requested MTU is too big, maximum is {max_mtu}")
    if mtu < 68:
        raise errors.InvalidInput(error_message=f"Requested MTU {mtu} is too small, minimum "
                                                "is 68")
    if is_default:
        _check_no_default(db, None)
    now = utcnow()
    net = Network(project_id=attrs["project_id"], name=attrs.get("name", ""),
                  description=attrs.get("description", ""),
                  admin_state_up=attrs.get("admin_state_up", True),
                  shared=attrs.get("shared", False), router_external=external,
                  is_default=is_default, default_marker="default" if is_default else None,
                  mtu=mtu, port_security_enabled=attrs.get("port_security_enabled", True),
                  availability_zone_hints=attrs.get("availability_zone_hints", []),
                  status="ACTIVE", created_at=now, updated_at=now, revision_number=1)
    net.segments = [Segment(network_type=s.network_type, physical_network=s.physical_network,
                            segmentation_id=s.segmentation_id, segment_index=i,
                            created_at=now, updated_at=now)
                    for i, s in enumerate(specs)]
    if is_default:  # the unique default marker may lose a race: answer neutron's 409
        try:
            with db.begin_nested():
                db.add(net)
                db.flush()
        except IntegrityError:
            _check_no_default(db, None)
            raise
    else:
        db.add(net)
        db.flush()
    from stackling.network.segments import host_mapping

    for seg in net.segments:  # the hosts reaching its physical network
        host_mapping.map_segment(db, seg)
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "network", net.id, tags, new=True)
    _sync_rbac(db, net, attrs, new=True)
    # neutron creates the project's default security group on first network create
    from stackling.network.core import security_groups

    security_groups.ensure_default(db, net.project_id)
    for write in ATTR_WRITERS:
        write(db, ctx, net, attrs, True)
    # what render() would read back, known already
    net.known_parts = (sorted(tags), [(s.network_type, s.physical_network,  # type: ignore[attr-defined]
                                       s.segmentation_id) for s in specs])
    return net


def _check_no_default(db: Session, except_id: str | None) -> None:
    current = db.scalar(select(Network.id).where(Network.default_marker.is_not(None)))
    if current is not None and current != except_id:
        raise errors.DefaultExternalNetworkExists(net_id=current)


# ------------------------------------------------------------------ update
def update_network(db: Session, ctx: RequestContext, network_id: str, attrs: dict[str, Any],
                   if_match: int | None = None) -> Network:
    net = get_visible(db, ctx, network_id)
    tgt = target(net)
    pol.authorize(db, ctx, "update_network", tgt)
    pol.authorize_attrs(db, ctx, "update_network", attrs,
                        ("shared", "router:external", "is_default", "segments", *PROVIDER), tgt)
    standard.check_revision(net, if_match)
    cfg = get_config(db)
    if "segments" in attrs:
        raise errors.InvalidInput(error_message="Updating segments is not supported; use "
                                                "the segments API")
    if any(k in attrs for k in PROVIDER):
        _update_provider(db, net, attrs)
    changed = False
    for key, column in (("name", "name"), ("description", "description"),
                        ("admin_state_up", "admin_state_up"),
                        ("port_security_enabled", "port_security_enabled")):
        if key in attrs and getattr(net, column) != attrs[key]:
            setattr(net, column, attrs[key])
            changed = True
    if "shared" in attrs and attrs["shared"] != net.shared:
        if not attrs["shared"] and _foreign_ports(db, net):
            raise errors.InvalidSharedSetting(network=net.id)
        net.shared = attrs["shared"]
        changed = True
    if "router:external" in attrs and attrs["router:external"] != net.router_external:
        if not attrs["router:external"]:
            if db.scalar(select(Port.id).where(Port.network_id == net.id,
                                               Port.device_owner == "network:router_gateway")
                         .limit(1)):
                raise errors.ExternalNetworkInUse(net_id=net.id)
            net.is_default = False
            net.default_marker = None
        net.router_external = attrs["router:external"]
        changed = True
    if "is_default" in attrs:
        want = bool(attrs["is_default"]) and net.router_external
        if want != net.is_default:
            if want:
                _check_no_default(db, net.id)
            net.is_default = want
            net.default_marker = "default" if want else None
            changed = True
    if "mtu" in attrs:
        max_mtu = min((segmentation.mtu(cfg, s.network_type, s.physical_network)
                       for s in net.segments), default=cfg.global_physnet_mtu)
        mtu = attrs["mtu"] or max_mtu
        if mtu > max_mtu:
            raise errors.InvalidInput(
                error_message=f"Requested MTU is too big, maximum is {max_mtu}")
        if mtu < 68 or (mtu < 1280 and db.scalar(select(Subnet.id).where(
                Subnet.network_id == net.id, Subnet.ip_version == 6).limit(1))):
            raise errors.InvalidInput(error_message=f"Requested MTU {mtu} is too small")
        if mtu != net.mtu:
            net.mtu = mtu
            changed = True
    _sync_rbac(db, net, attrs)
    for write in ATTR_WRITERS:
        write(db, ctx, net, attrs, False)
    changed = changed or "dns_domain" in attrs
    if changed:
        standard.touch(net)
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        _check_no_default(db, net.id)
        raise
    return net


def _foreign_ports(db: Session, net: Network) -> bool:
    return db.scalar(select(Port.id).where(Port.network_id == net.id,
                                           Port.project_id != net.project_id,
                                           Port.device_owner.notlike("network:%"))
                     .limit(1)) is not None


def _update_provider(db: Session, net: Network, attrs: dict[str, Any]) -> None:
    segs = list(net.segments)
    if len(segs) != 1:
        raise errors.InvalidInput(error_message="Provider attributes of a multi-segment "
                                                "network cannot be updated")
    seg = segs[0]
    t = attrs.get("provider:network_type", seg.network_type)
    physnet = attrs.get("provider:physical_network", seg.physical_network)
    if t != seg.network_type or (physnet or None) != (seg.physical_network or None):
        raise errors.InvalidInput(error_message="Plugin does not support updating the "
                                                "following provider network attributes: "
                                                "provider:network_type, "
                                                "provider:physical_network")
    new_id = attrs.get("provider:segmentation_id", seg.segmentation_id)
    if new_id == seg.segmentation_id:
        return
    if t != "vlan":
        raise errors.InvalidInput(error_message="Plugin does not support updating "
                                                "provider:segmentation_id of a "
                                                f"{t} network")
    if new_id is None:
        raise errors.InvalidInput(error_message="provider:segmentation_id cannot be unset")
    if db.scalar(select(Port.id).where(Port.network_id == net.id,
                                       Port.binding_host_id != "").limit(1)):
        raise errors.InUse(f"Unable to update network {net.id}: bound ports exist")
    spec = segmentation.reserve(db, SegmentSpec("vlan", physnet, new_id))
    segmentation.release(db, SegmentSpec("vlan", physnet, seg.segmentation_id))
    seg.segmentation_id = spec.segmentation_id
    standard.touch(seg)
    standard.touch(net)


# ------------------------------------------------------------------ delete
def _for_delete() -> Any:
    """The network, what its delete needs to know, and its segments (a row each): one
    statement (hooks with nothing to do cost no query)."""
    from stackling.network.rbac.models import RbacPolicy

    of_net = Network.id
    children = union_all(select(Port.id).where(Port.network_id == of_net),
                         select(Subnet.id).where(Subnet.network_id == of_net),
                         select(Segment.id).where(Segment.network_id == of_net))
    facts = (
        exists(select(Port.id).where(Port.network_id == of_net,
                                     Port.device_owner.not_in(AUTO_DELETE_OWNERS)))
        .label("in_use"),
        # a segment has a placement provider only while a subnet is bound to it
        exists(select(Subnet.id).where(Subnet.network_id == of_net,
                                       Subnet.segment_id.is_not(None))).label("routed"),
        or_(exists(select(Tag.tag).where(Tag.resource_id == of_net)),
            exists(select(Tag.tag).where(Tag.resource_id.in_(children)))).label("tagged"),
        exists(select(RbacPolicy.id).where(RbacPolicy.object_type == "network",
                                           RbacPolicy.object_id == of_net)).label("rbac"),
    )
    return (select(Network, *facts, Segment.id, Segment.network_type,
                   Segment.physical_network, Segment.segmentation_id)
            .outerjoin(Segment, Segment.network_id == Network.id)
            .where(Network.id == bindparam("net")))


_FOR_DELETE: list[Any] = []  # built on first use (the RBAC models load late)


def delete_network(db: Session, ctx: RequestContext, network_id: str,
                   if_match: int | None = None) -> None:
    if not _FOR_DELETE:
        _FOR_DELETE.append(_for_delete())
    rows = db.execute(_FOR_DELETE[0], {"net": network_id}).all()
    net = visible_or_404(db, ctx, rows[0][0] if rows else None, network_id)
    _, in_use, routed_net, tagged, rbac_policies = rows[0][:5]
    segments = [r[5:] for r in rows if r[5] is not None]
    pol.authorize(db, ctx, "delete_network", target(net))
    standard.check_revision(net, if_match)
    if net.router_external and in_use:  # its floating IPs' ports may be all it had
        _delete_disassociated_floatingips(db, net.id)
        in_use = db.scalar(select(Port.id).where(
            Port.network_id == net.id, Port.device_owner.not_in(AUTO_DELETE_OWNERS)).limit(1))
    if in_use:
        raise errors.NetworkInUse(net_id=net.id)
    if routed_net:  # segment providers and aggregates go too
        from stackling.network.segments import routed

        routed.before_network_delete(db, net.id)
    if tagged:
        standard.delete_tags(db, [
            net.id, *db.scalars(select(Port.id).where(Port.network_id == net.id)),
            *db.scalars(select(Subnet.id).where(Subnet.network_id == net.id)),
            *(s[0] for s in segments)])
    if rbac_policies:
        _rbac().wildcards.delete_for(db, "network", net.id)
    db.expunge(net)
    if segments and db.get_bind().dialect.name == "mysql":
        # InnoDB checks each cascaded row at once, in its own order: a segment may go
        # before the subnet bound to it (whose foreign key refuses that), so subnets first.
        db.execute(delete(Subnet).where(Subnet.network_id == net.id))
    # its ports (and theirs), subnets, segments and extension rows go with it: ON DELETE
    # CASCADE
    db.execute(delete(Network).where(Network.id == net.id))
    for _, network_type, physnet, segmentation_id in segments:
        segmentation.release(db, SegmentSpec(network_type, physnet, segmentation_id))


def _rbac() -> Any:
    """The RBAC package's visibility rules and wildcard policies (imported on first use)."""
    from stackling.network import rbac
    from stackling.network.rbac import visibility, wildcards  # noqa: F401 - loads both

    return rbac


def _sync_rbac(db: Session, net: Network, attrs: dict[str, Any], *, new: bool = False
               ) -> None:
    """`shared` and `router:external` as written become their wildcard RBAC policies
    (`new`: a network made in this request has no policies yet, none to clear)."""
    rbac = _rbac()
    if new and not net.shared and not net.router_external:
        return
    if "shared" in attrs:
        rbac.wildcards.sync_wildcard(db, "network", net.id, net.project_id,
                                     rbac.visibility.SHARED, bool(net.shared))
    if "router:external" in attrs:
        external = bool(net.router_external)
        # false clears every external grant; true adds `*` unless grants exist already
        if not external or not rbac.wildcards.has_grants(db, "network", net.id,
                                                          rbac.visibility.EXTERNAL):
            rbac.wildcards.sync_wildcard(db, "network", net.id, net.project_id,
                                         rbac.visibility.EXTERNAL, external)


def _delete_disassociated_floatingips(db: Session, network_id: str) -> None:
    """Upstream's network BEFORE_DELETE hook: floating IPs of the network that are not
    associated go with it (an associated one keeps its router gateway, hence 409)."""
    from stackling.network.l3.models import FloatingIP

    fips = db.execute(select(FloatingIP.id, FloatingIP.floating_port_id).where(
        FloatingIP.floating_network_id == network_id, FloatingIP.fixed_port_id.is_(None),
        FloatingIP.router_id.is_(None))).all()
    if not fips:
        return
    standard.delete_tags(db, [fip_id for fip_id, _ in fips])
    db.execute(delete(FloatingIP).where(FloatingIP.id.in_([fip_id for fip_id, _ in fips])))
    port_ids = [port_id for _, port_id in fips]
    db.execute(delete(IPAllocation).where(IPAllocation.port_id.in_(port_ids)))
    standard.delete_tags(db, port_ids)
    db.execute(delete(Port).where(Port.id.in_(port_ids)))


standard.register_taggable("networks", standard.Taggable(
    "network", get_visible,
    lambda db, ctx, net: pol.authorize(db, ctx, "update_network", target(net))))
