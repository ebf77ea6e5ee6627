"""Orchestration with networks and servers (in-process, SQLite): the rich `networks`
property — ports the server owns, fixed IPs, floating IPs, security groups — resize and
rebuild in place, replacement keeping the fixed IP (and its rollback), networks updates,
a failure mid-create rolled back, and nothing left behind after delete."""

from __future__ import annotations

import copy

import pytest

from tests.api.test_orchestration import Heat, heat_error, unique

STORY = {
    "heat_template_version": "2018-08-31",
    "parameters": {"image": {"type": "string", "default": "cirros"},
                   "flavor": {"type": "string", "default": "m1.tiny"},
                   "public_net": {"type": "string", "default": "public"}},
    "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   # the web server's fixed_ip (.10) lies outside the pool, so no address
                   # chosen at random for another port can take it first
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.10.0.0/24",
                                  "allocation_pools": [{"start": "10.10.0.20",
                                                        "end": "10.10.0.254"}]}},
        "router": {"type": "OS::Neutron::Router", "properties": {
            "external_gateway_info": {"network": {"get_param": "public_net"}}}},
        "iface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet"}}},
        "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {
            "rules": [{"protocol": "tcp", "port_range_min": 22, "port_range_max": 22}]}},
        "fip": {"type": "OS::Neutron::FloatingIP",
                "properties": {"floating_network": {"get_param": "public_net"}}},
        "web": {"type": "OS::Nova::Server", "depends_on": "iface", "properties": {
            "image": {"get_param": "image"}, "flavor": {"get_param": "flavor"},
            "security_groups": [{"get_resource": "sg"}],
            "networks": [{"subnet": {"get_resource": "subnet"}, "fixed_ip": "10.10.0.10",
                          "floating_ip": {"get_resource": "fip"}}]}},
        "db": {"type": "OS::Nova::Server", "properties": {
            "image": {"get_param": "image"}, "flavor": {"get_param": "flavor"},
            "networks": [{"network": {"get_resource": "net"},
                          "port_extra_properties": {"port_security_enabled": False}}]}},
    },
    "outputs": {
        "web_ip": {"value": {"get_attr": ["web", "networks", {"get_resource": "net"}, 0]}},
        "url": {"value": {"str_replace": {"template": "http://HOST:80/", "params": {
            "HOST": {"get_attr": ["fip", "floating_ip_address"]}}}}},
    },
}


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


@pytest.fixture(scope="module")
def images(api):
    """A second active image (for rebuilds) and a flavor no host can take."""
    admin = api.token("admin")
    r = api.post("/image/v2/images", token=admin, json={
        "name": "cirros2", "disk_format": "qcow2", "container_format": "bare",
        "visibility": "public"})
    image = r.json()
    api.put(f"/image/v2/images/{image['id']}/file", token=admin, content=b"x" * 64,
            headers={"content-type": "application/octet-stream"})
    r = api.post("/compute/v2.1/flavors", token=admin, json={"flavor": {
        "name": "huge", "ram": 10 ** 8, "vcpus": 1, "disk": 1}})
    assert r.status_code == 200, r.text
    return {"cirros2": image["id"]}


def server(api, heat, server_id):
    r = api.get(f"/compute/v2.1/servers/{server_id}", token=heat.token,
                headers={"OpenStack-API-Version": "compute 2.47"})
    return r.json()["server"] if r.status_code == 200 else None


def ports_of(api, heat, **params):
    return api.get("/networking/v2.0/ports", token=heat.token, params=params).json()["ports"]


def leftovers(api, heat):
    ports = [p for p in ports_of(api, heat) if not p["device_owner"].startswith("network:")]
    servers = api.get("/compute/v2.1/servers", token=heat.token).json()["servers"]
    fips = api.get("/networking/v2.0/floatingips", token=heat.token).json()["floatingips"]
    nets = api.get("/networking/v2.0/networks", token=heat.token,
                   params={"project_id": heat.project}).json()["networks"]
    return {"ports": ports, "servers": servers, "fips": fips, "networks": nets}


def update(heat, url, template, **body):
    r = heat.req("PUT", url, json={"template": template, **body})
    assert r.status_code == 202, r.text
    return heat.wait(url)


def test_story_create_update_replace_and_delete(api, heat, images):
    name = unique("story")
    stack = heat.make(name, STORY)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    url = heat.url(name)
    out = heat.outputs(stack)
    assert out["web_ip"] == "10.10.0.10"
    res = heat.resources(name)
    web_id, db_id = res["web"]["physical_resource_id"], res["db"]["physical_resource_id"]
    # the web server's port: made by Heat, named and tagged, one fixed IP, its groups
    (port,) = ports_of(api, heat, device_id=web_id)
    assert port["name"] == "web-port-0"
    assert "heat-resource:web" in port["tags"]
    assert [ip["ip_address"] for ip in port["fixed_ips"]] == ["10.10.0.10"]
    assert port["security_groups"] == [res["sg"]["physical_resource_id"]]
    fip = api.get(f"/networking/v2.0/floatingips/{res['fip']['physical_resource_id']}",
                  token=heat.token).json()["floatingip"]
    assert fip["port_id"] == port["id"] and fip["fixed_ip_address"] == "10.10.0.10"
    assert out["url"] == f"http://{fip['floating_ip_address']}:80/"
    (db_port,) = ports_of(api, heat, device_id=db_id)
    assert db_port["port_security_enabled"] is False and db_port["name"] == "db-port-0"
    assert server(api, heat, web_id)["status"] == "ACTIVE"
    shown = heat.req("GET", url + "/resources/web").json()["resource"]["attributes"]
    assert shown["first_address"] in ("10.10.0.10", fip["floating_ip_address"])
    # as Nova's addresses, under the network's name: fixed, then floating (no port)
    (fixed, floating), = shown["addresses"].values()
    assert (fixed["addr"], fixed["port"]) == ("10.10.0.10", port["id"])
    assert (floating["addr"], floating["port"]) == (fip["floating_ip_address"], None)
    assert shown["networks"][res["net"]["physical_resource_id"]] == [
        "10.10.0.10", fip["floating_ip_address"]]
    # 1. a new flavor: resized in place
    t = copy.deepcopy(STORY)
    t["resources"]["web"]["properties"]["flavor"] = "m1.small"
    r = heat.req("PUT", url + "/preview", json={"template": t})
    changes = {k: [c["resource_name"] for c in v]
               for k, v in r.json()["resource_changes"].items()}
    assert changes["updated"] == ["web"] and changes["replaced"] == []
    stack = update(heat, url, t)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert heat.resources(name)["web"]["physical_resource_id"] == web_id
    assert server(api, heat, web_id)["flavor"]["original_name"] == "m1.small"
    # 2. a new image: rebuilt in place (image_update_policy REBUILD by default)
    t["resources"]["web"]["properties"]["image"] = "cirros2"
    stack = update(heat, url, t)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert heat.resources(name)["web"]["physical_resource_id"] == web_id
    assert server(api, heat, web_id)["image"]["id"] == images["cirros2"]
    # 3. the image again under REPLACE: a new server with the same fixed IP
    t["resources"]["web"]["properties"]["image"] = "cirros"
    t["resources"]["web"]["properties"]["image_update_policy"] = "REPLACE"
    r = heat.req("PUT", url + "/preview", json={"template": t})
    assert [c["resource_name"] for c in r.json()["resource_changes"]["replaced"]] == ["web"]
    stack = update(heat, url, t)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    new_web = heat.resources(name)["web"]["physical_resource_id"]
    assert new_web != web_id and server(api, heat, web_id) is None
    (port,) = ports_of(api, heat, device_id=new_web)
    assert [ip["ip_address"] for ip in port["fixed_ips"]] == ["10.10.0.10"]
    fip = api.get(f"/networking/v2.0/floatingips/{res['fip']['physical_resource_id']}",
                  token=heat.token).json()["floatingip"]
    assert fip["port_id"] == port["id"]
    assert heat.outputs(stack)["web_ip"] == "10.10.0.10"
    # 4. db swaps its network for the subnet its port is on: the same interface (upstream
    # matches the new entry against the server's interfaces), same server, same port
    t["resources"]["db"]["properties"]["networks"] = [{"subnet": {"get_resource": "subnet"}}]
    stack = update(heat, url, t)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert heat.resources(name)["db"]["physical_resource_id"] == db_id
    (new_db_port,) = ports_of(api, heat, device_id=db_id)
    assert new_db_port["id"] == db_port["id"] and new_db_port["name"] == "db-port-0"
    assert new_db_port["fixed_ips"] == db_port["fixed_ips"]
    # an unchanged update touches nothing
    before = heat.resources(name)
    assert update(heat, url, t)["stack_status"] == "UPDATE_COMPLETE"
    assert heat.resources(name) == before
    # delete: no server, port, floating IP or network left
    assert heat.req("DELETE", url).status_code == 204
    heat.wait(url)
    left = leftovers(api, heat)
    assert left == {"ports": [], "servers": [], "fips": [], "networks": []}, left


def test_failed_replacement_rolls_back_and_gives_the_ip_back(api, heat, images):
    name = unique("rb")
    t = copy.deepcopy(STORY)
    del t["resources"]["db"]
    heat.make(name, t, disable_rollback=False)
    url = heat.url(name)
    web_id = heat.resources(name)["web"]["physical_resource_id"]
    t["resources"]["web"]["properties"].update(flavor="huge", flavor_update_policy="REPLACE")
    stack = update(heat, url, t)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE", stack["stack_status_reason"]
    events = [(e["resource_name"], e["resource_status"]) for e in heat.events(name)]
    assert ("web", "CREATE_FAILED") in events and (name, "UPDATE_FAILED") in events
    assert heat.resources(name)["web"]["physical_resource_id"] == web_id
    (port,) = ports_of(api, heat, device_id=web_id)
    assert [ip["ip_address"] for ip in port["fixed_ips"]] == ["10.10.0.10"]
    servers = api.get("/compute/v2.1/servers", token=heat.token).json()["servers"]
    assert [s["id"] for s in servers] == [web_id]
    assert heat.req("DELETE", url).status_code == 204
    heat.wait(url)
    assert leftovers(api, heat) == {"ports": [], "servers": [], "fips": [], "networks": []}


def test_exhausted_subnet_mid_create_rolls_back_to_nothing(api, heat):
    t = {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.20.0.0/24",
            "allocation_pools": [{"start": "10.20.0.10", "end": "10.20.0.11"}]}},
        **{f"vm{i}": {"type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny",
            "networks": [{"subnet": {"get_resource": "subnet"}}]}} for i in range(3)}}}
    name = unique("full")
    stack = heat.make(name, t, disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    events = [(e["resource_name"], e["resource_status"]) for e in heat.events(name)]
    assert (name, "CREATE_FAILED") in events and (name, "ROLLBACK_COMPLETE") in events
    failed = [e for e in heat.events(name) if e["resource_status"] == "CREATE_FAILED"
              and e["resource_name"] != name]
    assert "IpAddressGenerationFailure" in failed[0]["resource_status_reason"]
    assert heat.resources(name) == {}
    assert leftovers(api, heat) == {"ports": [], "servers": [], "fips": [], "networks": []}


@pytest.mark.parametrize("entry,fragment", [
    ({"network": "public", "subnet": "{subnet}"}, "does not belongs to network public"),
    ({"port": "{port}", "fixed_ip": "10.0.0.5"},
     "Cannot define the following properties at the same time: fixed_ip, port."),
    ({"network": "{net}", "floating_ip": "x"}, 'Property "floating_ip" is not supported if '
     'only "network" is specified'),
    ({"fixed_ip": "10.0.0.5"}, 'One of the properties "network", "port", '
     '"allocate_network" or "subnet" should be set'),
    ({"allocate_network": "auto", "network": "{net}"}, 'Can not specify "allocate_network"'),
    ({"network": "no-such-net"}, "Error validating value 'no-such-net'"),
])
def test_rich_network_validation_is_400_with_nothing_created(api, heat, entry, fragment):
    net = api.post("/networking/v2.0/networks", token=heat.token,
                   json={"network": {"name": unique("vn")}}).json()["network"]
    subnet = api.post("/networking/v2.0/subnets", token=heat.token, json={"subnet": {
        "network_id": net["id"], "cidr": "10.30.0.0/24", "ip_version": 4}}).json()["subnet"]
    port = api.post("/networking/v2.0/ports", token=heat.token,
                    json={"port": {"network_id": net["id"]}}).json()["port"]
    filled = {k: v.format(net=net["id"], subnet=subnet["id"], port=port["id"])
              for k, v in entry.items()}
    t = {"heat_template_version": "2018-08-31", "resources": {"vm": {
        "type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny", "networks": [filled]}}}}
    name = unique("val")
    message = heat_error(heat.create(name, t), 400)
    assert fragment in message, message
    assert heat.req("GET", "/stacks", params={"name": name}).json()["stacks"] == []
    assert api.get("/compute/v2.1/servers", token=heat.token).json()["servers"] == []
    api.delete(f"/networking/v2.0/ports/{port['id']}", token=heat.token)
    api.delete(f"/networking/v2.0/networks/{net['id']}", token=heat.token)


def test_user_port_and_allocate_network(api, heat):
    net = api.post("/networking/v2.0/networks", token=heat.token,
                   json={"network": {"name": unique("un")}}).json()["network"]
    api.post("/networking/v2.0/subnets", token=heat.token, json={"subnet": {
        "network_id": net["id"], "cidr": "10.40.0.0/24", "ip_version": 4}})
    port = api.post("/networking/v2.0/ports", token=heat.token,
                    json={"port": {"network_id": net["id"]}}).json()["port"]
    t = {"heat_template_version": "2018-08-31", "resources": {
        "vm": {"type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny", "networks": [{"port": port["id"]}]}}}}
    name = unique("up")
    stack = heat.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    vm = heat.resources(name)["vm"]["physical_resource_id"]
    assert ports_of(api, heat, id=port["id"])[0]["device_id"] == vm
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    heat.wait(url)
    # the user's port survives, unbound
    (kept,) = ports_of(api, heat, id=port["id"])
    assert kept["device_id"] == ""
    api.delete(f"/networking/v2.0/ports/{port['id']}", token=heat.token)
    api.delete(f"/networking/v2.0/networks/{net['id']}", token=heat.token)


def test_metadata_and_tags_update_in_place(api, heat):
    net = api.post("/networking/v2.0/networks", token=heat.token,
                   json={"network": {"name": unique("mt")}}).json()["network"]
    api.post("/networking/v2.0/subnets", token=heat.token, json={"subnet": {
        "network_id": net["id"], "cidr": "10.41.0.0/24", "ip_version": 4}})
    props = {"image": "cirros", "flavor": "m1.tiny", "networks": [{"network": net["id"]}],
             "metadata": {"role": "web", "n": 1}, "tags": ["a"]}
    t = {"heat_template_version": "2018-08-31", "resources": {
        "vm": {"type": "OS::Nova::Server", "properties": props}}}
    name = unique("mt")
    stack = heat.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    vm = heat.resources(name)["vm"]["physical_resource_id"]
    shown = server(api, heat, vm)
    assert shown["metadata"] == {"role": "web", "n": "1"} and shown["tags"] == ["a"]
    # a changed metadata map replaces the server's (a key dropped is removed) and the
    # tags follow, on the same server
    props.update(metadata={"role": "db"}, tags=["b", "c"])
    stack = update(heat, heat.url(name), t)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert heat.resources(name)["vm"]["physical_resource_id"] == vm
    shown = server(api, heat, vm)
    assert shown["metadata"] == {"role": "db"} and shown["tags"] == ["b", "c"]
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    heat.wait(url)
    api.delete(f"/networking/v2.0/networks/{net['id']}", token=heat.token)


def test_scheduler_hints_reach_compute(api):
    """`scheduler_hints` are handed to Nova as the body's os:scheduler_hints: the `group`
    hint places the server in its server group, and compute shows the hints at 2.100."""
    from tests.api.test_orchestration import Heat, unique

    heat = Heat(api)
    name = unique("hints")
    group_id = api.post("/compute/v2.1/os-server-groups", user="demo", json={
        "server_group": {"name": name, "policies": ["affinity"]}}).json()["server_group"]["id"]
    stack = heat.make(name, {
        "heat_template_version": "2018-08-31",
        "resources": {
            "server": {"type": "OS::Nova::Server", "properties": {
                "image": "cirros", "flavor": "m1.tiny", "networks": [],
                "scheduler_hints": {"group": group_id, "rack": 2}}}}})
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    server_id = heat.resources(name)["server"]["physical_resource_id"]
    shown = api.get(f"/compute/v2.1/servers/{server_id}", user="demo",
                    headers={"OpenStack-API-Version": "compute 2.100"}).json()["server"]
    assert shown["scheduler_hints"] == {"group": [group_id], "rack": ["2"]}
    group = api.get(f"/compute/v2.1/os-server-groups/{group_id}", user="demo").json()
    assert group["server_group"]["members"] == [server_id]


def test_server_group_resource(api):
    """OS::Nova::ServerGroup: a Nova server group of the stack's project (one policy; an
    unknown one is a 400 before anything is made), its servers joined by the group hint,
    deleted with the stack."""
    from tests.api.test_orchestration import Heat, heat_error, unique

    heat = Heat(api)
    name = unique("sg")
    stack = heat.make(name, {
        "heat_template_version": "2018-08-31",
        "resources": {
            "group": {"type": "OS::Nova::ServerGroup",
                      "properties": {"policies": ["anti-affinity"],
                                     "rules": {"max_server_per_host": 1}}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "image": "cirros", "flavor": "m1.tiny", "networks": [],
                "scheduler_hints": {"group": {"get_resource": "group"}}}}},
        "outputs": {"members": {"value": {"get_attr": ["group", "members"]}}}})
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    res = heat.resources(name)
    server_id, group_id = (res[k]["physical_resource_id"] for k in ("server", "group"))
    assert heat.outputs(stack) == {"members": [server_id]}
    group = api.get(f"/compute/v2.1/os-server-groups/{group_id}", user="demo",
                    headers={"OpenStack-API-Version": "compute 2.64"}).json()["server_group"]
    assert group["policy"] == "anti-affinity" and group["members"] == [server_id]
    assert group["rules"] == {"max_server_per_host": 1}
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"
    assert api.get(f"/compute/v2.1/os-server-groups/{group_id}").status_code == 404
    bad = heat.create(unique("sg"), {"heat_template_version": "2018-08-31", "resources": {
        "group": {"type": "OS::Nova::ServerGroup", "properties": {"policies": ["nope"]}}}})
    assert "nope" in heat_error(bad, 400)
