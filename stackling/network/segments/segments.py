"""Segments (`segment`, `standard-attr-segment`): the admin-only `/v2.0/segments` API.

A network's first segment is made with the network (its provider attributes); more are
added here, which makes the network multi-segment (`segments` shown instead of
`provider:*`) and lowers its MTU to what every segment carries. Segmentation ids come
from the same allocator and ranges as networks' (`segmentation.reserve`, shared ranges:
a segment names no project), so their cost does not depend on the range size. Deleting
a segment still bound to subnets is 409 `SegmentInUse`; deleting the network deletes its
segments and releases their ids (`networks.delete_network`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import utcnow
from stackling.common.listing import ListParams, Page
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    REQUIRED,
    STANDARD,
    Attr,
    integer,
    string,
    uuid_value,
)
from stackling.network.core.models import Network, Segment, Subnet
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.netconfig import get_config
from stackling.network.querying import Listing
from stackling.network.segments import host_mapping, segmentation
from stackling.network.segments.segmentation import SegmentSpec

EXTENSIONS.extend([
    Extension("segment", "Segment", "Segments extension.", "2016-02-24T17:00:00-00:00"),
    Extension("standard-attr-segment", "Standard Attribute Segment Extension",
              "Add standard attributes to Segment resource", "2018-03-09T10:00:00-00:00"),
    Extension("subnet-segmentid-writable", "Subnet SegmentID (writable)",
              "Provides a writable segment_id attribute for a subnet resource.",
              "2018-03-12T00:00:00-00:00"),
    Extension("segments-peer-subnet-host-routes", "Segments peer-subnet host routes",
              "Add host routes to subnets on a routed network (segments)",
              "2021-02-15T12:00:00-00:00"),
])

POLICIES: dict[str, str] = {
    "create_segment": pol.ADMIN,
    "get_segment": pol.ADMIN,
    "update_segment": pol.ADMIN,
    "delete_segment": pol.ADMIN,
}

_PROJECT = Attr(post=True, convert=string(255))  # accepted on POST, never shown
ATTRS: dict[str, Attr] = {
    **STANDARD,
    "project_id": _PROJECT,
    "tenant_id": _PROJECT,
    "name": Attr(post=True, put=True, default=None, convert=string(255, nullable=True),
                 filter=True, sort=True),
    "description": DESCRIPTION,
    "network_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                       sort=True),
    "network_type": Attr(post=True, default=REQUIRED, convert=string(32), filter=True,
                         sort=True),
    "physical_network": Attr(post=True, convert=string(64, nullable=True), filter=True,
                             sort=True),
    # sortable, not filterable (upstream's attribute map, despite the api-ref)
    "segmentation_id": Attr(post=True, convert=integer(nullable=True), sort=True),
}

LISTING = Listing(
    attrs=ATTRS,
    columns={"id": Segment.id, "name": Segment.name, "description": Segment.description,
             "network_id": Segment.network_id, "network_type": Segment.network_type,
             "physical_network": Segment.physical_network,
             "segmentation_id": Segment.segmentation_id,
             "revision_number": Segment.revision_number},
    id_column=Segment.id,
)


# ------------------------------------------------------------------ reads
def get_segment(db: Session, ctx: RequestContext, segment_id: str, *,
                for_update: bool = False) -> Segment:
    seg = db.get(Segment, segment_id, with_for_update=for_update or None,
                 populate_existing=for_update)
    if seg is None or seg.is_dynamic or not pol.allowed(db, ctx, "get_segment", {}):
        raise errors.SegmentNotFound(segment_id=segment_id)
    return seg


def list_segments(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    if not pol.allowed(db, ctx, "get_segment", {}):
        return Page(rows=[], has_more=False)
    stmt = select(Segment).where(Segment.is_dynamic.is_(False))
    return LISTING.page(db, stmt, params)


def render(db: Session, segments: Sequence[Segment]) -> list[dict[str, Any]]:
    tags = standard.tags_for(db, [s.id for s in segments])
    return [{"id": s.id, "network_id": s.network_id, "name": s.name,
             "network_type": s.network_type, "physical_network": s.physical_network,
             "segmentation_id": s.segmentation_id,
             **standard.standard_view(s, tags.get(s.id, []))} for s in segments]


# ------------------------------------------------------------------ writes
def create_segment(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> Segment:
    pol.authorize(db, ctx, "create_segment", {"project_id": attrs.get("project_id")})
    # the network row lock orders segment changes of one network (index, MTU)
    net = db.get(Network, attrs["network_id"], with_for_update=True)
    if net is None:
        raise errors.NetworkNotFound(net_id=attrs["network_id"])
    spec = segmentation.reserve(db, SegmentSpec(attrs["network_type"],
                                                attrs.get("physical_network") or None,
                                                attrs.get("segmentation_id")))
    index = db.scalar(select(func.max(Segment.segment_index))
                      .where(Segment.network_id == net.id))
    now = utcnow()
    seg = Segment(network_id=net.id, network_type=spec.network_type,
                  physical_network=spec.physical_network,
                  segmentation_id=spec.segmentation_id,
                  segment_index=0 if index is None else index + 1,
                  name=attrs.get("name"), description=attrs.get("description", ""),
                  created_at=now, updated_at=now, revision_number=0)
    db.add(seg)
    db.flush()
    if attrs.get("tags"):
        standard.set_tags(db, "segment", seg.id, list(dict.fromkeys(attrs["tags"])))
    _recompute_mtu(db, net)
    standard.touch(net)
    host_mapping.map_segment(db, seg)
    db.flush()
    return seg


def _recompute_mtu(db: Session, net: Network) -> None:
    """The network carries at most what its smallest segment carries."""
    cfg = get_config(db)
    rows = db.execute(select(Segment.network_type, Segment.physical_network)
                      .where(Segment.network_id == net.id))
    limit = min((segmentation.mtu(cfg, t, p) for t, p in rows), default=None)
    if limit is not None and net.mtu > limit:
        net.mtu = limit


def update_segment(db: Session, ctx: RequestContext, segment_id: str, attrs: dict[str, Any],
                   if_match: int | None = None) -> Segment:
    seg = get_segment(db, ctx, segment_id)
    pol.authorize(db, ctx, "update_segment", {})
    standard.check_revision(seg, if_match)
    changed = False
    for key in ("name", "description"):
        if key in attrs and getattr(seg, key) != attrs[key]:
            setattr(seg, key, attrs[key])
            changed = True
    if changed:
        standard.touch(seg)
    db.flush()
    return seg


def delete_segment(db: Session, ctx: RequestContext, segment_id: str,
                   if_match: int | None = None) -> None:
    seg = get_segment(db, ctx, segment_id)
    pol.authorize(db, ctx, "delete_segment", {})
    db.get(Network, seg.network_id, with_for_update=True)
    seg = get_segment(db, ctx, segment_id, for_update=True)
    standard.check_revision(seg, if_match)
    subnet_ids = list(db.scalars(select(Subnet.id).where(Subnet.segment_id == seg.id)
                                 .order_by(Subnet.id)))
    if subnet_ids:
        raise errors.SegmentInUse(segment_id=seg.id, reason="The segment is still associated with "
                                                    f"subnet(s) {', '.join(subnet_ids)}")
    segmentation.release(db, SegmentSpec(seg.network_type, seg.physical_network,
                                         seg.segmentation_id))
    net = db.get_one(Network, seg.network_id)
    standard.touch(net)
    standard.delete_tags(db, [seg.id])
    db.delete(seg)  # host mappings go with it (FK cascade)
    host_mapping.forget(db)
    db.flush()


standard.register_taggable("segments", standard.Taggable(
    "segment", get_segment, lambda db, ctx, s: pol.authorize(db, ctx, "update_segment", {})))
