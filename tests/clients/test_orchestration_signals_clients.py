"""Signals and hooks through the real clients: openstacksdk on every backend (two
signals at once both count; the handle's own token from its `curl_cli`), and the
`openstack stack resource signal` / `stack hook poll` / `stack hook clear` CLI on SQLite."""

from __future__ import annotations

import json
import threading
import uuid

import requests
import yaml

from tests.conftest import sqlite_only

WAIT = {"heat_template_version": "2018-08-31", "resources": {
    "handle": {"type": "OS::Heat::WaitConditionHandle"},
    "wait": {"type": "OS::Heat::WaitCondition", "properties": {
        "handle": {"get_resource": "handle"}, "count": 3, "timeout": 600}}},
    "outputs": {"data": {"value": {"get_attr": ["wait", "data"]}},
                "curl": {"value": {"get_attr": ["handle", "curl_cli"]}},
                "endpoint": {"value": {"get_attr": ["handle", "endpoint"]}},
                "token": {"value": {"get_attr": ["handle", "token"]}}}}


def test_sdk_concurrent_signals_all_count(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    stack = heat.create_stack(name=f"sig-{uuid.uuid4().hex[:6]}", template=WAIT)
    stack = heat.get_stack(stack.id)
    assert stack.status == "CREATE_IN_PROGRESS"
    path = f"/stacks/{stack.name}/{stack.id}/resources/handle/signal"
    barrier = threading.Barrier(2)
    results = []

    def send(i):
        barrier.wait()
        results.append(heat.post(path, json={"id": f"s{i}", "data": i}).status_code)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [200, 200]
    meta = heat.get(f"/stacks/{stack.name}/{stack.id}/resources/handle/metadata").json()
    assert set(meta["metadata"]) == {"s0", "s1"}
    assert heat.get_stack(stack.id).status == "CREATE_IN_PROGRESS"  # 2 of 3
    # the third through the handle's own token, as a guest would (no Keystone token)
    res = heat.get(f"/stacks/{stack.name}/{stack.id}/resources/handle").json()["resource"]
    attrs = res["attributes"]
    assert attrs["curl_cli"].endswith(attrs["endpoint"])
    r = requests.post(attrs["endpoint"], json={"id": "guest", "data": "g"},
                      headers={"X-Auth-Token": attrs["token"]}, timeout=30)
    assert r.status_code == 200, r.text
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=120)
    data = {o["output_key"]: o["output_value"] for o in heat.get_stack(stack.id).outputs}
    assert json.loads(data["data"]) == {"s0": 0, "s1": 1, "guest": "g"}
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)


@sqlite_only
def test_cli_signal_and_hooks(cloud, tmp_path):
    def cli(*args, parse=True):
        return cloud.cli(*args, cloud="stackling", parse=parse)

    t = dict(WAIT)
    t["resources"] = dict(WAIT["resources"])
    t["resources"]["wait"] = {**WAIT["resources"]["wait"], "properties": {
        **WAIT["resources"]["wait"]["properties"], "count": 1}}
    t["resources"]["res"] = {"type": "OS::Heat::TestResource", "depends_on": "wait"}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(t))
    (tmp_path / "env.yaml").write_text(yaml.safe_dump({"resource_registry": {"resources": {
        "res": {"hooks": "pre-create"}}}}))
    name = f"cli-{uuid.uuid4().hex[:6]}"
    cli("stack", "create", "-t", str(tmp_path / "t.yaml"), "-e", str(tmp_path / "env.yaml"),
        "-f", "json", name)
    cli("stack", "resource", "signal", name, "handle", "--data",
        json.dumps({"status": "SUCCESS", "data": "from-cli"}), parse=False)
    polled = []
    for _ in range(600):  # the wait completes, then `res` meets its hook
        polled = cli("stack", "hook", "poll", name, "-f", "json")
        if polled:
            break
    assert [p["Resource Name"] for p in polled] == ["res"]
    assert polled[0]["Resource Status Reason"] == \
        "CREATE paused until Hook pre-create is cleared"
    cli("stack", "hook", "clear", "--pre-create", name, "res", parse=False)
    shown = None
    for _ in range(600):
        shown = cli("stack", "show", name, "-f", "json")
        if shown["stack_status"] != "CREATE_IN_PROGRESS":
            break
    assert shown["stack_status"] == "CREATE_COMPLETE"
    outputs = cli("stack", "output", "show", "--all", "-f", "json", name)
    assert json.loads(outputs["data"]["output_value"]) == {"1": "from-cli"}


def test_sdk_hooks_cleared_by_signal(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    template = {"heat_template_version": "2018-08-31", "resources": {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": "v"}}}}
    env = {"resource_registry": {"resources": {"a": {"hooks": ["pre-create", "pre-delete"]}}}}
    stack = heat.create_stack(name=f"hk-{uuid.uuid4().hex[:6]}", template=template,
                              environment=env)
    path = f"/stacks/{stack.name}/{stack.id}/resources/a"
    res = heat.get(path).json()["resource"]
    assert res["resource_status"] == "CREATE_IN_PROGRESS"
    assert res["resource_status_reason"] == "CREATE paused until Hook pre-create is cleared"
    assert heat.post(path + "/signal", json={"unset_hook": "pre-create"}).status_code == 200
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="CREATE_COMPLETE",
                                 failures=["CREATE_FAILED"], interval=0.1, wait=120)
    heat.delete_stack(stack)
    assert heat.get(path).json()["resource"]["resource_status"] == "DELETE_IN_PROGRESS"
    assert heat.post(path + "/signal", json={"unset_hook": "pre-delete"}).status_code == 200
    heat.wait_for_delete(stack, interval=0.1, wait=120)
