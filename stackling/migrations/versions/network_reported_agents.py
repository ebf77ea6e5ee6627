"""network agents: agents that report a heartbeat (the dataplane's DHCP, L3, metadata)

Revision ID: 4e9b7c2d1a86
Revises: 2b8e6f4a9c17
Create Date: 2026-11-24 21:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '4e9b7c2d1a86'
down_revision = '2b8e6f4a9c17'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_agents',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('agent_type', sa.String(length=255), nullable=False),
    sa.Column('binary', sa.String(length=255), nullable=False),
    sa.Column('topic', sa.String(length=255), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('availability_zone', sa.String(length=255), nullable=True),
    sa.Column('configurations', sa.Text(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('started_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('heartbeat_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_agents'))
    )


def downgrade() -> None:
    op.drop_table('network_agents')
