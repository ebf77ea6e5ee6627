"""compute: pending transitional tasks (a reboot or rebuild held for its minimum duration)

Revision ID: 9c3d7e1f2a60
Revises: 7a2e5c91b04d
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '9c3d7e1f2a60'
down_revision = '7a2e5c91b04d'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'compute_pending_task',
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('task_state', sa.String(length=32), nullable=False),
        sa.Column('vm_state', sa.String(length=32), nullable=False),
        sa.Column('power_state', sa.Integer(), nullable=False),
        sa.Column('finish_after', stackling.common.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint('instance_uuid', name=op.f('pk_compute_pending_task')),
    )
    op.create_index(op.f('ix_compute_pending_task_finish_after'), 'compute_pending_task',
                    ['finish_after'])


def downgrade() -> None:
    op.drop_index(op.f('ix_compute_pending_task_finish_after'),
                  table_name='compute_pending_task')
    op.drop_table('compute_pending_task')
