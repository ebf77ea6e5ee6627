"""Routed networks: segment resource providers, their IPv4 inventory and host aggregates,
and the calls compute makes to schedule and bind ports on routed networks.

Upstream's segments plugin (`NovaSegmentNotifier`) reports to Placement and Nova in
batches after the fact and drifts; here every change happens in the transaction of the
subnet, port, segment or host change that causes it, and is *recomputed* from the
network tables rather than adjusted by deltas, so it cannot drift:

- a segment has a resource provider (uuid = segment id, name "Neutron segment id <id>")
  and a compute host aggregate of the same name (its uuid on the provider and, through
  compute's aggregate mirroring, on the providers of the hosts mapped to the segment)
  exactly while it has an IPv4 subnet with a non-empty allocation pool;
- its `IPV4_ADDRESS` inventory is upstream's: total = pool sizes (+1 per subnet with a
  gateway), reserved = (1 per gateway) + (1 per DHCP-enabled subnet) + the IPv4
  addresses on the segment of ports that are neither `compute:*` nor `network:dhcp`;
  min_unit = max_unit = step_size = 1, allocation_ratio 1.0 (reserved is capped at total);
- beyond upstream, the IPv4 addresses of `compute:*` ports on the segment are placement
  usage: one allocation per port, consumer = the port id (consumer_type `PORT`),
  `IPV4_ADDRESS` = its IPv4 addresses on the segment. So capacity - usage is the number
  of addresses a new server can still get there, and a full segment refuses the claim.

Concurrency: every writer locks the segment rows it recomputes (sorted, `FOR UPDATE`;
SQLite serialises writers), so two transactions never write an inventory computed from
a stale count.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy import Text, bindparam, cast, func, select
from sqlalchemy.orm import Session

from stackling.network import errors
from stackling.network.compute_hooks import compute
from stackling.network.core.models import IPAllocation, Port, Segment, Subnet
from stackling.network.segments import host_mapping
from stackling.network.segments.host_mapping import NAME_STUB, provider_name

IPV4 = "IPV4_ADDRESS"
CONSUMER_TYPE = "PORT"


def is_compute_owner(device_owner: str) -> bool:
    return device_owner.startswith("compute:")


# ------------------------------------------------------------------ reads
def is_routed(db: Session, network_id: str) -> bool:
    """True when the network's subnets are bound to segments."""
    return db.scalar(select(Subnet.id).where(Subnet.network_id == network_id,
                                             Subnet.segment_id.is_not(None)).limit(1)) is not None


_PORT_SEGMENTS = select(Subnet.segment_id).join(
    IPAllocation, IPAllocation.subnet_id == Subnet.id).where(
    IPAllocation.port_id == bindparam("port"), Subnet.segment_id.is_not(None))


def segments_of_port(db: Session, port_id: str) -> set[str]:
    return set(db.scalars(_PORT_SEGMENTS, {"port": port_id}))


def segment_of_port(db: Session, port_id: str) -> str | None:
    """The segment of the port's first fixed IP (None: no IP, or not a routed network)."""
    return db.scalar(select(Subnet.segment_id).join(
        IPAllocation, IPAllocation.subnet_id == Subnet.id).where(
        IPAllocation.port_id == port_id).order_by(IPAllocation.ordinal).limit(1))


def _inventory_queries() -> tuple[Any, Any]:
    """Built once (building them per call cost more than running them), over the tables'
    columns: the pools come as their stored JSON text, sized once per distinct text."""
    ip, port, sub = IPAllocation.__table__.c, Port.__table__.c, Subnet.__table__
    other = sub.alias("other")
    reserved_ports = (select(func.count()).select_from(IPAllocation.__table__)
                      .join(Port.__table__, port.id == ip.port_id)
                      .join(other, other.c.id == ip.subnet_id)
                      .where(other.c.segment_id == bindparam("seg"), other.c.ip_version == 4,
                             ~port.device_owner.startswith("compute:"),
                             port.device_owner != "network:dhcp"))
    # one round trip: the segment's IPv4 subnets, each row carrying the port count
    subnets = select(cast(sub.c.allocation_pools, Text), sub.c.gateway_ip, sub.c.enable_dhcp,
                     reserved_ports.scalar_subquery()).where(
        sub.c.segment_id == bindparam("seg"), sub.c.ip_version == 4)
    return subnets, reserved_ports


_SEGMENT_SUBNETS, _RESERVED_PORTS = _inventory_queries()


@lru_cache(maxsize=65536)
def _pool_size(start: str, end: str) -> int:
    # cached: every recompute re-reads each pool of the segment's subnets
    return int(ipaddress.ip_address(end)) - int(ipaddress.ip_address(start)) + 1


@lru_cache(maxsize=65536)
def _pools_size(stored: str | None) -> int:
    """Addresses in a subnet's allocation pools, from their stored JSON text (a pure
    function of the text: every recompute re-reads each subnet of the segment)."""
    pools = json.loads(stored) if stored else None
    return sum(_pool_size(p["start"], p["end"]) for p in pools or [])


def expected_inventory(db: Session, segment_id: str) -> dict[str, Any] | None:
    """The segment's IPV4_ADDRESS inventory record (None: it must have no provider)."""
    return _expected_inventory(db, segment_id)[0]


def _expected_inventory(db: Session, segment_id: str) -> tuple[dict[str, Any] | None, int]:
    """The inventory record, and how many subnets (with pools) it counts."""
    total = reserved = ports = pooled = 0
    for pools, gateway, dhcp, count in db.execute(_SEGMENT_SUBNETS, {"seg": segment_id}):
        ports = count  # the same on every row
        size = _pools_size(pools)
        if not size:
            continue  # a subnet without pools contributes nothing, as upstream
        pooled += 1
        total += size
        if gateway:
            total += 1
            reserved += 1
        if dhcp:
            reserved += 1
    if not total:
        return None, 0
    reserved += ports or 0
    return {"total": total, "reserved": min(reserved, total), "min_unit": 1, "max_unit": 1,
            "step_size": 1, "allocation_ratio": 1.0}, pooled


# the port's compute IPv4 addresses per segment, with the port's project and network
_PORT_CLAIM = (select(Subnet.segment_id, func.count(), Port.project_id, Port.network_id)
               .select_from(IPAllocation)
               .join(Subnet, Subnet.id == IPAllocation.subnet_id)
               .join(Port, Port.id == IPAllocation.port_id)
               .where(IPAllocation.port_id == bindparam("port"), Subnet.segment_id.is_not(None),
                      Subnet.ip_version == 4, Port.device_owner.startswith("compute:"))
               .group_by(Subnet.segment_id, Port.project_id, Port.network_id))


def _port_claim(db: Session, port_id: str, providers: set[str] | None
                ) -> tuple[dict[str, dict[str, int]], str, str]:
    """The port's wanted allocation ({segment provider: {IPV4_ADDRESS: n}}; only segments
    that have a provider: `providers` when the caller knows them), project and network."""
    out: dict[str, dict[str, int]] = {}
    rows = db.execute(_PORT_CLAIM, {"port": port_id}).all()
    for segment_id, n, _project, _network in rows:
        if segment_id in providers if providers is not None else _has_provider(db, segment_id):
            out[segment_id] = {IPV4: int(n)}
    return out, (rows[0][2] or "") if rows else "", rows[0][3] if rows else ""


def expected_port_allocation(db: Session, port_id: str) -> dict[str, dict[str, int]]:
    """{segment provider: {IPV4_ADDRESS: n}} the port's consumer must hold."""
    return _port_claim(db, port_id, None)[0]


def _has_provider(db: Session, segment_id: str) -> bool:
    from stackling.placement import interface as placement

    return placement.get_resource_provider(db, segment_id) is not None


def free_ipv4(db: Session, segment_id: str) -> int:
    """Addresses a compute port can still get on the segment (capacity - usage)."""
    from stackling.placement import interface as placement

    return placement.free_capacity(db, [segment_id], IPV4).get(segment_id, 0)


def aggregate_uuid(db: Session, segment_id: str) -> str | None:
    """The uuid of the segment's host aggregate (None while it has no provider)."""
    return compute().aggregate_uuid(db, provider_name(segment_id))


# ------------------------------------------------------------------ the recompute
_LOCK = (select(Segment.id).where(Segment.id.in_(bindparam("ids", expanding=True)))
         .order_by(Segment.id).with_for_update())


def lock_segments(db: Session, segment_ids: Iterable[str]) -> None:
    ids = sorted(set(segment_ids))
    if ids and db.get_bind().dialect.name != "sqlite":  # SQLite serialises writers
        list(db.scalars(_LOCK, {"ids": ids}))


def sync_segment(db: Session, segment_id: str, *, all_ports: bool = False,
                 likely_changed: bool = True, joined: bool = False) -> bool:
    """Make the segment's provider, inventory and aggregate what the tables say;
    `all_ports` also re-syncs the allocation of every port on the segment (a subnet
    joining the segment with ports on it). True when the segment has a provider now.
    `likely_changed`: a subnet change (its numbers usually move), not a port's.
    `joined`: an IPv4 subnet with pools just joined the segment; when it is the only
    one, the segment had none before, so (as every change keeps it) no provider either."""
    from stackling.placement import interface as placement

    inventory, pooled = _expected_inventory(db, segment_id)
    if inventory is None:
        _drop_provider(db, segment_id)
        return False
    first = joined and pooled == 1
    if not first and placement.update_inventory_record(db, segment_id, IPV4, inventory,
                                                       likely_changed=likely_changed):
        pass  # the usual case: the provider exists, only its numbers move
    else:  # the first pool: the aggregate, then the provider with inventory and aggregate
        aggs = _segment_aggregate(db, segment_id)
        if not placement.create_resource_provider_with(
                db, segment_id, provider_name(segment_id), {IPV4: inventory}, aggs):
            # a provider without IPv4 inventory already (or its name taken): part by part
            if not _has_provider(db, segment_id):
                placement.ensure_resource_provider(db, segment_id, provider_name(segment_id))
                placement.set_aggregates_for_provider(db, segment_id, aggs)
            placement.set_inventory_for_provider(db, segment_id, {IPV4: inventory})
    if all_ports:
        port_ids = set(db.scalars(select(IPAllocation.port_id).join(
            Subnet, Subnet.id == IPAllocation.subnet_id).where(Subnet.segment_id == segment_id)))
        for port_id in sorted(port_ids):
            sync_port(db, port_id)
    return True


def _segment_aggregate(db: Session, segment_id: str) -> list[str]:
    """[the uuid of the segment's host aggregate]: created by compute with its mapped hosts
    (those with a compute node: upstream tolerates the others), or the one that exists
    already; [] without compute."""
    uuid = compute().ensure_aggregate(db, provider_name(segment_id),
                                      host_mapping.hosts_for_segment(db, segment_id))
    return [uuid] if uuid else []


def _drop_provider(db: Session, segment_id: str) -> None:
    """Remove the segment's port allocations, aggregate and provider (all absent: no-op)."""
    from stackling.placement import interface as placement

    if _has_provider(db, segment_id):
        for consumer in placement.get_allocations_for_provider(db, segment_id):
            placement.delete_allocation_for_instance(db, consumer)
    compute().delete_aggregate(db, provider_name(segment_id))
    placement.delete_resource_provider(db, segment_id)


def sync_port(db: Session, port_id: str, *, providers: set[str] | None = None,
              maybe_held: bool = True, facts: list[Any] | None = None,
              network_id: str = "") -> None:
    """Make the port's consumer hold exactly its compute IPv4 addresses per segment.
    A full segment refuses: 409 IpAddressGenerationFailure.

    `providers`: the segments known to have a provider (else looked up). `maybe_held`
    False: the port had no address on a segment before this change, so it holds nothing
    (a claim replaces whatever the consumer holds anyway: the result is exact). `facts`:
    the port's `_PORT_FACTS` rows, when the caller read them (and its network)."""
    from stackling.placement import interface as placement

    if facts is None:
        wanted, project_id, network_id = _port_claim(db, port_id, providers)
    else:
        wanted = {seg: {IPV4: int(n)} for seg, version, n, owner, _project in facts
                  if version == 4 and is_compute_owner(owner) and (
                      seg in providers if providers is not None else _has_provider(db, seg))}
        project_id = facts[0][4] if facts else ""
    if maybe_held or not wanted:
        current = placement.get_allocations_for_consumer(db, port_id)
        if {rp: dict(e["resources"]) for rp, e in current.items()} == wanted:
            return
        if not wanted:
            placement.delete_allocation_for_instance(db, port_id)
            return
    try:
        placement.claim_resources(db, port_id, wanted, project_id or "",
                                  placement.INCOMPLETE_CONSUMER_USER_ID, consumer_type=CONSUMER_TYPE)
    except placement.errors.ClaimFailed:
        raise errors.IpAddressGenerationFailure(net_id=network_id) from None


# ------------------------------------------------------------------ hooks (network logic)
def after_subnet_change(db: Session, segment_ids: Iterable[str], *,
                        all_ports: bool = False, joined: bool = False) -> None:
    """`joined`: an IPv4 subnet with pools joined these segments (created on one, or
    given one)."""
    ids = sorted({s for s in segment_ids if s})
    lock_segments(db, ids)
    for segment_id in ids:
        sync_segment(db, segment_id, all_ports=all_ports, joined=joined)


def after_port_change(db: Session, port_id: str, old_segments: set[str],
                      deleted: bool = False, new_segments: set[str] | None = None,
                      facts: list[Any] | None = None, network_id: str = "") -> None:
    """After a port's create/update/delete: its segments' reserved counts and its own
    allocation. `old_segments` = segments of its addresses before the change;
    `new_segments` = after it, and `facts` (its `_PORT_FACTS` rows) and network, when
    the caller has them."""
    from stackling.placement import interface as placement

    if deleted:
        new_segments = set()
    elif new_segments is None:
        new_segments = segments_of_port(db, port_id)
    affected = old_segments | new_segments
    if not affected:
        return
    lock_segments(db, affected)
    # a port counted in reserved (neither compute nor DHCP) with IPv4 addresses on a
    # segment it was not on: that segment's numbers move
    moving = {r[0] for r in facts if r[1] == 4} - old_segments if facts and not (
        is_compute_owner(facts[0][3]) or facts[0][3] == "network:dhcp") else set()
    providers = set()
    for segment_id in sorted(affected):
        inventory = expected_inventory(db, segment_id)
        if inventory is not None and placement.update_inventory_record(
                db, segment_id, IPV4, inventory, likely_changed=segment_id in moving):
            providers.add(segment_id)
        elif sync_segment(db, segment_id, likely_changed=False):
            providers.add(segment_id)  # no provider yet, or none wanted any more
    if deleted:
        placement.delete_allocation_for_instance(db, port_id)
    else:
        sync_port(db, port_id, providers=providers, maybe_held=bool(old_segments),
                  facts=facts, network_id=network_id)


def before_network_delete(db: Session, network_id: str) -> None:
    """The network's segments go: their providers and aggregates with them."""
    ids = list(db.scalars(select(Segment.id).where(Segment.network_id == network_id)))
    host_mapping.forget(db)  # the segments (and their host mappings) go
    lock_segments(db, ids)
    for segment_id in ids:
        _drop_provider(db, segment_id)


# ------------------------------------------------------------------ port binding rules
def candidate_subnets(db: Session, network_id: str, subnets: list[Subnet], host: str,
                      fixed_given: bool) -> list[Subnet] | None:
    """The subnets automatic allocation may use on a routed network (upstream's
    `_ipam_get_subnets`); None = defer (no host yet). Non-routed networks: unchanged."""
    if fixed_given or not any(s.segment_id for s in subnets):
        return subnets
    plain = [s for s in subnets if s.segment_id is None]
    if not host:
        return plain or None
    reachable = set(host_mapping.segments_for_host(db, host, network_id))
    on_host = [s for s in subnets if s.segment_id in reachable]
    if not on_host:
        raise errors.HostNotConnectedToAnySegment(host=host, network_id=network_id)
    lock_segments(db, {s.segment_id for s in on_host if s.segment_id})
    # Beyond upstream: skip segments whose IPv4 capacity is used up (placement's view).
    from stackling.placement import interface as placement

    free = placement.free_capacity(
        db, {s.segment_id for s in on_host if s.ip_version == 4 and s.segment_id}, IPV4)
    full = {seg for seg, n in free.items() if n <= 0}
    usable = [s for s in on_host if not (s.ip_version == 4 and s.segment_id in full)]
    if not usable:
        raise errors.IpAddressGenerationFailure(net_id=network_id)
    # a host reaching several segments: one of them, the first (in the network's segment
    # order) with IPv4 room, so the port's addresses never span two segments
    candidates = {s.segment_id for s in usable if s.ip_version == 4} or {
        s.segment_id for s in usable}
    if len(candidates) > 1:
        order = dict(db.execute(select(Segment.id, Segment.segment_index).where(
            Segment.id.in_(sorted(c for c in candidates if c)))).all())
        chosen = min(candidates, key=lambda c: (order.get(c, 0), c or ""))
    else:
        chosen = next(iter(candidates))
    return plain + [s for s in usable if s.segment_id == chosen]


def check_same_segment(db: Session, port_id: str, segments: set[str] | None = None) -> None:
    if len(segments_of_port(db, port_id) if segments is None else segments) > 1:
        raise errors.FixedIpsSubnetsNotOnSameSegment()


def check_host_compatible(db: Session, port_id: str, network_id: str, host: str,
                          segments: set[str] | None = None) -> None:
    """409 HostNotCompatibleWithFixedIps when the port's addresses (on `segments`, when
    the caller has them) sit on a segment the host does not reach."""
    if not host:
        return
    if segments is None:
        segments = segments_of_port(db, port_id)
    if not segments:
        return
    reachable = set(host_mapping.segments_for_host(db, host, network_id))
    if not segments <= reachable:
        raise errors.HostNotCompatibleWithFixedIps(host=host, port_id=port_id)


# ------------------------------------------------------------------ for the scheduler
def network_segment_aggregates(db: Session, network_id: str, *,
                               with_free_ipv4: bool = False) -> list[str]:
    """Aggregate uuids of the network's segments that have a provider (optionally only
    those with a free IPv4 address): Nova's `member_of=in:...` for a routed network."""
    ids = sorted(set(db.scalars(select(Subnet.segment_id).where(
        Subnet.network_id == network_id, Subnet.segment_id.is_not(None)))))
    out = []
    for segment_id in ids:
        if with_free_ipv4 and free_ipv4(db, segment_id) <= 0:
            continue
        agg = aggregate_uuid(db, segment_id)
        if agg is not None:
            out.append(agg)
    return out


__all__ = ["IPV4", "NAME_STUB", "aggregate_uuid", "free_ipv4", "is_routed",
           "network_segment_aggregates", "segment_of_port", "segments_of_port"]


# The port's addresses on segments, per segment and IP version, with its owner and
# project: its segments, and the claim of a compute port, in one round trip.
_PORT_FACTS = (select(Subnet.segment_id, Subnet.ip_version, func.count(), Port.device_owner,
                      Port.project_id)
               .select_from(IPAllocation)
               .join(Subnet, Subnet.id == IPAllocation.subnet_id)
               .join(Port, Port.id == IPAllocation.port_id)
               .where(IPAllocation.port_id == bindparam("port"), Subnet.segment_id.is_not(None))
               .group_by(Subnet.segment_id, Subnet.ip_version, Port.device_owner,
                         Port.project_id))


def after_port_write(db: Session, port_id: str, network_id: str, host: str,
                     old_segments: set[str]) -> None:
    """A port on a routed network was created or updated: one segment at most, one the
    bound host reaches; then its segments' counts and its own allocation."""
    rows = db.execute(_PORT_FACTS, {"port": port_id}).all()
    segments = {r[0] for r in rows}
    check_same_segment(db, port_id, segments)
    check_host_compatible(db, port_id, network_id, host, segments)
    if not old_segments and rows and is_compute_owner(rows[0][3]) and _claim_new_addresses(
            db, port_id, network_id, segments, rows):
        return
    after_port_change(db, port_id, old_segments, new_segments=segments, facts=rows,
                      network_id=network_id)


def _claim_new_addresses(db: Session, port_id: str, network_id: str, segments: set[str],
                         rows: list[Any]) -> bool:
    """A compute port that had no address on a segment got some: no segment's inventory
    moves (reserved counts only other ports' addresses, and the port had none), and it
    held nothing (its allocation follows its addresses), so its IPv4 addresses are just
    claimed. False when that is not the whole story (an address on a segment without a
    provider, or a provider without IPv4 inventory): the caller recomputes everything."""
    from stackling.placement import interface as placement

    wanted = {seg: {IPV4: int(n)} for seg, version, n, _owner, _project in rows if version == 4}
    if not wanted:
        return False
    lock_segments(db, segments)
    try:
        placement.claim_resources(db, port_id, wanted, rows[0][4] or "",
                                  placement.INCOMPLETE_CONSUMER_USER_ID, consumer_type=CONSUMER_TYPE)
    except placement.errors.BadRequest:
        return False  # a segment without a provider
    except placement.errors.ClaimFailed as err:
        if type(err) is placement.errors.InvalidAllocation:
            return False  # a provider without IPv4 inventory
        raise errors.IpAddressGenerationFailure(net_id=network_id) from None
    return True
