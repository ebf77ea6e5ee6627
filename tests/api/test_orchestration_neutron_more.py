"""OS::Neutron::ExtraRouteSet, Trunk, QoSPolicy and its rule types: created, updated in
place and deleted through stacks, leaving what is not theirs alone."""

from __future__ import annotations

import pytest

from tests.api.test_orchestration import Heat, tmpl, unique


@pytest.fixture(scope="module")
def demo(api):
    return Heat(api)


@pytest.fixture(scope="module")
def admin(api):
    return Heat(api, user="admin")


def _update(heat, name, template):
    url = heat.url(name)
    assert heat.req("PUT", url, json={"template": template}).status_code == 202
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack


def _delete(heat, name):
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    stack = heat.wait(url)
    assert stack["stack_status"] == "DELETE_COMPLETE", stack


def _routes(api, heat, router_id):
    r = api.get(f"/networking/v2.0/routers/{router_id}", token=heat.token)
    assert r.status_code == 200, r.text
    return sorted((x["destination"], x["nexthop"]) for x in r.json()["router"]["routes"])


def _router_template(name, routes):
    return tmpl({
        "net": {"type": "OS::Neutron::Net", "properties": {"name": name}},
        "sub": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.77.0.0/24"}},
        "router": {"type": "OS::Neutron::Router", "properties": {"name": name}},
        "iface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "sub"}}},
        "routes": {"type": "OS::Neutron::ExtraRouteSet",
                   "properties": {"router": {"get_resource": "router"}, "routes": routes}},
    })


def test_extra_route_set_adds_updates_and_removes_only_its_routes(api, demo):
    name = unique("ers")
    mine = [{"destination": "10.1.0.0/16", "nexthop": "10.77.0.5"},
            {"destination": "10.2.0.0/16", "nexthop": "10.77.0.6"}]
    stack = demo.make(name, _router_template(name, mine))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    router_id = demo.resources(name)["router"]["physical_resource_id"]
    assert _routes(api, demo, router_id) == [("10.1.0.0/16", "10.77.0.5"),
                                             ("10.2.0.0/16", "10.77.0.6")]
    # Another set's route, added outside the stack, stays through update and delete.
    r = api.put(f"/networking/v2.0/routers/{router_id}/add_extraroutes", token=demo.token,
                json={"router": {"routes": [{"destination": "10.9.0.0/16",
                                             "nexthop": "10.77.0.9"}]}})
    assert r.status_code == 200, r.text
    _update(demo, name, _router_template(name, [
        {"destination": "10.2.0.0/16", "nexthop": "10.77.0.6"},
        {"destination": "10.3.0.0/16", "nexthop": "10.77.0.7"}]))
    assert _routes(api, demo, router_id) == [("10.2.0.0/16", "10.77.0.6"),
                                             ("10.3.0.0/16", "10.77.0.7"),
                                             ("10.9.0.0/16", "10.77.0.9")]
    # Deleting only the set (the router stays): the other route is still there.
    t = _router_template(name, [])
    del t["resources"]["routes"]
    _update(demo, name, t)
    assert _routes(api, demo, router_id) == [("10.9.0.0/16", "10.77.0.9")]
    r = api.put(f"/networking/v2.0/routers/{router_id}/remove_extraroutes", token=demo.token,
                json={"router": {"routes": [{"destination": "10.9.0.0/16",
                                             "nexthop": "10.77.0.9"}]}})
    assert r.status_code == 200, r.text
    # A stack delete removes the set's routes before the interface they go through
    # (the set follows the router's interfaces without a depends_on).
    _update(demo, name, _router_template(name, mine))
    assert len(_routes(api, demo, router_id)) == 2
    # A route the router already has is not taken over (its owner would lose it).
    name2 = unique("ers")
    t = _router_template(name2, [])
    t["resources"] = {"routes": {"type": "OS::Neutron::ExtraRouteSet", "properties": {
        "router": router_id, "routes": [{"destination": "10.2.0.0/16",
                                         "nexthop": "10.77.0.6"}]}}}
    stack = demo.make(name2, t)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"].startswith(
        "Resource CREATE failed: PhysicalResourceExists: resources.routes: The physical "
        f"resource for ({router_id},10.2.0.0/16=10.77.0.6) exists."), stack
    _delete(demo, name2)
    assert len(_routes(api, demo, router_id)) == 2
    _delete(demo, name)


def _trunk_template(name, subs, trunk_name):
    res = {"net": {"type": "OS::Neutron::Net", "properties": {"name": name}},
           "sub": {"type": "OS::Neutron::Subnet", "properties": {
               "network": {"get_resource": "net"}, "cidr": "10.78.0.0/24"}},
           "parent": {"type": "OS::Neutron::Port", "depends_on": ["sub"],
                      "properties": {"network": {"get_resource": "net"}}}}
    for i in (1, 2, 3):
        res[f"p{i}"] = {"type": "OS::Neutron::Port", "depends_on": ["sub"],
                        "properties": {"network": {"get_resource": "net"}}}
    res["trunk"] = {"type": "OS::Neutron::Trunk", "properties": {
        "name": trunk_name, "port": {"get_resource": "parent"},
        "sub_ports": [{"port": {"get_resource": p}, "segmentation_type": "vlan",
                       "segmentation_id": vid} for p, vid in subs]}}
    return tmpl(res, outputs={"status": {"value": {"get_attr": ["trunk", "status"]}},
                              "port_id": {"value": {"get_attr": ["trunk", "port_id"]}}})


def _sub_ports(api, heat, trunk_id, ports):
    r = api.get(f"/networking/v2.0/trunks/{trunk_id}", token=heat.token)
    assert r.status_code == 200, r.text
    names = {v: k for k, v in ports.items()}
    return sorted((names[s["port_id"]], s["segmentation_id"])
                  for s in r.json()["trunk"]["sub_ports"])


def test_trunk_sub_ports_follow_updates(api, demo):
    name = unique("trunk")
    stack = demo.make(name, _trunk_template(name, [("p1", 101), ("p2", 102)], "t1"))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    res = demo.resources(name)
    ports = {k: res[k]["physical_resource_id"] for k in ("parent", "p1", "p2", "p3")}
    trunk_id = res["trunk"]["physical_resource_id"]
    out = demo.outputs(demo.wait(name))
    assert out["port_id"] == ports["parent"] and out["status"]
    assert _sub_ports(api, demo, trunk_id, ports) == [("p1", 101), ("p2", 102)]

    _update(demo, name, _trunk_template(name, [("p2", 102), ("p3", 103)], "t2"))
    assert demo.resources(name)["trunk"]["physical_resource_id"] == trunk_id  # in place
    assert _sub_ports(api, demo, trunk_id, ports) == [("p2", 102), ("p3", 103)]
    trunk = api.get(f"/networking/v2.0/trunks/{trunk_id}", token=demo.token).json()["trunk"]
    assert trunk["name"] == "t2"

    _delete(demo, name)
    assert api.get(f"/networking/v2.0/trunks/{trunk_id}", token=demo.token).status_code == 404


def _qos_template(name, bw, dscp, min_kbps, kpps, desc):
    return tmpl({
        "policy": {"type": "OS::Neutron::QoSPolicy", "properties": {
            "name": name, "description": desc}},
        "bw": {"type": "OS::Neutron::QoSBandwidthLimitRule", "properties": {
            "policy": {"get_resource": "policy"}, "max_bandwidth": bw,
            "max_burst_bandwidth": bw // 10}},
        "dscp": {"type": "OS::Neutron::QoSDscpMarkingRule", "properties": {
            "policy": {"get_resource": "policy"}, "dscp_mark": dscp}},
        "minbw": {"type": "OS::Neutron::QoSMinimumBandwidthRule", "properties": {
            "policy": {"get_resource": "policy"}, "min_kbps": min_kbps}},
        "mpr": {"type": "OS::Neutron::QoSMinimumPacketRateRule", "properties": {
            "policy": {"get_resource": "policy"}, "min_kpps": kpps, "direction": "any"}},
    }, outputs={"rules": {"value": {"get_attr": ["policy", "rules"]}}})


def _rules(api, heat, policy_id):
    r = api.get(f"/networking/v2.0/qos/policies/{policy_id}", token=heat.token)
    assert r.status_code == 200, r.text
    policy = r.json()["policy"]
    return policy["description"], {x["type"]: x for x in policy["rules"]}


def test_qos_policy_and_rules_created_updated_deleted(api, demo, admin):
    name = unique("qos")
    stack = admin.make(name, _qos_template(name, 1000, 16, 500, 200, "first"))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack.get("stack_status_reason")
    res = admin.resources(name)
    policy_id = res["policy"]["physical_resource_id"]
    ids = {k: res[k]["physical_resource_id"] for k in ("bw", "dscp", "minbw", "mpr")}
    desc, rules = _rules(api, admin, policy_id)
    assert desc == "first"
    assert rules["bandwidth_limit"]["max_kbps"] == 1000
    assert rules["bandwidth_limit"]["max_burst_kbps"] == 100
    assert rules["dscp_marking"]["dscp_mark"] == 16
    assert rules["minimum_bandwidth"]["min_kbps"] == 500
    assert rules["minimum_packet_rate"]["min_kpps"] == 200
    assert rules["minimum_packet_rate"]["direction"] == "any"
    assert len(admin.outputs(admin.wait(name))["rules"]) == 4

    _update(admin, name, _qos_template(name, 2000, 26, 700, 300, "second"))
    res = admin.resources(name)
    assert res["policy"]["physical_resource_id"] == policy_id
    assert {k: res[k]["physical_resource_id"] for k in ids} == ids  # in place
    desc, rules = _rules(api, admin, policy_id)
    assert desc == "second"
    assert rules["bandwidth_limit"]["max_kbps"] == 2000
    assert rules["dscp_marking"]["dscp_mark"] == 26
    assert rules["minimum_bandwidth"]["min_kbps"] == 700
    assert rules["minimum_packet_rate"]["min_kpps"] == 300

    _delete(admin, name)
    r = api.get(f"/networking/v2.0/qos/policies/{policy_id}", token=admin.token)
    assert r.status_code == 404
    # Neutron's default policy: creating a QoS policy is for admins.
    r = demo.make(unique("qos"), _qos_template(name, 1000, 16, 500, 200, "x"))
    assert r["stack_status"] == "CREATE_FAILED"
    assert "rule:create_policy is disallowed" in r["stack_status_reason"]
