"""The remaining resource types: OS::Nova::KeyPair and Flavor, OS::Neutron::ProviderNet,
Segment (a routed network from a template), SecurityGroupRule and FloatingIPAssociation —
created, updated in place or replaced, deleted leaving nothing behind."""

from __future__ import annotations

import pytest

from tests.api.test_orchestration import Heat, heat_error, tmpl, unique


@pytest.fixture(scope="module")
def demo(api):
    return Heat(api)


@pytest.fixture(scope="module")
def admin(api):
    return Heat(api, user="admin")


def _delete(heat, name):
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    stack = heat.wait(url)
    assert stack["stack_status"] == "DELETE_COMPLETE", stack


def test_keypair_generated_saved_and_deleted(api, demo):
    name = unique("kp")
    stack = demo.make(name, tmpl({"kp": {"type": "OS::Nova::KeyPair", "properties": {
        "name": name, "save_private_key": True}}}, outputs={
        "private": {"value": {"get_attr": ["kp", "private_key"]}},
        "public": {"value": {"get_attr": ["kp", "public_key"]}}}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    out = demo.outputs(demo.wait(name))
    assert out["private"].startswith("-----BEGIN") and out["public"]
    r = api.get(f"/compute/v2.1/os-keypairs/{name}", token=demo.token)
    assert r.status_code == 200
    assert demo.resources(name)["kp"]["physical_resource_id"] == name
    _delete(demo, name)
    assert api.get(f"/compute/v2.1/os-keypairs/{name}", token=demo.token).status_code == 404


def test_keypair_bad_name_is_a_failure_with_nothing_left(api, demo):
    name = unique("kpbad")
    demo.create(name, tmpl({"kp": {"type": "OS::Nova::KeyPair",
                                   "properties": {"name": "bad/name"}}}),
                disable_rollback=True)
    stack = demo.wait(name)
    assert stack["stack_status"] == "CREATE_FAILED", stack
    assert "bad/name" in stack["stack_status_reason"] or "Keypair" in stack["stack_status_reason"]


def test_flavor_is_admin_only_and_updates_extra_specs_in_place(api, demo, admin):
    name = unique("fl")
    t = tmpl({"f": {"type": "OS::Nova::Flavor", "properties": {
        "name": name, "ram": 256, "vcpus": 1, "extra_specs": {"hw:cpu_policy": "shared"}}}})
    demo.create(name, t, disable_rollback=True)
    assert demo.wait(name)["stack_status"] == "CREATE_FAILED"  # Nova's policy: admin only

    stack = admin.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    flavor_id = admin.resources(name)["f"]["physical_resource_id"]
    t2 = tmpl({"f": {"type": "OS::Nova::Flavor", "properties": {
        "name": name, "ram": 256, "vcpus": 1, "extra_specs": {"hw:mem_page_size": "large"}}}})
    url = admin.url(name)
    assert admin.req("PUT", url, json={"template": t2}).status_code == 202
    assert admin.wait(url)["stack_status"] == "UPDATE_COMPLETE"
    assert admin.resources(name)["f"]["physical_resource_id"] == flavor_id  # in place
    specs = api.get(f"/compute/v2.1/flavors/{flavor_id}/os-extra_specs").json()["extra_specs"]
    assert specs == {"hw:mem_page_size": "large"}
    _delete(admin, name)
    assert api.get(f"/compute/v2.1/flavors/{flavor_id}").status_code == 404


def test_provider_net_and_segments_make_a_routed_network(api, admin):
    name = unique("routed")
    t = tmpl({
        "net": {"type": "OS::Neutron::ProviderNet", "properties": {
            "name": name, "network_type": "vlan", "physical_network": "physnet1",
            "shared": False}},
        "seg2": {"type": "OS::Neutron::Segment", "properties": {
            "network": {"get_resource": "net"}, "network_type": "vlan",
            "physical_network": "physnet2", "name": "rack2"}},
        "sub2": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "segment": {"get_resource": "seg2"},
            "cidr": "10.93.2.0/24"}},
    }, outputs={"segments": {"value": {"get_attr": ["net", "segments"]}},
                "vlan": {"value": {"get_attr": ["seg2", "segmentation_id"]}}})
    stack = admin.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    out = admin.outputs(admin.wait(name))
    assert len(out["segments"]) == 2 and 200 <= out["vlan"] <= 299
    net_id = admin.resources(name)["net"]["physical_resource_id"]
    seg_id = admin.resources(name)["seg2"]["physical_resource_id"]
    subnet = api.get(f"/networking/v2.0/subnets?network_id={net_id}").json()["subnets"][0]
    assert subnet["segment_id"] == seg_id
    _delete(admin, name)
    assert api.get(f"/networking/v2.0/networks/{net_id}").status_code == 404
    assert api.get(f"/networking/v2.0/segments/{seg_id}").status_code == 404


def test_provider_net_spec_checks_are_400(admin):
    name = unique("badnet")
    r = admin.create(name, tmpl({"net": {"type": "OS::Neutron::ProviderNet", "properties": {
        "network_type": "vlan"}}}))
    assert "physical_network is required" in heat_error(r, 400)
    r = admin.create(name, tmpl({"net": {"type": "OS::Neutron::ProviderNet", "properties": {
        "network_type": "flat", "physical_network": "physnet1", "segmentation_id": "5"}}}))
    assert "segmentation_id is prohibited" in heat_error(r, 400)
    assert admin.req("GET", f"/stacks/{name}").status_code == 404


def test_security_group_rules_and_floating_ip_association(api, demo):
    name = unique("sgfip")
    t = tmpl({
        "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"rules": []}},
        "ssh": {"type": "OS::Neutron::SecurityGroupRule", "properties": {
            "security_group": {"get_resource": "sg"}, "protocol": "tcp",
            "port_range_min": 22, "port_range_max": 22, "remote_ip_prefix": "0.0.0.0/0"}},
        "net": {"type": "OS::Neutron::Net"},
        "sub": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.94.0.0/24"}},
        "router": {"type": "OS::Neutron::Router", "properties": {
            "external_gateway_info": {"network": "public"}}},
        "ri": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "sub"}}},
        "port": {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "net"},
            "fixed_ips": [{"subnet": {"get_resource": "sub"}}]}},
        "fip": {"type": "OS::Neutron::FloatingIP", "properties": {
            "floating_network": "public"}},
        "assoc": {"type": "OS::Neutron::FloatingIPAssociation", "properties": {
            "floatingip_id": {"get_resource": "fip"}, "port_id": {"get_resource": "port"}}},
    })
    stack = demo.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    res = demo.resources(name)
    rule = api.get(f"/networking/v2.0/security-group-rules/{res['ssh']['physical_resource_id']}",
                   token=demo.token).json()["security_group_rule"]
    assert (rule["port_range_min"], rule["protocol"]) == (22, "tcp")
    fip_id, port_id = res["fip"]["physical_resource_id"], res["port"]["physical_resource_id"]
    fip = api.get(f"/networking/v2.0/floatingips/{fip_id}", token=demo.token).json()["floatingip"]
    assert fip["port_id"] == port_id

    # Dropping the association (an update) disassociates and keeps the floating IP.
    t2 = {**t, "resources": {k: v for k, v in t["resources"].items() if k != "assoc"}}
    url = demo.url(name)
    assert demo.req("PUT", url, json={"template": t2}).status_code == 202
    assert demo.wait(url)["stack_status"] == "UPDATE_COMPLETE"
    fip = api.get(f"/networking/v2.0/floatingips/{fip_id}", token=demo.token).json()["floatingip"]
    assert fip["port_id"] is None
    _delete(demo, name)
    assert api.get(f"/networking/v2.0/floatingips/{fip_id}", token=demo.token).status_code == 404
    assert api.get(f"/networking/v2.0/security-group-rules/{rule['id']}",
                   token=demo.token).status_code == 404


def test_rule_property_conflict_is_400(demo):
    r = demo.create(unique("rule"), tmpl({
        "sg": {"type": "OS::Neutron::SecurityGroup"},
        "r": {"type": "OS::Neutron::SecurityGroupRule", "properties": {
            "security_group": {"get_resource": "sg"}, "remote_group": "default",
            "remote_ip_prefix": "10.0.0.0/8"}}}))
    assert "remote_group, remote_ip_prefix" in heat_error(r, 400)
