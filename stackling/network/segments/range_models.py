"""Tables of the network-segment-range feature.

- `network_segment_range`: one row per range (default ranges from the ML2 configuration
  and admin-created ones). A default range carries `default_key` ("vxlan::1:16777215"),
  unique, so processes that start together never insert the same default twice; other
  ranges keep it NULL (NULLs never collide).
- `network_segment_range_pool`: one row per (network_type, physical_network) pool that
  ranges exist for. Range writes lock it exclusively and project allocations lock it
  shared, so an overlap check or an in-use check never races an allocation or another
  range write (SQLite serialises writers anyway).
- An index on `network_segment (network_type, segmentation_id)` lets `used` and the
  in-use checks find a range's segments without scanning every segment.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import Segment, StandardAttrs


class NetworkSegmentRange(StandardAttrs, Base):
    __tablename__ = "network_segment_range"
    __table_args__ = (Index("ix_network_segment_range_pool", "network_type",
                            "physical_network"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    name: Mapped[str] = mapped_column(String(255), default="")
    default: Mapped[bool] = mapped_column(Boolean, default=False)
    shared: Mapped[bool] = mapped_column(Boolean, default=True)
    project_id: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    network_type: Mapped[str] = mapped_column(String(32))
    # '' for tunnel types (as upstream stores them), the physnet for VLAN.
    physical_network: Mapped[str] = mapped_column(String(64), default="")
    minimum: Mapped[int] = mapped_column(BigInteger)
    maximum: Mapped[int] = mapped_column(BigInteger)
    default_key: Mapped[str | None] = mapped_column(String(128), nullable=True, unique=True)


class NetworkSegmentRangePool(Base):
    """The lock row of one pool of segmentation ids."""

    __tablename__ = "network_segment_range_pool"
    network_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    physical_network: Mapped[str] = mapped_column(String(64), primary_key=True)


SEGMENT_ID_INDEX = Index("ix_network_segment_type_segmentation_id", Segment.network_type,
                         Segment.segmentation_id)
