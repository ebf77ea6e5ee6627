"""Neutron resource types: Net, Subnet, Port, Router, RouterInterface, FloatingIP,
SecurityGroup. Each calls `stackling.network.interface` in the engine's transaction."""

from __future__ import annotations

from typing import Any, ClassVar

from stackling.common.errors import ApiError
from stackling.orchestration import constraints
from stackling.orchestration.errors import ResourcePropertyConflict, StackValidationFailed
from stackling.orchestration.properties import UNKNOWN, Constraint, Property
from stackling.orchestration.resources.base import Resource, register


def net() -> Any:
    from stackling.network import interface

    return interface


def not_found(err: ApiError) -> bool:
    return err.status == 404


VALUE_SPECS = Property("map", "Extra parameters to include in the request.", default={},
                       update_allowed=True)
TAGS = Property("list", "The tags to be added to the resource.", update_allowed=True,
                schema=Property("string"))
NETWORK_REF = [Constraint("custom_constraint", "neutron.network")]
SUBNET_REF = [Constraint("custom_constraint", "neutron.subnet")]


def _known(value: Any) -> bool:
    return value is not None and value is not UNKNOWN


class NeutronResource(Resource):
    """A Neutron object of kind `resource` (network, subnet, ...) whose properties map
    onto its REST attributes; subclasses say how (`body()`)."""

    resource: ClassVar[str] = ""
    # Whether handle_create keeps the create's rendered answer in `created` (else only
    # the id is asked for: the render's reads are saved).
    keeps_created: ClassVar[bool] = False
    created: dict[str, Any] | None = None

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = {k: v for k, v in props.items() if v is not None and k not in (
            "value_specs", "tags")}
        out.update(props.get("value_specs") or {})
        if create and props.get("tags"):
            out["tags"] = props["tags"]
        return out

    def handle_create(self) -> Any:
        body = self.body(self.properties, create=True)
        if "name" in self.properties_schema and not body.get("name"):
            body["name"] = self.physical_resource_name()
        obj = net().create_resource(self.db, self.ctx, self.resource, body,
                                    render=self.keeps_created)
        self.set_resource_id(obj["id"])
        self.created = obj
        return None

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        props = {k: self.properties.get(k) for k in changed if k not in ("tags",)}
        body = self.body(props, create=False)
        if "name" in changed and not self.properties.get("name"):
            body["name"] = self.physical_resource_name()
        if body:
            net().update_resource(self.db, self.ctx, self.resource, self.resource_id, body,
                                  render=False)
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            net().delete_resource(self.db, self.ctx, self.resource, self.resource_id)
        except ApiError as err:
            if not not_found(err):
                raise
        return None

    def show(self) -> Any:
        return net().get_resource(self.db, self.ctx, self.resource, self.resource_id)

    def attribute(self, name: str) -> Any:
        return self.show().get(name)

    def handle_check(self) -> None:
        self.show()


@register("OS::Neutron::Net")
class Net(NeutronResource):
    """A Neutron network."""

    resource = "network"
    properties_schema = {
        "name": Property("string", "A string specifying a symbolic name for the network, "
                         "which is not required to be unique.", update_allowed=True),
        "value_specs": VALUE_SPECS,
        "admin_state_up": Property("boolean", "A boolean value specifying the "
                                   "administrative status of the network.", default=True,
                                   update_allowed=True),
        "tenant_id": Property("string", "The ID of the tenant which will own the network."),
        "shared": Property("boolean", "Whether this network should be shared across all "
                           "tenants.", default=False, update_allowed=True),
        "port_security_enabled": Property("boolean", "Flag to enable/disable port security "
                                          "on the network.", update_allowed=True),
        "qos_policy": Property("string", "The name or ID of QoS policy to attach to this "
                               "network.", update_allowed=True),
        "dns_domain": Property("string", "DNS domain associated with this network.",
                               update_allowed=True),
        "tags": TAGS,
        "availability_zone_hints": Property("list", "Availability zone candidates.",
                                            schema=Property("string")),
    }
    attributes_schema = {
        "status": "The status of the network.", "name": "The name of the network.",
        "subnets": "Subnets of this network.", "admin_state_up": "The administrative status.",
        "tenant_id": "The tenant owning this network.",
        "port_security_enabled": "Port security enabled of the network.",
        "mtu": "The maximum transmission unit size(in bytes) for the network.",
        "qos_policy_id": "The QoS policy ID attached to this network.",
        "l2_adjacency": "Whether L2 connectivity is available across the network.",
        "segments": "The segments of this network.",
    }

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        if "qos_policy" in out:
            out["qos_policy_id"] = out.pop("qos_policy")
        return out


@register("OS::Neutron::Subnet")
class Subnet(NeutronResource):
    """A Neutron subnet."""

    resource = "subnet"
    properties_schema = {
        "network": Property("string", "The ID of the attached network.", required=True,
                            constraints=NETWORK_REF),
        "subnetpool": Property("string", "The name or ID of the subnet pool."),
        "prefixlen": Property("integer", "Prefix length for subnet allocation from subnet "
                              "pool.", constraints=[Constraint("range", {"min": 0})]),
        "cidr": Property("string", "The CIDR.", constraints=[
            Constraint("custom_constraint", "net_cidr")]),
        "value_specs": VALUE_SPECS,
        "name": Property("string", "The name of the subnet.", update_allowed=True),
        "ip_version": Property("integer", "The IP version, which is 4 or 6.", default=4,
                               constraints=[Constraint("allowed_values", [4, 6])]),
        "dns_nameservers": Property("list", "A specified set of DNS name servers to be used.",
                                    default=[], update_allowed=True,
                                    schema=Property("string")),
        "gateway_ip": Property("string", "The gateway IP address. Set to any of [ null | ~ "
                               "| \"\" ] to create/update a subnet without a gateway.",
                               update_allowed=True),
        "enable_dhcp": Property("boolean", "Set to true if DHCP is enabled.", default=True,
                                update_allowed=True),
        "ipv6_ra_mode": Property("string", "IPv6 RA mode.", constraints=[Constraint(
            "allowed_values", ["dhcpv6-stateful", "dhcpv6-stateless", "slaac"])]),
        "ipv6_address_mode": Property("string", "IPv6 address mode.", constraints=[
            Constraint("allowed_values", ["dhcpv6-stateful", "dhcpv6-stateless", "slaac"])]),
        "allocation_pools": Property("list", "The start and end addresses for the "
                                     "allocation pools.", update_allowed=True, schema={
                                         "start": Property("string", required=True),
                                         "end": Property("string", required=True)}),
        "tenant_id": Property("string", "The ID of the tenant who owns the network."),
        "host_routes": Property("list", "A list of host route dictionaries for the subnet.",
                                update_allowed=True, schema={
                                    "destination": Property("string", required=True),
                                    "nexthop": Property("string", required=True)}),
        "segment": Property("string", "The name/ID of the segment to associate.",
                            update_allowed=True),
        "tags": TAGS,
    }
    attributes_schema = {k: f"The {k} of the subnet." for k in (
        "name", "network_id", "tenant_id", "allocation_pools", "gateway_ip", "host_routes",
        "ip_version", "cidr", "dns_nameservers", "enable_dhcp")}

    def validate(self) -> None:
        p = self.properties
        if _known(p.get("cidr")) and _known(p.get("subnetpool")):
            raise ResourcePropertyConflict(props="cidr, subnetpool")
        if p.get("cidr") is None and p.get("subnetpool") is None:
            raise StackValidationFailed("At least one of the following properties must be "
                                        "specified: cidr, subnetpool.")
        if p.get("cidr") is not None and p.get("prefixlen") is not None:
            raise ResourcePropertyConflict(props="cidr, prefixlen")

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        if "network" in out:
            out["network_id"] = self.find(constraints.find_network, out.pop("network"))["id"]
        if "subnetpool" in out:
            out["subnetpool_id"] = out.pop("subnetpool")
        if "segment" in out:
            out["segment_id"] = out.pop("segment")
        if "gateway_ip" in props and props["gateway_ip"] in ("", "~"):
            out["gateway_ip"] = None
        elif "gateway_ip" in props and props.get("gateway_ip") is None and not create:
            out["gateway_ip"] = None
        if out.get("gateway_ip") == "auto":
            out.pop("gateway_ip")
        if not create and "allocation_pools" in props and not props["allocation_pools"]:
            out["allocation_pools"] = []  # removed or emptied: no pools, as upstream
        return out


PORT_EXTRAS = {
    "value_specs": VALUE_SPECS,
    "admin_state_up": Property("boolean", "The administrative state of this port.",
                               default=True, update_allowed=True),
    "mac_address": Property("string", "MAC address to give to this port.",
                            constraints=[Constraint("custom_constraint", "mac_addr")]),
    "allowed_address_pairs": Property("list", "Additional MAC/IP address pairs allowed to "
                                      "pass through the port.", update_allowed=True,
                                      schema={"ip_address": Property("string", required=True),
                                              "mac_address": Property("string")}),
    "binding:vnic_type": Property("string", "The vnic type to be bound on the neutron port.",
                                  default="normal", update_allowed=True, constraints=[
                                      Constraint("allowed_values", [
                                          "normal", "direct", "macvtap", "direct-physical",
                                          "baremetal", "virtio-forwarder", "smart-nic",
                                          "remote-managed"])]),
    "port_security_enabled": Property("boolean", "Flag to enable/disable port security on "
                                      "the port.", update_allowed=True),
    "qos_policy": Property("string", "The name or ID of QoS policy to attach to this port.",
                           update_allowed=True),
    "propagate_uplink_status": Property("boolean", "Flag to enable/disable propagate uplink "
                                        "status on the port.", update_allowed=True),
    "no_fixed_ips": Property("boolean", "Flag to disable all fixed ips on the port.",
                             default=False, update_allowed=True),
}


def port_body(db: Any, ctx: Any, props: dict[str, Any]) -> dict[str, Any]:
    """The extra properties as Neutron port attributes."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if value is None or key in ("value_specs", "no_fixed_ips"):
            continue
        if key == "qos_policy":
            out["qos_policy_id"] = value
        elif key == "binding:vnic_type" and value == "normal":
            continue
        else:
            out[key] = value
    if props.get("no_fixed_ips"):
        out["fixed_ips"] = []
    out.update(props.get("value_specs") or {})
    return out


@register("OS::Neutron::Port")
class Port(Resource):
    """A Neutron port."""

    properties_schema = {
        "network": Property("string", "Network this port belongs to.", required=True,
                            constraints=NETWORK_REF),
        "name": Property("string", "A symbolic name for this port.", update_allowed=True),
        "fixed_ips": Property("list", "Desired IPs for this port.", update_allowed=True,
                              schema={"subnet": Property("string", constraints=SUBNET_REF),
                                      "ip_address": Property("string", constraints=[
                                          Constraint("custom_constraint", "ip_addr")])}),
        "device_id": Property("string", "Device ID of this port.", update_allowed=True),
        "device_owner": Property("string", "Name of the network owning the port.",
                                 update_allowed=True),
        "security_groups": Property("list", "Security group IDs to associate with this "
                                    "port.", update_allowed=True, schema=Property("string")),
        "replacement_policy": Property("string", "Policy on how to respond to a stack-update "
                                       "for this resource.", default="AUTO",
                                       update_allowed=True, constraints=[Constraint(
                                           "allowed_values", ["REPLACE_ALWAYS", "AUTO"])]),
        "dns_name": Property("string", "DNS name associated with the port.",
                             update_allowed=True),
        "tags": TAGS,
        **PORT_EXTRAS,
    }
    attributes_schema = {k: f"The {k} of the port." for k in (
        "admin_state_up", "device_id", "device_owner", "fixed_ips", "mac_address", "name",
        "network_id", "security_groups", "status", "tenant_id", "allowed_address_pairs",
        "subnets", "network", "port_security_enabled", "qos_policy_id", "dns_assignment",
        "propagate_uplink_status")}

    @classmethod
    def implicit_dependencies(cls, name: str, definition: dict[str, Any],
                              definitions: dict[str, dict[str, Any]]) -> list[str]:
        network = (definition.get("properties") or {}).get("network")
        return [n for n, d in definitions.items() if d.get("type") == "OS::Neutron::Subnet"
                and (d.get("properties") or {}).get("network") == network]

    def validate(self) -> None:
        if self.properties.get("no_fixed_ips") and self.properties.get("fixed_ips"):
            raise ResourcePropertyConflict(props="fixed_ips, no_fixed_ips")

    def _body(self, props: dict[str, Any]) -> dict[str, Any]:
        body = port_body(self.db, self.ctx, {k: props.get(k) for k in PORT_EXTRAS
                                             if k in props})
        for key in ("name", "device_id", "device_owner", "dns_name"):
            if props.get(key) is not None:
                body[key] = props[key]
        if props.get("security_groups") is not None:
            body["security_groups"] = [self.find(constraints.find_security_group, g)["id"]
                                       for g in props["security_groups"]]
        if props.get("fixed_ips"):
            ips = []
            for item in props["fixed_ips"]:
                entry = {}
                if item.get("subnet"):
                    entry["subnet_id"] = self.find(constraints.find_subnet, item["subnet"])["id"]
                if item.get("ip_address"):
                    entry["ip_address"] = item["ip_address"]
                ips.append(entry)
            body["fixed_ips"] = ips
        return body

    def handle_create(self) -> Any:
        body = self._body(self.properties)
        body["network_id"] = self.find(constraints.find_network, self.properties["network"])["id"]
        body.setdefault("name", self.physical_resource_name())
        if self.properties.get("tags"):
            body["tags"] = self.properties["tags"]
        port = net().create_port(self.db, self.ctx, body)
        self.set_resource_id(port["id"])

    def needs_replace(self, old_properties: dict[str, Any], changed: set[str]) -> bool:
        if self.properties.get("replacement_policy") == "REPLACE_ALWAYS":
            return True
        return super().needs_replace(old_properties, changed)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        props = {k: self.properties.get(k) for k in changed
                 if k not in ("tags", "replacement_policy")}
        if "fixed_ips" in props and not props["fixed_ips"] and not self.properties.get(
                "no_fixed_ips"):
            props.pop("fixed_ips")  # empty: Neutron keeps what it allocated, as upstream
        body = self._body(props)
        if "name" in changed and not self.properties.get("name"):
            body["name"] = self.physical_resource_name()
        if body:
            net().update_port(self.db, self.ctx, self.resource_id, body)

    def prepare_for_replace(self) -> None:
        """Hand the fixed IPs over: keep a copy, and clear them on the old port."""
        try:
            port = net().get_port(self.db, self.ctx, self.resource_id)
        except ApiError:
            return
        self.data_set("port_fip", port["fixed_ips"])
        net().update_port(self.db, self.ctx, self.resource_id, {"fixed_ips": []})

    def restore_prev_rsrc(self) -> None:
        fips = self.data_get("port_fip")
        if fips:
            net().update_port(self.db, self.ctx, self.resource_id, {"fixed_ips": [
                {"subnet_id": f["subnet_id"], "ip_address": f["ip_address"]} for f in fips]})
            self.data_delete("port_fip")

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            net().delete_port(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if not not_found(err):
                raise
        return None

    def show(self) -> Any:
        return net().get_port(self.db, self.ctx, self.resource_id)

    def attribute(self, name: str) -> Any:
        port = self.show()
        if name == "subnets":
            return [net().get_subnet(self.db, self.ctx, f["subnet_id"])
                    for f in port["fixed_ips"]]
        if name == "network":
            return net().get_network(self.db, self.ctx, port["network_id"])
        return port.get(name)


@register("OS::Neutron::Router")
class Router(NeutronResource):
    """A Neutron router."""

    resource = "router"
    properties_schema = {
        "name": Property("string", "The name of the router.", update_allowed=True),
        "external_gateway_info": Property("map", "External network gateway configuration "
                                          "for a router.", update_allowed=True, schema={
                                              "network": Property("string", required=True,
                                                                  constraints=NETWORK_REF),
                                              "enable_snat": Property("boolean"),
                                              "external_fixed_ips": Property("list", schema={
                                                  "ip_address": Property("string"),
                                                  "subnet": Property("string")})}),
        "value_specs": VALUE_SPECS,
        "admin_state_up": Property("boolean", "The administrative state of the router.",
                                   default=True, update_allowed=True),
        "l3_agent_ids": Property("list", "ID list of the L3 agent.", update_allowed=True,
                                 schema=Property("string")),
        "distributed": Property("boolean", "Indicates whether or not to create a distributed "
                                "router."),
        "ha": Property("boolean", "Indicates whether or not to create a highly available "
                       "router."),
        "availability_zone_hints": Property("list", "Availability zone candidates.",
                                            schema=Property("string")),
        "tags": TAGS,
    }
    attributes_schema = {k: f"The {k} of the router." for k in (
        "status", "external_gateway_info", "name", "admin_state_up", "tenant_id")}

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        out.pop("l3_agent_ids", None)
        if "external_gateway_info" in props:
            info = props.get("external_gateway_info")
            if not info:
                out["external_gateway_info"] = {}
            else:
                gw: dict[str, Any] = {"network_id": self.find(constraints.find_network,
                                                              info["network"])["id"]}
                if info.get("enable_snat") is not None:
                    gw["enable_snat"] = info["enable_snat"]
                if info.get("external_fixed_ips"):
                    gw["external_fixed_ips"] = [
                        {k2: v for k2, v in {
                            "ip_address": f.get("ip_address"),
                            "subnet_id": self.find(constraints.find_subnet,
                                                   f["subnet"])["id"] if f.get("subnet")
                            else None}.items() if v is not None}
                        for f in info["external_fixed_ips"]]
                out["external_gateway_info"] = gw
        return out


@register("OS::Neutron::RouterInterface")
class RouterInterface(Resource):
    """A router's interface on a subnet (or a port)."""

    properties_schema = {
        "router": Property("string", "The router.", required=True),
        "subnet": Property("string", "The subnet, either subnet or port should be specified.",
                           constraints=SUBNET_REF),
        "port": Property("string", "The port, either subnet or port should be specified.",
                         constraints=[Constraint("custom_constraint", "neutron.port")]),
    }

    def validate(self) -> None:
        subnet, port = self.properties.get("subnet"), self.properties.get("port")
        if subnet is not None and port is not None:
            raise ResourcePropertyConflict(props="subnet, port")
        if subnet is None and port is None:
            raise StackValidationFailed("At least one of the following properties must be "
                                        "specified: subnet, port.")

    def _info(self) -> dict[str, str]:
        if self.properties.get("subnet"):
            return {"subnet_id": self.find(constraints.find_subnet, self.properties["subnet"])["id"]}
        return {"port_id": constraints.find_port(self.db, self.ctx,
                                                 self.properties["port"])["id"]}

    def handle_create(self) -> Any:
        router = self.properties["router"]
        info = self._info()
        net().add_router_interface(self.db, self.ctx, router, info)
        key, value = next(iter(info.items()))
        self.set_resource_id(f"{router}:{key}={value}")

    def handle_delete(self) -> Any:
        if not self.resource_id:
            return None
        router, _, rest = self.resource_id.partition(":")
        key, _, value = rest.partition("=")
        try:
            net().remove_router_interface(self.db, self.ctx, router, {key: value})
        except ApiError as err:
            if not not_found(err):
                raise
        return None


@register("OS::Neutron::FloatingIP")
class FloatingIP(NeutronResource):
    """A floating IP on an external network."""

    resource = "floatingip"
    properties_schema = {
        "floating_network": Property("string", "Network to allocate floating IP from.",
                                     required=True, constraints=NETWORK_REF),
        "floating_subnet": Property("string", "Subnet to allocate floating IP from.",
                                    constraints=SUBNET_REF),
        "value_specs": VALUE_SPECS,
        "port_id": Property("string", "ID of an existing port with at least one IP address "
                            "to associate with this floating IP.", update_allowed=True,
                            constraints=[Constraint("custom_constraint", "neutron.port")]),
        "fixed_ip_address": Property("string", "IP address to use if the port has multiple "
                                     "addresses.", update_allowed=True,
                                     constraints=[Constraint("custom_constraint", "ip_addr")]),
        "floating_ip_address": Property("string", "IP address of the floating IP.",
                                        constraints=[Constraint("custom_constraint",
                                                                "ip_addr")]),
        "dns_name": Property("string", "DNS name.", update_allowed=True),
        "dns_domain": Property("string", "DNS domain.", update_allowed=True),
        "tags": TAGS,
    }
    attributes_schema = {k: f"The {k} of the floating IP." for k in (
        "router_id", "tenant_id", "floating_network_id", "fixed_ip_address",
        "floating_ip_address", "port_id")}

    @classmethod
    def implicit_dependencies(cls, name: str, definition: dict[str, Any],
                              definitions: dict[str, dict[str, Any]]) -> list[str]:
        # Association needs the router path to the external network first.
        if not (definition.get("properties") or {}).get("port_id"):
            return []
        return [n for n, d in definitions.items() if d.get("type") in (
            "OS::Neutron::RouterInterface", "OS::Neutron::Router")]

    def validate(self) -> None:
        if self.properties.get("fixed_ip_address") and not self.properties.get("port_id"):
            raise StackValidationFailed("Property error: resources."
                                        f"{self.name}.properties: fixed_ip_address requires "
                                        "port_id")

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        if "floating_network" in out:
            out["floating_network_id"] = self.find(constraints.find_network,
                                                   out.pop("floating_network"))["id"]
        if "floating_subnet" in out:
            out["subnet_id"] = self.find(constraints.find_subnet, out.pop("floating_subnet"))["id"]
        if not create and "port_id" in props and props["port_id"] is None:
            out["port_id"] = None
        return out


@register("OS::Neutron::SecurityGroup")
class SecurityGroup(NeutronResource):
    """A security group and its rules."""

    resource = "security_group"
    keeps_created = True  # its rules (the default egress ones) are synced from the answer
    RULE = {
        "direction": Property("string", default="ingress", constraints=[
            Constraint("allowed_values", ["ingress", "egress"])]),
        "ethertype": Property("string", default="IPv4", constraints=[
            Constraint("allowed_values", ["IPv4", "IPv6"])]),
        "port_range_min": Property("integer", constraints=[
            Constraint("range", {"min": 0, "max": 65535})]),
        "port_range_max": Property("integer", constraints=[
            Constraint("range", {"min": 0, "max": 65535})]),
        "protocol": Property("string"),
        "remote_mode": Property("string", default="remote_ip_prefix", constraints=[
            Constraint("allowed_values", ["remote_ip_prefix", "remote_group_id"])]),
        "remote_group_id": Property("string"),
        "remote_ip_prefix": Property("string", constraints=[
            Constraint("custom_constraint", "net_cidr")]),
        "description": Property("string"),
    }
    properties_schema = {
        "name": Property("string", "A string specifying a symbolic name for the security "
                         "group.", update_allowed=True),
        "description": Property("string", "Description of the security group.",
                                update_allowed=True),
        "rules": Property("list", "List of security group rules.", default=[],
                          update_allowed=True, schema=RULE),
        "stateful": Property("boolean", "Whether the security group is stateful.",
                             update_allowed=True),
    }

    def _rule_body(self, rule: dict[str, Any]) -> dict[str, Any]:
        body = {"security_group_id": self.resource_id, "direction": rule.get("direction"),
                "ethertype": rule.get("ethertype")}
        for key in ("port_range_min", "port_range_max", "protocol", "description"):
            if rule.get(key) is not None:
                body[key] = rule[key]
        if rule.get("remote_mode") == "remote_group_id":
            body["remote_group_id"] = rule.get("remote_group_id") or self.resource_id
        elif rule.get("remote_ip_prefix"):
            body["remote_ip_prefix"] = rule["remote_ip_prefix"]
        return body

    def _existing_rules(self) -> list[dict[str, Any]]:
        return net().get_resource(self.db, self.ctx, "security_group",
                                  self.resource_id)["security_group_rules"]

    def _sync_rules(self, existing: list[dict[str, Any]] | None = None) -> None:
        """Make the group's rules the template's: delete stale, add missing; Neutron's
        default egress rules stay unless the template has an egress rule. `existing`:
        the group's rules when the caller has them (a create's answer)."""
        wanted = [self._rule_body(r) for r in self.properties.get("rules") or []]
        has_egress = any(r["direction"] == "egress" for r in wanted)
        if not has_egress:
            wanted += [{"security_group_id": self.resource_id, "direction": "egress",
                        "ethertype": e} for e in ("IPv4", "IPv6")]
        keys = ("direction", "ethertype", "port_range_min", "port_range_max", "protocol",
                "remote_group_id", "remote_ip_prefix")

        def key(r: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(str(r.get(k)) if r.get(k) is not None else None for k in keys)

        if existing is None:
            existing = self._existing_rules()
        wanted_keys = [key(w) for w in wanted]
        for rule in existing:
            if key(rule) not in wanted_keys:
                net().delete_security_group_rule(self.db, self.ctx, rule["id"])
        have = {key(r) for r in existing}
        for body in wanted:
            if key(body) not in have:
                net().create_security_group_rule(self.db, self.ctx, body)
                have.add(key(body))

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = super().body(props, create)
        out.pop("rules", None)
        return out

    def handle_create(self) -> Any:
        super().handle_create()
        self._sync_rules(self.created["security_group_rules"] if self.created else None)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        super().handle_update(old_properties, changed - {"rules"})
        if "rules" in changed:
            self._sync_rules()
