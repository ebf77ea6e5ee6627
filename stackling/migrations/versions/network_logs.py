"""network logs: security group logging objects (`logging`)

Revision ID: 2d6f9b3c8e17
Revises: 8c3e5a1d7f42
Create Date: 2026-11-24 22:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '2d6f9b3c8e17'
down_revision = '8c3e5a1d7f42'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_log',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('resource_type', sa.String(length=36), nullable=False),
    sa.Column('resource_id', sa.String(length=36), nullable=True),
    sa.Column('target_id', sa.String(length=36), nullable=True),
    sa.Column('event', sa.String(length=255), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('revision_number', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['resource_id'], ['network_security_group.id'],
                            name='fk_network_log_resource', ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['target_id'], ['network_port.id'],
                            name='fk_network_log_target', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_log'))
    )
    with op.batch_alter_table('network_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_log_project_id'), ['project_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_log_resource_id'), ['resource_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_log_target_id'), ['target_id'],
                              unique=False)


def downgrade() -> None:
    op.drop_table('network_log')
