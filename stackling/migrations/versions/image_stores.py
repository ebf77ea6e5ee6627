"""image: the stores holding an image's data (Glance multi-store, copy-image)

Revision ID: 4c8e2a6f9b17
Revises: 763a8ded563b
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '4c8e2a6f9b17'
down_revision = '763a8ded563b'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('image_image') as batch:
        batch.add_column(sa.Column('stores', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('image_image') as batch:
        batch.drop_column('stores')
