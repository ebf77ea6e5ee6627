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
