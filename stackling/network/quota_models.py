"""The per-project lock row that serialises the network quota checks of one project
(see common/quota_lock.py). Limits set by admins are `l3.models.Quota` rows."""

from __future__ import annotations

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base


class QuotaLock(Base):
    __tablename__ = "network_quota_lock"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)
