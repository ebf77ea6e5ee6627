"""OS::Neutron::ExtraRouteSet, Trunk, QoSPolicy and the QoS rule types.

Like the other Neutron types they go through `stackling.network.interface` in the
engine's transaction. `router` and `policy` are IDs (what `get_resource` gives).
"""

from __future__ import annotations

from typing import Any, ClassVar

from stackling.common.errors import ApiError
from stackling.orchestration import constraints
from stackling.orchestration.errors import ResourceFailure
from stackling.orchestration.properties import Constraint, Property
from stackling.orchestration.resources.base import Resource, register
from stackling.orchestration.resources.neutron import TAGS, NeutronResource, net, not_found

PORT_REF = [Constraint("custom_constraint", "neutron.port")]


def _route_keys(routes: list[dict[str, Any]] | None) -> set[tuple[str, str]]:
    return {(r["destination"], r["nexthop"]) for r in routes or []}


def _routes(keys: set[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"destination": d, "nexthop": n} for d, n in sorted(keys)]


class PhysicalResourceExists(ResourceFailure):
    """Heat's error for a route this set would add that the router already has."""


@register("OS::Neutron::ExtraRouteSet")
class ExtraRouteSet(Resource):
    """A set of extra routes on a router: only this set's routes are added and removed
    (add_extraroutes/remove_extraroutes), other routes of the router are left alone."""

    properties_schema = {
        "router": Property("string", "The router id.", required=True),
        "routes": Property("list", "A set of route dictionaries for the router.", default=[],
                           update_allowed=True, schema={
                               "destination": Property("string", "The destination network "
                                                       "in CIDR notation.", required=True,
                                                       constraints=[Constraint(
                                                           "custom_constraint", "net_cidr")]),
                               "nexthop": Property("string", "The next hop for the "
                                                   "destination.", required=True,
                                                   constraints=[Constraint(
                                                       "custom_constraint", "ip_addr")])}),
    }

    @classmethod
    def implicit_dependencies(cls, name: str, definition: dict[str, Any],
                              definitions: dict[str, dict[str, Any]]) -> list[str]:
        # After the interfaces of the same router: a nexthop must be on one of them.
        router = (definition.get("properties") or {}).get("router")
        return [n for n, d in definitions.items()
                if d.get("type") == "OS::Neutron::RouterInterface"
                and (d.get("properties") or {}).get("router") == router]

    def _add(self, router: str, keys: set[tuple[str, str]]) -> None:
        """Add routes none of which the router has yet (a route two sets claim would be
        removed with the first of them): Heat's PhysicalResourceExists otherwise."""
        if not keys:
            return
        current = net().get_resource(self.db, self.ctx, "router", router)["routes"]
        taken = sorted(keys & _route_keys(current))
        if taken:
            name = ",".join([router, *(f"{d}={n}" for d, n in taken)])
            raise PhysicalResourceExists(f"The physical resource for ({name}) exists.")
        net().change_extraroutes(self.db, self.ctx, router, _routes(keys), add=True)

    def handle_create(self) -> Any:
        router = self.properties["router"]
        self._add(router, _route_keys(self.properties["routes"]))
        self.set_resource_id(router)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        old, new = _route_keys(old_properties.get("routes")), _route_keys(
            self.properties.get("routes"))
        if old - new:
            net().change_extraroutes(self.db, self.ctx, self.resource_id, _routes(old - new),
                                     add=False)
        self._add(self.resource_id, new - old)

    def handle_delete(self) -> Any:
        routes = _route_keys(self.properties.get("routes"))
        if not self.resource_id or not routes:
            return None
        try:
            net().change_extraroutes(self.db, self.ctx, self.resource_id, _routes(routes),
                                     add=False)
        except ApiError as err:
            if not not_found(err):
                raise
        return None

    def show(self) -> Any:
        return net().get_resource(self.db, self.ctx, "router", self.resource_id)


SUB_PORT = {
    "port": Property("string", "ID or name of a port to be used as a subport.",
                     required=True, constraints=PORT_REF),
    "segmentation_type": Property("string", "Segmentation type to be used on the subport.",
                                  required=True,
                                  constraints=[Constraint("allowed_values", ["vlan"])]),
    "segmentation_id": Property("integer", "The segmentation ID on which the subport "
                                "network is presented to the instance.", required=True,
                                constraints=[Constraint("range", {"min": 1, "max": 4094})]),
}


@register("OS::Neutron::Trunk")
class Trunk(NeutronResource):
    """A trunk on a parent port; an update of `sub_ports` adds and removes the difference."""

    resource = "trunk"
    properties_schema = {
        "name": Property("string", "A string specifying a symbolic name for the trunk, which "
                         "is not required to be uniqe.", update_allowed=True),
        "description": Property("string", "Description for the trunk.", update_allowed=True),
        "port": Property("string", "ID or name of a port to be used as a parent port.",
                         required=True, immutable=True, constraints=PORT_REF),
        "sub_ports": Property("list", "List with 0 or more map elements containing subport "
                              "details.", default=[], update_allowed=True, schema=SUB_PORT),
        "admin_state_up": Property("boolean", "Enable/disable subport addition, removal and "
                                   "trunk delete.", update_allowed=True),
    }
    attributes_schema = {
        "status": "The status of the trunk.", "port_id": "ID or name of a port used as a "
        "parent port.", "sub_ports": "List of subports associated with the trunk.",
    }

    def _sub_ports(self, subs: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        return [{"port_id": self.find(constraints.find_port, s["port"])["id"],
                 "segmentation_type": s["segmentation_type"],
                 "segmentation_id": s["segmentation_id"]} for s in subs or []]

    def body(self, props: dict[str, Any], create: bool) -> dict[str, Any]:
        out = {k: v for k, v in props.items()
               if v is not None and k in ("name", "description", "admin_state_up")}
        if create:
            out["port_id"] = self.find(constraints.find_port, props["port"])["id"]
            out["sub_ports"] = self._sub_ports(props.get("sub_ports"))
        return out

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        super().handle_update(old_properties, changed - {"sub_ports"})
        if "sub_ports" not in changed:
            return None

        def keyed(subs: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
            return {tuple(sorted(s.items())): s for s in subs}

        old = keyed(self._sub_ports(old_properties.get("sub_ports")))
        new = keyed(self._sub_ports(self.properties.get("sub_ports")))
        gone = [{"port_id": s["port_id"]} for k, s in old.items() if k not in new]
        if gone:
            net().remove_trunk_subports(self.db, self.ctx, self.resource_id, gone)
        added = [s for k, s in new.items() if k not in old]
        if added:
            net().add_trunk_subports(self.db, self.ctx, self.resource_id, added)
        return None


@register("OS::Neutron::QoSPolicy")
class QoSPolicy(Resource):
    """A QoS policy; its rules are the QoS rule types that name it."""

    properties_schema = {
        "name": Property("string", "The name for the QoS policy.", update_allowed=True),
        "description": Property("string", "The description for the QoS policy.",
                                update_allowed=True),
        "shared": Property("boolean", "Whether this QoS policy should be shared to other "
                           "tenants.", default=False, update_allowed=True),
        "is_default": Property("boolean", "Whether this QoS policy is the default policy.",
                               default=False, update_allowed=True),
        "tenant_id": Property("string", "The owner tenant ID of this QoS policy."),
        "tags": TAGS,
    }
    attributes_schema = {"rules": "A list of all rules for the QoS policy."}

    def _body(self, keys: Any) -> dict[str, Any]:
        p = self.properties
        return {k: p[k] for k in keys if k not in ("tags",) and p.get(k) is not None}

    def handle_create(self) -> Any:
        body = self._body(self.properties_schema)
        body.setdefault("name", self.physical_resource_name())
        policy = net().create_qos_policy(self.db, self.ctx, body)
        self.set_resource_id(policy["id"])

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        body = self._body(changed)
        if "name" in changed and not self.properties.get("name"):
            body["name"] = self.physical_resource_name()
        if body:
            net().update_qos_policy(self.db, self.ctx, self.resource_id, body)

    def handle_delete(self) -> Any:
        if not self.resource_id:
            return None
        try:
            net().delete_qos_policy(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if not not_found(err):
                raise
        return None

    def show(self) -> Any:
        return net().get_qos_policy(self.db, self.ctx, self.resource_id)

    def attribute(self, name: str) -> Any:
        return self.show().get(name)


POLICY = Property("string", "ID of QoS policy the rule belongs to.", required=True)
TENANT = Property("string", "The owner tenant ID of this rule.")
DIRECTION = Property("string", "The direction in which the rule is applied.", default="egress",
                     update_allowed=True,
                     constraints=[Constraint("allowed_values", ["egress", "ingress"])])


class QoSRule(Resource):
    """A rule of `rule_type` under `policy`; `fields` maps a property to the API's field."""

    rule_type: ClassVar[str] = ""
    fields: ClassVar[dict[str, str]] = {}

    def _body(self, keys: Any) -> dict[str, Any]:
        p = self.properties
        return {api: p[prop] for prop, api in self.fields.items()
                if prop in keys and p.get(prop) is not None}

    def _call(self, **kwargs: Any) -> Any:
        return net().qos_rule(self.db, self.ctx, self.rule_type, self.properties["policy"],
                              **kwargs)

    def handle_create(self) -> Any:
        rule = self._call(body=self._body(self.fields))
        self.set_resource_id(rule["id"])

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        body = self._body(changed)
        if body:
            self._call(rule_id=self.resource_id, body=body)

    def handle_delete(self) -> Any:
        if not self.resource_id:
            return None
        try:
            self._call(rule_id=self.resource_id, delete=True)
        except ApiError as err:
            if not not_found(err):
                raise
        return None

    def show(self) -> Any:
        return self._call(rule_id=self.resource_id)

    def attribute(self, name: str) -> Any:
        return self.show().get(name)


@register("OS::Neutron::QoSBandwidthLimitRule")
class QoSBandwidthLimitRule(QoSRule):
    rule_type = "bandwidth_limit"
    fields = {"max_bandwidth": "max_kbps", "max_burst_bandwidth": "max_burst_kbps",
              "direction": "direction"}
    properties_schema = {
        "policy": POLICY, "tenant_id": TENANT, "direction": DIRECTION,
        "max_bandwidth": Property("integer", "Max bandwidth in kbps.", required=True,
                                  update_allowed=True,
                                  constraints=[Constraint("range", {"min": 0})]),
        "max_burst_bandwidth": Property("integer", "Max burst bandwidth in kbps.", default=0,
                                        update_allowed=True,
                                        constraints=[Constraint("range", {"min": 0})]),
    }


@register("OS::Neutron::QoSDscpMarkingRule")
class QoSDscpMarkingRule(QoSRule):
    rule_type = "dscp_marking"
    fields = {"dscp_mark": "dscp_mark"}
    properties_schema = {
        "policy": POLICY, "tenant_id": TENANT,
        "dscp_mark": Property("integer", "DSCP mark between 0 and 56, except 2-6, 42, 44, and "
                              "50-54.", required=True, update_allowed=True, constraints=[
                                  Constraint("allowed_values", [
                                      0, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32,
                                      34, 36, 38, 40, 46, 48, 56])]),
    }


@register("OS::Neutron::QoSMinimumBandwidthRule")
class QoSMinimumBandwidthRule(QoSRule):
    rule_type = "minimum_bandwidth"
    fields = {"min_kbps": "min_kbps", "direction": "direction"}
    properties_schema = {
        "policy": POLICY, "tenant_id": TENANT, "direction": DIRECTION,
        "min_kbps": Property("integer", "Min bandwidth in kbps.", required=True,
                             update_allowed=True, constraints=[Constraint("range", {"min": 0})]),
    }


@register("OS::Neutron::QoSMinimumPacketRateRule")
class QoSMinimumPacketRateRule(QoSRule):
    rule_type = "minimum_packet_rate"
    fields = {"min_kpps": "min_kpps", "direction": "direction"}
    properties_schema = {
        "policy": POLICY, "tenant_id": TENANT,
        "direction": Property("string", "Traffic direction from the point of view of the "
                              "port.", default="egress", update_allowed=True,
                              constraints=[Constraint("allowed_values",
                                                      ["any", "egress", "ingress"])]),
        "min_kpps": Property("integer", "Min packet rate in kpps.", required=True,
                             update_allowed=True, constraints=[Constraint("range", {"min": 0})]),
    }
