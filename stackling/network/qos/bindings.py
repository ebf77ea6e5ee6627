"""`qos_policy_id` of ports and networks, a port's `qos_network_policy_id`
(`qos-port-network-policy`) and its `resource_request` (`port-resource-request`,
`port-resource-request-groups`): what placement must give a port whose policy has
minimum-bandwidth or minimum-packet-rate rules, as Neutron's QoS plugin computes it.

- The policy a port follows is its own, else its network's (for ports that are not
  `network:*` owned, as upstream applies network policies only to VM ports).
- A new network without `qos_policy_id` takes its project's default policy (`qos-default`).
- Request groups (one per kind): bandwidth `{NET_BW_EGR_KILOBIT_PER_SEC,
  NET_BW_IGR_KILOBIT_PER_SEC}` with the traits `CUSTOM_PHYSNET_<PHYSNET>` (or
  `CUSTOM_NETWORK_TUNNEL_PROVIDER` on a tunnelled network) and
  `CUSTOM_VNIC_TYPE_<VNIC>`; packet rate `NET_PACKET_RATE_[EGR_|IGR_]KILOPACKET_PER_SEC`
  with the VNIC trait only. Group ids are stable per port and kind (uuid5).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import standard
from stackling.network.attributes import Attr, uuid_or_none
from stackling.network.core import networks, ports
from stackling.network.core.models import Network, Port, Segment
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.qos import policies
from stackling.network.qos.models import QosNetworkPolicy, QosPortPolicy, QosRule

for _alias, _name, _desc, _updated in (
        ("qos-port-network-policy", "QoS port network policy ID",
         "Adds a the QoS network ID to the port definition", "2019-11-01T10:00:00-00:00"),
        ("port-resource-request", "Port Resource Request",
         "Expose resource request to Port", "2018-05-08T10:00:00-00:00"),
        ("port-resource-request-groups", "Port Resource Request Groups",
         "Support requesting multiple groups of resources in one port",
         "2021-08-02T10:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

TUNNEL_TRAIT = "CUSTOM_NETWORK_TUNNEL_PROVIDER"
BW_CLASSES = {"egress": "NET_BW_EGR_KILOBIT_PER_SEC", "ingress": "NET_BW_IGR_KILOBIT_PER_SEC"}
PPS_CLASSES = {"egress": "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC",
               "ingress": "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC",
               "any": "NET_PACKET_RATE_KILOPACKET_PER_SEC"}

_PORT_POLICY = (select(QosPortPolicy.qos_policy_id).where(QosPortPolicy.port_id == Port.id)
                .scalar_subquery())
_NET_POLICY = (select(QosNetworkPolicy.qos_policy_id)
               .where(QosNetworkPolicy.network_id == Network.id).scalar_subquery())

ports.ATTRS.update({
    "qos_policy_id": Attr(post=True, put=True, convert=uuid_or_none, filter=True),
    "qos_network_policy_id": Attr(),
    "resource_request": Attr(),
})
ports.LISTING.columns["qos_policy_id"] = _PORT_POLICY  # type: ignore[index]
networks.ATTRS["qos_policy_id"] = Attr(post=True, put=True, convert=uuid_or_none, filter=True)
networks.LISTING.columns["qos_policy_id"] = _NET_POLICY  # type: ignore[index]


def custom_trait(prefix: str, name: str) -> str:
    """Placement's custom trait spelling: upper case, other characters as `_`."""
    return f"CUSTOM_{prefix}_" + re.sub(r"[^A-Z0-9_]", "_", name.upper())


def physnet_trait(physnet: str) -> str:
    return custom_trait("PHYSNET", physnet)


# ------------------------------------------------------------------ writes
def _bind(db: Session, ctx: RequestContext, model: Any, key: Any, obj_id: str,
          project_id: str, policy_id: str | None, created: bool = False) -> bool:
    # an object made in this request has no binding yet
    current = None if created else db.scalar(select(model.qos_policy_id).where(key == obj_id))
    if current == policy_id:
        return False
    if policy_id is not None:
        policy = db.get(policies.QosPolicy, policy_id)
        if policy is None or not policies.visible_to(db, ctx, policy, project_id):
            raise policies.QosPolicyNotFound(policy_id=policy_id)
        # the policy's row lock keeps a concurrent delete from missing this binding
        db.execute(select(policies.QosPolicy.id).where(policies.QosPolicy.id == policy_id)
                   .with_for_update())
    if not created:
        db.execute(delete(model).where(key == obj_id))
    if policy_id is not None:
        db.add(model(**{key.key: obj_id, "qos_policy_id": policy_id}))
    db.flush()
    return True


def write_port(db: Session, ctx: RequestContext, port: Port, attrs: dict[str, Any],
               created: bool) -> None:
    if created:
        standard.written(port)["qos_policy_id"] = attrs.get("qos_policy_id")
    if "qos_policy_id" in attrs:
        _bind(db, ctx, QosPortPolicy, QosPortPolicy.port_id, port.id, port.project_id,
              attrs["qos_policy_id"], created)


def write_network(db: Session, ctx: RequestContext, net: Any, attrs: dict[str, Any],
                  created: bool) -> None:
    if "qos_policy_id" in attrs:
        wanted = attrs["qos_policy_id"]
    elif created:
        wanted = policies.default_policy_id(db, net.project_id)
    else:
        return
    if created:
        standard.written(net)["qos_policy_id"] = wanted
    if _bind(db, ctx, QosNetworkPolicy, QosNetworkPolicy.network_id, net.id, net.project_id,
             wanted, created) and not created:
        standard.touch(net)


# ------------------------------------------------------------------ reads
def _vm_port(device_owner: str) -> bool:
    return not device_owner.startswith("network:")


def resource_request(port_id: str, vnic_type: str, segment: tuple[str, str | None] | None,
                     rules: list[QosRule]) -> dict[str, Any] | None:
    groups = []
    port_uuid = uuid.UUID(port_id) if _is_uuid(port_id) else uuid.NAMESPACE_OID
    vnic_trait = custom_trait("VNIC_TYPE", vnic_type)
    bw = {BW_CLASSES[r.direction]: r.min_kbps for r in rules
          if r.type == "minimum_bandwidth" and r.min_kbps}
    if bw:
        physnet = segment[1] if segment else None
        traits = [physnet_trait(physnet) if physnet else TUNNEL_TRAIT, vnic_trait]
        groups.append({"id": str(uuid.uuid5(port_uuid, "minimum_bandwidth")),
                       "required": traits, "resources": bw})
    pps = {PPS_CLASSES[r.direction]: r.min_kpps for r in rules
           if r.type == "minimum_packet_rate" and r.min_kpps}
    if pps:
        groups.append({"id": str(uuid.uuid5(port_uuid, "minimum_packet_rate")),
                       "required": [vnic_trait], "resources": pps})
    if not groups:
        return None
    return {"request_groups": groups, "same_subtree": [g["id"] for g in groups]}


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def port_policies(db: Session, port_ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """port id -> (its own policy, its network's policy)."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for chunk in standard.chunks(port_ids, 500):
        rows = db.execute(
            select(Port.id, QosPortPolicy.qos_policy_id, QosNetworkPolicy.qos_policy_id)
            .outerjoin(QosPortPolicy, QosPortPolicy.port_id == Port.id)
            .outerjoin(QosNetworkPolicy, QosNetworkPolicy.network_id == Port.network_id)
            .where(Port.id.in_(chunk)))
        for port_id, own, net in rows:
            out[port_id] = (own, net)
    return out


def render_ports(db: Session, views: list[dict[str, Any]],
                 known: dict[str, tuple[str | None, str | None]] | None = None) -> None:
    """`known`: each port's (own, network's) policy, when the caller has them."""
    if known is None:
        known = port_policies(db, [v["id"] for v in views])
    effective: dict[str, str] = {}
    for v in views:
        own, net = known.get(v["id"], (None, None))
        v["qos_policy_id"] = own
        v["qos_network_policy_id"] = net
        chosen = own or (net if _vm_port(v.get("device_owner") or "") else None)
        if chosen:
            effective[v["id"]] = chosen
    rules: dict[str, list[QosRule]] = {}
    wanted = sorted(set(effective.values()))
    for chunk in standard.chunks(wanted, 500):
        for r in db.scalars(select(QosRule).where(
                QosRule.qos_policy_id.in_(chunk),
                QosRule.type.in_(("minimum_bandwidth", "minimum_packet_rate")))):
            rules.setdefault(r.qos_policy_id, []).append(r)
    segments: dict[str, tuple[str, str | None]] = {}
    nets = sorted({v["network_id"] for v in views if rules.get(effective.get(v["id"], ""))})
    for chunk in standard.chunks(nets, 500):
        for net_id, net_type, physnet in db.execute(
                select(Segment.network_id, Segment.network_type, Segment.physical_network)
                .where(Segment.network_id.in_(chunk)).order_by(Segment.segment_index.desc())):
            segments[net_id] = (net_type, physnet)  # the first segment wins
    for v in views:
        policy_rules = rules.get(effective.get(v["id"], ""), [])
        v["resource_request"] = resource_request(
            v["id"], v.get("binding:vnic_type") or "normal", segments.get(v["network_id"]),
            policy_rules) if policy_rules else None


def render_new_ports(db: Session, views: list[dict[str, Any]],
                     written: list[dict[str, Any]]) -> None:
    """Ports made in this request: their policy as written, their network's as read
    with it (ports.NETWORK_FACTS); a caller that read the network itself: queried."""
    if not all(_NET_POLICY in w for w in written):
        render_ports(db, views)
        return
    render_ports(db, views, {v["id"]: (w.get("qos_policy_id"), w[_NET_POLICY])
                             for v, w in zip(views, written, strict=True)})


_NET_POLICY = "qos_network_policy_id"


def render_networks(db: Session, views: list[dict[str, Any]]) -> None:
    found: dict[str, str] = {}
    for chunk in standard.chunks([v["id"] for v in views], 500):
        for net_id, policy_id in db.execute(
                select(QosNetworkPolicy.network_id, QosNetworkPolicy.qos_policy_id)
                .where(QosNetworkPolicy.network_id.in_(chunk))):
            found[net_id] = policy_id
    for v in views:
        v["qos_policy_id"] = found.get(v["id"])


def render_new_networks(db: Session, views: list[dict[str, Any]],
                        written: list[dict[str, Any]]) -> None:
    for v, w in zip(views, written, strict=True):
        v["qos_policy_id"] = w.get("qos_policy_id")


def port_resource_request(db: Session, port_id: str) -> dict[str, Any] | None:
    """For compute: what placement must give the port (None: nothing)."""
    port = db.get(Port, port_id)
    if port is None:
        return None
    view = {"id": port.id, "network_id": port.network_id, "device_owner": port.device_owner,
            "binding:vnic_type": port.binding_vnic_type}
    render_ports(db, [view])
    return view["resource_request"]


def set_allocation(db: Session, port_id: str, mappings: dict[str, list[str]]) -> None:
    """`binding:profile.allocation` of a port whose request the scheduler claimed."""
    request = port_resource_request(db, port_id)
    port = db.get(Port, port_id)
    if port is None or request is None:
        return
    allocation = {g["id"]: mappings[g["id"]][0] for g in request["request_groups"]
                  if mappings.get(g["id"])}
    if allocation:
        port.binding_profile = {**(port.binding_profile or {}), "allocation": allocation}
        db.flush()


def drop_allocation(db: Session, port: Port) -> None:
    """An unbound port holds no placement allocation any more (Nova clears it)."""
    profile = port.binding_profile or {}
    if not port.binding_host_id and "allocation" in profile:
        port.binding_profile = {k: v for k, v in profile.items() if k != "allocation"}


ports.RENDER_EXTENSIONS.append(render_ports)
ports.RENDER_NEW[render_ports] = render_new_ports
ports.NETWORK_FACTS[_NET_POLICY] = (
    select(QosNetworkPolicy.qos_policy_id).where(QosNetworkPolicy.network_id == Network.id)
    .correlate(Network).scalar_subquery())
ports.RULED_READS.append("resource_request")  # get_port:resource_request (admin, service)
ports.ATTR_WRITERS.append(write_port)
ports.AFTER_UPDATE.append(drop_allocation)
networks.RENDER_EXTENSIONS.append(render_networks)
networks.RENDER_NEW[render_networks] = render_new_networks
networks.ATTR_WRITERS.append(write_network)
