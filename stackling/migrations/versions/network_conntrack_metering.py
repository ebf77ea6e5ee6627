"""network conntrack helpers and metering: routers' conntrack helpers, metering labels and
their rules

Revision ID: 1e7c4a9f3b62
Revises: 6d2f8b1a4c95
Create Date: 2026-11-24 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '1e7c4a9f3b62'
down_revision = '6d2f8b1a4c95'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_conntrack_helper',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('router_id', sa.String(length=36), nullable=False),
    sa.Column('protocol', sa.String(length=40), nullable=False),
    sa.Column('port', sa.Integer(), nullable=False),
    sa.Column('helper', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['router_id'], ['network_router.id'],
                            name=op.f('fk_network_conntrack_helper_router_id_network_router'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_conntrack_helper')),
    sa.UniqueConstraint('router_id', 'protocol', 'port', 'helper',
                        name='uq_network_conntrack_helper')
    )
    with op.batch_alter_table('network_conntrack_helper', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_conntrack_helper_router_id'), ['router_id'],
                              unique=False)
    op.create_table('network_metering_label',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=1024), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_metering_label'))
    )
    with op.batch_alter_table('network_metering_label', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_metering_label_project_id'), ['project_id'],
                              unique=False)
    op.create_table('network_metering_label_rule',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('metering_label_id', sa.String(length=36), nullable=False),
    sa.Column('direction', sa.String(length=16), nullable=False),
    sa.Column('excluded', sa.Boolean(), nullable=False),
    sa.Column('remote_ip_prefix', sa.String(length=64), nullable=True),
    sa.Column('source_ip_prefix', sa.String(length=64), nullable=True),
    sa.Column('destination_ip_prefix', sa.String(length=64), nullable=True),
    sa.ForeignKeyConstraint(['metering_label_id'], ['network_metering_label.id'],
                            name='fk_network_metering_label_rule_label',
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_metering_label_rule'))
    )
    with op.batch_alter_table('network_metering_label_rule', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_metering_label_rule_metering_label_id'),
                              ['metering_label_id'], unique=False)


def downgrade() -> None:
    op.drop_table('network_metering_label_rule')
    op.drop_table('network_metering_label')
    op.drop_table('network_conntrack_helper')
