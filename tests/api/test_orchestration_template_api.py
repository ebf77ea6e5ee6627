"""Orchestration template introspection and checking as upstream shapes them: template
versions and their functions (`with_condition_func`), `validate` (parameters, groups,
environment, `show_nested`, `ignore_errors`), stack preview of nested stacks, nested output
errors and resources adopted by `external_id`."""

from __future__ import annotations

import pytest

from tests.api.test_orchestration import Heat, heat_error


@pytest.fixture
def heat(api):
    return Heat(api)


def test_template_functions_and_condition_functions(heat):
    base = "/template_versions/heat_template_version.2016-10-14/functions"
    fns = heat.req("GET", base).json()["template_functions"]
    names = {f["functions"] for f in fns}
    assert {"get_param", "if", "map_replace", "equals"} <= names and "filter" not in names
    assert all(f["description"] for f in fns)
    cond = heat.req("GET", base + "?with_condition_func=true").json()["template_functions"]
    assert {f["functions"] for f in cond} == {"get_param", "equals", "not", "and", "or"}
    pike = heat.req("GET", "/template_versions/heat_template_version.2017-09-01/functions",
                    params={"with_condition_func": "True"}).json()["template_functions"]
    assert {"contains", "yaql"} <= {f["functions"] for f in pike}
    old = heat.req("GET", "/template_versions/heat_template_version.2015-04-30/functions",
                   params={"with_condition_func": "1"}).json()["template_functions"]
    assert old == []
    heat_error(heat.req("GET", base + "?with_condition_func=maybe"), 400)
    heat_error(heat.req("GET", "/template_versions/heat_template_version.1999-01-01/functions"),
               404)
    versions = heat.req("GET", "/template_versions").json()["template_versions"]
    assert {"version": "heat_template_version.2016-10-14", "type": "hot",
            "aliases": ["heat_template_version.newton"]} in versions


RANDOM = """heat_template_version: 2014-10-16
description: the stack description
parameters:
  aparam:
    type: number
    default: 10
    description: the param description
resources:
  myres:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: aparam}
"""
PARENT = """heat_template_version: 2014-10-16
description: the parent template
parameters:
  pparam:
    type: number
    default: 5
    description: the param description
resources:
  nres:
    type: mynested.yaml
    properties:
      aparam: {get_param: pparam}
"""
APARAM = {"Default": 10, "Description": "the param description", "Label": "aparam",
          "NoEcho": "false", "Type": "Number"}


def test_validate_shapes_nested_and_environment(heat):
    r = heat.req("POST", "/validate", json={"template": RANDOM})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["Description"] == "the stack description"
    assert body["Parameters"] == {"aparam": APARAM} and "NestedParameters" not in body
    assert set(body["Environment"]) >= {"parameters", "parameter_defaults", "resource_registry"}
    constrained = {"heat_template_version": "2018-08-31", "parameters": {
        "s": {"type": "string", "label": "Ess", "hidden": True, "constraints": [
            {"length": {"min": 2, "max": 8}}, {"allowed_pattern": "[a-z]+",
                                               "description": "lower"}]},
        "n": {"type": "number", "constraints": [{"range": {"min": 1}},
                                                {"allowed_values": [1, 2]}]}},
        "parameter_groups": [{"label": "g", "parameters": ["s"]}], "resources": {}}
    body = heat.req("POST", "/validate", json={
        "template": constrained,
        "environment": {"parameter_defaults": {"n": 2}}}).json()
    assert body["Parameters"]["s"] == {
        "Type": "String", "Label": "Ess", "Description": "", "NoEcho": "true",
        "MinLength": 2, "MaxLength": 8, "AllowedPattern": "[a-z]+",
        "ConstraintDescription": "lower"}
    assert body["Parameters"]["n"]["Default"] == 2  # the environment's default wins
    assert body["Parameters"]["n"]["MinValue"] == 1
    assert body["Parameters"]["n"]["AllowedValues"] == [1, 2]
    assert body["ParameterGroups"] == [{"label": "g", "parameters": ["s"]}]
    files = {"mynested.yaml": RANDOM.replace("OS::Heat::RandomString", "mynested2.yaml"),
             "mynested2.yaml": RANDOM}
    off = heat.req("POST", "/validate", json={"template": PARENT, "files": files}).json()
    assert "NestedParameters" not in off
    on = heat.req("POST", "/validate?show_nested=true",
                  json={"template": PARENT, "files": files}).json()
    assert on["NestedParameters"] == {"nres": {
        "Type": "mynested.yaml", "Description": "the stack description",
        "Parameters": {"aparam": {**APARAM, "Value": 5}},
        "NestedParameters": {"myres": {"Type": "mynested2.yaml",
                                       "Description": "the stack description",
                                       "Parameters": {"aparam": APARAM}}}}}
    # ignore_errors takes upstream's codes only
    assert heat.req("POST", "/validate?ignore_errors=99001",
                    json={"template": RANDOM}).status_code == 200
    heat_error(heat.req("POST", "/validate?ignore_errors=12345", json={"template": RANDOM}),
               400)


NESTED = ("heat_template_version: 2018-08-31\nparameters:\n  val: {type: string}\n"
          "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_param: val}}}\n")
GROUPED = {"heat_template_version": "2018-08-31", "resources": {
    "grp": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": 2, "resource_def": {"type": "nested.yaml",
                                     "properties": {"val": "m%index%"}}}},
    "plain": {"type": "OS::Heat::Value", "properties": {"value": "x"}},
    "tres": {"type": "nested.yaml", "properties": {"val": {"get_attr": ["plain", "value"]}}}}}


def test_preview_nests_stacks_as_lists(heat):
    r = heat.req("POST", "/stacks/preview", json={"stack_name": "pv", "template": GROUPED,
                                                  "files": {"nested.yaml": NESTED}})
    assert r.status_code == 200, r.text
    resources = r.json()["stack"]["resources"]
    flat = {res["resource_name"]: res for res in resources if isinstance(res, dict)}
    assert flat["plain"]["properties"]["value"] == "x"
    assert flat["plain"]["resource_action"] == "INIT"
    lists = [res for res in resources if isinstance(res, list)]
    assert len(lists) == 2  # the group and the template resource, not as entries
    group = next(x for x in lists if len(x) == 2)
    members = sorted(m[0]["properties"]["value"] for m in group)
    assert members == ["m0", "m1"] and all(isinstance(m, list) for m in group)
    assert group[0][0]["stack_name"].startswith("pv-grp-")
    tres = next(x for x in lists if len(x) == 1)[0]
    assert tres["stack_name"] == "pv-tres" and tres["resource_type"] == "OS::Heat::Value"
    assert heat.req("GET", "/stacks?stack_name=pv").json()["stacks"] == []


BROKEN = ("heat_template_version: 2018-08-31\nresources:\n"
          "  v: {type: OS::Heat::Value, properties: {value: 'a,b'}}\n"
          "outputs:\n  out:\n    value: {str_split: [',', {get_attr: [v, value]}, 5]}\n"
          "  fine: {value: ok}\n")


def test_nested_output_error_reaches_the_parent(heat):
    t = {"heat_template_version": "2018-08-31",
         "resources": {"nres": {"type": "broken.yaml"}},
         "outputs": {"bad": {"value": {"get_attr": ["nres", "out"]}},
                     "good": {"value": {"get_attr": ["nres", "fine"]}}}}
    stack = heat.make("outerr", t, files={"broken.yaml": BROKEN})
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    outputs = {o["output_key"]: o for o in stack["outputs"]}
    assert outputs["good"]["output_value"] == "ok"
    bad = outputs["bad"]
    assert bad["output_value"] is None
    assert bad["output_error"].startswith("Error in nres output out: ")
    nested_error = bad["output_error"][len("Error in nres output out: "):]
    assert nested_error
    url = heat.url("outerr")
    one = heat.req("GET", url + "/outputs/bad").json()["output"]
    assert one["output_error"] == bad["output_error"]
    nested_id = heat.resources("outerr")["nres"]["physical_resource_id"]
    nested = heat.req("GET", f"/stacks/{nested_id}").json()["stack"]
    inner = {o["output_key"]: o for o in nested["outputs"]}["out"]
    assert inner["output_error"] == nested_error


def _adopting(name="adopted"):
    return {"heat_template_version": "2018-08-31",
            "parameters": {"netid": {"type": "string"}},
            "resources": {
                "net": {"type": "OS::Neutron::Net", "external_id": {"get_param": "netid"},
                        "properties": {"name": name}},
                "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                    "network": {"get_resource": "net"}, "cidr": "10.77.0.0/24"}}},
            "outputs": {"net_name": {"value": {"get_attr": ["net", "name"]}}}}


def test_external_id_adopts_keeps_and_retains(heat, api):
    def net(net_id):
        return api.get(f"/networking/v2.0/networks/{net_id}", token=heat.token)

    net_id = api.post("/networking/v2.0/networks", token=heat.token,
                      json={"network": {"name": "outside"}}).json()["network"]["id"]
    stack = heat.make("ext", _adopting(), parameters={"netid": net_id})
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in stack["outputs"]}["net_name"] == \
        "outside"  # the object as it is: the template's properties do not build it
    res = heat.resources("ext")
    assert res["net"]["physical_resource_id"] == net_id
    assert res["net"]["resource_status"] == "ADOPT_COMPLETE"
    subnet_id = res["subnet"]["physical_resource_id"]
    assert api.get(f"/networking/v2.0/subnets/{subnet_id}",
                   token=heat.token).json()["subnet"]["network_id"] == net_id
    url = heat.url("ext")
    # the same external id: properties do not touch the adopted object
    r = heat.req("PUT", url, json={"template": _adopting("renamed"),
                                   "parameters": {"netid": net_id}})
    assert r.status_code == 202, r.text
    assert heat.wait(url)["stack_status"] == "UPDATE_COMPLETE"
    assert net(net_id).json()["network"]["name"] == "outside"
    # another id is upstream's refusal, and nothing is replaced
    other = api.post("/networking/v2.0/networks", token=heat.token,
                     json={"network": {"name": "other"}}).json()["network"]["id"]
    heat.req("PUT", url, json={"template": _adopting(), "parameters": {"netid": other}})
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_FAILED"
    assert ("NotSupported: resources.net: Update to property external_id of net "
            "(OS::Neutron::Net) is not supported.") in stack["stack_status_reason"]
    assert heat.resources("ext")["net"]["physical_resource_id"] == net_id
    # dropping it is refused too
    managed = _adopting()
    del managed["resources"]["net"]["external_id"]
    heat.req("PUT", url, json={"template": managed, "parameters": {"netid": net_id}})
    assert heat.wait(url)["stack_status"] == "UPDATE_FAILED"
    r = heat.req("DELETE", url)
    assert r.status_code == 204, r.text
    assert heat.req("GET", url).status_code == 404 or \
        heat.wait(url)["stack_status"] == "DELETE_COMPLETE"
    assert net(net_id).status_code == 200  # retained, not Heat's to delete
    assert api.get(f"/networking/v2.0/subnets/{subnet_id}",
                   token=heat.token).status_code == 404  # Heat's own subnet went


def test_external_id_of_a_missing_object_fails_the_create(heat):
    missing = "7d0f4a5e-0000-4000-8000-000000000000"
    r = heat.create("extmiss", _adopting(), parameters={"netid": missing},
                    disable_rollback=True)
    assert r.status_code == 201, r.text
    stack = heat.wait("extmiss")
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "resources.net" in stack["stack_status_reason"]
    assert missing in stack["stack_status_reason"] or "not" in stack["stack_status_reason"]
    assert heat.resources("extmiss")["net"]["resource_status"] == "ADOPT_FAILED"


def test_validate_show_nested_resource_group_as_a_group_of_one(heat):
    body = heat.req("POST", "/validate", params={"show_nested": "True"}, json={
        "template": GROUPED, "files": {"nested.yaml": NESTED}}).json()
    val = {"Type": "String", "Description": "", "Label": "val", "NoEcho": "false"}
    grp = body["NestedParameters"]["grp"]
    assert grp["Type"] == "OS::Heat::ResourceGroup" and grp["Parameters"] == {}
    assert grp["NestedParameters"] == {"0": {
        "Type": "nested.yaml", "Description": "No description",
        "Parameters": {"val": {**val, "Value": "m0"}}}}
    # a value another resource gives is unknown at validation: no Value
    assert body["NestedParameters"]["tres"]["Parameters"] == {"val": val}
