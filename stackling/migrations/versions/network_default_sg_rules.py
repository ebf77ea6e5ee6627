"""network default security group rules: the templates of new groups' rules (Neutron's
four are written by the bootstrap step network.default_sg_rules)

Revision ID: 6a2c8e4f1b97
Revises: 5f1b9c3e7a64
Create Date: 2026-11-24 19:55:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '6a2c8e4f1b97'
down_revision = '5f1b9c3e7a64'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_default_sg_rule',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('direction', sa.String(length=16), nullable=False),
    sa.Column('ethertype', sa.String(length=8), nullable=False),
    sa.Column('protocol', sa.String(length=40), nullable=True),
    sa.Column('port_range_min', sa.Integer(), nullable=True),
    sa.Column('port_range_max', sa.Integer(), nullable=True),
    sa.Column('remote_ip_prefix', sa.String(length=64), nullable=True),
    sa.Column('remote_group_id', sa.String(length=36), nullable=True),
    sa.Column('remote_address_group_id', sa.String(length=36), nullable=True),
    sa.Column('used_in_default_sg', sa.Boolean(), nullable=False),
    sa.Column('used_in_non_default_sg', sa.Boolean(), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_default_sg_rule')),
    sa.UniqueConstraint('fingerprint', name=op.f('uq_network_default_sg_rule_fingerprint'))
    )


def downgrade() -> None:
    op.drop_table('network_default_sg_rule')
