"""network RBAC policies and address scopes

Revision ID: 5c1e9a7d2b40
Revises: 4651abb13825
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = '5c1e9a7d2b40'
down_revision = '4651abb13825'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'network_rbac_policy',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('object_type', sa.String(length=32), nullable=False),
        sa.Column('object_id', sa.String(length=36), nullable=False),
        sa.Column('action', sa.String(length=255), nullable=False),
        sa.Column('target_tenant', sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_network_rbac_policy')),
        sa.UniqueConstraint('object_type', 'object_id', 'action', 'target_tenant',
                            name='uq_network_rbac_policy_grant'),
    )
    with op.batch_alter_table('network_rbac_policy', schema=None) as batch_op:
        batch_op.create_index('ix_network_rbac_policy_target', ['target_tenant', 'object_type'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_rbac_policy_object_id'), ['object_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_network_rbac_policy_project_id'), ['project_id'],
                              unique=False)
    op.create_table(
        'network_address_scope',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('shared', sa.Boolean(), nullable=False),
        sa.Column('ip_version', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_network_address_scope')),
    )
    with op.batch_alter_table('network_address_scope', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_address_scope_project_id'), ['project_id'],
                              unique=False)
    _backfill()


def _backfill() -> None:
    """Wildcard policies for the `shared` / `router:external` flags set before RBAC."""
    bind = op.get_bind()
    net = sa.table('network_network', sa.column('id'), sa.column('project_id'),
                   sa.column('shared'), sa.column('router_external'))
    pool = sa.table('network_subnet_pool', sa.column('id'), sa.column('project_id'),
                    sa.column('shared'))
    rows = []
    for obj_id, project, shared, external in bind.execute(
            sa.select(net.c.id, net.c.project_id, net.c.shared, net.c.router_external)):
        if shared:
            rows.append(('network', obj_id, project, 'access_as_shared'))
        if external:
            rows.append(('network', obj_id, project, 'access_as_external'))
    for obj_id, project, shared in bind.execute(
            sa.select(pool.c.id, pool.c.project_id, pool.c.shared)):
        if shared:
            rows.append(('subnetpool', obj_id, project, 'access_as_shared'))
    if rows:
        policy = sa.table('network_rbac_policy', sa.column('id'), sa.column('project_id'),
                          sa.column('object_type'), sa.column('object_id'),
                          sa.column('action'), sa.column('target_tenant'))
        bind.execute(policy.insert(), [
            {'id': str(uuid.uuid4()), 'project_id': project or '', 'object_type': kind,
             'object_id': obj_id, 'action': action, 'target_tenant': '*'}
            for kind, obj_id, project, action in rows])


def downgrade() -> None:
    op.drop_table('network_address_scope')
    op.drop_table('network_rbac_policy')
