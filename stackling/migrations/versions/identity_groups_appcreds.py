"""identity groups, group membership and application credentials

Revision ID: c7a7191fdc3a
Revises: 5fadf29f6e64
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = 'c7a7191fdc3a'
down_revision = '5fadf29f6e64'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'identity_group',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('domain_id', sa.String(length=64), nullable=False),
        sa.Column('description', sa.Text(), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['domain_id'], ['identity_domain.id'],
                                name=op.f('fk_identity_group_domain_id_identity_domain')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_identity_group')),
        sa.UniqueConstraint('domain_id', 'name', name=op.f('uq_identity_group_domain_id_name')),
    )
    op.create_table(
        'identity_group_membership',
        sa.Column('group_id', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ['group_id'], ['identity_group.id'], ondelete='CASCADE',
            name=op.f('fk_identity_group_membership_group_id_identity_group')),
        sa.ForeignKeyConstraint(
            ['user_id'], ['identity_user.id'], ondelete='CASCADE',
            name=op.f('fk_identity_group_membership_user_id_identity_user')),
        sa.PrimaryKeyConstraint('group_id', 'user_id', name=op.f('pk_identity_group_membership')),
    )
    with op.batch_alter_table('identity_group_membership', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_identity_group_membership_user_id'), ['user_id'],
                              unique=False)
    op.create_table(
        'identity_application_credential',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=64), nullable=False),
        sa.Column('project_id', sa.String(length=64), nullable=False),
        sa.Column('secret_hash', sa.String(length=255), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        sa.Column('expires_at', stackling.common.db.UTCDateTime(), nullable=True),
        sa.Column('unrestricted', sa.Boolean(), nullable=False),
        sa.Column('roles', sa.JSON(), nullable=False),
        sa.Column('access_rules', sa.JSON(), nullable=False),
        sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ['user_id'], ['identity_user.id'], ondelete='CASCADE',
            name=op.f('fk_identity_application_credential_user_id_identity_user')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_identity_application_credential')),
        sa.UniqueConstraint('user_id', 'name',
                            name=op.f('uq_identity_application_credential_user_id_name')),
    )
    with op.batch_alter_table('identity_application_credential', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_identity_application_credential_user_id'),
                              ['user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_identity_application_credential_project_id'),
                              ['project_id'], unique=False)


def downgrade() -> None:
    op.drop_table('identity_application_credential')
    op.drop_table('identity_group_membership')
    op.drop_table('identity_group')
