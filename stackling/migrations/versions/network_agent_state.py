"""network agents: an admin's edits of an agent (description, admin_state_up)

Revision ID: 2b8e6f4a9c17
Revises: 7d3f2a91c6e4
Create Date: 2026-11-24 19:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '2b8e6f4a9c17'
down_revision = '7d3f2a91c6e4'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_agent_state',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('admin_state_up', sa.Boolean(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_agent_state'))
    )


def downgrade() -> None:
    op.drop_table('network_agent_state')
