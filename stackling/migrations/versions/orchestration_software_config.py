"""orchestration: software configs and software deployments

Revision ID: 9b4e1f6c2a70
Revises: 7c2d5e8a41b3
Create Date: 2026-11-24 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '9b4e1f6c2a70'
down_revision = '7c2d5e8a41b3'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('heat_software_config',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('group', sa.String(length=255), nullable=False),
    sa.Column('config', sa.JSON(), nullable=True),
    sa.Column('inputs', sa.JSON(), nullable=False),
    sa.Column('outputs', sa.JSON(), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_heat_software_config'))
    )
    op.create_index(op.f('ix_heat_software_config_project_id'), 'heat_software_config',
                    ['project_id'], unique=False)
    op.create_table('heat_software_deployment',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('config_id', sa.String(length=36), nullable=False),
    sa.Column('server_id', sa.String(length=255), nullable=False),
    sa.Column('input_values', sa.JSON(), nullable=False),
    sa.Column('output_values', sa.JSON(), nullable=False),
    sa.Column('action', sa.String(length=255), nullable=False),
    sa.Column('status', sa.String(length=255), nullable=False),
    sa.Column('status_reason', sa.Text(), nullable=False),
    sa.Column('stack_user_project_id', sa.String(length=64), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=True),
    sa.ForeignKeyConstraint(['config_id'], ['heat_software_config.id'],
                            name=op.f('fk_heat_software_deployment_config_id_heat_software_config')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_heat_software_deployment'))
    )
    op.create_index(op.f('ix_heat_software_deployment_project_id'), 'heat_software_deployment',
                    ['project_id'], unique=False)
    op.create_index(op.f('ix_heat_software_deployment_server_id'), 'heat_software_deployment',
                    ['server_id'], unique=False)


def downgrade() -> None:
    op.drop_table('heat_software_deployment')
    op.drop_table('heat_software_config')
