"""compute: block device mappings (volume attachments, boot from volume)

Revision ID: 4b8e2d6f1c37
Revises: 8d4f2b6e1a93
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '4b8e2d6f1c37'
down_revision = '8d4f2b6e1a93'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'compute_block_device_mapping',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('source_type', sa.String(length=16), nullable=False),
        sa.Column('destination_type', sa.String(length=16), nullable=False),
        sa.Column('boot_index', sa.Integer(), nullable=True),
        sa.Column('device_name', sa.String(length=255), nullable=True),
        sa.Column('volume_id', sa.String(length=36), nullable=True),
        sa.Column('snapshot_id', sa.String(length=36), nullable=True),
        sa.Column('image_id', sa.String(length=36), nullable=True),
        sa.Column('volume_size', sa.Integer(), nullable=True),
        sa.Column('volume_type', sa.String(length=255), nullable=True),
        sa.Column('delete_on_termination', sa.Boolean(), nullable=False),
        sa.Column('disk_bus', sa.String(length=255), nullable=True),
        sa.Column('device_type', sa.String(length=255), nullable=True),
        sa.Column('guest_format', sa.String(length=255), nullable=True),
        sa.Column('tag', sa.String(length=255), nullable=True),
        sa.Column('attachment_id', sa.String(length=36), nullable=True),
        sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_compute_block_device_mapping')),
        sa.UniqueConstraint('uuid', name=op.f('uq_compute_block_device_mapping_uuid')),
        sa.UniqueConstraint('instance_uuid', 'device_name',
                            name=op.f('uq_compute_block_device_mapping_instance_uuid_device_name')),
        sa.UniqueConstraint('instance_uuid', 'volume_id',
                            name=op.f('uq_compute_block_device_mapping_instance_uuid_volume_id')),
    )
    op.create_index('ix_compute_block_device_mapping_volume', 'compute_block_device_mapping',
                    ['volume_id'])


def downgrade() -> None:
    op.drop_index('ix_compute_block_device_mapping_volume',
                  table_name='compute_block_device_mapping')
    op.drop_table('compute_block_device_mapping')
