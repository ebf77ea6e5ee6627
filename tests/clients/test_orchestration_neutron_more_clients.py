"""OS::Neutron::ExtraRouteSet, Trunk and QoSPolicy with its rules through openstacksdk on
every backend, and with `openstack stack ...` on SQLite: a stack made, updated in place
and deleted, checked with the network API."""

from __future__ import annotations

import json
import uuid

import yaml

from tests.conftest import sqlite_only


def _template(routes, subs, max_kbps):
    res = {
        "net": {"type": "OS::Neutron::Net"},
        "sub": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.79.0.0/24"}},
        "router": {"type": "OS::Neutron::Router"},
        "iface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "sub"}}},
        "routes": {"type": "OS::Neutron::ExtraRouteSet", "properties": {
            "router": {"get_resource": "router"},
            "routes": [{"destination": d, "nexthop": n} for d, n in routes]}},
        "trunk": {"type": "OS::Neutron::Trunk", "properties": {
            "port": {"get_resource": "parent"},
            "sub_ports": [{"port": {"get_resource": p}, "segmentation_type": "vlan",
                           "segmentation_id": v} for p, v in subs]}},
        "policy": {"type": "OS::Neutron::QoSPolicy", "properties": {"shared": True}},
        "bw": {"type": "OS::Neutron::QoSBandwidthLimitRule", "properties": {
            "policy": {"get_resource": "policy"}, "max_bandwidth": max_kbps}},
        "dscp": {"type": "OS::Neutron::QoSDscpMarkingRule", "properties": {
            "policy": {"get_resource": "policy"}, "dscp_mark": 26}},
        "minbw": {"type": "OS::Neutron::QoSMinimumBandwidthRule", "properties": {
            "policy": {"get_resource": "policy"}, "min_kbps": max_kbps // 2}},
        "mpr": {"type": "OS::Neutron::QoSMinimumPacketRateRule", "properties": {
            "policy": {"get_resource": "policy"}, "min_kpps": 100}},
    }
    for p in ("parent", "p1", "p2"):
        res[p] = {"type": "OS::Neutron::Port", "depends_on": ["sub"],
                  "properties": {"network": {"get_resource": "net"}}}
    return {"heat_template_version": "2018-08-31", "resources": res}


def test_sdk_route_sets_trunks_and_qos_stacks(cloud):
    conn = cloud.sdk()  # QoS policies are admin-only by Neutron's default policy
    heat, network = conn.orchestration, conn.network
    stack = heat.create_stack(name=f"nm-{uuid.uuid4().hex[:6]}", template=_template(
        [("10.5.0.0/16", "10.79.0.5")], [("p1", 201)], 1000))
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="CREATE_COMPLETE",
                                 failures=["CREATE_FAILED"], interval=0.1, wait=120)
    ids = {r.name: r.physical_resource_id for r in heat.resources(stack)}
    router = network.get_router(ids["router"])
    assert [(r["destination"], r["nexthop"]) for r in router.routes] == [
        ("10.5.0.0/16", "10.79.0.5")]
    trunk = network.get_trunk(ids["trunk"])
    assert trunk.port_id == ids["parent"]
    assert [(s["port_id"], s["segmentation_id"]) for s in trunk.sub_ports] == [
        (ids["p1"], 201)]
    assert network.get_qos_bandwidth_limit_rule(ids["bw"], ids["policy"]).max_kbps == 1000
    assert network.get_qos_dscp_marking_rule(ids["dscp"], ids["policy"]).dscp_mark == 26
    assert network.get_qos_minimum_bandwidth_rule(ids["minbw"], ids["policy"]).min_kbps == 500

    heat.update_stack(stack, template=_template(
        [("10.6.0.0/16", "10.79.0.6")], [("p2", 202)], 3000))
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="UPDATE_COMPLETE",
                                 failures=["UPDATE_FAILED"], interval=0.1, wait=120)
    assert {r.name: r.physical_resource_id for r in heat.resources(stack)} == ids
    router = network.get_router(ids["router"])
    assert [(r["destination"], r["nexthop"]) for r in router.routes] == [
        ("10.6.0.0/16", "10.79.0.6")]
    trunk = network.get_trunk(ids["trunk"])
    assert [(s["port_id"], s["segmentation_id"]) for s in trunk.sub_ports] == [
        (ids["p2"], 202)]
    assert network.get_qos_bandwidth_limit_rule(ids["bw"], ids["policy"]).max_kbps == 3000

    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)
    assert network.find_trunk(ids["trunk"]) is None
    assert network.find_qos_policy(ids["policy"]) is None
    assert network.find_router(ids["router"]) is None


@sqlite_only
def test_cli_route_sets_trunks_and_qos_stacks(cloud, tmp_path):
    def cli(*args):
        return cloud.cli(*args)

    def waited(*args):
        """`--wait` prints the events it polled, then the JSON document."""
        out = cloud.cli(*args, parse=False)
        return json.loads(out[out.index("\n{") + 1:] if not out.startswith("{") else out)

    name = f"nmcli-{uuid.uuid4().hex[:6]}"
    first, second = tmp_path / "t1.yaml", tmp_path / "t2.yaml"
    first.write_text(yaml.safe_dump(_template([("10.5.0.0/16", "10.79.0.5")],
                                              [("p1", 301)], 1000)))
    second.write_text(yaml.safe_dump(_template([("10.6.0.0/16", "10.79.0.6")],
                                               [("p1", 301), ("p2", 302)], 2000)))
    stack = waited("stack", "create", "--wait", "-t", str(first), "-f", "json", name)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    types = {r["resource_name"]: r["resource_type"]
             for r in cli("stack", "resource", "list", "-f", "json", name)}
    assert types["routes"] == "OS::Neutron::ExtraRouteSet"
    assert types["trunk"] == "OS::Neutron::Trunk"
    assert types["mpr"] == "OS::Neutron::QoSMinimumPacketRateRule"
    ids = {r["resource_name"]: r["physical_resource_id"]
           for r in cli("stack", "resource", "list", "-f", "json", name)}

    stack = waited("stack", "update", "--wait", "-t", str(second), "-f", "json", name)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    router = cli("router", "show", "-f", "json", ids["router"])
    assert [(r["destination"], r["nexthop"]) for r in router["routes"]] == [
        ("10.6.0.0/16", "10.79.0.6")]
    trunk = cli("network", "trunk", "show", "-f", "json", ids["trunk"])
    assert sorted(s["segmentation_id"] for s in trunk["sub_ports"]) == [301, 302]
    rule = cli("network", "qos", "rule", "show", "-f", "json", ids["policy"], ids["bw"])
    assert rule["max_kbps"] == 2000

    cli("stack", "delete", "--yes", "--wait", name)
    assert cloud.cli("network", "qos", "policy", "show", ids["policy"], check=False
                     ).returncode != 0
