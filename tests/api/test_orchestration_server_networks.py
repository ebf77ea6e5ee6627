"""Server network updates keep what upstream keeps (issue 20 part 1; the behaviours of
upstream's heat-tempest-plugin `test_nova_server_networks`, `test_create_update_neutron_port`
and `test_create_update_neutron_subnet`, in-process): the new `networks` list is matched
one to one against the server's interfaces, so a kept interface keeps its port and address;
the server's security groups are its ports'; the `addresses` and `networks` attributes;
a subnet updated to no allocation pools has none."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.api.test_orchestration import Heat, unique

NET = {"get_resource": "net"}
SUBNET = {"get_resource": "subnet"}


def template(networks: Any) -> dict[str, Any]:
    return {
        "heat_template_version": "2016-04-08",
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": "the_net"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "name": "the_subnet", "network": NET, "cidr": "11.11.11.0/24",
                "allocation_pools": [{"start": "11.11.11.2", "end": "11.11.11.9"}]}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "image": "cirros", "flavor": "m1.tiny", "networks": networks}},
        },
        "outputs": {
            **{f"port{i}": {"value": {"get_attr": ["server", "addresses", "the_net", i, "port"]}}
               for i in range(3)},
            **{f"ip{i}": {"value": {"get_attr": ["server", "addresses", "the_net", i, "addr"]}}
               for i in range(3)},
        },
    }


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def make(heat: Heat, networks: Any) -> tuple[str, dict[str, Any]]:
    name = unique()
    stack = heat.make(name, template(networks))
    assert stack["stack_status"] == "CREATE_COMPLETE", (stack["stack_status_reason"],
                                                        _scheduling(heat))
    return name, heat.outputs(stack)


def _scheduling(heat: Heat) -> Any:
    """What the cloud's servers and hosts say, for a build that found no host."""
    servers = heat.api.get("/compute/v2.1/servers/detail?all_tenants=1").json()["servers"]
    nodes = heat.api.get("/compute/v2.1/os-hypervisors/detail").json()["hypervisors"]
    return ([(s["id"], s["status"], s.get("fault")) for s in servers],
            [(n["hypervisor_hostname"], n["state"], n["status"], n["vcpus_used"],
              n["memory_mb_used"], n["local_gb_used"]) for n in nodes])


def update(heat: Heat, name: str, networks: Any) -> dict[str, Any]:
    r = heat.req("PUT", heat.url(name), json={"template": template(networks)})
    assert r.status_code == 202, r.text
    stack = heat.wait(name)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    return heat.outputs(stack)


@pytest.mark.parametrize("before,after", [
    ([{"network": NET}], [{"subnet": SUBNET}]),
    ([{"subnet": SUBNET}], [{"network": NET}]),
    ([{"network": NET}], [{"network": NET, "subnet": SUBNET}]),
    ([{"subnet": SUBNET}], [{"network": NET, "subnet": SUBNET}]),
], ids=["network-to-subnet", "subnet-to-network", "add-subnet", "add-network"])
def test_an_equivalent_entry_keeps_the_port(heat, before, after):
    name, out = make(heat, before)
    assert out["port0"] and out["ip0"].startswith("11.11.11.")
    kept = update(heat, name, after)
    assert (kept["port0"], kept["ip0"]) == (out["port0"], out["ip0"])


def test_the_same_fixed_ip_keeps_the_port(heat):
    name, out = make(heat, [{"network": NET}])
    kept = update(heat, name, [{"network": NET, "fixed_ip": out["ip0"]}])
    assert (kept["port0"], kept["ip0"]) == (out["port0"], out["ip0"])


def test_the_port_the_server_has_keeps_it_and_the_stack_deletes(heat):
    name, out = make(heat, [{"network": NET}])
    kept = update(heat, name, [{"port": out["port0"]}])  # never ends today
    assert kept["port0"] == out["port0"]
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"


def test_reordered_and_swapped_entries_keep_all_ports(heat):
    name, out = make(heat, [{"network": NET}, {"network": NET, "fixed_ip": "11.11.11.33"},
                            {"subnet": SUBNET}])
    ports = {out[f"port{i}"] for i in range(3)}
    assert len(ports) == 3
    kept = update(heat, name, [{"subnet": SUBNET}, {"network": NET},
                               {"network": NET, "subnet": SUBNET}])
    assert [kept[f"port{i}"] for i in range(3)] == [out[f"port{i}"] for i in range(3)]
    assert [kept[f"ip{i}"] for i in range(3)] == [out[f"ip{i}"] for i in range(3)]


def test_another_subnet_replaces_the_interface(api, heat):
    t = template([{"subnet": SUBNET}])
    t["resources"]["subnet_b"] = {"type": "OS::Neutron::Subnet", "properties": {
        "network": NET, "cidr": "12.12.12.0/24"}}
    name = unique()
    out = heat.outputs(heat.make(name, t))
    t["resources"]["server"]["properties"]["networks"] = [{"subnet": {"get_resource":
                                                                      "subnet_b"}}]
    assert heat.req("PUT", heat.url(name), json={"template": t}).status_code == 202
    new = heat.outputs(heat.wait(name))
    assert new["port0"] != out["port0"] and new["ip0"].startswith("12.12.12.")
    assert api.get(f"/networking/v2.0/ports/{out['port0']}", token=heat.token
                   ).status_code == 404


def test_security_groups_addresses_and_networks_attributes(api, heat):
    t = template([{"subnet": SUBNET, "fixed_ip": "11.11.11.11",
                   "floating_ip": {"get_resource": "fip"}}])
    t["resources"].update({
        "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"name": "the_sg"}},
        "router": {"type": "OS::Neutron::Router", "properties": {
            "external_gateway_info": {"network": "public"}}},
        "iface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": SUBNET}},
        "fip": {"type": "OS::Neutron::FloatingIP", "depends_on": "iface",
                "properties": {"floating_network": "public"}}})
    t["resources"]["server"]["properties"]["security_groups"] = [{"get_resource": "sg"}]
    t["outputs"] = {"networks": {"value": {"get_attr": ["server", "networks"]}},
                    "addresses": {"value": {"get_attr": ["server", "addresses"]}},
                    "fip": {"value": {"get_attr": ["fip", "floating_ip_address"]}}}
    name = unique()
    stack = heat.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    out = heat.outputs(stack)
    assert out["networks"]["the_net"] == ["11.11.11.11", out["fip"]]  # fixed, then floating
    fixed, floating = out["addresses"]["the_net"]
    server_id = heat.resources(name)["server"]["physical_resource_id"]
    (port,) = api.get(f"/networking/v2.0/ports?device_id={server_id}", token=heat.token
                      ).json()["ports"]
    assert (fixed["addr"], fixed["port"], fixed["OS-EXT-IPS:type"]) == (
        "11.11.11.11", port["id"], "fixed")
    assert fixed["network"]["id"] == port["network_id"]
    assert (floating["addr"], floating["OS-EXT-IPS:type"]) == (out["fip"], "floating")
    server = api.get(f"/compute/v2.1/servers/{server_id}", token=heat.token).json()["server"]
    assert server["security_groups"] == [{"name": "the_sg"}]


def test_a_subnet_updated_to_no_allocation_pools_has_none(api, heat):
    name, _ = make(heat, [{"network": NET}])
    t = template([{"network": NET}])
    for pools in (None, []):
        t2 = copy.deepcopy(t)
        if pools is None:
            del t2["resources"]["subnet"]["properties"]["allocation_pools"]
        else:
            t2["resources"]["subnet"]["properties"]["allocation_pools"] = pools
        assert heat.req("PUT", heat.url(name), json={"template": t}).status_code == 202
        assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
        assert heat.req("PUT", heat.url(name), json={"template": t2}).status_code == 202
        assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
        subnet_id = heat.resources(name)["subnet"]["physical_resource_id"]
        subnet = api.get(f"/networking/v2.0/subnets/{subnet_id}", token=heat.token
                         ).json()["subnet"]
        assert subnet["allocation_pools"] == []
