"""compute moves: migration records, scheduler decisions, console tokens

Revision ID: 3c9d41a7e2b5
Revises: 65fee764b0ef
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '3c9d41a7e2b5'
down_revision = '65fee764b0ef'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'compute_migration',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.String(length=64), nullable=True),
        sa.Column('migration_type', sa.String(length=32), nullable=False),
        sa.Column('status', sa.String(length=32), nullable=False),
        sa.Column('source_compute', sa.String(length=255), nullable=True),
        sa.Column('source_node', sa.String(length=255), nullable=True),
        sa.Column('dest_compute', sa.String(length=255), nullable=True),
        sa.Column('dest_node', sa.String(length=255), nullable=True),
        sa.Column('dest_host', sa.String(length=255), nullable=True),
        sa.Column('old_instance_type_id', sa.Integer(), nullable=True),
        sa.Column('new_instance_type_id', sa.Integer(), nullable=True),
        sa.Column('old_flavor', sa.JSON(), nullable=False),
        sa.Column('new_flavor', sa.JSON(), nullable=False),
        sa.Column('old_vm_state', sa.String(length=32), nullable=True),
        sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
        sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_compute_migration')),
        sa.UniqueConstraint('uuid', name=op.f('uq_compute_migration_uuid')),
    )
    op.create_index('ix_compute_migration_instance', 'compute_migration',
                    ['instance_uuid', 'id'], unique=False)
    op.create_table(
        'compute_scheduler_decision',
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('operation', sa.String(length=32), nullable=False),
        sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
        sa.Column('decision', sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint('instance_uuid', name=op.f('pk_compute_scheduler_decision')),
    )
    op.create_table(
        'compute_console_auth_token',
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('console_type', sa.String(length=32), nullable=False),
        sa.Column('expires', stackling.common.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint('token_hash', name=op.f('pk_compute_console_auth_token')),
    )
    op.create_index('ix_compute_console_auth_token_expires', 'compute_console_auth_token',
                    ['expires'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_compute_console_auth_token_expires',
                  table_name='compute_console_auth_token')
    op.drop_table('compute_console_auth_token')
    op.drop_table('compute_scheduler_decision')
    op.drop_index('ix_compute_migration_instance', table_name='compute_migration')
    op.drop_table('compute_migration')
