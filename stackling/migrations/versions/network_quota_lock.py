"""network quotas: per-project lock rows for counting under concurrency

Revision ID: b82e4d6c19a7
Revises: 4651abb13825
Create Date: 2026-11-23 13:12:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = 'b82e4d6c19a7'
down_revision = '4651abb13825'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_quota_lock',
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_network_quota_lock'))
    )


def downgrade() -> None:
    op.drop_table('network_quota_lock')
