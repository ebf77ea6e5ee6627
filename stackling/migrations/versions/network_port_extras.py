"""network port extras: extra DHCP options of ports, DNS domains of ports and networks,
DNS names and domains of floating IPs

Revision ID: 5f1b9c3e7a64
Revises: 8e2d4b6a1c53
Create Date: 2026-11-24 19:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '5f1b9c3e7a64'
down_revision = '8e2d4b6a1c53'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_port_dhcp_opt',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('opt_name', sa.String(length=64), nullable=False),
    sa.Column('ip_version', sa.Integer(), nullable=False),
    sa.Column('opt_value', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name=op.f('fk_network_port_dhcp_opt_port_id_network_port'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', 'opt_name', 'ip_version',
                            name=op.f('pk_network_port_dhcp_opt'))
    )
    op.create_table('network_port_dns_domain',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('dns_domain', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_port.id'],
                            name=op.f('fk_network_port_dns_domain_port_id_network_port'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_network_port_dns_domain'))
    )
    op.create_table('network_network_dns_domain',
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.Column('dns_domain', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['network_id'], ['network_network.id'],
                            name=op.f('fk_network_network_dns_domain_network_id_network_network'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('network_id', name=op.f('pk_network_network_dns_domain'))
    )
    op.create_table('network_floatingip_dns',
    sa.Column('floatingip_id', sa.String(length=36), nullable=False),
    sa.Column('dns_name', sa.String(length=255), nullable=False),
    sa.Column('dns_domain', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['floatingip_id'], ['network_floatingip.id'],
                            name=op.f('fk_network_floatingip_dns_floatingip_id_network_floatingip'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('floatingip_id', name=op.f('pk_network_floatingip_dns'))
    )


def downgrade() -> None:
    op.drop_table('network_floatingip_dns')
    op.drop_table('network_network_dns_domain')
    op.drop_table('network_port_dns_domain')
    op.drop_table('network_port_dhcp_opt')
