"""identity breadth: domain-specific roles (name unique per domain), region parents,
service and endpoint extras, credentials, trusts, access rules and policies

Revision ID: 9b2e4c7d1a36
Revises: c7a7191fdc3a
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '9b2e4c7d1a36'
down_revision = 'c7a7191fdc3a'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('identity_role', schema=None) as batch_op:
        batch_op.add_column(sa.Column('domain_id', sa.String(length=64), nullable=False,
                                      server_default='<<null>>'))
        batch_op.drop_constraint('uq_identity_role_name', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_identity_role_name_domain_id'),
                                          ['name', 'domain_id'])
    with op.batch_alter_table('identity_region', schema=None) as batch_op:
        batch_op.add_column(sa.Column('parent_region_id', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('extra', sa.JSON(), nullable=True))
    with op.batch_alter_table('identity_service', schema=None) as batch_op:
        batch_op.add_column(sa.Column('extra', sa.JSON(), nullable=True))
    with op.batch_alter_table('identity_endpoint', schema=None) as batch_op:
        batch_op.alter_column('region_id', existing_type=sa.String(length=255), nullable=True)
        batch_op.add_column(sa.Column('extra', sa.JSON(), nullable=True))
    op.create_table(
        'identity_credential',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.String(length=64), nullable=False),
        sa.Column('project_id', sa.String(length=64), nullable=True),
        sa.Column('type', sa.String(length=255), nullable=False),
        sa.Column('blob', sa.Text(), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['identity_user.id'], ondelete='CASCADE',
                                name=op.f('fk_identity_credential_user_id_identity_user')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_identity_credential')),
    )
    op.create_index(op.f('ix_identity_credential_user_id'), 'identity_credential', ['user_id'])
    op.create_table(
        'identity_trust',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('trustor_user_id', sa.String(length=64), nullable=False),
        sa.Column('trustee_user_id', sa.String(length=64), nullable=False),
        sa.Column('project_id', sa.String(length=64), nullable=True),
        sa.Column('impersonation', sa.Boolean(), nullable=False),
        sa.Column('expires_at', stackling.common.db.UTCDateTime(), nullable=True),
        sa.Column('remaining_uses', sa.Integer(), nullable=True),
        sa.Column('roles', sa.JSON(), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False),
        sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['trustor_user_id'], ['identity_user.id'], ondelete='CASCADE',
                                name=op.f('fk_identity_trust_trustor_user_id_identity_user')),
        sa.ForeignKeyConstraint(['trustee_user_id'], ['identity_user.id'], ondelete='CASCADE',
                                name=op.f('fk_identity_trust_trustee_user_id_identity_user')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_identity_trust')),
    )
    op.create_index(op.f('ix_identity_trust_trustor_user_id'), 'identity_trust',
                    ['trustor_user_id'])
    op.create_index(op.f('ix_identity_trust_trustee_user_id'), 'identity_trust',
                    ['trustee_user_id'])
    op.create_table(
        'identity_access_rule',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.String(length=64), nullable=False),
        sa.Column('service', sa.String(length=64), nullable=False),
        sa.Column('path', sa.String(length=255), nullable=False),
        sa.Column('method', sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['identity_user.id'], ondelete='CASCADE',
                                name=op.f('fk_identity_access_rule_user_id_identity_user')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_identity_access_rule')),
        sa.UniqueConstraint('user_id', 'service', 'path', 'method',
                            name=op.f('uq_identity_access_rule_user_id_service_path_method')),
    )
    op.create_index(op.f('ix_identity_access_rule_user_id'), 'identity_access_rule',
                    ['user_id'])
    op.create_table(
        'identity_policy',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('type', sa.String(length=255), nullable=False),
        sa.Column('blob', sa.Text(), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_identity_policy')),
    )


def downgrade() -> None:
    op.drop_table('identity_policy')
    op.drop_table('identity_access_rule')
    op.drop_table('identity_trust')
    op.drop_table('identity_credential')
    with op.batch_alter_table('identity_endpoint', schema=None) as batch_op:
        batch_op.drop_column('extra')
        batch_op.alter_column('region_id', existing_type=sa.String(length=255), nullable=False)
    with op.batch_alter_table('identity_service', schema=None) as batch_op:
        batch_op.drop_column('extra')
    with op.batch_alter_table('identity_region', schema=None) as batch_op:
        batch_op.drop_column('extra')
        batch_op.drop_column('parent_region_id')
    with op.batch_alter_table('identity_role', schema=None) as batch_op:
        batch_op.drop_constraint('uq_identity_role_name_domain_id', type_='unique')
        batch_op.create_unique_constraint('uq_identity_role_name', ['name'])
        batch_op.drop_column('domain_id')
