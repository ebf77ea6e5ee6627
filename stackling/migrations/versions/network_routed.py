"""routed networks: hosts' physical networks and segment host mappings

Revision ID: a494692de7c5
Revises: 4651abb13825
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = 'a494692de7c5'
down_revision = '4651abb13825'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'network_host',
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('physical_networks', sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint('host', name=op.f('pk_network_host')),
    )
    op.create_table(
        'network_segment_host_mapping',
        sa.Column('segment_id', sa.String(length=36), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ['segment_id'], ['network_segment.id'],
            name=op.f('fk_network_segment_host_mapping_segment_id_network_segment'),
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('segment_id', 'host',
                                name=op.f('pk_network_segment_host_mapping')),
    )
    with op.batch_alter_table('network_segment_host_mapping', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_segment_host_mapping_host'), ['host'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('network_segment_host_mapping', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_segment_host_mapping_host'))
    op.drop_table('network_segment_host_mapping')
    op.drop_table('network_host')
