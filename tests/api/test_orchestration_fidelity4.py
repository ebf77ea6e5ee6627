"""Orchestration fidelity IV (issue 32), in-process: a server with an explicit port whose
`user_data` changes is replaced with the port moved from the old server to the new one
(upstream's `prepare_ports_for_replace`), and back again; a rollback gives it back."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_orchestration import Heat, unique


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def port_template(user_data: str, fail: bool = False) -> dict[str, Any]:
    t: dict[str, Any] = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.32.0.0/24"}},
            "port": {"type": "OS::Neutron::Port", "properties": {
                "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "image": "cirros", "flavor": "m1.tiny", "user_data": user_data,
                "user_data_update_policy": "REPLACE",
                "networks": [{"port": {"get_resource": "port"}}]}},
        },
        "outputs": {"server": {"value": {"get_resource": "server"}},
                    "port": {"value": {"get_resource": "port"}}},
    }
    if fail:  # fails after the server: a rollback must undo the replacement
        t["resources"]["boom"] = {"type": "OS::Heat::TestResource", "depends_on": "server",
                                  "properties": {"fail": True}}
    return t


def _update(heat: Heat, name: str, template: dict[str, Any], **body: Any) -> dict[str, Any]:
    r = heat.req("PUT", heat.url(name), json={"template": template, **body})
    assert r.status_code == 202, r.text
    return heat.wait(name)


def _device(api, heat: Heat, port_id: str) -> str:
    r = api.get(f"/networking/v2.0/ports/{port_id}", token=heat.token)
    return r.json()["port"]["device_id"]


def test_a_replaced_server_takes_its_port_and_gives_it_back(api, heat):
    name = unique()
    stack = heat.make(name, port_template("one"))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    first = heat.outputs(stack)
    stack = _update(heat, name, port_template("two"))
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    second = heat.outputs(stack)
    assert second["server"] != first["server"] and second["port"] == first["port"]
    assert _device(api, heat, first["port"]) == second["server"]
    r = api.get(f"/compute/v2.1/servers/{first['server']}", token=heat.token)
    assert r.status_code == 404
    stack = _update(heat, name, port_template("one"))  # and back
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    third = heat.outputs(stack)
    assert _device(api, heat, first["port"]) == third["server"] != second["server"]
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"
    r = api.get(f"/networking/v2.0/ports/{first['port']}", token=heat.token)
    assert r.status_code == 404


def test_a_rollback_reattaches_the_port_to_the_old_server(api, heat):
    name = unique()
    stack = heat.make(name, port_template("one"))
    first = heat.outputs(stack)
    stack = _update(heat, name, port_template("two", fail=True), disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE", stack["stack_status_reason"]
    assert heat.outputs(stack)["server"] == first["server"]
    assert _device(api, heat, first["port"]) == first["server"]
    r = api.get(f"/compute/v2.1/servers/{first['server']}/os-interface", token=heat.token)
    assert [i["port_id"] for i in r.json()["interfaceAttachments"]] == [first["port"]]


def test_an_admin_reads_another_projects_stack(api, heat):
    name = unique()
    stack = heat.make(name, {"heat_template_version": "2018-08-31", "resources": {
        "r": {"type": "OS::Heat::RandomString"}}})
    admin = Heat(api, user="admin")
    for tenant in (heat.project, admin.project):  # the stack's project, or the admin's own
        base = f"/orchestration/v1/{tenant}/stacks/{name}/{stack['id']}"
        r = api.get(base, token=admin.token)
        assert r.status_code == 200, r.text
        assert r.json()["stack"]["id"] == stack["id"]
        r = api.get(base + "/resources", token=admin.token)
        assert [x["resource_name"] for x in r.json()["resources"]] == ["r"]
    # writes stay the owner's
    r = api.delete(f"/orchestration/v1/{heat.project}/stacks/{name}/{stack['id']}",
                   token=admin.token)
    assert r.status_code in (403, 404)


def test_a_template_without_a_description_reads_no_description(api, heat):
    # Heat's HOT template: a missing description is "No description" in a stack's show,
    # its list and a preview (an empty one stays empty)
    template = {"heat_template_version": "2018-08-31",
                "resources": {"r": {"type": "OS::Heat::RandomString"}}}
    name = unique("nodesc")
    shown = heat.make(name, template)
    assert shown["description"] == "No description"
    listed = heat.req("GET", f"/stacks?name={name}").json()["stacks"]
    assert [s["description"] for s in listed] == ["No description"]
    preview = heat.req("POST", "/stacks/preview",
                       json={"stack_name": unique("pv"), "template": template})
    assert preview.status_code == 200, preview.text
    assert preview.json()["stack"]["template_description"] == "No description"
    assert preview.json()["stack"]["description"] == "No description"
    empty = heat.make(unique("emptydesc"), {**template, "description": ""})
    assert empty["description"] == ""
