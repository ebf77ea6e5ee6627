"""compute: trusted image certificates (2.63) and lock reasons (2.73) on instances

Revision ID: 5e1a9c7d3b28
Revises: 9c3d7e1f2a60
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '5e1a9c7d3b28'
down_revision = '9c3d7e1f2a60'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('compute_instance') as batch:
        batch.add_column(sa.Column('trusted_certs', sa.JSON(),
                                   nullable=True))
        batch.add_column(sa.Column('locked_reason', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('compute_instance') as batch:
        batch.drop_column('locked_reason')
        batch.drop_column('trusted_certs')
