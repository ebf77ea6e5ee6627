"""Resource signals: OS::Heat::WaitCondition + WaitConditionHandle (count, timeout, data
keyed by signal id, FAILURE), the handle's own token, SwiftSignal refused without Swift,
TestResource signals, and hooks (pre-create/pre-update/pre-delete) cleared by a signal."""

from __future__ import annotations

import json
import time

import pytest

from tests.api.test_orchestration import Heat, heat_error, tmpl, unique


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def _wait_tmpl(count=1, timeout=600):
    return tmpl({"handle": {"type": "OS::Heat::WaitConditionHandle"},
                 "wait": {"type": "OS::Heat::WaitCondition", "properties": {
                     "handle": {"get_resource": "handle"}, "count": count,
                     "timeout": timeout}},
                 "after": {"type": "OS::Heat::Value", "depends_on": "wait",
                           "properties": {"value": "x"}}},
                outputs={"data": {"value": {"get_attr": ["wait", "data"]}},
                         "token": {"value": {"get_attr": ["handle", "token"]}},
                         "endpoint": {"value": {"get_attr": ["handle", "endpoint"]}},
                         "curl": {"value": {"get_attr": ["handle", "curl_cli"]}}})


def _status(heat, url):
    return heat.req("GET", url).json()["stack"]["stack_status"]


def _sig(heat, url, res, data=None, **kw):
    return heat.req("POST", f"{url}/resources/{res}/signal",
                    **({"json": data} if data is not None else {}), **kw)


def test_wait_condition_counts_signals_and_keeps_their_data(api, heat):
    name = unique("wc")
    assert heat.create(name, _wait_tmpl(count=2), disable_rollback=True).status_code == 201
    url = heat.url(name)
    assert heat.resources(name)["wait"]["resource_status"] == "CREATE_IN_PROGRESS"
    r = _sig(heat, url, "handle", {"status": "SUCCESS", "data": "one", "id": "a"})
    assert r.status_code == 200, r.text
    assert _status(heat, url) == "CREATE_IN_PROGRESS"
    assert _sig(heat, url, "handle").status_code == 200  # no data: SUCCESS, id 2
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    out = heat.outputs(stack)
    assert json.loads(out["data"]) == {"a": "one", "2": None}
    meta = heat.req("GET", f"{url}/resources/handle/metadata").json()["metadata"]
    assert meta["a"] == {"status": "SUCCESS", "reason": "Signal 1 received", "data": "one"}
    assert out["endpoint"].endswith(f"{url}/resources/handle/signal")
    assert out["curl"].startswith("curl -i -X POST -H 'X-Auth-Token: ")
    events = heat.req("GET", f"{url}/resources/handle/events").json()["events"]
    assert [e["resource_status"] for e in events].count("SIGNAL_COMPLETE") == 2


def test_handle_token_signals_only_its_handle(api, heat):
    name = unique("wct")
    heat.create(name, _wait_tmpl(), disable_rollback=True)
    url = heat.url(name)
    handle = heat.req("GET", f"{url}/resources/handle").json()["resource"]
    token = handle["attributes"]["token"]
    assert token
    full = f"{heat.base}{url}"
    r = api.request("POST", f"{full}/resources/wait/signal", token=token, json={})
    assert r.status_code == 401
    r = api.request("GET", full, token=token)
    assert r.status_code == 401
    r = api.request("POST", f"{full}/resources/handle/signal", token="nope", json={})
    assert r.status_code == 401
    r = api.request("POST", f"{full}/resources/handle/signal", token=token,
                    json={"status": "SUCCESS", "data": "via-token"})
    assert r.status_code == 200, r.text
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(heat.outputs(stack)["data"]) == {"1": "via-token"}


def test_failure_signal_and_timeout_fail_the_wait(api, heat):
    name = unique("wcf")
    heat.create(name, _wait_tmpl(count=2), disable_rollback=True)
    url = heat.url(name)
    _sig(heat, url, "handle", {"status": "FAILURE", "reason": "it broke"})
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "WaitConditionFailure: resources.wait: it broke" in stack["stack_status_reason"]
    r = _sig(heat, url, "handle", {"status": "BOGUS"})
    assert "Metadata format invalid" in heat_error(r, 400)

    name = unique("wcto")
    heat.create(name, _wait_tmpl(count=2, timeout=1), disable_rollback=True)
    url = heat.url(name)
    _sig(heat, url, "handle", {"reason": "first"})
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "WaitConditionTimeout: resources.wait: 1 of 2 received - first" in \
        stack["stack_status_reason"]


def test_signal_errors(api, heat):
    name = unique("sig")
    stack = heat.make(name, tmpl({"v": {"type": "OS::Heat::Value",
                                        "properties": {"value": 1}}}))
    url = heat.url(name)
    r = _sig(heat, url, "v", {"x": 1})
    assert heat_error(r, 400, "ResourceActionNotSupported") == \
        "signal is not supported for resource."
    heat_error(_sig(heat, url, "nope", {}), 404)
    r = api.request("POST", f"{heat.base}{url}/resources/v/signal", user=None, json={})
    assert r.status_code == 401
    r = api.request("POST", f"{heat.base}{url}/resources/v/signal", user="admin", json={})
    assert r.status_code == 403  # another project's URL
    assert stack["stack_status"] == "CREATE_COMPLETE"


def test_swift_signal_is_not_available(heat):
    r = heat.create(unique("sw"), tmpl({
        "h": {"type": "OS::Heat::SwiftSignalHandle"},
        "s": {"type": "OS::Heat::SwiftSignal", "properties": {
            "handle": {"get_resource": "h"}, "timeout": 10}}}))
    msg = heat_error(r, 400)
    assert "HEAT-E99001 Service swift is not available for resource type " \
           "OS::Heat::SwiftSignal" in msg or "OS::Heat::SwiftSignalHandle" in msg


def test_signal_policy_reader_and_other_project(api, heat):
    """The signal route takes a handle's token itself (so the policy matrix skips it):
    Heat's `resource:signal` rule still holds for Keystone tokens."""
    admin = api.token("admin")
    tag = unique("")
    pid = api.post("/identity/v3/projects", token=admin, json={"project": {
        "name": f"sig-{tag}", "domain_id": "default"}}).json()["project"]["id"]
    roles = {r["name"]: r["id"] for r in api.get("/identity/v3/roles", token=admin
                                                  ).json()["roles"]}
    tokens = {}
    for role in ("reader", "member"):
        uid = api.post("/identity/v3/users", token=admin, json={"user": {
            "name": f"sig-{role}-{tag}", "password": "pw", "domain_id": "default"}}
        ).json()["user"]["id"]
        api.put(f"/identity/v3/projects/{pid}/users/{uid}/roles/{roles[role]}", token=admin)
        r = api.client.post("/identity/v3/auth/tokens", json={"auth": {"identity": {
            "methods": ["password"], "password": {"user": {
                "name": f"sig-{role}-{tag}", "domain": {"id": "default"}, "password": "pw"}}},
            "scope": {"project": {"id": pid}}}})
        tokens[role] = Heat(api, token=r.headers["X-Subject-Token"])
    member, reader = tokens["member"], tokens["reader"]
    name = unique("sigpol")
    member.create(name, _wait_tmpl(), disable_rollback=True)
    url = member.url(name)
    heat_error(_sig(reader, url, "handle", {}), 403, "Forbidden")
    heat_error(_sig(heat, url, "handle", {}), 404)  # another project's stack
    assert _sig(member, url, "handle", {}).status_code == 200
    assert member.wait(url)["stack_status"] == "CREATE_COMPLETE"


def _events_of(heat, url, res):
    return [(e["resource_status"], e["resource_status_reason"]) for e in heat.req(
        "GET", f"{url}/resources/{res}/events").json()["events"]]


def test_hooks_pause_create_update_and_delete_until_cleared(api, heat):
    name = unique("hook")
    env = {"resource_registry": {"resources": {
        "a": {"hooks": ["pre-create", "pre-update", "pre-delete"]}}}}
    t = tmpl({"a": {"type": "OS::Heat::TestResource", "properties": {"value": "one"}},
              "b": {"type": "OS::Heat::TestResource", "properties": {
                  "value": {"get_attr": ["a", "output"]}}}})
    assert heat.create(name, t, environment=env).status_code == 201
    url = heat.url(name)
    res = heat.resources(name)
    assert res["a"]["resource_status"] == "CREATE_IN_PROGRESS"
    assert res["a"]["resource_status_reason"] == \
        "CREATE paused until Hook pre-create is cleared"
    assert "b" not in res or res["b"]["resource_status"] == "INIT_COMPLETE"
    assert ("CREATE_IN_PROGRESS", "CREATE paused until Hook pre-create is cleared") in \
        _events_of(heat, url, "a")
    # a hook not set is Heat's 400; a wrong one too
    assert "pre-update hook is not defined" in heat_error(
        _sig(heat, url, "a", {"unset_hook": "pre-update"}), 400)
    heat_error(_sig(heat, url, "a", {"unset_hook": "bogus"}), 400)
    assert _status(heat, url) == "CREATE_IN_PROGRESS"
    assert _sig(heat, url, "a", {"unset_hook": "pre-create"}).status_code == 200
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert ("CREATE_IN_PROGRESS", "Hook pre-create is cleared") in _events_of(heat, url, "a")

    t["resources"]["a"]["properties"]["value"] = "two"
    r = heat.req("PUT", url, json={"template": t, "environment": env})
    assert r.status_code == 202, r.text
    res = heat.resources(name)
    assert res["a"]["resource_status"] == "UPDATE_IN_PROGRESS"
    assert _status(heat, url) == "UPDATE_IN_PROGRESS"
    assert _sig(heat, url, "a", {"unset_hook": "pre-update"}).status_code == 200
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack
    shown = heat.req("GET", f"{url}/resources/a").json()["resource"]
    assert shown["attributes"]["output"] == "two"

    assert heat.req("DELETE", url).status_code == 204
    res = heat.resources(name)
    assert res["a"]["resource_status"] == "DELETE_IN_PROGRESS"
    assert "b" not in res  # dependents first
    assert _sig(heat, url, "a", {"unset_hook": "pre-delete"}).status_code == 200
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"


def test_test_resource_signal_ends_its_wait(api, heat):
    name = unique("trs")
    t = tmpl({"t": {"type": "OS::Heat::TestResource", "properties": {
        "value": "v", "action_wait_secs": {"create": -1}}}})
    assert heat.create(name, t).status_code == 201
    url = heat.url(name)
    assert heat.resources(name)["t"]["resource_status"] == "CREATE_IN_PROGRESS"
    assert _sig(heat, url, "t", {"reason": "go"}).status_code == 200
    assert heat.wait(url)["stack_status"] == "CREATE_COMPLETE"
    assert ("SIGNAL_IN_PROGRESS", "Signal: go") in _events_of(heat, url, "t")
    assert _sig(heat, url, "t").status_code == 200  # recorded, nothing to end
    assert ("SIGNAL_COMPLETE", "No signal details provided") in _events_of(heat, url, "t")


def _until(fn, what):
    for _ in range(3000):
        value = fn()
        if value:
            return value
        time.sleep(0.02)  # polling a condition, not timing anything
    raise AssertionError(what)


def _nested_url(heat, url, res):
    child = heat.req("GET", f"{url}/resources/{res}").json()["resource"]
    shown = heat.req("GET", f"/stacks/{child['physical_resource_id']}").json()["stack"]
    return f"/stacks/{shown['stack_name']}/{shown['id']}"


def _res(heat, url, res):
    r = heat.req("GET", f"{url}/resources/{res}")
    return r.json()["resource"] if r.status_code == 200 else {}


def _paused(heat, url, res, reason):
    r = heat.req("GET", f"{url}/resources/{res}")
    return r.status_code == 200 and r.json()["resource"]["resource_status_reason"] == reason


def test_waits_and_hooks_inside_nested_stacks(api, heat):
    """A nested stack's wait condition waits for its signal and its resources meet the
    hooks the registry sets for them (`resources: {<nested>: {<name>: {hooks}}}`)."""
    inner = {"heat_template_version": "2018-08-31", "resources": {
        "h": {"type": "OS::Heat::WaitConditionHandle"},
        "w": {"type": "OS::Heat::WaitCondition", "properties": {
            "handle": {"get_resource": "h"}, "timeout": 600}}},
        "outputs": {"data": {"value": {"get_attr": ["w", "data"]}}}}
    name = unique("nestwc")
    r = heat.create(name, tmpl({"n": {"type": "inner.yaml"}},
                               outputs={"d": {"value": {"get_attr": ["n", "data"]}}}),
                    files={"inner.yaml": json.dumps(inner)}, disable_rollback=True)
    assert r.status_code == 201, r.text
    url = heat.url(name)
    _until(lambda: _res(heat, url, "n").get("physical_resource_id"), "no nested stack")
    nested = _nested_url(heat, url, "n")
    _until(lambda: _res(heat, nested, "w").get("resource_status") == "CREATE_IN_PROGRESS",
           "no wait")
    assert _status(heat, url) == "CREATE_IN_PROGRESS"
    assert _status(heat, nested) == "CREATE_IN_PROGRESS"
    assert _sig(heat, nested, "h", {"id": "1", "data": "inside"}).status_code == 200
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert json.loads(heat.outputs(stack)["d"]) == {"1": "inside"}
    assert _status(heat, nested) == "CREATE_COMPLETE"

    # hooks: the parent's own `a` entry is not the nested `a`'s; `n: {a: ...}` is
    name = unique("nesthk")
    value = {"heat_template_version": "2018-08-31",
             "parameters": {"v": {"type": "number", "default": 1}}, "resources": {
                 "a": {"type": "OS::Heat::TestResource",
                       "properties": {"value": {"get_param": "v"}}}}}
    env = {"resource_registry": {"resources": {
        "a": {"hooks": "pre-create"},
        "n": {"a": {"hooks": ["pre-create", "pre-delete"]}},
        "g": {"1": {"hooks": "pre-create"}}}}}
    r = heat.create(name, tmpl({"n": {"type": "value.yaml"}, "g": {
        "type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": "OS::Heat::TestResource"}}}}),
        files={"value.yaml": json.dumps(value)}, environment=env)
    assert r.status_code == 201, r.text
    url = heat.url(name)
    reason = "CREATE paused until Hook pre-create is cleared"
    _until(lambda: _res(heat, url, "n").get("physical_resource_id") and _res(
        heat, url, "g").get("physical_resource_id"), "no nested stacks")
    n_url, g_url = _nested_url(heat, url, "n"), _nested_url(heat, url, "g")
    _until(lambda: _paused(heat, n_url, "a", reason), "nested a not paused")
    _until(lambda: _paused(heat, g_url, "1", reason), "member 1 not paused")
    assert heat.req("GET", f"{g_url}/resources/0").json()["resource"][
        "resource_status"] == "CREATE_COMPLETE"
    assert heat.resources(name)["n"]["resource_status"] == "CREATE_IN_PROGRESS"
    assert _sig(heat, n_url, "a", {"unset_hook": "pre-create"}).status_code == 200
    assert _sig(heat, g_url, "1", {"unset_hook": "pre-create"}).status_code == 200
    stack = heat.wait(url)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert ("CREATE_IN_PROGRESS", "Hook pre-create is cleared") in _events_of(heat, n_url, "a")
    # an update's environment may set hooks for nested resources too
    t = tmpl({"n": {"type": "value.yaml", "properties": {"v": 2}}, "g": {
        "type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": "OS::Heat::TestResource"}}}})
    env["resource_registry"]["resources"]["n"]["a"]["hooks"] = ["pre-update", "pre-delete"]
    r = heat.req("PUT", url, json={"template": t, "environment": env,
                                   "files": {"value.yaml": json.dumps(value)}})
    assert r.status_code == 202, r.text
    _until(lambda: _paused(heat, n_url, "a", "UPDATE paused until Hook pre-update is cleared"),
           "nested a not paused on update")
    assert _status(heat, url) == "UPDATE_IN_PROGRESS"
    assert _sig(heat, n_url, "a", {"unset_hook": "pre-update"}).status_code == 200
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack
    assert heat.req("GET", f"{n_url}/resources/a").json()["resource"]["attributes"][
        "output"] == "2"
    # the nested resource's pre-delete hook holds the parent's delete until cleared
    assert heat.req("DELETE", url).status_code == 204
    _until(lambda: _paused(heat, n_url, "a", "DELETE paused until Hook pre-delete is cleared"),
           "nested a not paused on delete")
    assert _status(heat, url) == "DELETE_IN_PROGRESS"
    assert _sig(heat, n_url, "a", {"unset_hook": "pre-delete"}).status_code == 200
    assert heat.wait(url)["stack_status"] == "DELETE_COMPLETE"
