"""What an admin changed of an agent (`PUT /v2.0/agents/{id}`) and the agents that report
(the dataplane's): the Open vSwitch agents are a view of the configured hosts (agents.py),
so for them only these edits are rows."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, UTCDateTime, utcnow


class AgentState(Base):
    __tablename__ = "network_agent_state"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    description: Mapped[str | None] = mapped_column(String(255), nullable=True)
    admin_state_up: Mapped[bool] = mapped_column(Boolean, default=True)
    # when the agent (re)registered: a delete makes its next report a new registration
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class ReportedAgent(Base):
    """An agent that runs and reports (the dataplane's DHCP, L3 and metadata agents): its
    last heartbeat says whether it is alive, as upstream's `agents` rows do."""

    __tablename__ = "network_agents"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    agent_type: Mapped[str] = mapped_column(String(255))
    binary: Mapped[str] = mapped_column(String(255))
    topic: Mapped[str] = mapped_column(String(255))
    host: Mapped[str] = mapped_column(String(255))
    availability_zone: Mapped[str | None] = mapped_column(String(255), nullable=True)
    configurations: Mapped[str] = mapped_column(Text, default="{}")  # JSON
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    heartbeat_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
