"""Network segment ranges (`network-segment-range`): admin-managed pools of
segmentation ids, per project or shared, that project networks draw their ids from.

Where ids come from (the range source of `segmentation`, with the feature enabled):
first the ranges owned by the requesting project; when those are full, the shared ranges
(the defaults from the ML2 configuration included) minus every id covered by another
project's ranges. All of it is interval arithmetic over a handful of ranges: no id is
ever enumerated, so a 2^32 range costs what a 10-id range costs.

Default ranges: the configured ML2 ranges are the shared `default` rows, re-synced at
start by comparing those few rows with the configuration (allocations are separate rows
and are never touched). Allocation reads the defaults from the configuration itself, so
it never depends on that sync having run.

`available` is upstream's list of free ids (integers) while there are at most
`AVAILABLE_LIST_MAX` of them. Above that it is a bounded part of that list, still
integers (the `openstack` CLI runs `int()` on every item and joins consecutive ids into
"a-b" for display, so strings such as "1-7365823" broke it): the first free ids of every
free interval, the budget shared out so that short intervals show whole and the longest
are cut, so a range of 2^32 ids answers in milliseconds with at most 4,096 ids. The number
free is still `maximum - minimum + 1 - len(used)`. `used` maps each id in use inside the
range to the project owning its network, as upstream.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, exists, insert, null, or_, select, union_all
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import retry_on_conflict, utcnow, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    REQUIRED,
    STANDARD,
    Attr,
    boolean,
    integer,
    one_of,
    string,
)
from stackling.network.core.models import Network, Segment, SegmentAllocation
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.netconfig import MAX_ID, NetConfig, get_config
from stackling.network.querying import Listing
from stackling.network.segments import segmentation
from stackling.network.segments.range_models import NetworkSegmentRange, NetworkSegmentRangePool

LOG = logging.getLogger(__name__)
RANGE_TYPES = ("vlan", "vxlan", "gre", "geneve")  # neutron-lib NETWORK_SEGMENT_RANGE_TYPES
# Above this many free ids `available` lists intervals. 4,096 keeps every VLAN range (at
# most 4,094 ids) in upstream's list of ints, which the openstack CLI needs.
AVAILABLE_LIST_MAX = 4096
SETTING = "network_segment_range"  # NetworkSettings switch (upstream: the service plugin)

EXTENSIONS.append(Extension(
    "network-segment-range", "Neutron Network Segment Range",
    "Provides support for the network segment range management",
    "2018-11-29T00:00:00-00:00", setting=SETTING))

POLICIES: dict[str, str] = {
    "create_network_segment_range": pol.ADMIN,
    "get_network_segment_range": pol.ADMIN,
    "update_network_segment_range": pol.ADMIN,
    "delete_network_segment_range": pol.ADMIN,
}


# ------------------------------------------------------------------ errors
class NetworkSegmentRangeNotFound(errors.NotFound):
    message = "Network Segment Range %(range_id)s could not be found."


class NetworkSegmentRangeNetTypeNotSupported(errors.BadRequest):
    message = "Network type %(type)s does not support network segment ranges."


class NetworkSegmentRangeDefaultReadOnly(errors.BadRequest):
    message = ("Network Segment Range %(range_id)s is a default segment range which could "
               "not be updated or deleted.")


class NetworkSegmentRangeReferencedByProject(errors.InUse):
    message = ("Network Segment Range %(range_id)s is referenced by one or more tenant "
               "networks.")


class NetworkSegmentRangeOverlaps(errors.Conflict):
    message = "Network segment range overlaps with range(s) with id %(range_id)s"


class BadRangeRequest(errors.BadRequest):
    error_type = "BadRequest"  # neutron-lib's generic BadRequest
    message = "Bad network_segment_range request: %(msg)s."


# Upstream raises these two as plain NeutronExceptions (a 500); bad input is a 400 here.
class NetworkVlanRangeError(errors.BadRequest):
    message = "Invalid network VLAN range: '%(vlan_range)s' - '%(error)s'."


class NetworkTunnelRangeError(errors.BadRequest):
    message = "Invalid network tunnel range: '%(tunnel_range)s' - %(error)s."


# ------------------------------------------------------------------ intervals
Interval = tuple[int, int]  # inclusive bounds


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, disjoint, non-adjacent intervals covering the same ids."""
    out: list[Interval] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def subtract(keep: Iterable[Interval], remove: Iterable[Interval]) -> list[Interval]:
    """The ids of `keep` not in `remove` (a sweep over both, never over the ids)."""
    cut = merge(remove)
    out: list[Interval] = []
    i = 0
    for lo, hi in merge(keep):
        while i < len(cut) and cut[i][1] < lo:
            i += 1
        j = i
        while lo <= hi and j < len(cut) and cut[j][0] <= hi:
            if cut[j][0] > lo:
                out.append((lo, cut[j][0] - 1))
            lo = max(lo, cut[j][1] + 1)
            j += 1
        if lo <= hi:
            out.append((lo, hi))
    return out


def contains(intervals: Sequence[Interval], value: int) -> bool:
    """`value` in merged `intervals` (binary search)."""
    i = bisect.bisect_right(intervals, (value, float("inf"))) - 1
    return i >= 0 and intervals[i][0] <= value <= intervals[i][1]


def gaps(taken: Iterable[int], lo: int, hi: int) -> list[Interval]:
    """The free intervals of [lo, hi] given its taken ids in ascending order."""
    out: list[Interval] = []
    nxt = lo
    for t in taken:
        if t > nxt:
            out.append((nxt, t - 1))
        nxt = max(nxt, t + 1)
    if nxt <= hi:
        out.append((nxt, hi))
    return out


@dataclass(frozen=True)
class Rec:
    """A range as allocation sees it."""

    lo: int
    hi: int
    shared: bool
    project_id: str | None
    id: str | None = None  # None for a configured default


def allowed(recs: Iterable[Rec], project_id: str | None) -> tuple[list[Interval], list[Interval]]:
    """(the project's own ranges, the shared ids it may use), both merged.

    Shared ids exclude every id of another project's ranges; `project_id` None (an admin
    segment without a project) owns nothing and is excluded from every project range.
    """
    own, shared, others = [], [], []
    for r in recs:
        if r.shared:
            shared.append((r.lo, r.hi))
        elif project_id is not None and r.project_id == project_id:
            own.append((r.lo, r.hi))
        else:
            others.append((r.lo, r.hi))
    own_m = merge(own)
    return own_m, subtract(shared, others + own)


def may_hold(recs: Iterable[Rec], project_id: str | None) -> list[Interval]:
    own, shared = allowed(recs, project_id)
    return merge(own + shared)


# ------------------------------------------------------------------ configuration
def enabled(cfg: NetConfig) -> bool:
    return bool(getattr(cfg.settings, SETTING, False))


def default_specs(cfg: NetConfig) -> list[tuple[str, str, int, int]]:
    """(type, physnet, min, max) of every configured range of a loaded type driver."""
    out = []
    for t in RANGE_TYPES:
        if t not in cfg.type_drivers:
            continue
        if t == "vlan":
            out += [(t, physnet, lo, hi) for physnet, ranges in cfg.vlan_ranges.items()
                    for lo, hi in ranges]
        else:
            out += [(t, "", lo, hi) for lo, hi in cfg.tunnel_ranges.get(t, [])]
    return out


def _default_key(spec: tuple[str, str, int, int]) -> str:
    t, physnet, lo, hi = spec
    return f"{t}:{physnet}:{lo}:{hi}"


def sync_default_ranges(db: Session) -> bool:
    """Make the `default` rows match the configuration; True when something changed.

    Costs one query over the few default rows when nothing changed. Another process
    inserting the same default meanwhile collides on `default_key` and is skipped.
    """
    cfg = get_config(db)
    want = {_default_key(s): s for s in default_specs(cfg)}
    rows = db.scalars(select(NetworkSegmentRange).where(
        NetworkSegmentRange.default.is_(True))).all()
    have = {r.default_key: r for r in rows}
    if set(have) == set(want):
        return False
    stale = [r for key, r in have.items() if key not in want]
    if stale:
        standard.delete_tags(db, [r.id for r in stale])
        db.execute(delete(NetworkSegmentRange).where(
            NetworkSegmentRange.id.in_([r.id for r in stale])))
    now = utcnow()
    for key, (t, physnet, lo, hi) in want.items():
        if key in have:
            continue
        try:
            with db.begin_nested():
                db.execute(insert(NetworkSegmentRange).values(
                    id=uuid_str(), name="", default=True, shared=True,
                    project_id=None, network_type=t, physical_network=physnet, minimum=lo,
                    maximum=hi, default_key=key, description="", created_at=now,
                    updated_at=now, revision_number=0))
        except IntegrityError:
            pass  # another process synced it first
    # The pools' lock rows, so that first allocations do not race to create them.
    p = NetworkSegmentRangePool
    pools = {(t, physnet) for t, physnet, _, _ in want.values()}
    have_pools = {tuple(r) for r in db.execute(select(p.network_type, p.physical_network))}
    for t, physnet in sorted(pools - have_pools):
        try:
            with db.begin_nested():
                db.execute(insert(p).values(network_type=t, physical_network=physnet))
        except IntegrityError:
            pass
    return True


def on_start(runtime: Any) -> None:
    """The component's start hook: bring the default rows in step with the configuration."""
    if not getattr(runtime.settings.network, SETTING, False):
        return

    def sync() -> bool:
        with runtime.db.transaction() as db:
            return sync_default_ranges(db)

    # Workers of one server start together: on MariaDB their inserts of the same defaults
    # may deadlock; the retry then finds the winner's rows. Allocation reads the defaults
    # from the configuration, so a failed sync only delays what the API lists.
    try:
        retry_on_conflict(sync)
    except Exception:  # noqa: BLE001 - never keep a worker from serving
        LOG.exception("network segment ranges: syncing the default ranges failed")


# ------------------------------------------------------------------ allocation
def _pool_recs(db: Session, cfg: NetConfig, network_type: str, physnet: str, *,
               probe: tuple[int, int] | None = None) -> list[Rec]:
    """Every range of one pool: the configured defaults plus the created ranges.
    `probe` (lo, hi): the same statement also tells whether an id in lo..hi is taken, as
    one more record with no bounds (a new range's `used` and `available` then need no
    read: `_taken`)."""
    recs = [Rec(lo, hi, True, None) for t, p, lo, hi in default_specs(cfg)
            if t == network_type and p == physnet]
    stmt = _RANGES_PROBED[network_type == "vlan"] if probe else _RANGES
    args = {"t": network_type, "p": physnet}
    if probe:
        args.update(lo=probe[0], hi=probe[1])
    rows = db.execute(stmt, args)
    recs += [Rec(lo, hi, shared, project, rid) for rid, lo, hi, shared, project in rows]
    return recs


def _ranges_statements() -> tuple[Any, dict[bool, Any]]:
    r, a = NetworkSegmentRange, SegmentAllocation
    ranges = select(r.id, r.minimum, r.maximum, r.shared, r.project_id).where(
        r.network_type == bindparam("t"), r.physical_network == bindparam("p"),
        r.default.is_(False))
    probed = {}
    for vlan in (False, True):
        taken = or_(
            exists(select(a.segmentation_id).where(
                a.network_type == bindparam("t"), a.physical_network == bindparam("p"),
                a.segmentation_id >= bindparam("lo"), a.segmentation_id <= bindparam("hi"))),
            exists(select(Segment.id).where(
                Segment.network_type == bindparam("t"),
                Segment.physical_network == bindparam("p") if vlan else or_(
                    Segment.physical_network.is_(None), Segment.physical_network == ""),
                Segment.segmentation_id >= bindparam("lo"),
                Segment.segmentation_id <= bindparam("hi"))))
        probed[vlan] = union_all(ranges, select(
            null(), null(), null(), null(), null()).where(taken))
    return ranges, probed


# Built once: every network create (range_source) and range create reads them.
_RANGES, _RANGES_PROBED = _ranges_statements()


def _taken(recs: list[Rec]) -> bool:
    """Whether `_pool_recs(probe=...)` found an id of the probed interval taken."""
    return any(r.lo is None for r in recs)


def _lock_pool(db: Session, network_type: str, physnet: str, *, exclusive: bool) -> None:
    """Row lock on the pool: range writers exclusive, allocations shared. Not on SQLite,
    whose writing transactions are serialised already (BEGIN IMMEDIATE)."""
    if db.get_bind().dialect.name == "sqlite":
        return
    p = NetworkSegmentRangePool
    stmt = select(p.network_type).where(p.network_type == network_type,
                                        p.physical_network == physnet
                                        ).with_for_update(read=not exclusive)
    if db.scalar(stmt) is not None:
        return
    try:
        with db.begin_nested():
            db.execute(insert(p).values(network_type=network_type, physical_network=physnet))
    except IntegrityError:
        pass  # created concurrently
    db.scalar(stmt)


def range_source(db: Session, network_type: str, physnet: str,
                 project_id: str | None) -> list[Interval]:
    """`segmentation`'s candidate ranges: own ranges first, then usable shared ids."""
    cfg = get_config(db)
    if not enabled(cfg):
        return segmentation.configured_ranges(db, network_type, physnet, project_id)
    _lock_pool(db, network_type, physnet, exclusive=False)
    own, shared = allowed(_pool_recs(db, cfg, network_type, physnet), project_id)
    return own + shared


segmentation.set_range_source(range_source)


# ------------------------------------------------------------------ attributes
ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": Attr(post=True, put=True, default="", convert=string(255), filter=True, sort=True),
    "default": Attr(),
    "shared": Attr(post=True, default=True, convert=boolean),
    "network_type": Attr(post=True, default=REQUIRED, convert=one_of(*RANGE_TYPES),
                         filter=True),
    "physical_network": Attr(post=True, convert=string(64, nullable=True), filter=True),
    "minimum": Attr(post=True, put=True, default=REQUIRED, convert=integer(1, MAX_ID["gre"])),
    "maximum": Attr(post=True, put=True, default=REQUIRED, convert=integer(1, MAX_ID["gre"])),
    "used": Attr(),
    "available": Attr(),
}
_R = NetworkSegmentRange
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _R.id, "name": _R.name, "description": _R.description,
             "project_id": _R.project_id, "tenant_id": _R.project_id,
             "network_type": _R.network_type, "physical_network": _R.physical_network,
             "revision_number": _R.revision_number},
    id_column=_R.id,
)


# ------------------------------------------------------------------ reads
def _require_enabled(db: Session) -> NetConfig:
    cfg = get_config(db)
    if not enabled(cfg):
        raise errors.HTTPNotFound()
    return cfg


def _target(rng: NetworkSegmentRange) -> dict[str, Any]:
    return {"project_id": rng.project_id, "tenant_id": rng.project_id}


def get_range(db: Session, ctx: RequestContext, range_id: str, *,
              for_update: bool = False) -> NetworkSegmentRange:
    """The range, or NotFound (also when the caller may not see it: admin-only API)."""
    _require_enabled(db)
    rng = db.get(NetworkSegmentRange, range_id, populate_existing=for_update)
    if rng is None or not pol.allowed(db, ctx, "get_network_segment_range", _target(rng)):
        raise NetworkSegmentRangeNotFound(range_id=range_id)
    return rng


def list_ranges(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    _require_enabled(db)
    page = LISTING.page(db, select(NetworkSegmentRange), params)
    page.rows = [r for r in page.rows
                 if pol.allowed(db, ctx, "get_network_segment_range", _target(r))]
    return page


# ------------------------------------------------------------------ writes
def _verify_bounds(network_type: str, lo: int, hi: int) -> None:
    """neutron-lib's verify_vlan_range / verify_tunnel_range, as 400s."""
    limit = MAX_ID[network_type]
    text = f"{lo}:{hi}"
    for value in (lo, hi):
        if not 1 <= value <= limit:
            if network_type == "vlan":
                raise NetworkVlanRangeError(vlan_range=text,
                                            error=f"{value} is not a valid VLAN tag")
            raise NetworkTunnelRangeError(
                tunnel_range=text, error=f"{value} is not a valid {network_type} identifier")
    if hi < lo:
        if network_type == "vlan":
            raise NetworkVlanRangeError(
                vlan_range=text, error="End of VLAN range is less than start of VLAN range")
        raise NetworkTunnelRangeError(
            tunnel_range=text, error="End of tunnel range is less than start of tunnel range")


def _check_overlap(recs: Iterable[Rec], lo: int, hi: int, self_id: str | None) -> None:
    hits = [r.id for r in recs if r.id is not None and r.id != self_id
            and lo <= r.hi and hi >= r.lo]
    if hits:
        raise NetworkSegmentRangeOverlaps(range_id=", ".join(sorted(hits)))


def create_range(db: Session, ctx: RequestContext, attrs: dict[str, Any], *,
                 project_given: bool) -> NetworkSegmentRange:
    """Create a range; `project_given`: the body named a project (not the default)."""
    cfg = _require_enabled(db)
    pol.authorize(db, ctx, "create_network_segment_range",
                  {"project_id": attrs.get("project_id")})
    t = attrs["network_type"]
    if t not in cfg.type_drivers:
        raise NetworkSegmentRangeNetTypeNotSupported(type=t)
    lo, hi = attrs["minimum"], attrs["maximum"]
    _verify_bounds(t, lo, hi)
    physnet = ""
    if t == "vlan":
        physnet = attrs.get("physical_network") or ""
        if not physnet:
            raise BadRangeRequest(msg="Network type vlan requires 'physical_network' to "
                                      "be specified while creating new range")
    shared = attrs["shared"]
    project = attrs.get("project_id")
    if shared and project_given and project:
        raise errors.InvalidInput(error_message="A shared network segment range has no "
                                                "project; omit project_id or set shared "
                                                "to false")
    if not shared and not project:
        raise errors.InvalidInput(error_message="A network segment range that is not shared "
                                                "needs a project_id")
    _lock_pool(db, t, physnet, exclusive=True)
    recs = _pool_recs(db, cfg, t, physnet, probe=(lo, hi))
    _check_overlap([r for r in recs if r.lo is not None], lo, hi, None)
    now = utcnow()
    rng = NetworkSegmentRange(
        name=attrs.get("name", ""), description=attrs.get("description", ""), default=False,
        shared=shared, project_id=None if shared else project, network_type=t,
        physical_network=physnet, minimum=lo, maximum=hi, created_at=now, updated_at=now,
        revision_number=0)
    db.add(rng)
    db.flush()
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "network_segment_range", rng.id, tags)
    if not _taken(recs):  # what render() would read back: nothing in it is used yet
        rng.__dict__[standard.KNOWN] = (sorted(tags), {}, [(lo, hi)])
    return rng


def update_range(db: Session, ctx: RequestContext, range_id: str, attrs: dict[str, Any],
                 if_match: int | None = None) -> NetworkSegmentRange:
    cfg = _require_enabled(db)
    rng = get_range(db, ctx, range_id)
    pol.authorize(db, ctx, "update_network_segment_range", _target(rng))
    if rng.default:
        raise NetworkSegmentRangeDefaultReadOnly(range_id=rng.id)
    if "minimum" in attrs or "maximum" in attrs:
        _lock_pool(db, rng.network_type, rng.physical_network, exclusive=True)
        rng = get_range(db, ctx, range_id, for_update=True)  # as of the lock
    standard.check_revision(rng, if_match)
    lo, hi = attrs.get("minimum", rng.minimum), attrs.get("maximum", rng.maximum)
    changed = False
    if (lo, hi) != (rng.minimum, rng.maximum):
        _verify_bounds(rng.network_type, lo, hi)
        _check_in_use(db, rng, subtract([(rng.minimum, rng.maximum)], [(lo, hi)]))
        _check_overlap(_pool_recs(db, cfg, rng.network_type, rng.physical_network),
                       lo, hi, rng.id)
        rng.minimum, rng.maximum = lo, hi
        changed = True
    for key in ("name", "description"):
        if key in attrs and getattr(rng, key) != attrs[key]:
            setattr(rng, key, attrs[key])
            changed = True
    if changed:
        standard.touch(rng)
    db.flush()
    return rng


def delete_range(db: Session, ctx: RequestContext, range_id: str,
                 if_match: int | None = None) -> None:
    _require_enabled(db)
    rng = get_range(db, ctx, range_id)
    pol.authorize(db, ctx, "delete_network_segment_range", _target(rng))
    if rng.default:
        raise NetworkSegmentRangeDefaultReadOnly(range_id=rng.id)
    _lock_pool(db, rng.network_type, rng.physical_network, exclusive=True)
    rng = get_range(db, ctx, range_id, for_update=True)
    standard.check_revision(rng, if_match)
    _check_in_use(db, rng, [(rng.minimum, rng.maximum)])
    standard.delete_tags(db, [rng.id])
    db.delete(rng)
    db.flush()


def _check_in_use(db: Session, rng: NetworkSegmentRange, removed: list[Interval]) -> None:
    """409 when a network segment holds an id of `removed` (the ids the range gives up),
    as upstream: whether another range still covers the id does not matter."""
    a = SegmentAllocation
    for lo, hi in removed:
        if db.scalar(select(a.segmentation_id).where(
                a.network_type == rng.network_type,
                a.physical_network == rng.physical_network,
                a.segmentation_id >= lo, a.segmentation_id <= hi).limit(1)) is not None:
            raise NetworkSegmentRangeReferencedByProject(range_id=rng.id)


def _segment_physnet(network_type: str, physnet: str) -> Any:
    if network_type == "vlan":
        return Segment.physical_network == physnet
    return or_(Segment.physical_network.is_(None), Segment.physical_network == "")


# ------------------------------------------------------------------ views
def used(db: Session, rng: NetworkSegmentRange) -> dict[str, str]:
    """{"<segmentation id>": "<project id>"} for the network segments inside the range."""
    stmt = (select(Segment.segmentation_id, Network.project_id)
            .join(Network, Network.id == Segment.network_id)
            .where(Segment.network_type == rng.network_type,
                   _segment_physnet(rng.network_type, rng.physical_network),
                   Segment.segmentation_id >= rng.minimum,
                   Segment.segmentation_id <= rng.maximum)
            .order_by(Segment.segmentation_id))
    return {str(seg_id): project for seg_id, project in db.execute(stmt)}


def free_intervals(db: Session, rng: NetworkSegmentRange) -> list[Interval]:
    a = SegmentAllocation
    taken = db.scalars(select(a.segmentation_id).where(
        a.network_type == rng.network_type, a.physical_network == rng.physical_network,
        a.segmentation_id >= rng.minimum, a.segmentation_id <= rng.maximum)
        .order_by(a.segmentation_id))
    return gaps(taken, rng.minimum, rng.maximum)


def available_view(free: Sequence[Interval]) -> list[int]:
    """Upstream's list of free ids while short; above that the first ids of each free
    interval, AVAILABLE_LIST_MAX in all, shared out evenly (an interval shorter than its
    share shows whole and leaves the rest to the others)."""
    free = list(free)[:AVAILABLE_LIST_MAX]  # more intervals than the budget: one id each
    sizes = [hi - lo + 1 for lo, hi in free]
    budget, shown = AVAILABLE_LIST_MAX, [0] * len(free)
    for n, i in enumerate(sorted(range(len(free)), key=sizes.__getitem__)):
        shown[i] = min(sizes[i], budget // (len(free) - n))
        budget -= shown[i]
    return [v for (lo, _), k in zip(free, shown, strict=True) for v in range(lo, lo + k)]


def render(db: Session, rows: Sequence[NetworkSegmentRange],
           fields: Sequence[str] = ()) -> list[dict[str, Any]]:
    """API dicts; `used`/`available` are computed only when they will be shown."""
    known = standard.take_known(rows)  # just created: nothing to read back
    tags = {} if known is not None else standard.tags_for(db, [r.id for r in rows])
    want_used = not fields or "used" in fields
    want_available = not fields or "available" in fields
    out = []
    for i, r in enumerate(rows):
        item: dict[str, Any] = {
            "id": r.id, "name": r.name, "default": r.default, "shared": r.shared,
            "project_id": r.project_id, "network_type": r.network_type,
            "physical_network": r.physical_network, "minimum": r.minimum,
            "maximum": r.maximum,
        }
        made = known[i] if known is not None else None
        if want_used:
            item["used"] = dict(made[1]) if made is not None else used(db, r)
        if want_available:
            item["available"] = available_view(
                made[2] if made is not None else free_intervals(db, r))
        item.update(standard.standard_view(r, made[0] if made is not None else tags[r.id]))
        out.append(item)
    return out


standard.register_taggable("network_segment_ranges", standard.Taggable(
    "network_segment_range", get_range,
    lambda db, ctx, rng: pol.authorize(db, ctx, "update_network_segment_range",
                                       _target(rng))))
