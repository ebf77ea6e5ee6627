"""compute: server groups and their members, flavor access

Revision ID: 7a2e5c91b04d
Revises: 3f9c2a71d5e4
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '7a2e5c91b04d'
down_revision = '3f9c2a71d5e4'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'compute_server_group',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('project_id', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.String(length=64), nullable=False),
        sa.Column('policy', sa.String(length=32), nullable=False),
        sa.Column('rules', sa.JSON(), nullable=False),
        sa.Column('affinity_host', sa.String(length=255), nullable=True),
        sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_compute_server_group')),
        sa.UniqueConstraint('uuid', name=op.f('uq_compute_server_group_uuid')),
    )
    op.create_index(op.f('ix_compute_server_group_project_id'), 'compute_server_group',
                    ['project_id'])
    op.create_table(
        'compute_server_group_member',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('group_id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('anti_affinity_host', sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(['group_id'], ['compute_server_group.id'], ondelete='CASCADE',
                                name=op.f('fk_compute_server_group_member_group_id_compute_server_group')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_compute_server_group_member')),
        sa.UniqueConstraint('instance_uuid',
                            name=op.f('uq_compute_server_group_member_instance_uuid')),
        sa.UniqueConstraint('group_id', 'anti_affinity_host',
                            name=op.f('uq_compute_server_group_member_group_id_anti_affinity_host')),
    )
    op.create_table(
        'compute_flavor_project',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('flavor_id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(['flavor_id'], ['compute_flavor.id'], ondelete='CASCADE',
                                name=op.f('fk_compute_flavor_project_flavor_id_compute_flavor')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_compute_flavor_project')),
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name=op.f('uq_compute_flavor_project_flavor_id_project_id')),
    )


def downgrade() -> None:
    op.drop_table('compute_flavor_project')
    op.drop_table('compute_server_group_member')
    op.drop_index(op.f('ix_compute_server_group_project_id'), table_name='compute_server_group')
    op.drop_table('compute_server_group')
