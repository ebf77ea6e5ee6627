"""network port bindings (`binding-extended`): a port's INACTIVE bindings

Revision ID: 5c2e8a4f7b13
Revises: 3a8f6c1d9e24
Create Date: 2026-11-24 22:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '5c2e8a4f7b13'
down_revision = '3a8f6c1d9e24'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_port_binding',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('vnic_type', sa.String(length=64), nullable=False),
    sa.Column('vif_type', sa.String(length=64), nullable=False),
    sa.Column('profile', sa.JSON(), nullable=False),
    sa.Column('vif_details', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name='fk_network_port_binding_port', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', 'host', name=op.f('pk_network_port_binding'))
    )


def downgrade() -> None:
    op.drop_table('network_port_binding')
