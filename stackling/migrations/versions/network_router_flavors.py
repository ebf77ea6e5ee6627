"""network routers: `flavor_id` (`l3-flavors`)

Revision ID: 6b3d9f2a8c41
Revises: 5c2e8a4f7b13
Create Date: 2026-11-24 23:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '6b3d9f2a8c41'
down_revision = '5c2e8a4f7b13'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('network_router', schema=None) as batch_op:
        batch_op.add_column(sa.Column('flavor_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_network_router_flavor_id'), ['flavor_id'],
                              unique=False)
        batch_op.create_foreign_key('fk_network_router_flavor', 'network_flavor',
                                    ['flavor_id'], ['id'])


def downgrade() -> None:
    with op.batch_alter_table('network_router', schema=None) as batch_op:
        batch_op.drop_constraint('fk_network_router_flavor', type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_network_router_flavor_id'))
        batch_op.drop_column('flavor_id')
