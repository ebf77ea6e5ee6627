"""L3 tables: routers (with their ports and extra routes), floating IPs, each project's
auto-allocated topology, and per-project quota overrides.

"Only one" rules are constraints here too:
- a port belongs to at most one router (`network_router_port.port_id` is the key), and a
  router cannot be deleted while a row still points at it (no cascade from the router:
  an interface added concurrently with a delete makes the delete fail and retry);
- one fixed IP has at most one floating IP per external network
  (unique (floating_network_id, fixed_port_id, fixed_ip_address); NULLs never collide);
- one auto-allocated topology per project (the project id is the primary key).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Boolean, ForeignKey, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, JSONType, UTCDateTime, utcnow, uuid_str
from stackling.network.core.models import StandardAttrs


class Router(StandardAttrs, Base):
    __tablename__ = "network_router"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    status: Mapped[str] = mapped_column(String(16), default="ACTIVE")
    admin_state_up: Mapped[bool] = mapped_column(Boolean, default=True)
    # The gateway: its port (device_owner network:router_gateway) and external network.
    gw_port_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_port.id", ondelete="SET NULL"), nullable=True, unique=True)
    gw_network_id: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    enable_snat: Mapped[bool] = mapped_column(Boolean, default=True)
    availability_zone_hints: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # `l3-ha` and `dvr`: stored and shown to admins (no agents run either kind); last in
    # the table, after the standard attributes, where the migration adds them
    ha: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false(),
                                     sort_order=1)
    distributed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false(),
                                              sort_order=1)
    # `router-extend-ndp-proxy`: shown true only while the router has a gateway
    enable_ndp_proxy: Mapped[bool] = mapped_column(Boolean, default=False,
                                                   server_default=false(), sort_order=1)
    # `l3-flavors`: the network flavor (service type L3_ROUTER_NAT) it was made with; a
    # flavor routers use is not deleted (no cascade)
    flavor_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_flavor.id", name="fk_network_router_flavor"), nullable=True,
        index=True, sort_order=1)


class RouterPort(Base):
    """A port serving a router: its gateway or one of its interfaces (neutron's
    `routerports`)."""

    __tablename__ = "network_router_port"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), primary_key=True)
    router_id: Mapped[str] = mapped_column(ForeignKey("network_router.id"), index=True)
    port_type: Mapped[str] = mapped_column(String(64))


class RouterRoute(Base):
    """One extra route (`extraroute`) of a router."""

    __tablename__ = "network_router_route"
    router_id: Mapped[str] = mapped_column(
        ForeignKey("network_router.id", ondelete="CASCADE"), primary_key=True)
    destination: Mapped[str] = mapped_column(String(64), primary_key=True)
    nexthop: Mapped[str] = mapped_column(String(64), primary_key=True)


class FloatingIP(StandardAttrs, Base):
    __tablename__ = "network_floatingip"
    __table_args__ = (
        # (named: the conventional name would pass MariaDB's 64-character limit)
        UniqueConstraint("floating_network_id", "fixed_port_id", "fixed_ip_address",
                         name="uq_network_floatingip_fixed_ip"),
    )
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    floating_network_id: Mapped[str] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), index=True)
    # The port holding the address on the external network (device_owner
    # network:floatingip); deleting it deletes the floating IP, as upstream.
    floating_port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), unique=True)
    floating_ip_address: Mapped[str] = mapped_column(String(64), index=True)
    floating_subnet_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    # The association: internal port, its fixed IP, and the router that links them.
    fixed_port_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_port.id", ondelete="SET NULL"), nullable=True, index=True)
    fixed_ip_address: Mapped[str | None] = mapped_column(String(64), nullable=True)
    router_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_router.id"), nullable=True, index=True)
    status: Mapped[str] = mapped_column(String(16), default="DOWN")


class AutoAllocatedTopology(Base):
    """The project's "Get Me a Network" topology. The row is inserted *before* the
    build (network_id still NULL) inside the building transaction: a concurrent request
    for the same project blocks on the key until the builder commits, then reads the
    finished row. Nobody ever sees the NULL (it is never committed)."""

    __tablename__ = "network_auto_allocated_topology"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    network_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), nullable=True, unique=True)
    router_id: Mapped[str | None] = mapped_column(
        ForeignKey("network_router.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Quota(Base):
    """A per-project override of one resource's quota (defaults live in code)."""

    __tablename__ = "network_quota"
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    resource: Mapped[str] = mapped_column(String(64), primary_key=True)
    hard_limit: Mapped[int] = mapped_column(BigInteger)
