"""image: the metadata definitions catalog (Glance metadefs: namespaces, objects, properties, tags, resource types)

Revision ID: 628915064c37
Revises: 4c8e2a6f9b17
Create Date: 2026-12-02 05:37:03.566629
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import stackling.common.db

revision = '628915064c37'
down_revision = '4c8e2a6f9b17'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('image_metadef_namespace',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('namespace', sa.String(length=80), nullable=False),
    sa.Column('display_name', sa.String(length=80), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('visibility', sa.String(length=32), nullable=False),
    sa.Column('protected', sa.Boolean(), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_metadef_namespace')),
    sa.UniqueConstraint('namespace', name=op.f('uq_image_metadef_namespace_namespace'))
    )
    op.create_table('image_metadef_resource_type',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('protected', sa.Boolean(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_metadef_resource_type')),
    sa.UniqueConstraint('name', name=op.f('uq_image_metadef_resource_type_name'))
    )
    op.create_table('image_metadef_object',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('namespace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('required', sa.JSON(), nullable=True),
    sa.Column('properties', sa.JSON(), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['namespace_id'], ['image_metadef_namespace.id'], name=op.f('fk_image_metadef_object_namespace_id_image_metadef_namespace'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_metadef_object')),
    sa.UniqueConstraint('namespace_id', 'name', name=op.f('uq_image_metadef_object_namespace_id_name'))
    )
    op.create_table('image_metadef_property',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('namespace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('json_schema', sa.JSON(), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['namespace_id'], ['image_metadef_namespace.id'], name=op.f('fk_image_metadef_property_namespace_id_image_metadef_namespace'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_metadef_property')),
    sa.UniqueConstraint('namespace_id', 'name', name=op.f('uq_image_metadef_property_namespace_id_name'))
    )
    op.create_table('image_metadef_resource_type_association',
    sa.Column('namespace_id', sa.Integer(), nullable=False),
    sa.Column('resource_type_id', sa.Integer(), nullable=False),
    sa.Column('prefix', sa.String(length=80), nullable=True),
    sa.Column('properties_target', sa.String(length=80), nullable=True),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['namespace_id'], ['image_metadef_namespace.id'], name=op.f('fk_image_metadef_resource_type_association_namespace_id_image_metadef_namespace'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['resource_type_id'], ['image_metadef_resource_type.id'], name=op.f('fk_image_metadef_resource_type_association_resource_type_id_image_metadef_resource_type'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('namespace_id', 'resource_type_id', name=op.f('pk_image_metadef_resource_type_association'))
    )
    op.create_table('image_metadef_tag',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('namespace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('created_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.Column('updated_at', stackling.common.db.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['namespace_id'], ['image_metadef_namespace.id'], name=op.f('fk_image_metadef_tag_namespace_id_image_metadef_namespace'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_image_metadef_tag')),
    sa.UniqueConstraint('namespace_id', 'name', name=op.f('uq_image_metadef_tag_namespace_id_name'))
    )


def downgrade() -> None:
    op.drop_table('image_metadef_tag')
    op.drop_table('image_metadef_resource_type_association')
    op.drop_table('image_metadef_property')
    op.drop_table('image_metadef_object')
    op.drop_table('image_metadef_resource_type')
    op.drop_table('image_metadef_namespace')
