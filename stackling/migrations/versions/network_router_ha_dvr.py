"""network routers: `ha` and `distributed` (l3-ha, dvr), stored

Revision ID: 4b7d2e9a1f05
Revises: 1e7c4a9f3b62
Create Date: 2026-11-24 21:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '4b7d2e9a1f05'
down_revision = '1e7c4a9f3b62'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('network_router', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ha', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
        batch_op.add_column(sa.Column('distributed', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('network_router', schema=None) as batch_op:
        batch_op.drop_column('distributed')
        batch_op.drop_column('ha')
