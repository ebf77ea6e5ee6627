"""Subnets on segments: the `segment_id` rules, peer-subnet host routes
(`segments-peer-subnet-host-routes`) and the placement refresh a subnet change causes.

`core/subnets.py` calls these; everything runs in the subnet request's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, exists, select
from sqlalchemy.orm import Session

from stackling.common import memo
from stackling.network import errors, standard
from stackling.network.core.models import Segment, Subnet
from stackling.network.segments import routed

ROUTED_SERVICE_TYPE = "network:routed"  # subnets of this type are exempt from all-or-none


# ------------------------------------------------------------------ rules
# In the transaction memo (cleared by any rollback): {(network_id, segment_id): bool},
# whether the network had a subnet on another segment when `check_segment` last ran (a
# subnet about to join the segment then looks for peers only if so). Every check clears
# it first, and every subnet joins a segment through a check, so a False can never hide
# a peer added since.
_PEERS = "segment_peers"

# The segment and, in the same round trip, whether the network has subnets on no
# segment (the all-or-none rule; usually none) and subnets on other segments (peers).
_SEGMENT_CHECK = select(
    Segment.network_id, Segment.is_dynamic,
    exists().where(Subnet.network_id == bindparam("net"), Subnet.segment_id.is_(None),
                   Subnet.id != bindparam("exclude")),
    exists().where(Subnet.network_id == bindparam("net"), Subnet.segment_id.is_not(None),
                   Subnet.segment_id != bindparam("seg")),
).where(Segment.id == bindparam("seg"))


def check_segment(db: Session, network_id: str, segment_id: str | None,
                  service_types: list[str], *, exclude: str | None = None,
                  siblings: Any = None) -> None:
    """The segment exists, belongs to the network and is static; and the network's
    subnets are all on segments or none is (`exclude`: the subnet being updated).
    `siblings`: the network's subnets as (id, cidr, segment_id, service_types) rows, when
    the caller read them."""
    peers = memo.table(db).setdefault(_PEERS, {})
    peers.clear()
    if segment_id is not None:
        row = db.execute(_SEGMENT_CHECK, {"seg": segment_id, "net": network_id,
                                          "exclude": exclude or ""}).first()
        if row is None:
            raise errors.SegmentNotFound(segment_id=segment_id)
        seg_network, is_dynamic, unsegmented, has_peers = row
        if seg_network != network_id:
            raise errors.NetworkIdsDontMatch(subnet_network=network_id,
                                                 segment_id=segment_id)
        if is_dynamic:
            raise errors.SubnetCantAssociateToDynamicSegment()
        peers[(network_id, segment_id)] = bool(has_peers)
        if ROUTED_SERVICE_TYPE in service_types or not unsegmented:
            return
    elif ROUTED_SERVICE_TYPE in service_types:
        return
    # only the subnets on the other side of the rule are read (usually none)
    if siblings is not None:
        others: Any = [(r[0], r[3]) for r in siblings
                       if (r[2] is None) == (segment_id is not None)]
    else:
        other_side = (Subnet.segment_id.is_(None) if segment_id is not None
                      else Subnet.segment_id.is_not(None))
        others = db.execute(select(Subnet.id, Subnet.service_types).where(
            Subnet.network_id == network_id, other_side))
    for other_id, types in others:
        if other_id != exclude and ROUTED_SERVICE_TYPE not in (types or []):
            raise errors.SubnetsNotAllAssociatedWithSegments(network_id=network_id)


def check_segment_update(db: Session, subnet: Subnet, segment_id: str | None) -> None:
    """`subnet-segmentid-writable`: only from no segment to one, on a one-segment network."""
    if subnet.segment_id is not None:
        raise errors.SubnetSegmentAssociationChangeNotAllowed()
    if segment_id is None:
        return
    count = len(list(db.scalars(select(Segment.id).where(
        Segment.network_id == subnet.network_id, Segment.is_dynamic.is_(False)))))
    if count > 1:
        raise errors.NoUpdateSubnetWhenMultipleSegmentsOnNetwork(
            network_id=subnet.network_id)
    check_segment(db, subnet.network_id, segment_id, subnet.service_types or [],
                  exclude=subnet.id)


# ------------------------------------------------------------------ peer host routes
def _peers(db: Session, subnet_id: str, network_id: str, version: int,
           segment_id: str) -> list[Subnet]:
    """Same-version subnets of the network on *other* segments."""
    if memo.table(db).get(_PEERS, {}).get((network_id, segment_id)) is False:
        return []  # the segment check just found none on other segments
    return list(db.scalars(select(Subnet).where(
        Subnet.network_id == network_id, Subnet.ip_version == version,
        Subnet.id != subnet_id, Subnet.segment_id.is_not(None),
        Subnet.segment_id != segment_id).order_by(Subnet.created_at, Subnet.id)))


def _add_route(subnet: Subnet, destination: str, nexthop: str) -> bool:
    routes = [dict(r) for r in subnet.host_routes or []]
    if any(r["destination"] == destination for r in routes):
        return False  # an existing route already covers it
    subnet.host_routes = [*routes, {"destination": destination, "nexthop": nexthop}]
    return True


def add_peer_routes(db: Session, subnet: Subnet) -> None:
    """A subnet joined a segment: it routes to its peers through its gateway, and each
    peer routes to it through the peer's gateway."""
    if subnet.segment_id is None:
        return
    for peer in _peers(db, subnet.id, subnet.network_id, subnet.ip_version, subnet.segment_id):
        if subnet.gateway_ip:
            _add_route(subnet, peer.cidr, subnet.gateway_ip)
        if peer.gateway_ip and _add_route(peer, subnet.cidr, peer.gateway_ip):
            standard.touch(peer)


def remove_peer_routes(db: Session, gone: SubnetState) -> None:
    """A segment subnet went away: its peers drop their route to it."""
    if gone.segment_id is None:
        return
    for peer in _peers(db, gone.id, gone.network_id, gone.ip_version, gone.segment_id):
        routes = [dict(r) for r in peer.host_routes or []]
        kept = [r for r in routes if not (r["destination"] == gone.cidr
                                          and r["nexthop"] == peer.gateway_ip)]
        if kept != routes:
            peer.host_routes = kept
            standard.touch(peer)


def move_gateway_routes(db: Session, subnet: Subnet, old_gateway: str | None) -> None:
    """The gateway moved: the subnet's peer routes follow it."""
    if subnet.segment_id is None or old_gateway == subnet.gateway_ip:
        return
    peer_cidrs = {p.cidr for p in _peers(db, subnet.id, subnet.network_id, subnet.ip_version,
                                         subnet.segment_id)}
    routes = []
    for r in subnet.host_routes or []:
        if r["destination"] in peer_cidrs and r["nexthop"] == old_gateway:
            if subnet.gateway_ip is None:
                continue
            r = {"destination": r["destination"], "nexthop": subnet.gateway_ip}
        routes.append(dict(r))
    if old_gateway is None and subnet.gateway_ip:
        subnet.host_routes = routes
        add_peer_routes(db, subnet)
        return
    subnet.host_routes = routes


# ------------------------------------------------------------------ hooks
@dataclass(frozen=True)
class SubnetState:
    id: str
    network_id: str
    ip_version: int
    cidr: str
    segment_id: str | None
    gateway_ip: str | None
    allocation_pools: Any
    enable_dhcp: bool

    @classmethod
    def of(cls, s: Subnet) -> SubnetState:
        return cls(s.id, s.network_id, s.ip_version, s.cidr, s.segment_id, s.gateway_ip,
                   [dict(p) for p in s.allocation_pools or []], s.enable_dhcp)


def after_create(db: Session, subnet: Subnet) -> None:
    if subnet.segment_id is None:
        return
    add_peer_routes(db, subnet)
    db.flush()
    routed.after_subnet_change(db, [subnet.segment_id], joined=_pooled_v4(subnet))


def _pooled_v4(subnet: Subnet) -> bool:
    """Whether the subnet counts in its segment's IPv4 inventory."""
    return subnet.ip_version == 4 and bool(subnet.allocation_pools)


def after_update(db: Session, subnet: Subnet, before: SubnetState) -> None:
    if subnet.segment_id is None:
        return
    if before.segment_id is None:  # joined a segment: treated as a new subnet
        add_peer_routes(db, subnet)
        db.flush()
        routed.after_subnet_change(db, [subnet.segment_id], all_ports=True,
                                   joined=_pooled_v4(subnet))
        return
    move_gateway_routes(db, subnet, before.gateway_ip)
    db.flush()
    if SubnetState.of(subnet) != before:
        routed.after_subnet_change(db, [subnet.segment_id])


def after_delete(db: Session, gone: SubnetState) -> None:
    if gone.segment_id is None:
        return
    remove_peer_routes(db, gone)
    db.flush()
    routed.after_subnet_change(db, [gone.segment_id])
