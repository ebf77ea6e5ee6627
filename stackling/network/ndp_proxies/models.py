"""NDP proxies (`network_ndp_proxy`): an IPv6 address of an internal port that its router
answers neighbour solicitations for on the external network."""

from __future__ import annotations

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from stackling.common.db import Base, uuid_str
from stackling.network.core.models import StandardAttrs


class NDPProxy(StandardAttrs, Base):
    __tablename__ = "network_ndp_proxy"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=uuid_str)
    project_id: Mapped[str] = mapped_column(String(255), index=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    # no cascade from the router: its gateway (and so the router) is refused while a
    # proxy uses it (RouterGatewayInUseByNDPProxy)
    router_id: Mapped[str] = mapped_column(
        ForeignKey("network_router.id", name="fk_network_ndp_proxy_router"), index=True)
    # a proxy goes with its port, as upstream
    port_id: Mapped[str] = mapped_column(
        ForeignKey("network_port.id", ondelete="CASCADE", name="fk_network_ndp_proxy_port"),
        index=True)
    ip_address: Mapped[str] = mapped_column(String(64))
