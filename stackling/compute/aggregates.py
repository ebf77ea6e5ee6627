"""Host aggregates (and availability zones, which are aggregate metadata).

Each aggregate is mirrored in placement as an aggregate with the same uuid holding
its hosts' compute-node resource providers, as Nova's scheduler report client does.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.db import in_int_range, insert_absent, utcnow_precise
from stackling.common.errors import BadRequest, Conflict
from stackling.compute.errors import (
    AggregateHostExists,
    AggregateHostNotFound,
    AggregateNameExists,
    AggregateNotFound,
    ComputeHostNotFound,
)
from stackling.compute.models import Aggregate, AggregateHost, AggregateMetadata, ComputeNode


def create_aggregate(db: Session, name: str, availability_zone: str | None) -> Aggregate:
    agg = Aggregate(uuid=str(uuid.uuid4()), name=name)
    try:
        with db.begin_nested():
            db.add(agg)
            db.flush()
    except IntegrityError:
        raise AggregateNameExists(aggregate_name=name) from None
    if availability_zone:
        db.add(AggregateMetadata(aggregate_id=agg.id, key="availability_zone",
                                 value=availability_zone))
        db.flush()
    return agg


def get_aggregate(db: Session, aggregate_id: str) -> Aggregate:
    try:
        numeric = int(aggregate_id)
    except ValueError:
        raise BadRequest(f"Invalid aggregate id {aggregate_id}") from None
    agg = db.get(Aggregate, numeric) if in_int_range(numeric) else None
    if agg is None:
        raise AggregateNotFound(aggregate_id=aggregate_id)
    return agg


def list_aggregates(db: Session) -> list[Aggregate]:
    return list(db.scalars(select(Aggregate).order_by(Aggregate.id)))


def aggregate_details(db: Session, aggs: list[Aggregate]) -> dict[int, dict[str, Any]]:
    """Hosts and metadata of several aggregates in two queries."""
    ids = [a.id for a in aggs]
    out: dict[int, dict[str, Any]] = {i: {"hosts": [], "metadata": {}} for i in ids}
    if not ids:
        return out
    for agg_id, host in db.execute(select(AggregateHost.aggregate_id, AggregateHost.host).where(
            AggregateHost.aggregate_id.in_(ids)).order_by(AggregateHost.host)):
        out[agg_id]["hosts"].append(host)
    for agg_id, key, value in db.execute(select(
            AggregateMetadata.aggregate_id, AggregateMetadata.key, AggregateMetadata.value
    ).where(AggregateMetadata.aggregate_id.in_(ids))):
        out[agg_id]["metadata"][key] = value
    return out


def update_aggregate(db: Session, aggregate_id: str, values: dict[str, Any]) -> Aggregate:
    agg = get_aggregate(db, aggregate_id)
    if "name" in values:
        agg.name = values["name"]
        try:
            with db.begin_nested():
                db.flush()
        except IntegrityError:
            raise AggregateNameExists(aggregate_name=values["name"]) from None
    if "availability_zone" in values:
        set_metadata(db, aggregate_id, {"availability_zone": values["availability_zone"]})
    agg.updated_at = utcnow_precise()
    db.flush()
    return agg


def delete_aggregate(db: Session, aggregate_id: str) -> None:
    agg = get_aggregate(db, aggregate_id)
    if db.scalars(select(AggregateHost).where(AggregateHost.aggregate_id == agg.id)).first():
        raise BadRequest(f"Cannot remove aggregate {aggregate_id}: it still has hosts.")
    db.delete(agg)
    db.flush()


def _check_az_conflict(db: Session, agg: Aggregate, host: str, zone: str | None) -> None:
    """A host may not be in two aggregates naming different availability zones."""
    if zone is None:
        return
    current = host_zones(db).get(host)
    if current is not None and current != zone:
        own = db.scalars(select(AggregateHost).where(AggregateHost.aggregate_id == agg.id,
                                                     AggregateHost.host == host)).first()
        if own is None:
            raise Conflict(f"Cannot add host to aggregate {agg.id}. Reason: One or more hosts "
                           f"already in availability zone(s) ['{current}'].")


def add_host(db: Session, aggregate_id: str, host: str) -> Aggregate:
    agg = get_aggregate(db, aggregate_id)
    node = db.scalars(select(ComputeNode).where(ComputeNode.host == host)).first()
    if node is None:
        raise ComputeHostNotFound(host=host)
    zone = db.scalars(select(AggregateMetadata.value).where(
        AggregateMetadata.aggregate_id == agg.id,
        AggregateMetadata.key == "availability_zone")).first()
    _check_az_conflict(db, agg, host, zone)
    try:
        with db.begin_nested():
            db.add(AggregateHost(aggregate_id=agg.id, host=host))
    except IntegrityError:
        raise AggregateHostExists(aggregate_id=aggregate_id, host=host) from None
    _mirror(db, node)
    agg.updated_at = utcnow_precise()
    return agg


def add_hosts(db: Session, agg: Aggregate, hosts: list[str]) -> None:
    """`add_host` of several hosts to an aggregate naming no availability zone (a routed
    segment's), members and hosts without a compute node skipped (as its caller
    tolerates): one insert, and the hosts' providers mirrored in one placement call."""
    from stackling.placement import interface as placement

    nodes = dict(db.execute(select(ComputeNode.host, ComputeNode.uuid).where(
        ComputeNode.host.in_(sorted(set(hosts))))).all())
    if not nodes:
        return
    insert_absent(db, AggregateHost, [{"aggregate_id": agg.id, "host": h} for h in sorted(nodes)])
    wanted: dict[str, list[str]] = {nodes[h]: [] for h in nodes}
    for host, agg_uuid in db.execute(select(AggregateHost.host, Aggregate.uuid).join(
            Aggregate, Aggregate.id == AggregateHost.aggregate_id).where(
            AggregateHost.host.in_(sorted(nodes)))):
        wanted[nodes[host]].append(agg_uuid)
    placement.set_aggregates_for_providers(db, wanted)
    agg.updated_at = utcnow_precise()


def remove_host(db: Session, aggregate_id: str, host: str) -> Aggregate:
    agg = get_aggregate(db, aggregate_id)
    member = db.get(AggregateHost, (agg.id, host))
    if member is None:
        raise AggregateHostNotFound(aggregate_id=aggregate_id, host=host)
    db.delete(member)
    db.flush()
    node = db.scalars(select(ComputeNode).where(ComputeNode.host == host)).first()
    if node is not None:
        _mirror(db, node)
    agg.updated_at = utcnow_precise()
    return agg


def set_metadata(db: Session, aggregate_id: str, metadata: dict[str, str | None]) -> Aggregate:
    """Merge: a null value removes the key, others are set."""
    agg = get_aggregate(db, aggregate_id)
    if metadata.get("availability_zone"):
        for host in db.scalars(select(AggregateHost.host).where(
                AggregateHost.aggregate_id == agg.id)):
            zones = host_zones(db)
            if zones.get(host) not in (None, metadata["availability_zone"]):
                other = [a for a in db.scalars(select(AggregateHost.aggregate_id).where(
                    AggregateHost.host == host)) if a != agg.id]
                if other:
                    raise Conflict(f"Cannot update aggregate {agg.id}. Reason: One or more "
                                   "hosts already in availability zone(s) "
                                   f"['{zones[host]}'].")
    for key, value in metadata.items():
        match = (AggregateMetadata.aggregate_id == agg.id, AggregateMetadata.key == key)
        if value is None:
            db.execute(delete(AggregateMetadata).where(*match))
        else:  # an identical concurrent update's row is "already there": set its value
            insert_absent(db, AggregateMetadata,
                          [{"aggregate_id": agg.id, "key": key, "value": value}])
            db.execute(update(AggregateMetadata).where(*match).values(value=value))
    agg.updated_at = utcnow_precise()
    db.flush()
    return agg


def _mirror(db: Session, node: ComputeNode) -> None:
    """Put the node's resource provider in exactly its aggregates' placement aggregates."""
    from stackling.placement import interface as placement

    aggs = host_aggregate_uuids(db, node.host).get(node.host, [])
    placement.set_aggregates_for_provider(db, node.uuid, aggs)


def host_aggregate_uuids(db: Session, host: str | None = None) -> dict[str, list[str]]:
    stmt = select(AggregateHost.host, Aggregate.uuid).join(
        Aggregate, Aggregate.id == AggregateHost.aggregate_id)
    if host is not None:
        stmt = stmt.where(AggregateHost.host == host)
    out: dict[str, list[str]] = {}
    for h, agg_uuid in db.execute(stmt):
        out.setdefault(h, []).append(agg_uuid)
    return out


def host_zones(db: Session) -> dict[str, str]:
    """host -> availability zone (from aggregate metadata; default 'nova')."""
    rows = db.execute(select(AggregateHost.host, AggregateMetadata.value).join(
        AggregateMetadata, AggregateMetadata.aggregate_id == AggregateHost.aggregate_id).where(
        AggregateMetadata.key == "availability_zone"))
    zones: dict[str, str] = {}
    for host, zone in rows:
        zones.setdefault(host, zone)
    return zones
