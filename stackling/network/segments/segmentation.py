"""ML2 type drivers (flat, vlan, vxlan, gre, geneve) and segmentation id allocation.

Only *taken* ids are stored (`network_segment_allocation`); a free id is found with
indexed gap queries over the candidate ranges: from a random start, "is the start free?",
else "first taken t >= start whose t+1 is not taken", wrapping around to the range's
beginning. The random start is tried first by inserting it (free in a roomy range: one
statement, no search); the insert skips a taken id (ON CONFLICT DO NOTHING; MariaDB: a
savepoint and its IntegrityError), and losing a race moves on to a new random start, a
bounded number of times. Configuring 2^24 or 2^32 ids costs nothing.

Where ids may come from is `candidate_ranges(db, network_type, physnet, project_id)`:
today the configured ML2 ranges; the network-segment-range feature replaces it through
`set_range_source` (own ranges first, then shared ranges minus other projects' ranges).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, delete, exists, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from stackling.network import errors
from stackling.network.core.models import SegmentAllocation
from stackling.network.netconfig import MAX_ID, TUNNEL_TYPES, NetConfig, get_config

ATTEMPTS = 20
# IPv4 outer header plus each tunnel's own header, as neutron's type drivers subtract
# (geneve: [ml2_type_geneve] max_header_size, default 38).
IP_HEADER = 20
TUNNEL_OVERHEAD = {"vxlan": 30, "gre": 22, "geneve": 38}

Ranges = list[tuple[int, int]]
RangeSource = Callable[[Session, str, str, "str | None"], Ranges]


class Taken(Exception):
    """The requested id is already allocated."""


class RangeFull(Exception):
    """No free id in the candidate ranges."""


@dataclass(frozen=True)
class SegmentSpec:
    network_type: str
    physical_network: str | None
    segmentation_id: int | None


# ------------------------------------------------------------------ range sources
def configured_ranges(db: Session, network_type: str, physnet: str,
                      project_id: str | None) -> Ranges:
    cfg = get_config(db)
    if network_type == "vlan":
        return list(cfg.vlan_ranges.get(physnet, []))
    return list(cfg.tunnel_ranges.get(network_type, []))


_range_source: RangeSource = configured_ranges


def set_range_source(source: RangeSource | None) -> RangeSource:
    """Replace where allocatable ranges come from (None restores the ML2 ranges);
    returns the previous source."""
    global _range_source
    previous = _range_source
    _range_source = source or configured_ranges
    return previous


def candidate_ranges(db: Session, network_type: str, physnet: str,
                     project_id: str | None) -> Ranges:
    """Ordered (min, max) ranges a project's new segment may take ids from."""
    return _range_source(db, network_type, physnet, project_id)


# ------------------------------------------------------------------ the allocator
class RangeAllocator:
    """Allocator over one (network_type, physical_network) pool of integer ids."""

    def __init__(self, network_type: str, physical_network: str | None) -> None:
        self.network_type = network_type
        self.physnet = physical_network or ""

    def _base(self, table: Any) -> Any:
        return and_(table.network_type == self.network_type,
                    table.physical_network == self.physnet)

    def allocate(self, db: Session, value: int) -> None:
        """Take `value` (may lie outside every range); Taken if held already."""
        row = {"network_type": self.network_type, "physical_network": self.physnet,
               "segmentation_id": value}
        stmt = _SKIP_TAKEN.get(db.get_bind().dialect.name)
        if stmt is not None:
            if db.execute(stmt, row).rowcount != 1:  # type: ignore[attr-defined]
                raise Taken(value)
            return
        try:
            with db.begin_nested():
                db.execute(insert(SegmentAllocation).values(**row))
        except IntegrityError:
            raise Taken(value) from None

    def allocate_next(self, db: Session, ranges: Ranges) -> int:
        """A free id from the first range that has one; RangeFull when none does."""
        for lo, hi in ranges:
            start = random.randint(lo, hi)
            try:
                self.allocate(db, start)  # free, mostly: then no search at all
                return start
            except Taken:
                pass
            for _ in range(ATTEMPTS):
                value = self.find_free(db, lo, hi, random.randint(lo, hi))
                if value is None:
                    break  # this range is full: try the next one
                try:
                    self.allocate(db, value)
                    return value
                except Taken:
                    continue  # a concurrent request won it: look again
            else:
                raise RangeFull()  # only losing races: give up rather than spin
        raise RangeFull()

    def release(self, db: Session, value: int) -> None:
        db.execute(delete(SegmentAllocation).where(
            self._base(SegmentAllocation), SegmentAllocation.segmentation_id == value))

    # -- search
    def find_free(self, db: Session, lo: int, hi: int, start: int) -> int | None:
        found = self._free_in(db, start, hi)
        if found is None and start > lo:
            found = self._free_in(db, lo, start - 1)
        return found

    def _free_in(self, db: Session, lo: int, hi: int) -> int | None:
        args = {"t": self.network_type, "p": self.physnet, "lo": lo, "hi": hi}
        first = db.scalar(_FIRST_TAKEN, args)
        if first is None or first > lo:
            return lo
        taken = db.scalar(_FIRST_GAP, args)
        return None if taken is None else taken + 1


def _gap_queries() -> tuple[Any, Any]:
    """The two searches, built once (building them per call costs more than running them)."""
    a, b = SegmentAllocation, aliased(SegmentAllocation)
    t, p, lo, hi = bindparam("t"), bindparam("p"), bindparam("lo"), bindparam("hi")
    same = and_(a.network_type == t, a.physical_network == p)
    first = (select(a.segmentation_id).where(same, a.segmentation_id >= lo,
                                             a.segmentation_id <= hi)
             .order_by(a.segmentation_id).limit(1))
    gap = (select(a.segmentation_id).where(
        same, a.segmentation_id >= lo, a.segmentation_id < hi,
        ~exists().where(b.network_type == t, b.physical_network == p,
                        b.segmentation_id == a.segmentation_id + 1))
        .order_by(a.segmentation_id).limit(1))
    return first, gap


_FIRST_TAKEN, _FIRST_GAP = _gap_queries()


def _skip_taken() -> dict[str, Any]:
    """Inserts that skip a taken id, their row count telling (built once). The primary
    key is the only constraint of the table: nothing else can be skipped."""
    from sqlalchemy.dialects.postgresql import insert as pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    table = SegmentAllocation.__table__
    return {name: fn(table).on_conflict_do_nothing().execution_options(preserve_rowcount=True)
            for name, fn in (("sqlite", sqlite_insert), ("postgresql", pg_insert))}


_SKIP_TAKEN = _skip_taken()


# ------------------------------------------------------------------ type drivers
def validate(cfg: NetConfig, spec: SegmentSpec) -> SegmentSpec:
    """Neutron's per-type checks of an admin's provider request (400 InvalidInput)."""
    t, physnet, seg_id = spec.network_type, spec.physical_network, spec.segmentation_id
    if t not in cfg.type_drivers:
        raise errors.InvalidInput(error_message=f"network_type value '{t}' not supported")
    if t == "flat":
        if seg_id is not None:
            raise errors.InvalidInput(
                error_message="segmentation_id specified for flat provider network")
        if not physnet:
            raise errors.InvalidInput(
                error_message="physical_network required for flat provider network")
        if "*" not in cfg.flat_networks and physnet not in cfg.flat_networks:
            raise errors.InvalidInput(
                error_message=f"physical_network '{physnet}' unknown for flat provider network")
    elif t == "vlan":
        if physnet and physnet not in cfg.vlan_ranges:
            raise errors.InvalidInput(
                error_message=f"physical_network '{physnet}' unknown for VLAN provider network")
        if seg_id is not None:
            if not physnet:
                raise errors.InvalidInput(
                    error_message="segmentation_id requires physical_network for VLAN "
                                  "provider network")
            if not 1 <= seg_id <= MAX_ID["vlan"]:
                raise errors.InvalidInput(
                    error_message=f"segmentation_id out of range (1 through {MAX_ID['vlan']})")
    elif t in TUNNEL_TYPES:
        if physnet:
            raise errors.InvalidInput(
                error_message=f"provider:physical_network specified for {t.upper()} network"
                              if t != "geneve" else
                              "provider:physical_network specified for Geneve network")
        if seg_id is not None and not 1 <= seg_id <= MAX_ID[t]:
            raise errors.InvalidInput(
                error_message=f"{t.upper() if t != 'geneve' else 'Geneve'} ID {seg_id} out "
                              f"of range (1 through {MAX_ID[t]})")
    elif t != "local":
        raise errors.InvalidInput(error_message=f"network_type value '{t}' not supported")
    return spec


def _in_use(spec: SegmentSpec, seg_id: int) -> Exception:
    if spec.network_type == "flat":
        return errors.FlatNetworkInUse(physical_network=spec.physical_network)
    if spec.network_type == "vlan":
        return errors.VlanIdInUse(vlan_id=seg_id, physical_network=spec.physical_network)
    return errors.TunnelIdInUse(tunnel_id=seg_id)


def reserve(db: Session, spec: SegmentSpec, project_id: str | None = None) -> SegmentSpec:
    """Reserve a (partially) specified provider segment; returns it fully specified.

    A partial one draws its id like a tenant segment of `project_id` (the network's
    project): that project's ranges first, as upstream's type drivers do."""
    cfg = get_config(db)
    validate(cfg, spec)
    t = spec.network_type
    if t == "local":
        return spec
    if t == "flat":
        try:
            RangeAllocator("flat", spec.physical_network).allocate(db, 0)
        except Taken:
            raise _in_use(spec, 0) from None
        return spec
    if spec.segmentation_id is not None:
        try:
            RangeAllocator(t, spec.physical_network).allocate(db, spec.segmentation_id)
        except Taken:
            raise _in_use(spec, spec.segmentation_id) from None
        return spec
    # Partially specified: a free id of that type (VLAN: on the given or any physnet).
    physnets = [spec.physical_network] if spec.physical_network else (
        list(cfg.vlan_physnets) if t == "vlan" else [None])
    for physnet in physnets:
        seg_id = _allocate_any(db, t, physnet, project_id)
        if seg_id is not None:
            return SegmentSpec(t, physnet, seg_id)
    raise errors.NoNetworkAvailable()


def _allocate_any(db: Session, network_type: str, physnet: str | None,
                  project_id: str | None) -> int | None:
    ranges = candidate_ranges(db, network_type, physnet or "", project_id)
    try:
        return RangeAllocator(network_type, physnet).allocate_next(db, ranges)
    except RangeFull:
        return None


def allocate_project_segment(db: Session, project_id: str | None) -> SegmentSpec:
    """A segment for a project network: the first tenant type with a free id."""
    cfg = get_config(db)
    for t in cfg.tenant_network_types:
        if t not in cfg.type_drivers:
            continue
        if t == "local":
            return SegmentSpec("local", None, None)
        if t == "vlan":
            physnets: list[str | None] = list(cfg.vlan_physnets)
        elif t in TUNNEL_TYPES:
            physnets = [None]
        else:
            continue
        for physnet in physnets:
            seg_id = _allocate_any(db, t, physnet, project_id)
            if seg_id is not None:
                return SegmentSpec(t, physnet, seg_id)
    raise errors.NoNetworkAvailable()


def release(db: Session, spec: SegmentSpec) -> None:
    if spec.network_type == "flat":
        RangeAllocator("flat", spec.physical_network).release(db, 0)
    elif spec.network_type in ("vlan", *TUNNEL_TYPES) and spec.segmentation_id is not None:
        RangeAllocator(spec.network_type, spec.physical_network).release(
            db, spec.segmentation_id)


def mtu(cfg: NetConfig, network_type: str, physnet: str | None) -> int:
    """The segment's MTU as neutron's type drivers compute it."""
    if network_type in ("flat", "vlan"):
        value = cfg.global_physnet_mtu
        if physnet and physnet in cfg.physnet_mtus:
            value = min(value, cfg.physnet_mtus[physnet])
        return value
    if network_type in TUNNEL_TYPES:
        base = cfg.global_physnet_mtu
        if cfg.path_mtu:
            base = min(base, cfg.path_mtu)
        return base - IP_HEADER - TUNNEL_OVERHEAD[network_type]
    return cfg.global_physnet_mtu
