"""identity: access rules keep the order they were made in (Keystone lists them so)

Revision ID: 3e7a9c1d5b42
Revises: 9b2e4c7d1a36
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '3e7a9c1d5b42'
down_revision = '9b2e4c7d1a36'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('identity_access_rule') as batch:
        batch.add_column(sa.Column('position', sa.Integer(), server_default='0',
                                   nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('identity_access_rule') as batch:
        batch.drop_column('position')
