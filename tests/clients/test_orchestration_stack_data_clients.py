"""Stack snapshots (create, list, show, delete, restore) and abandon/adopt through the real
clients: openstacksdk on every backend, the `openstack stack snapshot ...`, `stack
abandon` and `stack adopt` CLI on SQLite."""

from __future__ import annotations

import json
import uuid

import yaml

from tests.conftest import sqlite_only


def _template(value: str, extra: bool = False) -> dict:
    t = {"heat_template_version": "2018-08-31",
         "parameters": {"p": {"type": "string", "default": "d"}},
         "resources": {
             "net": {"type": "OS::Neutron::Net"},
             "rand": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
             "val": {"type": "OS::Heat::Value", "properties": {"value": value}}},
         "outputs": {"val": {"value": {"get_attr": ["val", "value"]}},
                     "rand": {"value": {"get_attr": ["rand", "value"]}}}}
    if extra:
        t["resources"]["more"] = {"type": "OS::Heat::TestResource"}
    return t


def _wait(heat, stack, status):
    failed = status.replace("COMPLETE", "FAILED")
    stack = _until(heat, stack, (status, failed))
    assert stack.status == status, stack.status_reason
    return stack


def _until(heat, stack, statuses):
    import time

    for _ in range(1200):
        stack = heat.get_stack(stack.id)
        if stack.status in statuses:
            return stack
        time.sleep(0.1)  # polling a condition, not timing anything
    raise AssertionError(f"{stack.status}: {stack.status_reason}")


def _raw_until(heat, url, statuses):
    import time

    shown = {}
    for _ in range(1200):
        shown = heat.get(url).json()["stack"]
        if shown["stack_status"] in statuses:
            return shown
        time.sleep(0.1)  # polling a condition, not timing anything
    raise AssertionError(shown)


def _outputs(heat, stack) -> dict:
    return {o["output_key"]: o["output_value"] for o in heat.get_stack(stack.id).outputs}


def _resources(heat, stack) -> dict:
    return {r.name: r for r in heat.resources(stack)}


def test_sdk_snapshot_and_restore(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    stack = heat.create_stack(name=f"snap-{uuid.uuid4().hex[:6]}", template=_template("one"),
                              parameters={"p": "given"})
    stack = _wait(heat, stack, "CREATE_COMPLETE")
    before = _resources(heat, stack)
    rand = _outputs(heat, stack)["rand"]
    base = f"/stacks/{stack.name}/{stack.id}/snapshots"
    assert heat.get(base).json() == {"snapshots": []}
    r = heat.post(base, json={"name": "first"})
    assert r.status_code == 200, r.text
    made = r.json()
    assert made["name"] == "first" and made["status"] in ("IN_PROGRESS", "COMPLETE")
    assert set(made) == {"id", "name", "action", "status", "status_reason", "data",
                         "creation_time"}
    stack = _wait(heat, stack, "SNAPSHOT_COMPLETE")
    shown = heat.get(f"{base}/{made['id']}").json()["snapshot"]
    assert shown["status"] == "COMPLETE"
    assert shown["status_reason"] == "Stack SNAPSHOT completed successfully"
    data = shown["data"]
    assert data["template"] == _template("one") and data["id"] == stack.id
    assert data["action"] == "SNAPSHOT" and data["status"] == "COMPLETE"
    assert data["environment"]["parameters"] == {"p": "given"}
    assert data["resources"]["net"]["resource_id"] == before["net"].physical_resource_id
    assert data["resources"]["val"]["action"] == "SNAPSHOT"
    assert {r.name: r.status for r in heat.resources(stack)} == {
        "net": "SNAPSHOT_COMPLETE", "rand": "SNAPSHOT_COMPLETE", "val": "SNAPSHOT_COMPLETE"}
    listed = heat.get(base).json()["snapshots"]
    assert [s["id"] for s in listed] == [made["id"]]

    heat.update_stack(stack, template=_template("two", extra=True))
    stack = _wait(heat, stack, "UPDATE_COMPLETE")
    assert _outputs(heat, stack)["val"] == "two" and "more" in _resources(heat, stack)

    r = heat.post(f"{base}/{made['id']}/restore")
    assert r.status_code == 202, r.text
    stack = _wait(heat, stack, "RESTORE_COMPLETE")
    assert stack.status_reason == "Stack RESTORE completed successfully"
    after = _resources(heat, stack)
    assert set(after) == {"net", "rand", "val"}
    assert after["net"].physical_resource_id == before["net"].physical_resource_id
    assert _outputs(heat, stack) == {"val": "one", "rand": rand}
    assert heat.get(f"/stacks/{stack.name}/{stack.id}/template").json() == _template("one")
    events = heat.get(f"/stacks/{stack.name}/{stack.id}/events").json()["events"]
    reasons = [e["resource_status_reason"] for e in events if e["resource_name"] == stack.name]
    assert "Stack RESTORE started" in reasons and "Stack SNAPSHOT started" in reasons

    assert heat.delete(f"{base}/{made['id']}").status_code == 204
    assert heat.get(f"{base}/{made['id']}").status_code == 404
    assert heat.post(f"{base}/{made['id']}/restore").status_code == 404
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)


def test_sdk_abandon_keeps_resources_and_adopt_takes_them(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    name = f"ab-{uuid.uuid4().hex[:6]}"
    stack = heat.create_stack(name=name, template=_template("one"))
    stack = _wait(heat, stack, "CREATE_COMPLETE")
    net_id = _resources(heat, stack)["net"].physical_resource_id
    rand = _outputs(heat, stack)["rand"]
    data = heat.abandon_stack(stack)
    assert data["name"] == name and data["id"] == stack.id
    assert data["template"] == _template("one")
    assert data["resources"]["net"]["resource_id"] == net_id
    assert data["resources"]["net"]["type"] == "OS::Neutron::Net"
    assert heat.get(f"/stacks/{name}").status_code == 404
    assert conn.network.get_network(net_id).id == net_id  # the network is left alone

    r = heat.post("/stacks", json={"stack_name": name, "adopt_stack_data": json.dumps(data)})
    assert r.status_code == 201, r.text
    # (openstacksdk's get_stack takes ADOPT_COMPLETE for a deleted stack: raw GETs here)
    url = f"/stacks/{name}/{r.json()['stack']['id']}"
    shown = _raw_until(heat, url, ("ADOPT_COMPLETE", "ADOPT_FAILED"))
    assert shown["stack_status"] == "ADOPT_COMPLETE", shown["stack_status_reason"]
    assert shown["id"] != stack.id
    res = {r["resource_name"]: r for r in heat.get(url + "/resources").json()["resources"]}
    assert res["net"]["physical_resource_id"] == net_id
    assert res["net"]["resource_status"] == "ADOPT_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in shown["outputs"]} == {
        "val": "one", "rand": rand}
    assert heat.delete(url).status_code == 204
    _raw_until(heat, url, ("DELETE_COMPLETE",))
    assert conn.network.find_network(net_id) is None  # the adopted stack owned it

    # adopt data without a resource's id: ADOPT_FAILED, as upstream
    data["resources"]["rand"] = {**data["resources"]["rand"], "resource_id": None,
                                 "status": "FAILED"}
    r = heat.post("/stacks", json={"stack_name": name + "x",
                                   "adopt_stack_data": json.dumps(data)})
    assert r.status_code == 201
    failed = _raw_until(heat, f"/stacks/{name}x/{r.json()['stack']['id']}",
                        ("ADOPT_FAILED", "ADOPT_COMPLETE"))
    assert failed["stack_status"] == "ADOPT_FAILED"
    assert "Resource ID was not provided." in failed["stack_status_reason"]
    bad = heat.post("/stacks", json={"stack_name": name + "y", "adopt_stack_data": "{}"})
    assert bad.status_code == 400 and "Invalid adopt data" in bad.text


@sqlite_only
def test_cli_snapshot_abandon_adopt(cloud, tmp_path):
    def cli(*args, parse=True):
        if "--wait" in args and parse:  # event lines first, then the JSON document
            out = cloud.cli(*args, cloud="stackling", parse=False)
            return json.loads(out if out.startswith("{") else out[out.index("\n{") + 1:])
        return cloud.cli(*args, cloud="stackling", parse=parse)

    (tmp_path / "t.yaml").write_text(yaml.safe_dump(_template("one")))
    (tmp_path / "t2.yaml").write_text(yaml.safe_dump(_template("two", extra=True)))
    name = f"cs-{uuid.uuid4().hex[:6]}"
    cli("stack", "create", "--wait", "-t", str(tmp_path / "t.yaml"), "-f", "json", name)
    made = cli("stack", "snapshot", "create", "--name", "snap1", name, "-f", "json")
    assert made["name"] == "snap1"
    snap_id = made["ID"]
    listed = []
    for _ in range(600):
        listed = cli("stack", "snapshot", "list", name, "-f", "json")
        if listed and listed[0]["status"] == "COMPLETE":
            break
    assert [(s["id"], s["name"], s["status"]) for s in listed] == [
        (snap_id, "snap1", "COMPLETE")]
    shown = yaml.safe_load(cli("stack", "snapshot", "show", name, snap_id, parse=False))
    assert shown["snapshot"]["data"]["template"] == _template("one")
    cli("stack", "update", "--wait", "-t", str(tmp_path / "t2.yaml"), name, "-f", "json")
    cli("stack", "snapshot", "restore", name, snap_id, parse=False)
    status = None
    for _ in range(600):
        status = cli("stack", "show", name, "-f", "json")["stack_status"]
        if status != "RESTORE_IN_PROGRESS":
            break
    assert status == "RESTORE_COMPLETE"
    names = {r["resource_name"] for r in cli("stack", "resource", "list", name, "-f", "json")}
    assert names == {"net", "rand", "val"}
    cli("stack", "snapshot", "delete", "-y", name, snap_id, parse=False)
    assert cli("stack", "snapshot", "list", name, "-f", "json") == []

    out = tmp_path / "abandoned.json"
    cli("stack", "abandon", "--output-file", str(out), name, parse=False)
    data = json.loads(out.read_text())
    net_id = data["resources"]["net"]["resource_id"]
    assert name not in [s["Stack Name"] for s in cli("stack", "list", "-f", "json")]
    assert cli("network", "show", net_id, "-f", "json")["id"] == net_id
    adopted = cli("stack", "adopt", "--wait", "--adopt-file", str(out), name, "-f", "json")
    assert adopted["stack_status"] == "ADOPT_COMPLETE"
    res = cli("stack", "resource", "show", name, "net", "-f", "json")
    assert res["physical_resource_id"] == net_id
    cli("stack", "delete", "--yes", "--wait", name, parse=False)
