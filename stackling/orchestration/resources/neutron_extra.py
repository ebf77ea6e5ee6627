"""OS::Neutron::ProviderNet, Segment, SecurityGroupRule and FloatingIPAssociation.

Like the other Neutron types they go through `stackling.network.interface` (the REST
API's validation, policy and errors) in the engine's transaction.
"""

from __future__ import annotations

from typing import Any

from stackling.common.errors import ApiError
from stackling.orchestration import constraints
from stackling.orchestration.errors import ResourcePropertyConflict, StackValidationFailed
from stackling.orchestration.properties import UNKNOWN, Constraint, Property
from stackling.orchestration.resources.base import Resource, register
from stackling.orchestration.resources.neutron import (
    NETWORK_REF,
    TAGS,
    NeutronResource,
    net,
    not_found,
)

NETWORK_TYPES = ["local", "vlan", "vxlan", "gre", "geneve", "flat"]
PHYSICAL = ("flat", "vlan")  # types bound to a physical network


def _known(value: Any) -> bool:
    return value is not None and value is not UNKNOWN


def _check_segment_spec(name: str, network_type: Any, physical_network: Any,
                        segmentation_id: Any, what: str) -> None:
    """Heat's checks of a provider segment, before Neutron sees it."""
    if not _known(network_type):
        return
    if network_type in PHYSICAL and physical_network is None:
        raise StackValidationFailed(
            f"Property error: resources.{name}.properties: physical_network is required "
            f"for {network_type} {what}.")
    if network_type not in PHYSICAL and _known(physical_network):
        raise StackValidationFailed(
            f"Property error: resources.{name}.properties: physical_network is prohibited "
            f"for {network_type} {what}.")
    if network_type in ("flat", "local") and _known(segmentation_id):
        raise StackValidationFailed(
            f"Property error: resources.{name}.properties: segmentation_id is prohibited "
            f"for {network_type} {what}.")


@register("OS::Neutron::ProviderNet")
class ProviderNet(NeutronResource):
    """A provider network (admin-only by Neutron's default policy); shared by default."""

    resource = "network"
    properties_schema = {
        "name": Property("string", "A string specifying a symbolic name for the network, "
                         "which is not required to be unique.", update_allowed=True),
        "network_type": Property("string", "A string specifying the provider network type "
                                 "for the network.", required=True, update_allowed=True,
                                 constraints=[Constraint("allowed_values", NETWORK_TYPES)]),
        "physical_network": Property("string", "A string specifying physical network mapping "
                                     "for the network.", update_allowed=True),
        "segmentation_id": Property("string", "A string specifying the segmentation id for "
                                    "the network.", update_allowed=True),
        "admin_state_up": Property("boolean", "A boolean value specifying the "
                                   "administrative status of the network.", default=True,
                                   update_allowed=True),
        "shared": Property("boolean", "Whether this network should be shared across all "
                           "tenants.", default=True, update_allowed=True),
        "port_security_enabled": Property("boolean", "Flag to enable/disable port security "
                                          "on the network.", update_allowed=True),
        "router_external": Property("boolean", "Whether the network contains an external "
                                    "router.", update_allowed=True),
        "dns_domain": Property("string", "DNS domain associated with this network.",
                               update_allowed=True),
        "tags": TAGS,
    }
    attributes_schema = {
        "status": "The status of the network.",
        "subnets": "Subnets of this network.",
        "segments": "The segments of this network.",
        "name": "The name of the network.",
        "mtu": "The maximum transmission unit size(in bytes) for the network.",
    }

    def validate(self) -> None:
        p = self.properties
        _check_segment_spec(self.name, p.get("network_type"), p.get("physical_network"),
                            p.get("segmentation_id"), "provider network")

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        for key in ("network_type", "physical_network", "segmentation_id"):
            if key in out:
                out[f"provider:{key}"] = out.pop(key)
        if "provider:segmentation_id" in out:
            try:
                out["provider:segmentation_id"] = int(out["provider:segmentation_id"])
            except (TypeError, ValueError):
                raise StackValidationFailed(
                    f"Property error: resources.{self.name}.properties.segmentation_id: "
                    f"Value '{out['provider:segmentation_id']}' is not an integer") from None
        if "router_external" in out:
            out["router:external"] = out.pop("router_external")
        return out


@register("OS::Neutron::Segment")
class Segment(NeutronResource):
    """A segment of a (routed) network: admin-only, as the segments API."""

    resource = "segment"
    properties_schema = {
        "network": Property("string", "The name/id of network to associate with this "
                            "segment.", required=True, constraints=NETWORK_REF),
        "network_type": Property("string", "Type of network to associate with this segment.",
                                 required=True, constraints=[
                                     Constraint("allowed_values", NETWORK_TYPES)]),
        "physical_network": Property("string", "Name of physical network to associate with "
                                     "this segment."),
        "segmentation_id": Property("integer", "Segmentation ID for this segment.",
                                    constraints=[Constraint("range", {"min": 1})]),
        "name": Property("string", "Name of the segment.", update_allowed=True),
        "description": Property("string", "Description of the segment.",
                                update_allowed=True),
    }
    attributes_schema = {
        "network_id": "The ID of the network.", "network_type": "The network type.",
        "physical_network": "The physical network.",
        "segmentation_id": "The segmentation ID.", "name": "The name of the segment.",
    }

    def validate(self) -> None:
        p = self.properties
        _check_segment_spec(self.name, p.get("network_type"), p.get("physical_network"),
                            p.get("segmentation_id"), "segment")

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        if "network" in out:
            out["network_id"] = self.find(constraints.find_network, out.pop("network"))["id"]
        return out


@register("OS::Neutron::SecurityGroupRule")
class SecurityGroupRule(Resource):
    """One rule of a security group; every change replaces it (rules are immutable)."""

    properties_schema = {
        "security_group": Property("string", "Security group name or ID to add rule.",
                                   required=True, constraints=[
                                       Constraint("custom_constraint",
                                                  "neutron.security_group")]),
        "description": Property("string", "Description of the security group rule."),
        "direction": Property("string", "The direction in which the security group rule is "
                              "applied. For a compute instance, an ingress security group "
                              "rule matches traffic that is incoming (ingress) for that "
                              "instance. An egress rule is applied to traffic leaving the "
                              "instance.", default="ingress",
                              constraints=[Constraint("allowed_values", ["ingress", "egress"])]),
        "ethertype": Property("string", "Ethertype of the traffic.", default="IPv4",
                              constraints=[Constraint("allowed_values", ["IPv4", "IPv6"])]),
        "port_range_min": Property("integer", "The minimum port number in the range that is "
                                   "matched by the security group rule.",
                                   constraints=[Constraint("range", {"min": 0, "max": 65535})]),
        "port_range_max": Property("integer", "The maximum port number in the range that is "
                                   "matched by the security group rule.",
                                   constraints=[Constraint("range", {"min": 0, "max": 65535})]),
        "protocol": Property("string", "The protocol that is matched by the security group "
                             "rule. Allowed values are ah, dccp, egp, esp, gre, icmp, icmpv6, "
                             "igmp, ipv6-encap, ipv6-frag, ipv6-icmp, ipv6-nonxt, ipv6-opts, "
                             "ipv6-route, ospf, pgm, rsvp, sctp, tcp, udp, udplite, vrrp and "
                             "integer representations [0-255]."),
        "remote_group": Property("string", "The remote group name or ID to be associated "
                                 "with this security group rule."),
        "remote_ip_prefix": Property("string", "The remote IP prefix (CIDR) to be associated "
                                     "with this security group rule.",
                                     constraints=[Constraint("custom_constraint", "net_cidr")]),
    }

    def validate(self) -> None:
        p = self.properties
        if _known(p.get("remote_group")) and _known(p.get("remote_ip_prefix")):
            raise ResourcePropertyConflict(props="remote_group, remote_ip_prefix")
        low, high = p.get("port_range_min"), p.get("port_range_max")
        if _known(low) and _known(high) and low > high:
            raise StackValidationFailed(
                f"Property error: resources.{self.name}.properties: The minimum port number "
                f"must be less than or equal to the maximum port number.")

    def handle_create(self) -> Any:
        p = self.properties
        group = self.find(constraints.find_security_group, p["security_group"])
        body: dict[str, Any] = {"security_group_id": group["id"], "direction": p["direction"],
                                "ethertype": p["ethertype"]}
        for key in ("description", "port_range_min", "port_range_max", "protocol",
                    "remote_ip_prefix"):
            if p.get(key) is not None:
                body[key] = p[key]
        if p.get("remote_group"):
            body["remote_group_id"] = self.find(constraints.find_security_group, p["remote_group"])["id"]
        rule = net().create_security_group_rule(self.db, self.ctx, body)
        self.set_resource_id(rule["id"])
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            net().delete_security_group_rule(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if not not_found(err):
                raise
        return None

    def show(self) -> Any:
        return net().get_security_group_rule(self.db, self.ctx, self.resource_id or "")

    def handle_check(self) -> None:
        self.show()


@register("OS::Neutron::FloatingIPAssociation")
class FloatingIPAssociation(Resource):
    """Associates an existing floating IP with a port; deleting it disassociates."""

    properties_schema = {
        "floatingip_id": Property("string", "ID of the floating IP to associate.",
                                  required=True, update_allowed=True),
        "port_id": Property("string", "ID of an existing port with at least one IP address "
                            "to associate with this floating IP.", required=True,
                            update_allowed=True,
                            constraints=[Constraint("custom_constraint", "neutron.port")]),
        "fixed_ip_address": Property("string", "IP address to use if the port has multiple "
                                     "addresses.", update_allowed=True,
                                     constraints=[Constraint("custom_constraint", "ip_addr")]),
    }

    @classmethod
    def implicit_dependencies(cls, name: str, definition: dict[str, Any],
                              definitions: dict[str, dict[str, Any]]) -> list[str]:
        # The port's network must reach the floating IP's external network first.
        return [n for n, d in definitions.items() if d.get("type") in (
            "OS::Neutron::RouterInterface", "OS::Neutron::Router")]

    def _associate(self, fip_id: str, port_id: str | None, fixed_ip: str | None) -> None:
        body: dict[str, Any] = {"port_id": port_id}
        if port_id is not None and fixed_ip:
            body["fixed_ip_address"] = fixed_ip
        net().update_floating_ip(self.db, self.ctx, fip_id, body)

    def handle_create(self) -> Any:
        p = self.properties
        self._associate(p["floatingip_id"], p["port_id"], p.get("fixed_ip_address"))
        # Heat's physical id for an association is its own id (there is no object).
        self.set_resource_id(self.row.uuid)
        self.data_set("floatingip_id", p["floatingip_id"])
        return None

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        p = self.properties
        if "floatingip_id" in changed:
            self._disassociate(old_properties["floatingip_id"])
        self._associate(p["floatingip_id"], p["port_id"], p.get("fixed_ip_address"))
        self.data_set("floatingip_id", p["floatingip_id"])
        return None

    def _disassociate(self, fip_id: str | None) -> None:
        if not fip_id:
            return
        try:
            self._associate(fip_id, None, None)
        except ApiError as err:
            if not not_found(err):
                raise

    def handle_delete(self) -> Any:
        if self.resource_id is not None:
            self._disassociate(self.data_get("floatingip_id")
                               or self.properties.get("floatingip_id"))
        return None

    def show(self) -> Any:
        return net().get_floating_ip(self.db, self.ctx, self.data_get("floatingip_id") or "")
