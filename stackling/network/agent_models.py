"""What an admin changed of an agent (`PUT /v2.0/agents/{id}`): agents themselves are a
view of the configured hosts (agents.py), so only these edits are rows."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, UTCDateTime, utcnow


class AgentState(Base):
    __tablename__ = "network_agent_state"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    admin_state_up: Mapped[bool] = mapped_column(Boolean, default=True)
    # when the agent (re)registered: a delete makes its next report a new registration
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
