"""Orchestration through the real clients: openstacksdk's orchestration proxy on every
backend (create, resources, events, outputs, update in place and by replacement, preview,
rollback, delete), and the `openstack stack ...` CLI story of issue 13 on SQLite."""

from __future__ import annotations

import copy
import json
import uuid

import yaml

from tests.api.test_orchestration_servers import STORY
from tests.conftest import sqlite_only


def _story(cidr: str) -> dict:
    t = copy.deepcopy(STORY)
    t["resources"]["subnet"]["properties"]["cidr"] = cidr
    net = cidr.rsplit(".", 1)[0]
    t["resources"]["subnet"]["properties"]["allocation_pools"] = [
        {"start": f"{net}.20", "end": f"{net}.254"}]
    t["resources"]["web"]["properties"]["networks"][0]["fixed_ip"] = f"{net}.10"
    return t


def _leftovers(conn, project_id):
    ports = [p for p in conn.network.ports(project_id=project_id)
             if not (p.device_owner or "").startswith("network:")]
    return {"ports": ports, "servers": list(conn.compute.servers()),
            "fips": list(conn.network.ips(project_id=project_id)),
            "networks": list(conn.network.networks(project_id=project_id))}


def test_sdk_stack_lifecycle(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    heat = conn.orchestration
    template = _story("10.50.0.0/24")
    name = f"sdk-{uuid.uuid4().hex[:6]}"
    stack = heat.create_stack(name=name, template=template, disable_rollback=True)
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=120)
    found = heat.find_stack(name)
    assert found.id == stack.id
    stack = heat.get_stack(stack.id)
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["web_ip"] == "10.50.0.10"
    resources = {r.name: r for r in heat.resources(stack)}
    assert {r.status for r in resources.values()} == {"CREATE_COMPLETE"}
    assert len(resources) == 8
    web = resources["web"].physical_resource_id
    port = next(conn.network.ports(device_id=web))
    assert [ip["ip_address"] for ip in port.fixed_ips] == ["10.50.0.10"]
    fip = conn.network.get_ip(resources["fip"].physical_resource_id)
    assert fip.port_id == port.id
    # resize in place, then replace keeping the fixed IP
    template["resources"]["web"]["properties"]["flavor"] = "m1.small"
    heat.update_stack(stack, template=template)
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="UPDATE_COMPLETE",
                                 failures=["UPDATE_FAILED"], interval=0.1, wait=120)
    assert conn.compute.get_server(web).flavor.original_name == "m1.small"
    template["resources"]["web"]["properties"]["user_data"] = "#!/bin/sh\necho new\n"
    heat.update_stack(stack, template=template)
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="UPDATE_COMPLETE",
                                 failures=["UPDATE_FAILED"], interval=0.1, wait=120)
    new_web = {r.name: r for r in heat.resources(stack)}["web"].physical_resource_id
    assert new_web != web
    port = next(conn.network.ports(device_id=new_web))
    assert [ip["ip_address"] for ip in port.fixed_ips] == ["10.50.0.10"]
    assert conn.network.get_ip(fip.id).port_id == port.id
    # the SDK has no events call: its adapter follows the 302 lookup keeping the method
    events = heat.get(f"/stacks/{name}/events").json()["events"]
    assert any(e["resource_name"] == name and e["resource_status"] == "UPDATE_COMPLETE"
               for e in events)
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)
    assert heat.find_stack(name) is None
    left = _leftovers(conn, member["project"].id)
    assert left == {"ports": [], "servers": [], "fips": [], "networks": []}, left


def test_sdk_failure_rolls_back(cloud):
    member = cloud.new_project_member()
    heat = member["sdk"].orchestration
    template = {"heat_template_version": "2018-08-31", "resources": {
        "a": {"type": "OS::Heat::TestResource"},
        "b": {"type": "OS::Heat::TestResource", "depends_on": "a",
              "properties": {"fail": True}}}}
    stack = heat.create_stack(name="rb", template=template, disable_rollback=False)
    stack = heat.wait_for_status(stack, status="ROLLBACK_COMPLETE",
                                 failures=["ROLLBACK_FAILED"], interval=0.1, wait=60)
    assert list(heat.resources(stack)) == []
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=60)


@sqlite_only
def test_cli_story(cloud, tmp_path):
    """The issue's story as the demo member with python-heatclient through `openstack`."""
    c = cloud
    template = _story("10.60.0.0/24")
    app = tmp_path / "app.yaml"
    app.write_text(yaml.safe_dump(template))

    def cli(*args, parse=True):
        return c.cli(*args, cloud="stackling", parse=parse)

    def waited(*args):
        """`--wait` prints the events it polled, then the JSON document."""
        out = c.cli(*args, cloud="stackling", parse=False)
        return json.loads(out[out.index("{"):] if out.startswith("{") else
                          out[out.index("\n{") + 1:])

    created = waited("stack", "create", "-t", str(app), "--wait", "-f", "json", "story")
    assert created["stack_status"] == "CREATE_COMPLETE"
    resources = {r["resource_name"]: r for r in cli("stack", "resource", "list", "-f", "json",
                                                      "story")}
    assert len(resources) == 8
    assert {r["resource_status"] for r in resources.values()} == {"CREATE_COMPLETE"}
    events = cli("stack", "event", "list", "story", parse=False)
    assert "CREATE_COMPLETE" in events and "Stack CREATE completed successfully" in events
    outputs = cli("stack", "output", "show", "--all", "-f", "json", "story")
    assert outputs["web_ip"]["output_value"] == "10.60.0.10"
    web = resources["web"]["physical_resource_id"]

    def update(t, dry_run=False):
        app.write_text(yaml.safe_dump(t))
        if dry_run:
            return cli("stack", "update", "--dry-run", "-t", str(app), "-f", "json", "story")
        out = waited("stack", "update", "-t", str(app), "--wait", "-f", "json", "story")
        assert out["stack_status"] == "UPDATE_COMPLETE", out
        return {r["resource_name"]: r for r in cli("stack", "resource", "list", "-f", "json",
                                                    "story")}

    template["resources"]["web"]["properties"]["flavor"] = "m1.small"
    diff = update(template, dry_run=True)
    assert [r["resource_name"] for r in diff["updated"]] == ["web"], diff
    assert update(template)["web"]["physical_resource_id"] == web  # resized
    server = cli("server", "show", "-f", "json", web)
    assert "m1.small" in json.dumps(server["flavor"])
    # a new image: rebuilt in place (upstream's default image_update_policy: REBUILD)
    image = c.sdk().image.create_image(name=f"cirros-{uuid.uuid4().hex[:6]}", data=b"x" * 64,
                                       disk_format="qcow2", container_format="bare",
                                       visibility="public")
    template["resources"]["web"]["properties"]["image"] = image.name
    assert update(template)["web"]["physical_resource_id"] == web
    assert image.id in json.dumps(cli("server", "show", "-f", "json", web)["image"])
    # the image again under REPLACE: a new server keeping the fixed IP
    template["resources"]["web"]["properties"]["image_update_policy"] = "REPLACE"
    template["resources"]["web"]["properties"]["image"] = "cirros"
    replaced = update(template)["web"]["physical_resource_id"]
    assert replaced != web
    server = cli("server", "show", "-f", "json", replaced)
    assert "10.60.0.10" in json.dumps(server["addresses"])
    template["resources"]["db"]["properties"]["networks"] = [
        {"subnet": {"get_resource": "subnet"}}]
    db = update(template)["db"]["physical_resource_id"]
    assert db == resources["db"]["physical_resource_id"]
    out = cli("stack", "delete", "--yes", "--wait", "story", parse=False)
    assert "Failed" not in out
    # nothing of the stack is left (the shared cloud may hold other tests' objects)
    assert "story" not in [s["Stack Name"] for s in cli("stack", "list", "-f", "json")]
    servers = {replaced, db}
    assert not servers & {s["ID"] for s in cli("server", "list", "-f", "json")}
    assert not [f for f in cli("floating", "ip", "list", "-f", "json")
                if "10.60.0." in (f.get("Fixed IP Address") or "")]
    ports = [p for p in cli("port", "list", "--long", "-f", "json")
             if p.get("Device ID") in servers or "10.60.0." in json.dumps(p.get("Fixed IP Addresses"))]
    assert ports == []


def test_sdk_hot_engine_nested_stacks_and_bad_templates(cloud):
    """The HOT engine (parameters, conditions, functions, environment, a ResourceGroup and
    a template resource) and upstream's 400s, on every backend."""
    import openstack.exceptions

    member = cloud.new_project_member()
    heat = member["sdk"].orchestration
    nested = ("heat_template_version: 2018-08-31\nparameters:\n  val: {type: string}\n"
              "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_param: val}}}\n"
              "outputs:\n  out: {value: {get_attr: [v, value]}}\n")
    template = {
        "heat_template_version": "2021-04-16",
        "parameters": {"names": {"type": "comma_delimited_list", "default": "a,b"},
                       "env": {"type": "string", "default": "dev",
                               "constraints": [{"allowed_values": ["dev", "prod"]}]},
                       "secret": {"type": "string", "hidden": True, "default": "s"}},
        "conditions": {"prod": {"equals": [{"get_param": "env"}, "prod"]}},
        "resources": {
            "grp": {"type": "OS::Heat::ResourceGroup", "properties": {
                "count": 2, "resource_def": {"type": "My::Nested",
                                             "properties": {"val": "m%index%"}}}},
            "only_prod": {"type": "OS::Heat::None", "condition": "prod"},
            "rnd": {"type": "OS::Heat::RandomString", "properties": {"length": 12}},
        },
        "outputs": {
            "joined": {"value": {"list_join": ["+", {"get_param": "names"},
                                               {"get_attr": ["grp", "out"]}]}},
            "mode": {"value": {"if": ["prod", "P", "D"]}},
            "len": {"value": {"str_replace": {"template": "n=N", "params": {
                "N": {"get_param": "env"}}}}},
            "rnd": {"value": {"get_attr": ["rnd", "value"]}},
        },
    }
    stack = heat.create_stack(name="hot", template=template, files={"nested.yaml": nested},
                              environment={"resource_registry": {"My::Nested": "nested.yaml"}},
                              parameters={"names": "x,y,z"})
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=60)
    stack = heat.get_stack(stack.id)
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["joined"] == "x+y+z+m0+m1" and outputs["mode"] == "D"
    assert outputs["len"] == "n=dev" and len(outputs["rnd"]) == 12
    assert stack.parameters["secret"] == "******"
    assert {r.name for r in heat.resources(stack)} == {"grp", "rnd"}
    for bad in ({"heat_template_version": "2018-08-31",
                 "resources": {"x": {"type": "OS::No::Such"}}},
                {"heat_template_version": "2018-08-31", "resources": {
                    "a": {"type": "OS::Heat::Value", "properties": {
                        "value": {"get_attr": ["b", "value"]}}},
                    "b": {"type": "OS::Heat::Value", "properties": {
                        "value": {"get_attr": ["a", "value"]}}}}}):
        try:
            heat.create_stack(name="bad", template=bad)
        except openstack.exceptions.BadRequestException:
            pass
        else:
            raise AssertionError("a bad template was accepted")
    assert heat.find_stack("bad") is None
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=60)
