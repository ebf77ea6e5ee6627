"""network local IPs: local IPs and their port associations (`local_ip`)

Revision ID: 7e1c4b8d2a93
Revises: 2d6f9b3c8e17
Create Date: 2026-11-24 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '7e1c4b8d2a93'
down_revision = '2d6f9b3c8e17'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_local_ip',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('local_port_id', sa.String(length=36), nullable=False),
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.Column('local_ip_address', sa.String(length=64), nullable=False),
    sa.Column('ip_mode', sa.String(length=32), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('revision_number', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['local_port_id'], ['network_port.id'],
                            name='fk_network_local_ip_port'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_local_ip'))
    )
    with op.batch_alter_table('network_local_ip', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_local_ip_project_id'), ['project_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_local_ip_local_port_id'),
                              ['local_port_id'], unique=False)
    op.create_table('network_local_ip_association',
    sa.Column('local_ip_id', sa.String(length=36), nullable=False),
    sa.Column('fixed_port_id', sa.String(length=36), nullable=False),
    sa.Column('fixed_ip', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['local_ip_id'], ['network_local_ip.id'],
                            name='fk_network_local_ip_assoc_lip'),
    sa.ForeignKeyConstraint(['fixed_port_id'], ['network_port.id'],
                            name='fk_network_local_ip_assoc_port', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('local_ip_id', 'fixed_port_id',
                            name=op.f('pk_network_local_ip_association'))
    )
    with op.batch_alter_table('network_local_ip_association', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_local_ip_association_fixed_port_id'),
                              ['fixed_port_id'], unique=False)


def downgrade() -> None:
    op.drop_table('network_local_ip_association')
    op.drop_table('network_local_ip')
