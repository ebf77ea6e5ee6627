"""network qos: QoS policies, a project's default, rules, and the policies of ports and
networks

Revision ID: 9a4c2e7b5d31
Revises: 4651abb13825
Create Date: 2026-11-24 19:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '9a4c2e7b5d31'
down_revision = '4651abb13825'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_qos_policy',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('revision_number', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_qos_policy'))
    )
    with op.batch_alter_table('network_qos_policy', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_qos_policy_project_id'), ['project_id'],
                              unique=False)
    op.create_table('network_qos_default',
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('qos_policy_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['qos_policy_id'], ['network_qos_policy.id'],
                            name=op.f('fk_network_qos_default_qos_policy_id_network_qos_policy'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_network_qos_default')),
    sa.UniqueConstraint('qos_policy_id', name=op.f('uq_network_qos_default_qos_policy_id'))
    )
    op.create_table('network_qos_rule',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('qos_policy_id', sa.String(length=36), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('direction', sa.String(length=16), nullable=False),
    sa.Column('max_kbps', sa.Integer(), nullable=True),
    sa.Column('max_burst_kbps', sa.Integer(), nullable=True),
    sa.Column('dscp_mark', sa.Integer(), nullable=True),
    sa.Column('min_kbps', sa.Integer(), nullable=True),
    sa.Column('min_kpps', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['qos_policy_id'], ['network_qos_policy.id'],
                            name=op.f('fk_network_qos_rule_qos_policy_id_network_qos_policy'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_qos_rule')),
    sa.UniqueConstraint('qos_policy_id', 'type', 'direction',
                        name='uq_network_qos_rule_type_direction')
    )
    with op.batch_alter_table('network_qos_rule', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_qos_rule_qos_policy_id'),
                              ['qos_policy_id'], unique=False)
    op.create_table('network_qos_port_policy',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('qos_policy_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name=op.f('fk_network_qos_port_policy_port_id_network_port'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['qos_policy_id'], ['network_qos_policy.id'],
                            name=op.f('fk_network_qos_port_policy_qos_policy_id_network_qos_policy')),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_network_qos_port_policy'))
    )
    with op.batch_alter_table('network_qos_port_policy', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_qos_port_policy_qos_policy_id'),
                              ['qos_policy_id'], unique=False)
    op.create_table('network_qos_network_policy',
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.Column('qos_policy_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['network_id'], ['network_network.id'],
                            name=op.f('fk_network_qos_network_policy_network_id_network_network'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['qos_policy_id'], ['network_qos_policy.id'],
                            name=op.f('fk_network_qos_network_policy_qos_policy_id_network_qos_policy')),
    sa.PrimaryKeyConstraint('network_id', name=op.f('pk_network_qos_network_policy'))
    )
    with op.batch_alter_table('network_qos_network_policy', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_qos_network_policy_qos_policy_id'),
                              ['qos_policy_id'], unique=False)


def downgrade() -> None:
    op.drop_table('network_qos_network_policy')
    op.drop_table('network_qos_port_policy')
    op.drop_table('network_qos_rule')
    op.drop_table('network_qos_default')
    op.drop_table('network_qos_policy')
