"""network flavors: flavors, service profiles and their associations

Revision ID: 8c3e5a1d7f42
Revises: 4b7d2e9a1f05
Create Date: 2026-11-24 21:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '8c3e5a1d7f42'
down_revision = '4b7d2e9a1f05'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_flavor',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=1024), nullable=False),
    sa.Column('service_type', sa.String(length=36), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_flavor'))
    )
    op.create_table('network_service_profile',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=1024), nullable=False),
    sa.Column('driver', sa.String(length=1024), nullable=False),
    sa.Column('metainfo', sa.Text(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_service_profile'))
    )
    op.create_table('network_flavor_service_profile',
    sa.Column('flavor_id', sa.String(length=36), nullable=False),
    sa.Column('service_profile_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['flavor_id'], ['network_flavor.id'],
                            name='fk_network_flavor_sp_flavor', ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['service_profile_id'], ['network_service_profile.id'],
                            name='fk_network_flavor_sp_profile'),
    sa.PrimaryKeyConstraint('flavor_id', 'service_profile_id',
                            name=op.f('pk_network_flavor_service_profile'))
    )
    with op.batch_alter_table('network_flavor_service_profile', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_flavor_service_profile_service_profile_id'),
                              ['service_profile_id'], unique=False)


def downgrade() -> None:
    op.drop_table('network_flavor_service_profile')
    op.drop_table('network_service_profile')
    op.drop_table('network_flavor')
