"""network port forwarding: floating IP port forwardings

Revision ID: 6d2f8b1a4c95
Revises: 9a4c2e7b5d31
Create Date: 2026-11-24 19:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '6d2f8b1a4c95'
down_revision = '9a4c2e7b5d31'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_port_forwarding',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('floatingip_id', sa.String(length=36), nullable=False),
    sa.Column('external_port', sa.Integer(), nullable=False),
    sa.Column('internal_port_id', sa.String(length=36), nullable=False),
    sa.Column('internal_ip_address', sa.String(length=64), nullable=False),
    sa.Column('internal_port', sa.Integer(), nullable=False),
    sa.Column('protocol', sa.String(length=40), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['floatingip_id'], ['network_floatingip.id'],
                            name=op.f('fk_network_port_forwarding_floatingip_id_network_floatingip'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['internal_port_id'], ['network_port.id'],
                            name=op.f('fk_network_port_forwarding_internal_port_id_network_port'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_port_forwarding')),
    sa.UniqueConstraint('floatingip_id', 'external_port', 'protocol',
                        name='uq_network_port_forwarding_external'),
    sa.UniqueConstraint('internal_port_id', 'internal_ip_address', 'internal_port', 'protocol',
                        name='uq_network_port_forwarding_internal')
    )
    with op.batch_alter_table('network_port_forwarding', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_port_forwarding_floatingip_id'),
                              ['floatingip_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_network_port_forwarding_internal_port_id'),
                              ['internal_port_id'], unique=False)


def downgrade() -> None:
    op.drop_table('network_port_forwarding')
