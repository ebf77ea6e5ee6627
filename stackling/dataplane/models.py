"""The dataplane's one table: who owns the kernel now (a lease renewed by its holder)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, UTCDateTime


class DataplaneLease(Base):
    """One row per lease name; the holder renews `expires_at`, another process takes the
    row once it has passed (the holder died)."""

    __tablename__ = "dataplane_lease"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(255))
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
