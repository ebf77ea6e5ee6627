"""image members (sharing of `shared` images) and import tasks (`/v2/tasks`)

Revision ID: 763a8ded563b
Revises: 9c2e4f1a7b30
Create Date: 2026-11-24 18:50:45
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '763a8ded563b'
down_revision = '9c2e4f1a7b30'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('image_member',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('image_id', sa.String(length=36), nullable=False),
    sa.Column('member_id', sa.String(length=255), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['image_id'], ['image_image.id'],
                            name=op.f('fk_image_member_image_id_image_image'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_member')),
    sa.UniqueConstraint('image_id', 'member_id', name=op.f('uq_image_member_image_id_member_id'))
    )
    op.create_index(op.f('ix_image_member_member_id'), 'image_member', ['member_id'], unique=False)
    op.create_table('image_task',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('type', sa.String(length=30), nullable=False),
    sa.Column('status', sa.String(length=30), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=False),
    sa.Column('image_id', sa.String(length=36), nullable=True),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('request_id', sa.String(length=255), nullable=True),
    sa.Column('input', sa.JSON(), nullable=False),
    sa.Column('result', sa.JSON(), nullable=True),
    sa.Column('message', sa.String(length=2048), nullable=False),
    sa.Column('expires_at', stackling.common.db.UTCDateTime(), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_task'))
    )
    op.create_index(op.f('ix_image_task_owner'), 'image_task', ['owner'], unique=False)
    op.create_index(op.f('ix_image_task_image_id'), 'image_task', ['image_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_image_task_image_id'), table_name='image_task')
    op.drop_index(op.f('ix_image_task_owner'), table_name='image_task')
    op.drop_table('image_task')
    op.drop_index(op.f('ix_image_member_member_id'), table_name='image_member')
    op.drop_table('image_member')
