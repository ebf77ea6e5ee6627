"""Software configuration: /software_configs and /software_deployments (Heat's bodies, 200
to POST, 204 to DELETE, 404s), the metadata a server polls, and the resource types
(SoftwareConfig, StructuredConfig, CloudConfig, MultipartMime, SoftwareDeployment,
StructuredDeployment, SoftwareDeploymentGroup) with NO_SIGNAL and signalled transports."""

from __future__ import annotations

import pytest

from tests.api.test_orchestration import Heat, heat_error, tmpl, unique


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def test_software_config_crud(heat):
    body = {"name": "cfg", "group": "script", "config": "#!/bin/sh\necho hi",
            "inputs": [{"name": "foo"}], "outputs": [{"name": "result"}],
            "options": {"a": 1}}
    r = heat.req("POST", "/software_configs", json=body)
    assert r.status_code == 200, r.text
    sc = r.json()["software_config"]
    assert sc["name"] == "cfg" and sc["group"] == "script" and sc["options"] == {"a": 1}
    assert sc["inputs"][0]["name"] == "foo" and sc["inputs"][0]["type"] == "String"
    shown = heat.req("GET", f"/software_configs/{sc['id']}").json()["software_config"]
    assert shown["config"] == body["config"] and shown["creation_time"]
    listed = heat.req("GET", "/software_configs").json()["software_configs"]
    assert sc["id"] in [c["id"] for c in listed]
    assert "config" not in listed[0]
    default = heat.req("POST", "/software_configs", json={"config": "x"}).json()
    assert default["software_config"]["group"] == "Heat::Ungrouped"
    assert heat.req("DELETE", f"/software_configs/{sc['id']}").status_code == 204
    msg = heat_error(heat.req("GET", f"/software_configs/{sc['id']}"), 404, "NotFound")
    assert msg == f"Software config with id {sc['id']} not found"


def test_software_deployment_crud_and_metadata(heat):
    sc = heat.req("POST", "/software_configs", json={
        "name": "a-cfg", "group": "script", "config": "echo",
        "inputs": [{"name": "foo", "default": "d"}, {"name": "bar"}]}).json()["software_config"]
    server = unique("server-")
    r = heat.req("POST", "/software_deployments", json={
        "config_id": sc["id"], "server_id": server, "input_values": {"bar": "B"},
        "action": "CREATE", "status": "IN_PROGRESS"})
    assert r.status_code == 200, r.text
    dep = r.json()["software_deployment"]
    assert dep["status"] == "IN_PROGRESS" and dep["input_values"] == {"bar": "B"}
    meta = heat.req("GET", f"/software_deployments/metadata/{server}").json()["metadata"]
    assert [m["id"] for m in meta] == [sc["id"]]
    assert {i["name"]: i["value"] for i in meta[0]["inputs"]} == {"foo": "d", "bar": "B"}
    r = heat.req("PUT", f"/software_deployments/{dep['id']}", json={
        "status": "COMPLETE", "output_values": {"deploy_stdout": "ok"}})
    assert r.status_code == 200, r.text
    assert r.json()["software_deployment"]["status"] == "COMPLETE"
    listed = heat.req("GET", "/software_deployments", params={"server_id": server}).json()
    assert [d["id"] for d in listed["software_deployments"]] == [dep["id"]]
    heat_error(heat.req("DELETE", f"/software_configs/{sc['id']}"), 400)  # in use
    assert heat.req("DELETE", f"/software_deployments/{dep['id']}").status_code == 204
    heat_error(heat.req("GET", f"/software_deployments/{dep['id']}"), 404, "NotFound")
    heat_error(heat.req("POST", "/software_deployments", json={"server_id": "x"}), 400)


def _stack(transport, **extra):
    return tmpl({
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script", "config": "#!/bin/sh\necho $foo",
            "inputs": [{"name": "foo"}], "outputs": [{"name": "result"}]}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "config"}, "server": "srv-" + transport,
            "input_values": {"foo": "bar"}, "signal_transport": transport, **extra}}},
        outputs={"stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}},
                 "code": {"value": {"get_attr": ["deployment", "deploy_status_code"]}},
                 "result": {"value": {"get_attr": ["deployment", "result"]}},
                 "config": {"value": {"get_attr": ["config", "config"]}}})


def test_no_signal_deployment_completes_at_once(heat):
    name = unique("nosig")
    stack = heat.make(name, _stack("NO_SIGNAL"))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert heat.outputs(stack)["config"] == "#!/bin/sh\necho $foo"
    dep_id = heat.resources(name)["deployment"]["physical_resource_id"]
    dep = heat.req("GET", f"/software_deployments/{dep_id}").json()["software_deployment"]
    assert dep["status"] == "COMPLETE" and dep["server_id"] == "srv-NO_SIGNAL"
    meta = heat.req("GET", "/software_deployments/metadata/srv-NO_SIGNAL").json()["metadata"]
    inputs = {i["name"]: i.get("value") for i in meta[0]["inputs"]}
    assert inputs["foo"] == "bar" and inputs["deploy_action"] == "CREATE"
    assert inputs["deploy_resource_name"] == "deployment"
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"
    heat_error(heat.req("GET", f"/software_deployments/{dep_id}"), 404)


def test_heat_signal_deployment_waits_for_its_signal(heat):
    name = unique("hsig")
    assert heat.create(name, _stack("HEAT_SIGNAL")).status_code == 201
    url = heat.url(name)
    assert heat.resources(name)["deployment"]["resource_status"] == "CREATE_IN_PROGRESS"
    r = heat.req("POST", f"{url}/resources/deployment/signal", json={
        "deploy_stdout": "hello", "deploy_stderr": "", "deploy_status_code": 0,
        "result": "42"})
    assert r.status_code == 200, r.text
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    out = heat.outputs(stack)
    assert (out["stdout"], out["code"], out["result"]) == ("hello", 0, "42")

    # signalled through PUT /software_deployments/{id} instead
    name = unique("hput")
    heat.create(name, _stack("HEAT_SIGNAL"))
    url = heat.url(name)
    dep_id = heat.resources(name)["deployment"]["physical_resource_id"]
    r = heat.req("PUT", f"/software_deployments/{dep_id}", json={
        "status": "COMPLETE", "output_values": {"deploy_stdout": "via-put"}})
    assert r.status_code == 200, r.text
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert heat.outputs(stack)["stdout"] == "via-put"


def test_failed_deployment_fails_the_stack(heat):
    name = unique("hfail")
    heat.create(name, _stack("HEAT_SIGNAL"), disable_rollback=True)
    url = heat.url(name)
    heat.req("POST", f"{url}/resources/deployment/signal", json={
        "deploy_stdout": "", "deploy_stderr": "boom", "deploy_status_code": 2})
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "Deployment to server failed: deploy_status_code : Deployment exited with " \
           "non-zero status code: 2" in stack["stack_status_reason"]


def test_structured_cloud_multipart_and_group(heat):
    name = unique("struct")
    t = tmpl({
        "sc": {"type": "OS::Heat::StructuredConfig", "properties": {
            "config": {"greeting": {"get_input": "who"}, "fixed": 1}}},
        "sd": {"type": "OS::Heat::StructuredDeployment", "properties": {
            "config": {"get_resource": "sc"}, "server": "srv-struct",
            "input_values": {"who": "world"}, "signal_transport": "NO_SIGNAL"}},
        "cc": {"type": "OS::Heat::CloudConfig", "properties": {
            "cloud_config": {"packages": ["git"]}}},
        "mime": {"type": "OS::Heat::MultipartMime", "properties": {"parts": [
            {"config": {"get_resource": "cc"}}, {"config": "#!/bin/sh\necho x"}]}},
        "group": {"type": "OS::Heat::SoftwareDeploymentGroup", "properties": {
            "config": {"get_resource": "cc"}, "servers": {"a": "srv-a", "b": "srv-b"},
            "signal_transport": "HEAT_SIGNAL"}}},
        outputs={"cc": {"value": {"get_attr": ["cc", "config"]}},
                 "mime": {"value": {"get_attr": ["mime", "config"]}},
                 "codes": {"value": {"get_attr": ["group", "deploy_status_codes"]}}})
    assert heat.create(name, t).status_code == 201
    url = heat.url(name)
    meta = heat.req("GET", "/software_deployments/metadata/srv-struct").json()["metadata"]
    assert meta[0]["config"] == {"greeting": "world", "fixed": 1}
    for server in ("srv-a", "srv-b"):
        deps = heat.req("GET", "/software_deployments",
                        params={"server_id": server}).json()["software_deployments"]
        assert len(deps) == 1 and deps[0]["status"] == "IN_PROGRESS"
        heat.req("PUT", f"/software_deployments/{deps[0]['id']}", json={
            "status": "COMPLETE", "output_values": {"deploy_status_code": 0}})
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    out = heat.outputs(stack)
    assert out["cc"] == "#cloud-config\npackages:\n- git\n"
    assert "Content-Type: multipart/mixed" in out["mime"] and "packages:" in out["mime"]
    assert "echo x" in out["mime"]
    assert out["codes"] == {"a": 0, "b": 0}
