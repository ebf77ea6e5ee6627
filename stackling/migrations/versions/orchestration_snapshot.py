"""orchestration: stack snapshots

Revision ID: 3d8f2b6e9c15
Revises: 9b4e1f6c2a70
Create Date: 2026-11-24 21:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '3d8f2b6e9c15'
down_revision = '9b4e1f6c2a70'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('heat_snapshot',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('stack_id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('status_reason', sa.Text(), nullable=False),
    sa.Column('data', sa.JSON(), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['stack_id'], ['heat_stack.id'],
                            name=op.f('fk_heat_snapshot_stack_id_heat_stack')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_heat_snapshot'))
    )
    op.create_index(op.f('ix_heat_snapshot_stack_id'), 'heat_snapshot', ['stack_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_table('heat_snapshot')
