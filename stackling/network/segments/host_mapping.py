"""Hosts <-> segments: a host reaches the segments whose physical network it has.

Upstream learns a host's physical networks from its L2 agent's bridge mappings; here they
are the host's configured `physical_networks`, recorded by compute when it registers its
hosts (`record_hosts`). The mapping rows are kept in step at that moment and whenever a
segment is created (`map_segment`); they go with their segment (FK cascade). A changed
mapping moves the host in or out of the segment's host aggregate in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.orm import Session

from stackling.common import memo
from stackling.network.compute_hooks import compute
from stackling.network.core.models import Segment
from stackling.network.segments.models import NetworkHost, SegmentHostMapping

# The transaction's answers of `segments_for_host` ({(host, network_id): [segment ids]}:
# a binding asks twice, for its candidate subnets and for the host check), kept in the
# transaction memo (cleared by any rollback). Every writer of the mapping (hosts recorded, a
# segment created or deleted, a network deleted) drops it.
_MEMO = "segments_for_host"
# A segment's name in placement (its resource provider) and compute (its host aggregate).
NAME_STUB = "Neutron segment id %s"


def provider_name(segment_id: str) -> str:
    return NAME_STUB % segment_id


def forget(db: Session) -> None:
    """The mapping changed in this transaction: drop the memo of `segments_for_host`."""
    memo.forget(db, _MEMO)


def record_hosts(db: Session, hosts: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """Record each (host, physical networks) and remap the hosts whose networks changed;
    returns those hosts. Nothing changed: one query."""
    known = {h.host: h for h in db.scalars(select(NetworkHost))}
    changed: list[str] = []
    for name, physnets in hosts:
        wanted = sorted(set(physnets))
        row = known.get(name)
        if row is not None and sorted(row.physical_networks or []) == wanted:
            continue
        if row is None:
            db.add(NetworkHost(host=name, physical_networks=wanted))
        else:
            row.physical_networks = wanted
        db.flush()
        remap_host(db, name, wanted)
        changed.append(name)
    return changed


def remap_host(db: Session, host: str, physnets: Sequence[str]) -> None:
    forget(db)
    wanted = set(db.scalars(select(Segment.id).where(
        Segment.physical_network.in_(list(physnets))))) if physnets else set()
    current = set(db.scalars(select(SegmentHostMapping.segment_id)
                             .where(SegmentHostMapping.host == host)))
    for segment_id in sorted(current - wanted):
        db.execute(delete(SegmentHostMapping).where(SegmentHostMapping.segment_id == segment_id,
                                                    SegmentHostMapping.host == host))
        compute().remove_host(db, provider_name(segment_id), host)
    for segment_id in sorted(wanted - current):
        db.execute(insert(SegmentHostMapping).values(segment_id=segment_id, host=host))
        compute().add_host(db, provider_name(segment_id), host)


def map_segment(db: Session, segment: Segment) -> list[str]:
    """Map a new segment to every recorded host reaching its physical network."""
    forget(db)
    if not segment.physical_network:
        return []
    hosts = sorted(h.host for h in db.scalars(select(NetworkHost))
                   if segment.physical_network in (h.physical_networks or []))
    if hosts:
        db.execute(insert(SegmentHostMapping),
                   [{"segment_id": segment.id, "host": h} for h in hosts])
    return hosts


def expected_hosts(db: Session, segment: Segment) -> list[str]:
    """The hosts that must be mapped to `segment` (what the audit compares with)."""
    if not segment.physical_network:
        return []
    return sorted(h.host for h in db.scalars(select(NetworkHost))
                  if segment.physical_network in (h.physical_networks or []))


def hosts_for_segment(db: Session, segment_id: str) -> list[str]:
    return sorted(db.scalars(select(SegmentHostMapping.host)
                             .where(SegmentHostMapping.segment_id == segment_id)))


_FOR_HOST = select(SegmentHostMapping.segment_id).where(
    SegmentHostMapping.host == bindparam("host"))
_FOR_HOST_ON_NETWORK = _FOR_HOST.join(Segment, Segment.id == SegmentHostMapping.segment_id).where(
    Segment.network_id == bindparam("net"))


def segments_for_host(db: Session, host: str, network_id: str | None = None) -> list[str]:
    known = memo.table(db).setdefault(_MEMO, {})
    found = known.get((host, network_id))
    if found is None:
        if network_id is None:
            found = sorted(db.scalars(_FOR_HOST, {"host": host}))
        else:
            found = sorted(db.scalars(_FOR_HOST_ON_NETWORK, {"host": host, "net": network_id}))
        known[(host, network_id)] = found
    return list(found)
