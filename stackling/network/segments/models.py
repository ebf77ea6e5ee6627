"""Tables of routed networks (the segments service plugin).

- `network_host`: each compute host and the physical networks it reaches, as an L2
  agent would report its bridge mappings (here: the host configuration, recorded when
  compute registers its hosts).
- `network_segment_host_mapping`: which hosts reach which segment (neutron's
  `segmenthostmappings`), derived from the two above and kept in step whenever hosts
  are registered or segments created; rows go with their segment (FK cascade).
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType


class NetworkHost(Base):
    __tablename__ = "network_host"
    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    physical_networks: Mapped[list[str]] = mapped_column(JSONType, default=list)


class SegmentHostMapping(Base):
    __tablename__ = "network_segment_host_mapping"
    segment_id: Mapped[str] = mapped_column(
        ForeignKey("network_segment.id", ondelete="CASCADE"), primary_key=True)
    host: Mapped[str] = mapped_column(String(255), primary_key=True, index=True)
