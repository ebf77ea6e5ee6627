"""orchestration: per-project lock rows for the stack count under concurrency

Revision ID: 7c2d5e8a41b3
Revises: 5f3a9c1e7d24
Create Date: 2026-11-24 12:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '7c2d5e8a41b3'
down_revision = '5f3a9c1e7d24'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('heat_quota_lock',
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_heat_quota_lock'))
    )


def downgrade() -> None:
    op.drop_table('heat_quota_lock')
