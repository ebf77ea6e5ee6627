"""orchestration tables

Revision ID: 5f3a9c1e7d24
Revises:
Create Date: 2026-11-23 13:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '5f3a9c1e7d24'
down_revision = None
branch_labels = ('orchestration',)
depends_on = None


def upgrade() -> None:
    op.create_table('heat_stack',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('live_name', sa.String(length=255), nullable=True),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.String(length=64), nullable=True),
    sa.Column('context', sa.JSON(), nullable=False),
    sa.Column('parent_id', sa.String(length=36), nullable=True),
    sa.Column('owner_resource', sa.String(length=255), nullable=True),
    sa.Column('template', sa.JSON(), nullable=False),
    sa.Column('environment', sa.JSON(), nullable=False),
    sa.Column('files', sa.JSON(), nullable=False),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('disable_rollback', sa.Boolean(), nullable=False),
    sa.Column('timeout_mins', sa.Integer(), nullable=True),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('status_reason', sa.Text(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=True),
    sa.Column('deleted_at', stackling.common.db.UTCDateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_heat_stack')),
    sa.UniqueConstraint('project_id', 'live_name', name=op.f('uq_heat_stack_project_id_live_name'))
    )
    with op.batch_alter_table('heat_stack', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_heat_stack_name'), ['name'], unique=False)
        batch_op.create_index(batch_op.f('ix_heat_stack_project_id'), ['project_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_heat_stack_parent_id'), ['parent_id'], unique=False)

    op.create_table('heat_stack_action',
    sa.Column('stack_id', sa.String(length=36), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('work', sa.JSON(), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('lease_until', stackling.common.db.UTCDateTime(), nullable=True),
    sa.Column('started_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['stack_id'], ['heat_stack.id'], name=op.f('fk_heat_stack_action_stack_id_heat_stack')),
    sa.PrimaryKeyConstraint('stack_id', name=op.f('pk_heat_stack_action'))
    )

    op.create_table('heat_resource',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('stack_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('type', sa.String(length=255), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('physical_resource_id', sa.String(length=255), nullable=True),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('status_reason', sa.Text(), nullable=False),
    sa.Column('definition', sa.JSON(), nullable=False),
    sa.Column('properties', sa.JSON(), nullable=False),
    sa.Column('requires', sa.JSON(), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('rsrc_metadata', sa.JSON(), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('replaces', sa.Integer(), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['stack_id'], ['heat_stack.id'], name=op.f('fk_heat_resource_stack_id_heat_stack')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_heat_resource')),
    sa.UniqueConstraint('uuid', name=op.f('uq_heat_resource_uuid'))
    )
    with op.batch_alter_table('heat_resource', schema=None) as batch_op:
        batch_op.create_index('ix_heat_resource_stack_name', ['stack_id', 'name'], unique=False)
        batch_op.create_index(batch_op.f('ix_heat_resource_stack_id'), ['stack_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_heat_resource_physical_resource_id'), ['physical_resource_id'], unique=False)

    op.create_table('heat_event',
    sa.Column('seq', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('stack_id', sa.String(length=36), nullable=False),
    sa.Column('resource_name', sa.String(length=255), nullable=False),
    sa.Column('physical_resource_id', sa.String(length=255), nullable=True),
    sa.Column('resource_type', sa.String(length=255), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('status_reason', sa.Text(), nullable=False),
    sa.Column('properties', sa.JSON(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['stack_id'], ['heat_stack.id'], name=op.f('fk_heat_event_stack_id_heat_stack')),
    sa.PrimaryKeyConstraint('seq', name=op.f('pk_heat_event')),
    sa.UniqueConstraint('id', name=op.f('uq_heat_event_id'))
    )
    with op.batch_alter_table('heat_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_heat_event_stack_id'), ['stack_id'], unique=False)


def downgrade() -> None:
    op.drop_table('heat_event')
    op.drop_table('heat_resource')
    op.drop_table('heat_stack_action')
    op.drop_table('heat_stack')
