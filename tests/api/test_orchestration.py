"""Orchestration (Heat v1) over the in-process app: the stacks API, HOT functions and
parameters, the lifecycle (create, update, rollback, suspend/resume/check, delete), events,
resources, policy and introspection. Resources here have no physical object (Value,
RandomString, TestResource); tests/api/test_orchestration_servers.py has networks and
servers."""

from __future__ import annotations

import json
import time
import uuid

import pytest

DONE = ("COMPLETE", "FAILED")


class Heat:
    """A user's view of /orchestration/v1/{project}."""

    def __init__(self, api, user="demo", token=None):
        self.api = api
        self.token = token or api.token(user)
        r = api.get("/identity/v3/auth/tokens", token=self.token,
                    headers={"X-Subject-Token": self.token})
        self.project = r.json()["token"]["project"]["id"]
        self.base = f"/orchestration/v1/{self.project}"

    def req(self, method, path, **kw):
        return self.api.request(method, self.base + path, token=self.token, **kw)

    def create(self, name, template, **body):
        return self.req("POST", "/stacks", json={"stack_name": name, "template": template,
                                                 **body})

    def url(self, name):
        r = self.req("GET", f"/stacks/{name}", follow_redirects=False)
        assert r.status_code == 302, r.text
        return r.headers["location"].split("/orchestration/v1/" + self.project)[1]

    def wait(self, name_or_url, timeout=60.0):
        path = name_or_url if name_or_url.startswith("/stacks/") and name_or_url.count("/") > 2 \
            else self.url(name_or_url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.req("GET", path)
            stack = r.json()["stack"]
            if stack["stack_status"].endswith(DONE):
                return stack
            time.sleep(0.02)
        raise AssertionError(f"stack {name_or_url} still {stack['stack_status']}")

    def make(self, name, template, **body):
        r = self.create(name, template, **body)
        assert r.status_code == 201, r.text
        return self.wait(name)

    def resources(self, name):
        return {r["resource_name"]: r for r in
                self.req("GET", self.url(name) + "/resources").json()["resources"]}

    def events(self, name, **params):
        return self.req("GET", self.url(name) + "/events", params=params).json()["events"]

    def outputs(self, stack):
        return {o["output_key"]: o.get("output_value") for o in stack["outputs"]}


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def tmpl(resources=None, **sections):
    t = {"heat_template_version": "2018-08-31", "resources": resources or {}}
    t.update(sections)
    return t


def heat_error(r, status, type_=None):
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == status and body["title"] and body["explanation"]
    assert set(body["error"]) == {"type", "message", "traceback"}
    if type_:
        assert body["error"]["type"] == type_, body
    assert r.headers["content-type"] == "application/json"
    return body["error"]["message"]


def unique(prefix="s"):
    return f"{prefix}{uuid.uuid4().hex[:8]}"


# ------------------------------------------------------------------ discovery & catalog
def test_version_document_and_catalog(api, heat):
    r = api.get("/orchestration/", user=None)
    assert r.status_code == 300
    assert r.json()["versions"][0]["id"] == "v1.0"
    assert r.json()["versions"][0]["links"][0]["href"].endswith("/orchestration/v1/")
    r = api.get("/identity/v3/auth/tokens", token=heat.token,
                headers={"X-Subject-Token": heat.token})
    entry = next(c for c in r.json()["token"]["catalog"] if c["type"] == "orchestration")
    assert entry["name"] == "heat"
    assert {e["url"] for e in entry["endpoints"]} == {
        f"http://stackling.test/orchestration/v1/{heat.project}"}


def test_introspection(heat):
    types = heat.req("GET", "/resource_types").json()["resource_types"]
    assert {"OS::Heat::Value", "OS::Nova::Server", "OS::Neutron::Net"} <= set(types)
    r = heat.req("GET", "/resource_types/OS::Heat::RandomString").json()
    assert r["properties"]["length"]["default"] == 32 and "value" in r["attributes"]
    heat_error(heat.req("GET", "/resource_types/OS::No::Such"), 404, "EntityNotFound")
    versions = heat.req("GET", "/template_versions").json()["template_versions"]
    rocky = next(v for v in versions if v["version"] == "heat_template_version.2018-08-31")
    assert rocky["type"] == "hot" and rocky["aliases"] == ["heat_template_version.rocky"]
    fns = {f["functions"] for f in heat.req(
        "GET", "/template_versions/heat_template_version.2015-04-30/functions").json()[
        "template_functions"]}
    assert "repeat" in fns and "str_split" not in fns
    assert heat.req("GET", "/build_info").json()["engine"]["revision"]


# ------------------------------------------------------------------ create / show / list
def test_create_show_list_lookup(heat):
    t = tmpl({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "p"}}}},
             description="a stack", parameters={"p": {"type": "string", "default": "x"},
                                                "secret": {"type": "string", "hidden": True,
                                                           "default": "pw"}},
             outputs={"o": {"value": {"get_attr": ["v", "value"]}, "description": "d"}})
    r = heat.create("alpha", t, tags="a,b", timeout_mins=5)
    assert r.status_code == 201
    body = r.json()["stack"]
    assert r.headers["location"] == body["links"][0]["href"]
    assert body["links"][0]["href"].endswith(f"/stacks/alpha/{body['id']}")
    assert r.headers["x-openstack-request-id"].startswith("req-")
    stack = heat.wait("alpha")
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert stack["stack_status_reason"] == "Stack CREATE completed successfully"
    assert stack["description"] == stack["template_description"] == "a stack"
    assert stack["parameters"]["p"] == "x" and stack["parameters"]["secret"] == "******"
    assert stack["parameters"]["OS::stack_name"] == "alpha"
    assert stack["parameters"]["OS::stack_id"] == body["id"]
    assert stack["outputs"] == [{"output_key": "o", "output_value": "x", "description": "d"}]
    assert stack["tags"] == ["a", "b"] and stack["timeout_mins"] == 5
    assert stack["disable_rollback"] is True
    assert stack["creation_time"].endswith("Z")
    url = heat.url("alpha")
    assert url == f"/stacks/alpha/{body['id']}"
    # lookup by id and by name, for sub-resources too, keeps the query string
    for name in ("alpha", body["id"]):
        r = heat.req("GET", f"/stacks/{name}/resources?type=x", follow_redirects=False)
        assert r.status_code == 302
        assert r.headers["location"].endswith(f"{url}/resources?type=x")
        r = heat.req("GET", f"/stacks/{name}/outputs/o", follow_redirects=False)
        assert r.headers["location"].endswith(f"{url}/outputs/o")
    assert heat.req("GET", url + "/outputs").json() == {
        "outputs": [{"output_key": "o", "description": "d"}]}
    assert heat.req("GET", url + "/outputs/o").json()["output"]["output_value"] == "x"
    heat_error(heat.req("GET", url + "/outputs/nope"), 404)
    assert heat.req("GET", url + "/template").json() == t
    env = heat.req("GET", url + "/environment").json()
    assert env["parameters"] == {} and env["resource_registry"] == {}
    assert heat.req("GET", url + "/files").json() == {}
    assert "outputs" not in heat.req("GET", url, params={"resolve_outputs": "false"}).json()[
        "stack"]
    listed = heat.req("GET", "/stacks", params={"name": "alpha"}).json()["stacks"]
    assert [s["id"] for s in listed] == [body["id"]]
    assert set(listed[0]) == {"id", "links", "stack_name", "description", "stack_status",
                              "stack_status_reason", "creation_time", "updated_time",
                              "deletion_time", "stack_owner", "parent",
                              "stack_user_project_id", "tags"}
    assert heat.req("GET", "/stacks", params={"status": "CREATE_COMPLETE", "tags": "a"}
                    ).json()["stacks"]
    assert not heat.req("GET", "/stacks", params={"tags": "zzz"}).json()["stacks"]
    heat_error(heat.create("alpha", t), 409, "StackExists")
    heat_error(heat.req("GET", "/stacks/nope", follow_redirects=False), 404, "EntityNotFound")


def test_list_paging_and_sorting(heat):
    names = [unique("page") for _ in range(3)]
    for n in names:
        heat.make(n, tmpl())
    r = heat.req("GET", "/stacks", params={"sort_keys": "stack_name", "sort_dir": "asc",
                                           "limit": 2, "with_count": "true"})
    stacks = r.json()["stacks"]
    assert len(stacks) == 2 and r.json()["count"] >= 3
    assert [s["stack_name"] for s in stacks] == sorted(s["stack_name"] for s in stacks)
    assert r.json()["links"][0]["rel"] == "next"
    rest = heat.req("GET", "/stacks", params={"sort_keys": "stack_name", "sort_dir": "asc",
                                              "marker": stacks[-1]["id"]}).json()["stacks"]
    assert stacks[-1]["id"] not in [s["id"] for s in rest]
    heat_error(heat.req("GET", "/stacks", params={"limit": "x"}), 400)


# ------------------------------------------------------------------ bad templates
@pytest.mark.parametrize("template,type_,fragment", [
    ("heat_template_version: 2018-08-31\nresources: [unclosed", "HTTPBadRequest",
     "Error parsing template"),
    (tmpl({"r": {"type": "OS::Nope::Nothing"}}), "ResourceTypeNotFound",
     "The Resource Type (OS::Nope::Nothing) could not be found."),
    (tmpl({"r": {"type": "OS::Heat::RandomString", "properties": {"length": "x"}}}),
     "StackValidationFailed", "Property error: resources.r.properties.length: Value 'x' "
     "is not an integer"),
    (tmpl({"r": {"type": "OS::Heat::RandomString", "properties": {"nope": 1}}}),
     "StackValidationFailed", "Unknown Property nope"),
    (tmpl({"r": {"type": "OS::Heat::RandomString", "properties": {"length": 0}}}),
     "StackValidationFailed", "0 is out of range (min: 1, max: 512)"),
    (tmpl({"r": {"type": "OS::Heat::Value"}}), "StackValidationFailed",
     "Property value not assigned"),
    (tmpl({"a": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["b", "value"]}}},
           "b": {"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "a"}}}}),
     "CircularDependencyException", "Circular Dependency Found"),
    (tmpl({"a": {"type": "OS::Heat::None", "depends_on": "zz"}}), "InvalidTemplateReference",
     'The specified reference "zz"'),
    (tmpl({"a": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["a2", "x"]}}},
           "a2": {"type": "OS::Heat::Value", "properties": {"value": 1}}}),
     "InvalidTemplateAttribute", "The Referenced Attribute (a2 x) is incorrect."),
    ({"heat_template_version": "2099-01-01", "resources": {}}, "InvalidTemplateVersion",
     "The template version is invalid"),
    ({"heat_template_version": "2015-04-30", "resources": {"a": {
        "type": "OS::Heat::Value", "properties": {"value": {"str_split": [",", "a,b"]}}}}},
     "InvalidTemplateVersion", "str_split"),
    (tmpl(foo=1), "InvalidTemplateSection", "The template section is invalid: foo"),
    (tmpl({"r": {"type": "OS::Heat::Value", "properties": {"value": 1}, "bogus": 1}}),
     "StackValidationFailed", '"bogus" is not a valid keyword inside a resource definition'),
])
def test_bad_templates_are_400_and_create_nothing(heat, template, type_, fragment):
    name = unique("bad")
    message = heat_error(heat.create(name, template), 400, type_)
    assert fragment in message, message
    assert heat.req("GET", "/stacks", params={"name": name}).json()["stacks"] == []


def test_bad_parameters_and_names(heat):
    t = tmpl(parameters={"n": {"type": "number", "constraints": [
        {"range": {"min": 1, "max": 5}, "description": "one to five"}]},
        "s": {"type": "string", "default": "a", "constraints": [
            {"allowed_values": ["a", "b"]}]}})
    heat_error(heat.create(unique(), t), 400, "UserParameterMissing")
    msg = heat_error(heat.create(unique(), t, parameters={"n": 1, "zz": 2}), 400,
                     "UnknownUserParameter")
    assert msg == "The Parameter (zz) was not defined in template."
    msg = heat_error(heat.create(unique(), t, parameters={"n": 9}), 400,
                     "StackValidationFailed")
    assert msg == "Parameter 'n' is invalid: one to five"
    msg = heat_error(heat.create(unique(), t, parameters={"n": 1, "s": "c"}), 400)
    assert msg == "Parameter 's' is invalid: \"c\" is not an allowed value ['a', 'b']"
    heat_error(heat.create(unique(), t, parameters={"n": "abc"}), 400)
    heat_error(heat.create("1bad name", tmpl()), 400)
    heat_error(heat.req("POST", "/stacks", json={"template": tmpl()}), 400)
    heat_error(heat.req("POST", "/stacks", content=b"{not json",
                        headers={"content-type": "application/json"}), 400)


# ------------------------------------------------------------------ HOT functions
def test_intrinsic_functions(heat):
    v = "OS::Heat::Value"
    t = {
        "heat_template_version": "2021-04-16",
        "parameters": {
            "list": {"type": "comma_delimited_list", "default": "a,b,c"},
            "js": {"type": "json", "default": {"k": {"n": [1, 2]}}},
            "flag": {"type": "boolean", "default": "yes"},
            "num": {"type": "number", "default": "2.5"},
            "env": {"type": "string", "default": "prod"},
        },
        "conditions": {
            "is_prod": {"equals": [{"get_param": "env"}, "prod"]},
            "not_prod": {"not": "is_prod"},
            "both": {"and": ["is_prod", {"get_param": "flag"}]},
            "either": {"or": ["not_prod", False]},
            "has_b": {"contains": ["b", {"get_param": "list"}]},
        },
        "resources": {
            "r": {"type": "OS::Heat::RandomString", "properties": {"length": 6,
                                                                  "sequence": "digits"}},
            "only_dev": {"type": v, "condition": "not_prod", "properties": {"value": 1}},
            "a": {"type": v, "properties": {"value": {"get_param": ["js", "k", "n", 1]}}},
        },
        "outputs": {
            "replace": {"value": {"str_replace": {"template": "$a-$ab $a", "params": {
                "$a": "X", "$ab": {"get_param": "num"}}}}},
            "strict": {"value": {"str_replace_strict": {"template": "hi N",
                                                        "params": {"N": "you"}}}},
            "join": {"value": {"list_join": ["-", {"get_param": "list"}, ["d", 1]]}},
            "split": {"value": {"str_split": [",", "x,y,z", 1]}},
            "repeat": {"value": {"repeat": {"for_each": {"%x%": ["1", "2"], "%y%": ["a"]},
                                            "template": "%x%%y%"}}},
            "merge": {"value": {"map_merge": [{"a": 1}, {"b": 2}, {"a": 3}]}},
            "mreplace": {"value": {"map_replace": [{"k": "v", "k2": "v2"}, {
                "keys": {"k": "K"}, "values": {"v2": "V2"}}]}},
            "concat": {"value": {"list_concat_unique": [["a", "b"], ["b", "c"]]}},
            "contains": {"value": {"contains": ["x", ["x"]]}},
            "digest": {"value": {"digest": ["sha256", "abc"]}},
            "if": {"value": {"if": ["is_prod", "P", "D"]}},
            "ifs": {"value": [{"if": ["both", 1, 0]}, {"if": ["either", 1, 0]},
                              {"if": ["has_b", 1, 0]}]},
            "attr": {"value": {"get_attr": ["a", "value"]}},
            "all": {"value": {"get_attr": ["a"]}},
            "ref": {"value": {"str_split": ["-", {"list_join": ["-", [
                {"get_resource": "r"}, "z"]]}, 1]}},
            "filter": {"value": {"filter": [[1], [1, 2, 1, 3]]}},
            "url": {"value": {"make_url": {"scheme": "https", "host": "h", "port": 8,
                                           "path": "/p", "query": {"a": "b c"}}}},
            "dev": {"value": {"get_attr": ["only_dev", "value"]}, "condition": "not_prod"},
            "flag": {"value": {"get_param": "flag"}},
            "pseudo": {"value": {"get_param": "OS::stack_name"}},
        },
    }
    name = unique("fn")
    stack = heat.make(name, t)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    out = heat.outputs(stack)
    assert out["replace"] == "X-2.5 X"
    assert out["strict"] == "hi you"
    assert out["join"] == "a-b-c-d-1"
    assert out["split"] == "y"
    assert out["repeat"] == ["1a", "2a"]
    assert out["merge"] == {"a": 3, "b": 2}
    assert out["mreplace"] == {"K": "v", "k2": "V2"}
    assert out["concat"] == ["a", "b", "c"]
    assert out["contains"] is True
    assert out["digest"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert out["if"] == "P" and out["ifs"] == [1, 0, 1]
    assert out["attr"] == 2 and out["all"] == {"value": 2}
    assert out["ref"] == "z"
    assert out["filter"] == [2, 3]
    assert out["url"] == "https://h:8/p?a=b%20c"
    assert "dev" not in out and "only_dev" not in heat.resources(name)
    assert out["flag"] is True and out["pseudo"] == name
    rnd = heat.req("GET", heat.url(name) + "/resources/r").json()["resource"]
    assert len(rnd["attributes"]["value"]) == 6 and rnd["attributes"]["value"].isdigit()
    bad = {**t, "outputs": {"x": {"value": {"str_replace_strict": {
        "template": "a", "params": {"b": "c"}}}}}}
    msg = heat_error(heat.create(unique(), bad), 400)
    assert "The following params were not found in the template: b" in msg


def test_environment_registry_files_and_defaults(heat):
    t = tmpl({"a": {"type": "My::Value", "properties": {"value": {"get_param": "p"}}}},
             parameters={"p": {"type": "string"}},
             outputs={"o": {"value": {"get_attr": ["a", "value"]}},
                      "f": {"value": {"get_file": "data.txt"}}})
    env = {"parameter_defaults": {"p": "from-defaults"},
           "resource_registry": {"My::Value": "OS::Heat::Value"}}
    name = unique("env")
    stack = heat.make(name, t, environment=env, files={"data.txt": "file body"})
    assert heat.outputs(stack) == {"o": "from-defaults", "f": "file body"}
    assert heat.resources(name)["a"]["resource_type"] == "OS::Heat::Value"
    env_files = heat.make(unique("envf"), t, files={"data.txt": "x", "e.yaml":
                                                   "parameters: {p: from-file}\n"
                                                   "resource_registry:\n"
                                                   "  My::Value: OS::Heat::Value\n"},
                          environment_files=["e.yaml"])
    assert heat.outputs(env_files)["o"] == "from-file"
    heat_error(heat.create(unique(), t, environment={"nope": {}}), 400)


def test_validate(heat):
    t = tmpl({"a": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "p"}}}},
             description="validated", parameters={"p": {"type": "string", "default": "d",
                                                        "label": "P", "hidden": True,
                                                        "constraints": [{"length": {"min": 1}}]}},
             parameter_groups=[{"label": "g", "parameters": ["p"]}])
    r = heat.req("POST", "/validate", json={"template": t})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["Description"] == "validated"
    assert body["Parameters"]["p"]["Type"] == "String"
    assert body["Parameters"]["p"]["NoEcho"] == "true"
    assert body["Parameters"]["p"]["MinLength"] == 1
    assert body["ParameterGroups"] == [{"label": "g", "parameters": ["p"]}]
    heat_error(heat.req("POST", "/validate", json={"template": tmpl({"x": {"type": "X::Y"}})}),
               400)


# ------------------------------------------------------------------ lifecycle
def _test_resource(value="v", **props):
    return {"type": "OS::Heat::TestResource", "properties": {"value": value, **props}}


def test_update_in_place_replace_add_delete_and_preview(heat):
    name = unique("upd")
    t1 = tmpl({"keep": _test_resource("k"), "inplace": _test_resource("a"),
               "repl": _test_resource("r", update_replace_value="one"),
               "gone": {"type": "OS::Heat::None"}},
              parameters={"p": {"type": "string", "default": "x", "immutable": True}})
    heat.make(name, t1)
    before = heat.resources(name)
    url = heat.url(name)
    t2 = tmpl({"keep": _test_resource("k"), "inplace": _test_resource("b"),
               "repl": _test_resource("r", update_replace_value="two"),
               "added": {"type": "OS::Heat::Value", "properties": {
                   "value": {"get_attr": ["inplace", "output"]}}}},
              parameters={"p": {"type": "string", "default": "x", "immutable": True}},
              outputs={"o": {"value": {"get_attr": ["added", "value"]}}})
    r = heat.req("PUT", url + "/preview", json={"template": t2})
    assert r.status_code == 200, r.text
    changes = {k: sorted(c["resource_name"] for c in v)
               for k, v in r.json()["resource_changes"].items()}
    assert changes == {"added": ["added"], "deleted": ["gone"], "replaced": ["repl"],
                       "unchanged": ["keep"], "updated": ["inplace"]}
    assert heat.resources(name) == before  # a preview changes nothing
    r = heat.req("PUT", url, json={"template": t2})
    assert r.status_code == 202
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert stack["updated_time"]
    after = heat.resources(name)
    assert set(after) == {"keep", "inplace", "repl", "added"}
    assert after["keep"] == before["keep"]
    assert after["inplace"]["physical_resource_id"] == before["inplace"]["physical_resource_id"]
    assert after["inplace"]["resource_status"] == "UPDATE_COMPLETE"
    assert after["repl"]["physical_resource_id"] != before["repl"]["physical_resource_id"]
    assert heat.outputs(stack) == {"o": "b"}
    # PATCH keeps template and parameters; an immutable parameter cannot change
    msg = heat_error(heat.req("PATCH", url, json={"parameters": {"p": "y"}}), 400,
                     "ImmutableParameterModified")
    assert "p" in msg
    r = heat.req("PATCH", url, json={"tags": ["t"]})
    assert r.status_code == 202
    assert heat.wait(url)["stack_status"] == "UPDATE_COMPLETE"
    assert heat.req("GET", url + "/template").json() == t2


def test_patch_existing_and_clear_parameters(heat):
    name = unique("patch")
    t = tmpl({"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "p"}}}},
             parameters={"p": {"type": "string", "default": "dflt"}},
             outputs={"o": {"value": {"get_attr": ["v", "value"]}}})
    heat.make(name, t, parameters={"p": "given"})
    url = heat.url(name)
    assert heat.req("PATCH", url, json={}).status_code == 202
    assert heat.outputs(heat.wait(url)) == {"o": "given"}
    assert heat.req("PUT", url, json={"existing": True, "clear_parameters": ["p"]}
                    ).status_code == 202
    assert heat.outputs(heat.wait(url)) == {"o": "dflt"}
    assert heat.req("PUT", url, json={"template": t, "parameters": {"p": "put"}}
                    ).status_code == 202
    assert heat.outputs(heat.wait(url)) == {"o": "put"}


def test_create_failure_rolls_back(heat):
    name = unique("fail")
    t = tmpl({"ok": _test_resource(), "bad": {**_test_resource(fail=True),
                                             "depends_on": "ok"}})
    stack = heat.make(name, t, disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    assert heat.resources(name) == {}
    statuses = [(e["resource_name"], e["resource_status"]) for e in heat.events(name)]
    assert (name, "CREATE_FAILED") in statuses
    assert statuses.index((name, "CREATE_FAILED")) < statuses.index(
        (name, "ROLLBACK_IN_PROGRESS")) < statuses.index((name, "ROLLBACK_COMPLETE"))
    assert ("bad", "CREATE_FAILED") in statuses and ("ok", "DELETE_COMPLETE") in statuses
    failed = next(e for e in heat.events(name) if e["resource_status"] == "CREATE_FAILED"
                  and e["resource_name"] == "bad")
    assert failed["resource_status_reason"] == (
        "ResourceFailure: resources.bad: Test Resource failed bad")
    # without rollback the stack stays CREATE_FAILED with its resources
    name2 = unique("fail")
    stack = heat.make(name2, t)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"] == (
        "Resource CREATE failed: ResourceFailure: resources.bad: Test Resource failed bad")
    assert heat.resources(name2)["bad"]["resource_status"] == "CREATE_FAILED"


def test_update_failure_rolls_back_to_the_old_resources(heat):
    name = unique("urb")
    t1 = tmpl({"a": _test_resource("one"), "b": _test_resource("r", update_replace_value="1")})
    heat.make(name, t1, disable_rollback=False)
    before = heat.resources(name)
    url = heat.url(name)
    t2 = tmpl({"a": _test_resource("two"), "b": _test_resource("r", update_replace_value="2"),
               "c": {**_test_resource(fail=True), "depends_on": ["a", "b"]}})
    assert heat.req("PUT", url, json={"template": t2}).status_code == 202
    stack = heat.wait(url)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE", stack["stack_status_reason"]
    after = heat.resources(name)
    assert set(after) == {"a", "b"}
    assert after["b"]["physical_resource_id"] == before["b"]["physical_resource_id"]
    a = heat.req("GET", url + "/resources/a").json()["resource"]
    assert a["attributes"]["output"] == "one"
    assert heat.req("GET", url + "/template").json() == t1


def test_suspend_resume_check_and_actions(heat):
    name = unique("act")
    heat.make(name, tmpl({"a": _test_resource()}))
    url = heat.url(name)
    for action, status in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                           ("check", "CHECK_COMPLETE")):
        r = heat.req("POST", url + "/actions", json={action: None})
        assert r.status_code == 200, r.text
        assert heat.wait(url)["stack_status"] == status
        assert heat.resources(name)["a"]["resource_status"] == status
    heat_error(heat.req("POST", url + "/actions", json={"bogus": None}), 400)
    heat_error(heat.req("POST", url + "/actions", json={"cancel_update": None}), 400)


def test_waiting_resource_is_polled_and_update_in_progress_is_409(heat):
    name = unique("wait")
    t = tmpl({"slow": _test_resource(action_wait_secs={"create": 0.5}),
              "after": {**_test_resource(), "depends_on": "slow"}})
    r = heat.create(name, t)
    assert r.status_code == 201
    url = heat.url(name)
    stack = heat.req("GET", url).json()["stack"]
    if stack["stack_status"] == "CREATE_IN_PROGRESS":
        heat_error(heat.req("PUT", url, json={"template": t}), 409, "ActionInProgress")
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    names = [e["resource_name"] for e in heat.events(name)
             if e["resource_status"] == "CREATE_COMPLETE"]
    assert names.index("slow") < names.index("after")


def test_independent_waiting_resources_run_concurrently(heat):
    """Three independent resources that wait are all started before any completes (their
    waits overlap), and the one that depends on them starts only after all three."""
    name = unique("conc")
    t = tmpl({**{n: _test_resource(action_wait_secs={"create": 0.3}) for n in "abc"},
              "last": {**_test_resource(), "depends_on": ["a", "b", "c"]}})
    assert heat.make(name, t)["stack_status"] == "CREATE_COMPLETE"
    events = [(e["resource_name"], e["resource_status"]) for e in heat.events(name)
              if e["resource_name"] != name]
    first_complete = min(events.index((n, "CREATE_COMPLETE")) for n in "abc")
    assert all(events.index((n, "CREATE_IN_PROGRESS")) < first_complete for n in "abc")
    assert events.index(("last", "CREATE_IN_PROGRESS")) > max(
        events.index((n, "CREATE_COMPLETE")) for n in "abc")


def test_delete_and_deleted_stacks(heat):
    name = unique("del")
    heat.make(name, tmpl({"a": _test_resource()}))
    url = heat.url(name)
    stack_id = url.rsplit("/", 1)[1]
    r = heat.req("DELETE", f"/stacks/{name}", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"].endswith(url)
    assert heat.req("DELETE", url).status_code == 204
    deadline = time.monotonic() + 60
    while heat.req("GET", url).json()["stack"]["stack_status"] != "DELETE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    heat_error(heat.req("GET", f"/stacks/{name}", follow_redirects=False), 404)
    r = heat.req("GET", f"/stacks/{stack_id}", follow_redirects=False)
    assert r.status_code == 302  # a deleted stack is still found by id
    assert "outputs" not in heat.req("GET", url).json()["stack"]
    assert not heat.req("GET", "/stacks", params={"name": name}).json()["stacks"]
    assert heat.req("GET", "/stacks", params={"name": name, "show_deleted": "true"}
                    ).json()["stacks"][0]["deletion_time"]
    heat.make(name, tmpl())  # the name is free again


# ------------------------------------------------------------------ resources & events
def test_resources_events_metadata_and_mark_unhealthy(heat):
    name = unique("res")
    t = tmpl({"a": {**_test_resource(), "metadata": {"m": {"get_param": "OS::stack_name"}}},
              "b": {"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "a"}}}})
    heat.make(name, t)
    url = heat.url(name)
    res = heat.resources(name)
    assert res["a"]["required_by"] == ["b"] and res["b"]["required_by"] == []
    assert res["a"]["resource_status"] == "CREATE_COMPLETE"
    assert res["a"]["logical_resource_id"] == "a"
    assert res["b"]["physical_resource_id"] == ""
    assert {link["rel"] for link in res["a"]["links"]} == {"self", "stack"}
    assert heat.req("GET", url + "/resources", params={"type": "OS::Heat::Value"}
                    ).json()["resources"][0]["resource_name"] == "b"
    heat_error(heat.req("GET", url + "/resources", params={"bogus": 1}), 400)
    shown = heat.req("GET", url + "/resources/a").json()["resource"]
    assert shown["attributes"]["output"] == "v"
    heat_error(heat.req("GET", url + "/resources/zz"), 404)
    assert heat.req("GET", url + "/resources/a/metadata").json() == {"metadata": {"m": name}}
    r = heat.req("PATCH", url + "/resources/a", json={"mark_unhealthy": True,
                                                     "resource_status_reason": "broken"})
    assert r.status_code == 200
    res = heat.resources(name)["a"]
    assert res["resource_status"] == "CHECK_FAILED"
    assert res["resource_status_reason"] == "broken"
    heat_error(heat.req("PATCH", url + "/resources/a", json={"x": 1}), 400)
    events = heat.events(name)
    assert events[0]["resource_name"] == name
    assert events[0]["resource_status"] == "CREATE_IN_PROGRESS"
    assert events[0]["physical_resource_id"] == url.rsplit("/", 1)[1]
    assert [link["rel"] for link in events[0]["links"]] == ["self", "resource", "stack"]
    page = heat.events(name, limit=2)
    assert [e["id"] for e in page] == [e["id"] for e in events[:2]]
    rest = heat.events(name, marker=page[-1]["id"])
    assert [e["id"] for e in rest] == [e["id"] for e in events[2:]]
    assert heat.events(name, sort_dir="desc")[0]["id"] == events[-1]["id"]
    only_a = heat.req("GET", url + "/resources/a/events").json()["events"]
    assert {e["resource_name"] for e in only_a} == {"a"}
    one = heat.req("GET", url + f"/resources/a/events/{only_a[0]['id']}").json()["event"]
    assert one["resource_type"] == "OS::Heat::TestResource"
    assert heat.events(name, resource_status="COMPLETE")


# ------------------------------------------------------------------ policy
@pytest.fixture(scope="module")
def other(api):
    """A reader and a member of a second project."""
    admin = api.token("admin")
    pid = api.post("/identity/v3/projects", token=admin, json={"project": {
        "name": "heat-other", "domain_id": "default"}}).json()["project"]["id"]
    roles = {r["name"]: r["id"] for r in api.get("/identity/v3/roles", token=admin
                                                  ).json()["roles"]}
    users = {}
    for role in ("reader", "member"):
        uid = api.post("/identity/v3/users", token=admin, json={"user": {
            "name": f"heat-{role}", "password": "pw", "domain_id": "default"}}
        ).json()["user"]["id"]
        api.put(f"/identity/v3/projects/{pid}/users/{uid}/roles/{roles[role]}", token=admin)
        users[role] = Heat(api, token=_login(api, f"heat-{role}", "heat-other"))
    return users


def _login(api, user, project):
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": "pw"}}},
        "scope": {"project": {"name": project, "domain": {"id": "default"}}}}}
    r = api.client.post("/identity/v3/auth/tokens", json=body)
    assert r.status_code == 201, r.text
    return r.headers["X-Subject-Token"]


def test_policy_reader_member_and_other_projects(heat, other):
    member, reader = other["member"], other["reader"]
    name = unique("pol")
    member.make(name, tmpl({"a": _test_resource()}))
    url = member.url(name)
    assert reader.req("GET", url).status_code == 200
    assert reader.req("GET", url + "/resources").status_code == 200
    heat_error(reader.create(unique(), tmpl()), 403, "Forbidden")
    heat_error(reader.req("DELETE", url), 403)
    heat_error(reader.req("PUT", url, json={"template": tmpl()}), 403)
    # another project neither sees it by name nor by id, nor through its own URL
    heat_error(heat.req("GET", f"/stacks/{name}", follow_redirects=False), 404)
    stack_id = url.rsplit("/", 1)[1]
    heat_error(heat.req("GET", f"/stacks/{stack_id}", follow_redirects=False), 404)
    heat_error(heat.req("GET", url), 404)
    heat_error(heat.req("DELETE", url), 404)
    r = heat.api.request("GET", f"/orchestration/v1/{member.project}/stacks",
                         token=heat.token)
    heat_error(r, 403)
    assert name not in [s["stack_name"] for s in heat.req("GET", "/stacks").json()["stacks"]]


# ------------------------------------------------------------------ nested stacks
NESTED = """
heat_template_version: 2018-08-31
parameters:
  val: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: val}}}
outputs:
  out: {value: {list_join: ['-', [{get_attr: [v, value]}, nested]]}}
"""


def test_resource_group_and_template_resources(heat):
    t = tmpl({
        "grp": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 3, "resource_def": {"type": "OS::Heat::Value",
                                         "properties": {"value": "v%index%"}}}},
        "tr": {"type": "nested.yaml", "properties": {"val": "x"}},
        "alias": {"type": "My::Nested", "properties": {"val": "y"}},
    }, outputs={"refs": {"value": {"get_attr": ["grp", "refs"]}},
                "vals": {"value": {"get_attr": ["grp", "value"]}},
                "one": {"value": {"get_attr": ["grp", "resource.1", "value"]}},
                "tr": {"value": {"get_attr": ["tr", "out"]}},
                "alias": {"value": {"get_attr": ["alias", "out"]}}})
    body = {"files": {"nested.yaml": NESTED},
            "environment": {"resource_registry": {"My::Nested": "nested.yaml"}}}
    name = unique("nest")
    stack = heat.make(name, t, **body)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert heat.outputs(stack) == {"refs": ["0", "1", "2"], "vals": ["v0", "v1", "v2"],
                                   "one": "v1", "tr": "x-nested", "alias": "y-nested"}
    res = heat.resources(name)
    assert res["tr"]["resource_type"] == "nested.yaml"
    assert "nested" in {link["rel"] for link in res["grp"]["links"]}
    deep = heat.req("GET", heat.url(name) + "/resources", params={"nested_depth": 1}
                    ).json()["resources"]
    members = [r for r in deep if r.get("parent_resource") == "grp"]
    assert sorted(r["resource_name"] for r in members) == ["0", "1", "2"]
    assert len(deep) == 3 + 3 + 1 + 1
    nested = heat.req("GET", "/stacks", params={"show_nested": "true"}).json()["stacks"]
    children = [s for s in nested if s["parent"] == stack["id"]]
    assert len(children) == 3
    assert name not in [s["stack_name"] for s in heat.req("GET", "/stacks").json()[
        "stacks"] if s["parent"]]
    url = heat.url(name)
    t["resources"]["grp"]["properties"]["count"] = 5
    assert heat.req("PUT", url, json={"template": t, **body}).status_code == 202
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert heat.outputs(stack)["vals"] == ["v0", "v1", "v2", "v3", "v4"]
    # a nested template with a bad parameter is a 400 up front
    bad = tmpl({"tr": {"type": "nested.yaml", "properties": {"nope": 1}}})
    heat_error(heat.create(unique(), bad, files={"nested.yaml": NESTED}), 400)
    # a failing member fails the group and nothing of the nested stack stays
    failing = tmpl({"grp": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": 2, "resource_def": {"type": "OS::Heat::TestResource",
                                     "properties": {"fail": True}}}}})
    fname = unique("nestfail")
    stack = heat.make(fname, failing, disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    assert not [s for s in heat.req("GET", "/stacks", params={"show_nested": "true"}).json()[
        "stacks"] if s["parent"] == stack["id"]]
    assert heat.req("DELETE", url).status_code == 204
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"
    assert not [s for s in heat.req("GET", "/stacks", params={"show_nested": "true"}).json()[
        "stacks"] if s["parent"] == stack["id"]]


def test_cancel_update_rolls_back(heat):
    name = unique("cancel")
    heat.make(name, tmpl({"a": _test_resource("one")}), disable_rollback=False)
    url = heat.url(name)
    slow = tmpl({"a": _test_resource("two", action_wait_secs={"update": 30})})
    assert heat.req("PUT", url, json={"template": slow}).status_code == 202
    deadline = time.monotonic() + 60
    while heat.resources(name)["a"]["resource_status"] != "UPDATE_IN_PROGRESS":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    r = heat.req("POST", url + "/actions", json={"cancel_update": None})
    assert r.status_code == 200, r.text
    stack = heat.wait(url)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE", stack["stack_status_reason"]
    a = heat.req("GET", url + "/resources/a").json()["resource"]
    assert a["attributes"]["output"] == "one"


def test_export_abandon_adopt_snapshots_and_nested_links(heat, api, monkeypatch):
    name = unique("exp")
    group = {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": 2, "resource_def": {"type": "OS::Heat::RandomString"}}}
    heat.make(name, tmpl({"g": group, "v": {"type": "OS::Heat::Value",
                                            "properties": {"value": 1}}}), tags="t1")
    url = heat.url(name)
    data = heat.req("GET", url + "/export").json()
    assert data["name"] == name and data["status"] == "COMPLETE" and data["tags"] == ["t1"]
    assert data["template"]["resources"]["g"] == group
    assert set(data["resources"]) == {"g", "v"}
    assert set(data["resources"]["g"]["resources"]) == {"0", "1"}
    assert data["resources"]["g"]["resources"]["0"]["type"] == "OS::Heat::RandomString"
    # the lookup by name reaches export too; an unknown path below the id is a 404
    r = heat.req("GET", f"/stacks/{name}/export", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"].endswith(url + "/export")
    heat_error(heat.req("GET", url + "/bogus"), 404, "NotFound")
    # a nested stack's link carries its name and id (clients follow it)
    g = heat.resources(name)["g"]
    nested = next(link["href"] for link in g["links"] if link["rel"] == "nested")
    path = nested.split(f"/orchestration/v1/{heat.project}")[1]
    assert heat.req("GET", path).json()["stack"]["parent"] == url.split("/")[-1]
    shown = heat.req("GET", url + "/resources/g").json()["resource"]
    assert [link["href"] for link in shown["links"] if link["rel"] == "nested"] == [nested]
    # upstream's enable_stack_abandon / enable_stack_adopt switched off: its 400s
    from stackling.orchestration import limits

    monkeypatch.setattr(limits, "ENABLE_STACK_ABANDON", False)
    monkeypatch.setattr(limits, "ENABLE_STACK_ADOPT", False)
    assert heat_error(heat.req("DELETE", url + "/abandon"), 400, "NotSupported") == \
        "Stack Abandon is not supported."
    message = heat_error(heat.create(unique(), tmpl(), adopt_stack_data="{}"), 400,
                         "NotSupported")
    assert message == "Stack Adopt is not supported."
    monkeypatch.undo()
    heat_error(heat.req("GET", url + "/snapshots/nope"), 404, "EntityNotFound")
    heat_error(heat.req("DELETE", url + "/snapshots/nope"), 404, "EntityNotFound")
    # a snapshot of a stack with a nested one: the group's members inside its data
    snap = heat.req("POST", url + "/snapshots", json={}).json()
    assert snap["name"] is None
    assert heat.wait(url)["stack_status"] == "SNAPSHOT_COMPLETE"
    snap = heat.req("GET", url + f"/snapshots/{snap['id']}").json()["snapshot"]
    assert set(snap["data"]["resources"]["g"]["resources"]) == {"0", "1"}
    # abandon: the whole tree goes, the data has the members; adopt brings them back
    values = heat.req("GET", path + "/resources").json()["resources"]
    ids = {r["resource_name"]: r["physical_resource_id"] for r in values}
    abandoned = heat.req("DELETE", url + "/abandon")
    assert abandoned.status_code == 200, abandoned.text
    data = abandoned.json()
    assert heat.req("GET", f"/stacks/{name}").status_code == 404
    assert heat.req("GET", path).json()["stack"]["stack_status"] == "DELETE_COMPLETE"
    r = heat.create(name, None, adopt_stack_data=json.dumps(data))
    assert r.status_code == 201, r.text
    new_url = heat.url(name)
    adopted = heat.wait(new_url)
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted["stack_status_reason"]
    g = heat.resources(name)["g"]
    assert g["resource_status"] == "ADOPT_COMPLETE"
    child = heat.req("GET", new_url + "/resources", params={"nested_depth": 1}).json()
    members = {r["resource_name"]: r for r in child["resources"] if r.get("parent_resource")}
    assert {k: m["physical_resource_id"] for k, m in members.items()} == ids
    assert {m["resource_status"] for m in members.values()} == {"ADOPT_COMPLETE"}


def test_resource_type_template_and_services(heat, api):
    hot = heat.req("GET", "/resource_types/OS::Heat::RandomString/template",
                   params={"template_type": "hot"}).json()
    assert hot["heat_template_version"] == "2016-10-14"
    assert hot["parameters"]["length"] == {
        "type": "number", "description": hot["parameters"]["length"]["description"],
        "default": 32}
    assert hot["resources"]["RandomString"]["properties"]["length"] == {"get_param": "length"}
    assert hot["outputs"]["value"]["value"] == {"get_attr": ["RandomString", "value"]}
    cfn = heat.req("GET", "/resource_types/OS::Heat::RandomString/template").json()
    assert cfn["HeatTemplateFormatVersion"] == "2012-12-12"
    assert cfn["Parameters"]["length"]["Type"] == "Number"
    heat_error(heat.req("GET", "/resource_types/OS::Heat::RandomString/template",
                        params={"template_type": "xml"}), 400)
    heat_error(heat.req("GET", "/services"), 403, "Forbidden")
    admin = Heat(api, token=api.token("admin"))
    (service,) = admin.req("GET", "/services").json()["services"]
    assert service["binary"] == "heat-engine" and service["status"] == "up"
