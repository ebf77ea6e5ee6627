"""Signals and hooks inside nested stacks through the real clients: openstacksdk on
every backend (a WaitCondition in a template resource waits for its signal; hooks set
for nested resources with the registry's `resources: {<nested>: {<name>: {hooks}}}`
pause them until a signal clears them), and `openstack stack hook poll --nested-depth`
and `stack hook clear <nested>/<resource>` on SQLite."""

from __future__ import annotations

import json
import time
import uuid

import yaml

from tests.conftest import sqlite_only

INNER_WAIT = {"heat_template_version": "2018-08-31", "resources": {
    "h": {"type": "OS::Heat::WaitConditionHandle"},
    "w": {"type": "OS::Heat::WaitCondition", "properties": {
        "handle": {"get_resource": "h"}, "count": 2, "timeout": 600}}},
    "outputs": {"data": {"value": {"get_attr": ["w", "data"]}}}}
INNER_VALUE = {"heat_template_version": "2018-08-31", "resources": {
    "a": {"type": "OS::Heat::TestResource", "properties": {"value": "in"}}},
    "outputs": {"out": {"value": {"get_attr": ["a", "output"]}}}}


def _until(fn, what):
    for _ in range(1200):
        value = fn()
        if value:
            return value
        time.sleep(0.1)  # polling a condition, not timing anything
    raise AssertionError(what)


def _resource(heat, stack_path, name) -> dict:
    r = heat.get(f"{stack_path}/resources/{name}")
    return r.json()["resource"] if r.status_code == 200 else {}


def _nested_path(heat, stack_path, name) -> str:
    nested_id = _until(lambda: _resource(heat, stack_path, name).get("physical_resource_id"),
                       f"no nested stack for {name}")
    shown = heat.get(f"/stacks/{nested_id}").json()["stack"]
    return f"/stacks/{shown['stack_name']}/{shown['id']}"


def test_sdk_wait_condition_and_hooks_in_nested_stacks(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    template = {"heat_template_version": "2018-08-31", "resources": {
        "waiter": {"type": "inner_wait.yaml"},
        "valued": {"type": "inner_value.yaml", "depends_on": "waiter"},
        "group": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": "OS::Heat::TestResource"}}}},
        "outputs": {"data": {"value": {"get_attr": ["waiter", "data"]}},
                    "out": {"value": {"get_attr": ["valued", "out"]}}}}
    env = {"resource_registry": {"resources": {
        "valued": {"a": {"hooks": "pre-create"}},
        "group": {"1": {"hooks": ["pre-create", "pre-delete"]}}}}}
    stack = heat.create_stack(name=f"ns-{uuid.uuid4().hex[:6]}", template=template,
                              environment=env, files={
                                  "inner_wait.yaml": json.dumps(INNER_WAIT),
                                  "inner_value.yaml": json.dumps(INNER_VALUE)})
    path = f"/stacks/{stack.name}/{stack.id}"
    waiter = _nested_path(heat, path, "waiter")
    group = _nested_path(heat, path, "group")
    reason = "CREATE paused until Hook pre-create is cleared"
    _until(lambda: _resource(heat, group, "1").get("resource_status_reason") == reason,
           "group member 1 not paused")
    assert _resource(heat, group, "0")["resource_status"] == "CREATE_COMPLETE"
    # the wait condition in the nested stack takes its signals (one signal: 1 of 2)
    _until(lambda: _resource(heat, waiter, "w").get("resource_status") == "CREATE_IN_PROGRESS",
           "no wait condition")
    assert heat.post(f"{waiter}/resources/h/signal", json={"id": "x", "data": 1}) \
        .status_code == 200
    assert heat.get_stack(stack.id).status == "CREATE_IN_PROGRESS"
    assert heat.post(f"{waiter}/resources/h/signal", json={"id": "y", "data": 2}) \
        .status_code == 200
    valued = _nested_path(heat, path, "valued")  # made once the wait completed
    _until(lambda: _resource(heat, valued, "a").get("resource_status_reason") == reason,
           "nested a not paused")
    for target, res in ((valued, "a"), (group, "1")):
        r = heat.post(f"{target}/resources/{res}/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="CREATE_COMPLETE",
                                 failures=["CREATE_FAILED"], interval=0.1, wait=120)
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert json.loads(outputs["data"]) == {"x": 1, "y": 2} and outputs["out"] == "in"
    # the member's pre-delete hook holds the delete until cleared
    heat.delete_stack(stack)
    _until(lambda: _resource(heat, group, "1").get("resource_status_reason") ==
           "DELETE paused until Hook pre-delete is cleared", "member 1 not paused on delete")
    assert heat.post(f"{group}/resources/1/signal", json={"unset_hook": "pre-delete"}) \
        .status_code == 200
    heat.wait_for_delete(stack, interval=0.1, wait=120)


@sqlite_only
def test_cli_hook_poll_and_clear_nested(cloud, tmp_path):
    def cli(*args, parse=True):
        return cloud.cli(*args, cloud="stackling", parse=parse)

    (tmp_path / "inner_value.yaml").write_text(yaml.safe_dump(INNER_VALUE))
    (tmp_path / "parent.yaml").write_text(yaml.safe_dump({
        "heat_template_version": "2018-08-31",
        "resources": {"valued": {"type": "inner_value.yaml"}},
        "outputs": {"out": {"value": {"get_attr": ["valued", "out"]}}}}))
    (tmp_path / "env.yaml").write_text(yaml.safe_dump({"resource_registry": {"resources": {
        "valued": {"a": {"hooks": "pre-create"}}}}}))
    name = f"nh-{uuid.uuid4().hex[:6]}"
    cli("stack", "create", "-t", str(tmp_path / "parent.yaml"), "-e",
        str(tmp_path / "env.yaml"), "-f", "json", name)
    polled = _until(lambda: cli("stack", "hook", "poll", "--nested-depth", "1", name,
                                "-f", "json"), "no hook pending")
    assert [p["Resource Name"] for p in polled] == ["a"]
    assert polled[0]["Stack Name"].startswith(f"{name}-valued-")
    assert polled[0]["Resource Status Reason"] == \
        "CREATE paused until Hook pre-create is cleared"
    assert cli("stack", "hook", "poll", name, "-f", "json") == []  # not at depth 0
    cli("stack", "hook", "clear", "--pre-create", name, "valued/a", parse=False)
    shown = _until(lambda: (lambda s: s if s["stack_status"] != "CREATE_IN_PROGRESS"
                            else None)(cli("stack", "show", name, "-f", "json")),
                   "still in progress")
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert cli("stack", "output", "show", name, "out", "-f", "json")["output_value"] == "in"
    cli("stack", "delete", "--yes", "--wait", name, parse=False)
