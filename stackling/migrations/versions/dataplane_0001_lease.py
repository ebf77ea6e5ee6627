"""dataplane: the lease row of the process that owns the kernel

Revision ID: d7a1e5c0b9f2
Revises: 
Create Date: 2026-11-24 18:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = 'd7a1e5c0b9f2'
down_revision = None
branch_labels = ('dataplane',)
depends_on = None


def upgrade() -> None:
    op.create_table('dataplane_lease',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('holder', sa.String(length=255), nullable=False),
    sa.Column('expires_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_dataplane_lease'))
    )


def downgrade() -> None:
    op.drop_table('dataplane_lease')
