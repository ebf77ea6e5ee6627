"""network NDP proxies (`l3-ndp-proxy`) and the router's `enable_ndp_proxy`

Revision ID: 3a8f6c1d9e24
Revises: 7e1c4b8d2a93
Create Date: 2026-11-24 22:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '3a8f6c1d9e24'
down_revision = '7e1c4b8d2a93'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('network_router', schema=None) as batch_op:
        batch_op.add_column(sa.Column('enable_ndp_proxy', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.create_table('network_ndp_proxy',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('router_id', sa.String(length=36), nullable=False),
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('ip_address', sa.String(length=64), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('revision_number', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['router_id'], ['network_router.id'],
                            name='fk_network_ndp_proxy_router'),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name='fk_network_ndp_proxy_port', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_ndp_proxy'))
    )
    with op.batch_alter_table('network_ndp_proxy', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_ndp_proxy_project_id'), ['project_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_ndp_proxy_router_id'), ['router_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_ndp_proxy_port_id'), ['port_id'],
                              unique=False)


def downgrade() -> None:
    op.drop_table('network_ndp_proxy')
    with op.batch_alter_table('network_router', schema=None) as batch_op:
        batch_op.drop_column('enable_ndp_proxy')
