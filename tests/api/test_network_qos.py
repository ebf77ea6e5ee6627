"""QoS (`qos`, `qos-default`, `qos-bw-limit-direction`, minimum bandwidth and packet rate,
`port-resource-request`) over the in-process app: policies and rules with Neutron's
conflicts and errors, sharing, `qos_policy_id` of ports and networks, and a port's
resource request."""

from __future__ import annotations

import uuid

from tests.api.test_network import N, create, neutron_error

Q = f"{N}/qos/policies"


def _policy(api, **body) -> dict:
    return create(api, "qos/policies", "policy", {"name": f"q-{uuid.uuid4().hex[:6]}", **body})


def _rule(api, policy_id: str, kind: str, body: dict, status: int = 201) -> dict:
    r = api.post(f"{Q}/{policy_id}/{kind}_rules", json={f"{kind}_rule": body})
    assert r.status_code == status, r.text
    return r.json()


def test_extensions_and_rule_types(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"qos", "qos-default", "qos-bw-limit-direction", "qos-bw-minimum-ingress",
            "qos-pps-minimum", "qos-rule-type-details", "port-resource-request",
            "port-resource-request-groups", "qos-port-network-policy"} <= aliases
    types = api.get(f"{N}/qos/rule-types", user="demo").json()["rule_types"]
    assert {t["type"] for t in types} == {"bandwidth_limit", "dscp_marking",
                                         "minimum_bandwidth", "minimum_packet_rate"}
    detail = api.get(f"{N}/qos/rule-types/bandwidth_limit").json()["rule_type"]
    assert detail["type"] == "bandwidth_limit"
    params = {p["parameter_name"] for p in detail["drivers"][0]["supported_parameters"]}
    assert params == {"max_kbps", "max_burst_kbps", "direction"}
    # the drivers' details are an admin's (Neutron's QoS plugin), the list anyone's
    err = neutron_error(api.get(f"{N}/qos/rule-types/bandwidth_limit", user="demo"), 403,
                        "NotAuthorized")
    assert err["message"] == "Not authorized."
    neutron_error(api.get(f"{N}/qos/rule-types/nope"), 404)


def test_policy_crud_and_rules(api):
    p = _policy(api, description="gold")
    assert p["rules"] == [] and p["shared"] is False and p["is_default"] is False
    assert p["project_id"] and p["revision_number"] == 0
    pid = p["id"]
    egress = _rule(api, pid, "bandwidth_limit", {"max_kbps": 10000})["bandwidth_limit_rule"]
    assert egress == {"id": egress["id"], "max_kbps": 10000, "max_burst_kbps": 0,
                      "direction": "egress"}
    ingress = _rule(api, pid, "bandwidth_limit", {"max_kbps": 2000, "direction": "ingress",
                                                  "max_burst_kbps": 300})
    # one rule per type and direction
    err = neutron_error(api.post(f"{Q}/{pid}/bandwidth_limit_rules", json={
        "bandwidth_limit_rule": {"max_kbps": 5}}), 409, "QoSRulesConflict")
    assert egress["id"] in err["message"]
    dscp = _rule(api, pid, "dscp_marking", {"dscp_mark": 26})["dscp_marking_rule"]
    neutron_error(api.post(f"{Q}/{pid}/dscp_marking_rules", json={
        "dscp_marking_rule": {"dscp_mark": 27}}), 400)  # not a valid mark
    # a minimum above the limit of its direction
    neutron_error(api.post(f"{Q}/{pid}/minimum_bandwidth_rules", json={
        "minimum_bandwidth_rule": {"min_kbps": 20000}}), 409, "QoSRuleParameterConflict")
    mbw = _rule(api, pid, "minimum_bandwidth", {"min_kbps": 1000})["minimum_bandwidth_rule"]
    assert mbw["direction"] == "egress"
    pps = _rule(api, pid, "minimum_packet_rate", {"min_kpps": 100, "direction": "any"})[
        "minimum_packet_rate_rule"]
    assert pps["direction"] == "any" and pps["min_kpps"] == 100
    neutron_error(api.post(f"{Q}/{pid}/minimum_packet_rate_rules", json={
        "minimum_packet_rate_rule": {"min_kpps": 5, "direction": "ingress"}}), 409,
        "QoSRulesConflict")
    shown = api.get(f"{Q}/{pid}").json()["policy"]
    assert len(shown["rules"]) == 5 and shown["revision_number"] == 5
    kinds = {(r["type"], r.get("direction")) for r in shown["rules"]}
    assert ("bandwidth_limit", "ingress") in kinds and ("dscp_marking", None) in kinds
    assert all(r["qos_policy_id"] == pid for r in shown["rules"])
    listed = api.get(f"{Q}/{pid}/bandwidth_limit_rules").json()["bandwidth_limit_rules"]
    assert {r["id"] for r in listed} == {egress["id"], ingress["bandwidth_limit_rule"]["id"]}
    url = f"{Q}/{pid}/bandwidth_limit_rules/{egress['id']}"
    # the limit cannot drop below the minimum of its direction
    neutron_error(api.put(url, json={"bandwidth_limit_rule": {"max_kbps": 500}}), 409,
                  "QoSRuleParameterConflict")
    r = api.put(url, json={"bandwidth_limit_rule": {"max_kbps": 5000}})
    assert r.status_code == 200 and r.json()["bandwidth_limit_rule"]["max_kbps"] == 5000
    neutron_error(api.put(url, json={"bandwidth_limit_rule": {"direction": "ingress"}}), 409,
                  "QoSRulesConflict")
    neutron_error(api.put(url, json={"bandwidth_limit_rule": {"max_kbps": -1}}), 400)
    # the rule id under another type or policy is not found
    neutron_error(api.get(f"{Q}/{pid}/dscp_marking_rules/{egress['id']}"), 404,
                  "QosRuleNotFound")
    assert api.delete(f"{Q}/{pid}/dscp_marking_rules/{dscp['id']}").status_code == 204
    assert api.delete(f"{Q}/{pid}/dscp_marking_rules/{dscp['id']}").status_code == 404
    r = api.put(f"{Q}/{pid}", json={"policy": {"name": "silver", "description": "x"}})
    assert r.status_code == 200 and r.json()["policy"]["name"] == "silver"
    assert [x["id"] for x in api.get(f"{Q}?name=silver").json()["policies"]] == [pid]
    assert api.delete(f"{Q}/{pid}").status_code == 204
    neutron_error(api.get(f"{Q}/{pid}"), 404, "QosPolicyNotFound")
    neutron_error(api.get(f"{Q}/{pid}/bandwidth_limit_rules"), 404, "QosPolicyNotFound")


def test_bad_bodies_are_400(api):
    pid = _policy(api)["id"]
    for body in ({}, {"max_kbps": "x"}, {"max_kbps": 1, "direction": "up"},
                 {"max_kbps": 1, "bogus": 1}, {"max_kbps": 2**31}):
        neutron_error(api.post(f"{Q}/{pid}/bandwidth_limit_rules",
                               json={"bandwidth_limit_rule": body}), 400)
    neutron_error(api.post(Q, json={"policy": {"shared": "maybe"}}), 400)
    neutron_error(api.get(f"{N}/qos/rule-types?all_rules=maybe"), 400)


def test_projects_read_but_cannot_write_and_shared_policies(api):
    mine = create(api, "networks", "network", {"name": "qos-net"}, user="demo")
    project = mine["project_id"]
    private = _policy(api, project_id=project)
    other = _policy(api)  # the admin's project's, not shared
    shared = _policy(api, shared=True)
    seen = {p["id"] for p in api.get(Q, user="demo").json()["policies"]}
    assert private["id"] in seen and shared["id"] in seen and other["id"] not in seen
    assert api.get(f"{Q}/{shared['id']}", user="demo").json()["policy"]["shared"] is True
    neutron_error(api.get(f"{Q}/{other['id']}", user="demo"), 404, "QosPolicyNotFound")
    # policies and rules are the admin's to make (Neutron's defaults)
    neutron_error(api.post(Q, user="demo", json={"policy": {"name": "x"}}), 403)
    neutron_error(api.put(f"{Q}/{private['id']}", user="demo",
                          json={"policy": {"name": "x"}}), 403)
    neutron_error(api.post(f"{Q}/{private['id']}/dscp_marking_rules", user="demo",
                           json={"dscp_marking_rule": {"dscp_mark": 8}}), 403)
    # an RBAC policy shares one with the project
    r = api.post(f"{N}/rbac-policies", json={"rbac_policy": {
        "object_type": "qos_policy", "object_id": other["id"], "action": "access_as_shared",
        "target_tenant": project}})
    assert r.status_code == 201, r.text
    assert api.get(f"{Q}/{other['id']}", user="demo").json()["policy"]["shared"] is True
    # and the project names it on its network
    r = api.put(f"{N}/networks/{mine['id']}", user="demo",
                json={"network": {"qos_policy_id": other["id"]}})
    assert r.status_code == 200, r.text
    assert r.json()["network"]["qos_policy_id"] == other["id"]
    neutron_error(api.delete(f"{Q}/{other['id']}"), 409, "QosPolicyInUse")
    # nor can the grant go while the project's network uses it
    grants = api.get(f"{N}/rbac-policies?object_id={other['id']}").json()["rbac_policies"]
    assert len(grants) == 1
    neutron_error(api.delete(f"{N}/rbac-policies/{grants[0]['id']}"), 409, "RbacPolicyInUse")
    r = api.put(f"{N}/networks/{mine['id']}", user="demo",
                json={"network": {"qos_policy_id": None}})
    assert r.status_code == 200 and r.json()["network"]["qos_policy_id"] is None
    assert api.delete(f"{Q}/{other['id']}").status_code == 204


def test_port_policy_and_invisible_policy(api):
    net = create(api, "networks", "network", {"name": "qos-port-net"}, user="demo")
    hidden = _policy(api)
    neutron_error(api.post(f"{N}/ports", user="demo", json={"port": {
        "network_id": net["id"], "qos_policy_id": hidden["id"]}}), 404, "QosPolicyNotFound")
    mine = _policy(api, project_id=net["project_id"])
    port = create(api, "ports", "port", {"network_id": net["id"], "qos_policy_id": mine["id"]},
                  user="demo")
    assert port["qos_policy_id"] == mine["id"] and port["qos_network_policy_id"] is None
    assert "resource_request" not in port  # admin-only (Neutron's get_port:resource_request)
    assert api.get(f"{N}/ports/{port['id']}").json()["port"]["resource_request"] is None
    found = api.get(f"{N}/ports?qos_policy_id={mine['id']}", user="demo").json()["ports"]
    assert [p["id"] for p in found] == [port["id"]]
    neutron_error(api.delete(f"{Q}/{mine['id']}"), 409, "QosPolicyInUse")
    assert api.delete(f"{N}/ports/{port['id']}", user="demo").status_code == 204
    assert api.delete(f"{Q}/{mine['id']}").status_code == 204


def test_default_policy_applies_to_new_networks(api):
    project = create(api, "networks", "network", {"name": "qd"}, user="demo")["project_id"]
    first = _policy(api, project_id=project, is_default=True)
    assert first["is_default"] is True
    err = neutron_error(api.post(Q, json={"policy": {"project_id": project,
                                                     "is_default": True}}), 409,
                        "QoSPolicyDefaultAlreadyExists")
    assert project in err["message"]
    net = create(api, "networks", "network", {"name": "qd2"}, user="demo")
    assert net["qos_policy_id"] == first["id"]
    explicit = create(api, "networks", "network", {"name": "qd3", "qos_policy_id": None},
                      user="demo")
    assert explicit["qos_policy_id"] is None
    r = api.put(f"{Q}/{first['id']}", json={"policy": {"is_default": False}})
    assert r.status_code == 200 and r.json()["policy"]["is_default"] is False
    assert create(api, "networks", "network", {"name": "qd4"}, user="demo")[
        "qos_policy_id"] is None
    api.delete(f"{N}/networks/{net['id']}", user="demo")


def test_resource_request_of_a_port(api):
    net = create(api, "networks", "network", {
        "name": "qos-vlan", "provider:network_type": "vlan",
        "provider:physical_network": "physnet1"})
    policy = _policy(api, shared=True)
    _rule(api, policy["id"], "minimum_bandwidth", {"min_kbps": 1000})
    _rule(api, policy["id"], "minimum_bandwidth", {"min_kbps": 2000, "direction": "ingress"})
    _rule(api, policy["id"], "minimum_packet_rate", {"min_kpps": 10, "direction": "any"})
    port = create(api, "ports", "port", {"network_id": net["id"],
                                         "qos_policy_id": policy["id"]})
    req = port["resource_request"]
    bw, pps = req["request_groups"]
    assert bw["resources"] == {"NET_BW_EGR_KILOBIT_PER_SEC": 1000,
                               "NET_BW_IGR_KILOBIT_PER_SEC": 2000}
    assert bw["required"] == ["CUSTOM_PHYSNET_PHYSNET1", "CUSTOM_VNIC_TYPE_NORMAL"]
    assert pps == {"id": pps["id"], "required": ["CUSTOM_VNIC_TYPE_NORMAL"],
                   "resources": {"NET_PACKET_RATE_KILOPACKET_PER_SEC": 10}}
    assert req["same_subtree"] == [bw["id"], pps["id"]]
    # stable ids, and a network's policy applies to its VM ports
    again = api.get(f"{N}/ports/{port['id']}").json()["port"]["resource_request"]
    assert again == req
    r = api.put(f"{N}/networks/{net['id']}", json={"network": {"qos_policy_id": policy["id"]}})
    assert r.status_code == 200, r.text
    plain = create(api, "ports", "port", {"network_id": net["id"],
                                          "device_owner": "compute:nova"})
    assert plain["qos_policy_id"] is None and plain["qos_network_policy_id"] == policy["id"]
    assert plain["resource_request"]["request_groups"][0]["resources"][
        "NET_BW_EGR_KILOBIT_PER_SEC"] == 1000
    dhcp = create(api, "ports", "port", {"network_id": net["id"],
                                         "device_owner": "network:dhcp"})
    assert dhcp["resource_request"] is None
    listed = {p["id"]: p for p in api.get(f"{N}/ports?network_id={net['id']}").json()["ports"]}
    assert listed[port["id"]]["resource_request"] == req
