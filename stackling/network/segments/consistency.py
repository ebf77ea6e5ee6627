"""Routed networks' derived state, recomputed and compared with what it should be (the
checks behind `stackling audit` and `GET /audit`): segment providers, their IPv4
inventories and aggregates, host mappings and aggregate membership, IPv4 usage by port,
and port bindings. Placement is read through its interface, compute's aggregates through
the functions compute registers (`compute_hooks`). Rules: README.md, "Routed networks".
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.network import compute_hooks
from stackling.network.core.models import IPAllocation, Port, Segment, Subnet
from stackling.network.segments import host_mapping, routed
from stackling.placement import interface as placement


class Difference(NamedTuple):
    check: str  # e.g. "routed.inventory"
    resource: str  # the id of what differs (segment, port, provider, aggregate, host)
    expected: Any
    actual: Any
    message: str = ""


def check_segments(db: Session) -> list[Difference]:
    """Each segment's host mapping, provider, inventory, aggregate (compute's, through the
    hooks it registers), aggregate members and usage; leftovers of deleted segments."""
    compute = compute_hooks.compute()
    out: list[Difference] = []
    segments = list(db.scalars(select(Segment).where(Segment.is_dynamic.is_(False))))
    known = {s.id for s in segments}
    host_aggs = compute.host_aggregate_uuids(db)
    for seg in segments:
        mapped = host_mapping.hosts_for_segment(db, seg.id)
        wanted_hosts = host_mapping.expected_hosts(db, seg)
        if mapped != wanted_hosts:
            out.append(Difference("routed.host_mapping", seg.id, wanted_hosts, mapped,
                               "hosts mapped to the segment"))
        inv = routed.expected_inventory(db, seg.id)
        rp = placement.get_resource_provider(db, seg.id)
        agg = compute.aggregate_members(db, routed.provider_name(seg.id))  # (uuid, hosts)
        if inv is None:
            if rp is not None:
                out.append(Difference("routed.provider", seg.id, None, rp["name"],
                                   "a segment without IPv4 pools has a provider"))
            if agg is not None:
                out.append(Difference("routed.aggregate", seg.id, None, agg.uuid,
                                   "a segment without IPv4 pools has an aggregate"))
            continue
        if rp is None:
            out.append(Difference("routed.provider", seg.id, routed.provider_name(seg.id), None,
                               "missing segment provider"))
            continue
        if rp["name"] != routed.provider_name(seg.id) or rp["parent_provider_uuid"]:
            out.append(Difference("routed.provider", seg.id, routed.provider_name(seg.id),
                               rp["name"], "provider name or parent"))
        actual_inv = placement.get_inventory(db, seg.id)
        if actual_inv != {routed.IPV4: inv}:
            out.append(Difference("routed.inventory", seg.id, {routed.IPV4: inv}, actual_inv))
        if agg is None:
            out.append(Difference("routed.aggregate", seg.id, routed.provider_name(seg.id), None,
                               "missing segment host aggregate"))
            continue
        rp_aggs = placement.get_aggregates_for_provider(db, seg.id)
        if rp_aggs != [agg.uuid]:
            out.append(Difference("routed.provider_aggregates", seg.id, [agg.uuid], rp_aggs))
        members = agg.hosts
        if members != mapped:
            out.append(Difference("routed.aggregate_hosts", agg.uuid, mapped, members))
        for host in mapped:
            if agg.uuid not in host_aggs.get(host, []):
                continue  # already reported as a membership difference
            node = compute.node_provider(host)
            node_rp = placement.get_resource_provider(db, node)
            if node_rp is not None and agg.uuid not in placement.get_aggregates_for_provider(
                    db, node):
                out.append(Difference("routed.host_provider_aggregates", host, agg.uuid, None,
                                   "the host's provider lacks the segment aggregate"))
        out.extend(_check_usage(db, seg.id))
    # leftovers of segments that no longer exist
    for rp_uuid, name in placement.list_providers_named_like(db, "Neutron segment id ").items():
        if rp_uuid not in known:
            out.append(Difference("routed.provider", rp_uuid, None, name, "orphan provider"))
    for agg_uuid, name in compute.aggregates_named_like(db, "Neutron segment id ").items():
        if name[len("Neutron segment id "):] not in known:
            out.append(Difference("routed.aggregate", agg_uuid, None, name,
                               "orphan aggregate"))
    return out


def _check_usage(db: Session, segment_id: str) -> list[Difference]:
    """Consumers of the segment provider = its compute ports, one per port, n addresses."""
    rows = db.execute(select(IPAllocation.port_id, func.count()).join(
        Subnet, Subnet.id == IPAllocation.subnet_id).join(
        Port, Port.id == IPAllocation.port_id).where(
        Subnet.segment_id == segment_id, Subnet.ip_version == 4,
        Port.device_owner.startswith("compute:")).group_by(IPAllocation.port_id))
    wanted = {port_id: {routed.IPV4: int(n)} for port_id, n in rows}
    actual = placement.get_allocations_for_provider(db, segment_id)
    out = []
    for consumer in sorted(set(wanted) | set(actual)):
        if wanted.get(consumer) != actual.get(consumer):
            out.append(Difference("routed.usage", consumer, wanted.get(consumer),
                               actual.get(consumer), f"allocation on segment {segment_id}"))
    return out


def check_ports(db: Session) -> list[Difference]:
    """Bound ports on routed networks: addresses on one segment the host reaches; a
    deferred port bound to a host has its address."""
    out: list[Difference] = []
    routed_nets = select(Subnet.network_id).where(Subnet.segment_id.is_not(None)).distinct()
    ports = db.execute(select(Port.id, Port.network_id, Port.binding_host_id,
                              Port.ip_allocation).where(Port.network_id.in_(routed_nets)))
    for port_id, network_id, host, ip_allocation in ports:
        segs = routed.segments_of_port(db, port_id)
        if len(segs) > 1:
            out.append(Difference("routed.port_segments", port_id, "one segment", sorted(segs)))
        if not host:
            continue
        reachable = set(host_mapping.segments_for_host(db, host, network_id))
        if segs and not segs <= reachable:
            out.append(Difference("routed.port_binding", port_id, sorted(reachable), sorted(segs),
                               f"addresses on a segment host {host} does not reach"))
        has_v4_subnet_on_host = db.scalar(select(Subnet.id).where(
            Subnet.segment_id.in_(list(reachable) or [""])).limit(1)) is not None
        if ip_allocation == "deferred" and not segs and has_v4_subnet_on_host:
            out.append(Difference("routed.port_binding", port_id, "an address", None,
                               f"deferred port bound to {host} without an address"))
    return out
