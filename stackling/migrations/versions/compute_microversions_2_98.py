"""compute: the image properties a server was built or rebuilt with (2.98) and the
scheduler hints it was booted with (2.100)

Revision ID: 8d4f2b6e1a93
Revises: 5e1a9c7d3b28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '8d4f2b6e1a93'
down_revision = '5e1a9c7d3b28'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('compute_instance') as batch:
        batch.add_column(sa.Column('image_properties', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('scheduler_hints', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('compute_instance') as batch:
        batch.drop_column('scheduler_hints')
        batch.drop_column('image_properties')
