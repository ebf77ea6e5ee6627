"""Side tables of port, network and floating IP extension attributes (as upstream's
`extradhcpopts`, `portdnses`, `networkdnsdomains`, `floatingipdnses`); a port's own
`dns_name` is a column of `network_port`.

- `network_port_dhcp_opt`: one row per (port, option name, IP version), the key.
- `network_port_dns_domain`, `network_network_dns_domain`, `network_floatingip_dns`: one row
  per object that has a value (none for the default "").
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base


class ExtraDhcpOpt(Base):
    __tablename__ = "network_port_dhcp_opt"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), primary_key=True)
    opt_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    ip_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    opt_value: Mapped[str] = mapped_column(String(255))


class PortDnsDomain(Base):
    __tablename__ = "network_port_dns_domain"
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE"), primary_key=True)
    dns_domain: Mapped[str] = mapped_column(String(255))


class NetworkDnsDomain(Base):
    __tablename__ = "network_network_dns_domain"
    network_id: Mapped[str] = mapped_column(
        ForeignKey("network_network.id", ondelete="CASCADE"), primary_key=True)
    dns_domain: Mapped[str] = mapped_column(String(255))


class FloatingIPDns(Base):
    __tablename__ = "network_floatingip_dns"
    floatingip_id: Mapped[str] = mapped_column(
        ForeignKey("network_floatingip.id", ondelete="CASCADE"), primary_key=True)
    dns_name: Mapped[str] = mapped_column(String(255), default="")
    dns_domain: Mapped[str] = mapped_column(String(255), default="")
