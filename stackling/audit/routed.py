"""Routed networks: segment providers, their IPv4 inventories and aggregates, host
mappings and aggregate membership, IPv4 usage by port, and port bindings — each
recomputed from the network tables (`network.segments.routed`) and compared with what
Placement and the compute aggregates hold. The rules are documented in
`stackling/network/README.md` ("Routed networks")."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.audit.findings import Finding, register
from stackling.network.core.models import IPAllocation, Port, Segment, Subnet
from stackling.network.segments import host_mapping, routed
from stackling.placement import interface as placement


def check_segments(db: Session) -> list[Finding]:
    from stackling.compute.hosts import host_aggregate_uuids, node_uuid
    from stackling.compute.models import Aggregate, AggregateHost

    out: list[Finding] = []
    segments = list(db.scalars(select(Segment).where(Segment.is_dynamic.is_(False))))
    known = {s.id for s in segments}
    host_aggs = host_aggregate_uuids(db)
    for seg in segments:
        mapped = host_mapping.hosts_for_segment(db, seg.id)
        wanted_hosts = host_mapping.expected_hosts(db, seg)
        if mapped != wanted_hosts:
            out.append(Finding("routed.host_mapping", seg.id, wanted_hosts, mapped,
                               "hosts mapped to the segment"))
        inv = routed.expected_inventory(db, seg.id)
        rp = placement.get_resource_provider(db, seg.id)
        agg = db.scalars(select(Aggregate).where(
            Aggregate.name == routed.provider_name(seg.id))).first()
        if inv is None:
            if rp is not None:
                out.append(Finding("routed.provider", seg.id, None, rp["name"],
                                   "a segment without IPv4 pools has a provider"))
            if agg is not None:
                out.append(Finding("routed.aggregate", seg.id, None, agg.uuid,
                                   "a segment without IPv4 pools has an aggregate"))
            continue
        if rp is None:
            out.append(Finding("routed.provider", seg.id, routed.provider_name(seg.id), None,
                               "missing segment provider"))
            continue
        if rp["name"] != routed.provider_name(seg.id) or rp["parent_provider_uuid"]:
            out.append(Finding("routed.provider", seg.id, routed.provider_name(seg.id),
                               rp["name"], "provider name or parent"))
        actual_inv = placement.get_inventory(db, seg.id)
        if actual_inv != {routed.IPV4: inv}:
            out.append(Finding("routed.inventory", seg.id, {routed.IPV4: inv}, actual_inv))
        if agg is None:
            out.append(Finding("routed.aggregate", seg.id, routed.provider_name(seg.id), None,
                               "missing segment host aggregate"))
            continue
        rp_aggs = placement.get_aggregates_for_provider(db, seg.id)
        if rp_aggs != [agg.uuid]:
            out.append(Finding("routed.provider_aggregates", seg.id, [agg.uuid], rp_aggs))
        members = sorted(db.scalars(select(AggregateHost.host).where(
            AggregateHost.aggregate_id == agg.id)))
        if members != mapped:
            out.append(Finding("routed.aggregate_hosts", agg.uuid, mapped, members))
        for host in mapped:
            if agg.uuid not in host_aggs.get(host, []):
                continue  # already reported as a membership difference
            node_rp = placement.get_resource_provider(db, node_uuid(host))
            if node_rp is not None and agg.uuid not in placement.get_aggregates_for_provider(
                    db, node_uuid(host)):
                out.append(Finding("routed.host_provider_aggregates", host, agg.uuid, None,
                                   "the host's provider lacks the segment aggregate"))
        out.extend(_check_usage(db, seg.id))
    # leftovers of segments that no longer exist
    for rp_uuid, name in placement.list_providers_named_like(db, "Neutron segment id ").items():
        if rp_uuid not in known:
            out.append(Finding("routed.provider", rp_uuid, None, name, "orphan provider"))
    for agg in db.scalars(select(Aggregate).where(
            Aggregate.name.startswith("Neutron segment id ", autoescape=True))):
        if agg.name[len("Neutron segment id "):] not in known:
            out.append(Finding("routed.aggregate", agg.uuid, None, agg.name,
                               "orphan aggregate"))
    return out


def _check_usage(db: Session, segment_id: str) -> list[Finding]:
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
            out.append(Finding("routed.usage", consumer, wanted.get(consumer),
                               actual.get(consumer), f"allocation on segment {segment_id}"))
    return out


def check_ports(db: Session) -> list[Finding]:
    """Bound ports on routed networks: addresses on one segment the host reaches; a
    deferred port bound to a host has its address."""
    out: list[Finding] = []
    routed_nets = select(Subnet.network_id).where(Subnet.segment_id.is_not(None)).distinct()
    ports = db.execute(select(Port.id, Port.network_id, Port.binding_host_id,
                              Port.ip_allocation).where(Port.network_id.in_(routed_nets)))
    for port_id, network_id, host, ip_allocation in ports:
        segs = routed.segments_of_port(db, port_id)
        if len(segs) > 1:
            out.append(Finding("routed.port_segments", port_id, "one segment", sorted(segs)))
        if not host:
            continue
        reachable = set(host_mapping.segments_for_host(db, host, network_id))
        if segs and not segs <= reachable:
            out.append(Finding("routed.port_binding", port_id, sorted(reachable), sorted(segs),
                               f"addresses on a segment host {host} does not reach"))
        has_v4_subnet_on_host = db.scalar(select(Subnet.id).where(
            Subnet.segment_id.in_(list(reachable) or [""])).limit(1)) is not None
        if ip_allocation == "deferred" and not segs and has_v4_subnet_on_host:
            out.append(Finding("routed.port_binding", port_id, "an address", None,
                               f"deferred port bound to {host} without an address"))
    return out


register("routed.segments", check_segments)
register("routed.ports", check_ports)
