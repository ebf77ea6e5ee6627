"""compute quotas: limits per project/user, quota classes, per-project lock rows

Revision ID: 3f9c2a71d5e4
Revises: 65fee764b0ef
Create Date: 2026-11-23 13:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '3f9c2a71d5e4'
down_revision = '65fee764b0ef'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('compute_quota',
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.String(length=64), nullable=False),
    sa.Column('resource', sa.String(length=255), nullable=False),
    sa.Column('hard_limit', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'user_id', 'resource', name=op.f('pk_compute_quota'))
    )
    op.create_table('compute_quota_class',
    sa.Column('class_name', sa.String(length=255), nullable=False),
    sa.Column('resource', sa.String(length=255), nullable=False),
    sa.Column('hard_limit', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('class_name', 'resource', name=op.f('pk_compute_quota_class'))
    )
    op.create_table('compute_quota_lock',
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_compute_quota_lock'))
    )


def downgrade() -> None:
    op.drop_table('compute_quota_lock')
    op.drop_table('compute_quota_class')
    op.drop_table('compute_quota')
