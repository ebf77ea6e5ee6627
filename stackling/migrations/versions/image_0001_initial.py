"""image tables

Revision ID: 9c2e4f1a7b30
Revises: 
Create Date: 2026-11-21 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '9c2e4f1a7b30'
down_revision = None
branch_labels = ('image',)
depends_on = None


def upgrade() -> None:
    op.create_table('image_image',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('status', sa.String(length=30), nullable=False),
    sa.Column('visibility', sa.String(length=20), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('disk_format', sa.String(length=20), nullable=True),
    sa.Column('container_format', sa.String(length=20), nullable=True),
    sa.Column('min_disk', sa.Integer(), nullable=False),
    sa.Column('min_ram', sa.Integer(), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=True),
    sa.Column('virtual_size', sa.BigInteger(), nullable=True),
    sa.Column('checksum', sa.String(length=32), nullable=True),
    sa.Column('os_hash_algo', sa.String(length=64), nullable=True),
    sa.Column('os_hash_value', sa.String(length=128), nullable=True),
    sa.Column('protected', sa.Boolean(), nullable=False),
    sa.Column('os_hidden', sa.Boolean(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('properties', sa.JSON(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_image'))
    )
    with op.batch_alter_table('image_image', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_image_image_name'), ['name'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('image_image', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_image_image_name'))

    op.drop_table('image_image')
