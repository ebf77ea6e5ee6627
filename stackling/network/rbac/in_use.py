"""What a project losing access to a shared object still uses (RBAC policy removal).

`projects` are the projects losing access, or, for a wildcard policy (`wildcard`), the
projects keeping it (the owner and other grants); the answer is upstream's reason, or
None when nothing depends on the access.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.network.core.models import Port, PortSecurityGroup, Subnet, SubnetPool
from stackling.network.rbac.visibility import EXTERNAL


def _who(column: Any, projects: set[str], wildcard: bool) -> Any:
    return column.not_in(list(projects)) if wildcard else column.in_(list(projects))


def _any(db: Session, stmt: Any) -> bool:
    return db.scalar(stmt.limit(1)) is not None


def find(db: Session, object_type: str, action: str, obj: Any, projects: set[str],
         wildcard: bool) -> str | None:
    if object_type == "network" and action == EXTERNAL:
        # (Neutron's external_net_db: routers' gateways only; floating IPs and ports on
        # an external network are not judged)
        from stackling.network.l3.models import Router

        if wildcard and obj.is_default:
            return "Default external networks must be shared to everyone."
        if _any(db, select(Router.id).where(Router.gw_network_id == obj.id,
                                            _who(Router.project_id, projects, wildcard))):
            return ("There are routers attached to this network that depend on this policy "
                    "for access.")
        return None
    if object_type == "network":
        if _any(db, select(Port.id).where(Port.network_id == obj.id,
                                          _who(Port.project_id, projects, wildcard))) or \
                _any(db, select(Subnet.id).where(Subnet.network_id == obj.id,
                                                 _who(Subnet.project_id, projects, wildcard))):
            return (f"Unable to reconfigure sharing settings for network {obj.id}. Multiple "
                    "tenants are using it.")
        return None
    if object_type == "subnetpool":
        if _any(db, select(Subnet.id).where(Subnet.subnetpool_id == obj.id,
                                            _who(Subnet.project_id, projects, wildcard))):
            return f"Subnet pool {obj.id} has subnets of the projects losing access."
        return None
    if object_type == "security_group":
        if _any(db, select(Port.id).join(PortSecurityGroup,
                                         PortSecurityGroup.port_id == Port.id)
                .where(PortSecurityGroup.security_group_id == obj.id,
                       _who(Port.project_id, projects, wildcard))):
            return f"Security Group {obj.id} in use."
        return None
    if object_type == "address_scope":
        if _any(db, select(SubnetPool.id).where(
                SubnetPool.address_scope_id == obj.id,
                _who(SubnetPool.project_id, projects, wildcard))):
            return (f"Unable to complete operation on address scope {obj.id}. There are one "
                    "or more subnet pools in use on the address scope")
        return None
    if object_type == "qos_policy":
        from stackling.network.core.models import Network
        from stackling.network.qos.models import QosNetworkPolicy, QosPortPolicy

        if _any(db, select(Port.id).join(QosPortPolicy, QosPortPolicy.port_id == Port.id)
                .where(QosPortPolicy.qos_policy_id == obj.id,
                       _who(Port.project_id, projects, wildcard))) or \
                _any(db, select(Network.id).join(
                    QosNetworkPolicy, QosNetworkPolicy.network_id == Network.id)
                    .where(QosNetworkPolicy.qos_policy_id == obj.id,
                           _who(Network.project_id, projects, wildcard))):
            return (f"QoS Policy {obj.id} is used by ports or networks of the projects "
                    "losing access.")
        return None
    return None
