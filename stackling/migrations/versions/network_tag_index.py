"""network tags: an index on (tag, resource_id), so a tag filter reads only the rows of
the tags it names (one grouped subquery however many tags it carries)

Revision ID: 7d3f2a91c6e4
Revises: 4651abb13825
Create Date: 2026-11-24 18:40:00
"""

from __future__ import annotations

from alembic import op

revision = '7d3f2a91c6e4'
down_revision = '4651abb13825'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_network_tag_tag_resource_id', 'network_tag', ['tag', 'resource_id'])


def downgrade() -> None:
    op.drop_index('ix_network_tag_tag_resource_id', table_name='network_tag')
