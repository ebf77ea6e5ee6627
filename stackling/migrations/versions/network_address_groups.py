"""network address groups: groups and their addresses (one row per group and CIDR)

Revision ID: 8e2d4b6a1c53
Revises: 3c7a1e5f9d28
Create Date: 2026-11-24 19:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '8e2d4b6a1c53'
down_revision = '3c7a1e5f9d28'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_address_group',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=1024), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('revision_number', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_address_group'))
    )
    with op.batch_alter_table('network_address_group', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_address_group_project_id'),
                              ['project_id'], unique=False)
    op.create_table('network_address_group_address',
    sa.Column('address_group_id', sa.String(length=36), nullable=False),
    sa.Column('address', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['address_group_id'], ['network_address_group.id'],
                            name='fk_network_address_group_address_group',
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('address_group_id', 'address',
                            name=op.f('pk_network_address_group_address'))
    )


def downgrade() -> None:
    op.drop_table('network_address_group_address')
    op.drop_table('network_address_group')
