"""network trunks: trunks (one per parent port) and their sub-ports (one trunk per port,
one VLAN id per trunk)

Revision ID: 3c7a1e5f9d28
Revises: 4651abb13825
Create Date: 2026-11-24 19:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '3c7a1e5f9d28'
down_revision = '4651abb13825'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_trunk',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('admin_state_up', sa.Boolean(), nullable=False),
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('revision_number', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name=op.f('fk_network_trunk_port_id_network_port')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_trunk')),
    sa.UniqueConstraint('port_id', name=op.f('uq_network_trunk_port_id'))
    )
    with op.batch_alter_table('network_trunk', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_trunk_project_id'), ['project_id'],
                              unique=False)
    op.create_table('network_trunk_subport',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('trunk_id', sa.String(length=36), nullable=False),
    sa.Column('segmentation_type', sa.String(length=32), nullable=False),
    sa.Column('segmentation_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name=op.f('fk_network_trunk_subport_port_id_network_port')),
    sa.ForeignKeyConstraint(['trunk_id'], ['network_trunk.id'],
                            name=op.f('fk_network_trunk_subport_trunk_id_network_trunk'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_network_trunk_subport')),
    sa.UniqueConstraint('trunk_id', 'segmentation_type', 'segmentation_id',
                        name='uq_network_trunk_subport_segmentation')
    )
    with op.batch_alter_table('network_trunk_subport', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_trunk_subport_trunk_id'), ['trunk_id'],
                              unique=False)


def downgrade() -> None:
    op.drop_table('network_trunk_subport')
    op.drop_table('network_trunk')
