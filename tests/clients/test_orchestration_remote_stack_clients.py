"""OS::Heat::Stack (a remote stack in this cloud's region) through the real clients:
openstacksdk on every backend (create with outputs, the unknown region's and the bad
template's 400s, update in place, suspend/resume, check, delete), and the `openstack
stack` CLI on SQLite."""

from __future__ import annotations

import json
import re
import time
import uuid

import yaml

from tests.conftest import sqlite_only

REMOTE = """heat_template_version: 2013-05-23
resources:
  random1:
    type: OS::Heat::RandomString
outputs:
  remote_key:
    value: {get_attr: [random1, value]}
"""


def _parent(region: str | None) -> dict:
    props: dict = {"template": {"get_file": "remote_stack.yaml"}}
    if region is not None:
        props["context"] = {"region_name": region}
    return {"heat_template_version": "2013-05-23",
            "resources": {"my_stack": {"type": "OS::Heat::Stack", "properties": props}},
            "outputs": {"key": {"value": {"get_attr": ["my_stack", "outputs"]}},
                        "name": {"value": {"get_attr": ["my_stack", "stack_name"]}}}}


def _until(heat, url, statuses):
    shown = {}
    for _ in range(1200):
        shown = heat.get(url).json()["stack"]
        if shown["stack_status"] in statuses:
            return shown
        time.sleep(0.1)  # polling a condition, not timing anything
    raise AssertionError(shown)


def _done(heat, url, status):
    shown = _until(heat, url, (status, status.replace("COMPLETE", "FAILED")))
    assert shown["stack_status"] == status, shown["stack_status_reason"]
    return shown


def _outputs(shown) -> dict:
    return {o["output_key"]: o["output_value"] for o in shown["outputs"]}


def _resources(heat, url) -> dict:
    return {r["resource_name"]: r for r in heat.get(url + "/resources").json()["resources"]}


def test_sdk_remote_stack_lifecycle(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    region = next(iter(cloud.sdk().identity.regions())).id
    name = f"rs-{uuid.uuid4().hex[:6]}"
    files = {"remote_stack.yaml": REMOTE}

    bad = heat.post("/stacks", json={"stack_name": name, "template": _parent("DARKHOLE"),
                                     "files": files})
    assert bad.status_code == 400
    assert re.fullmatch(
        'Cannot establish connection to Heat endpoint at region "DARKHOLE" due to '
        '"(?:public|internal|admin)(?:URL)? endpoint for orchestration service in DARKHOLE '
        'region not found"', bad.json()["error"]["message"]), bad.text
    broken = heat.post("/stacks", json={"stack_name": name, "template": _parent(region),
                                        "files": {"remote_stack.yaml": REMOTE.replace(
                                            "resources", "resource")}})
    assert broken.status_code == 400
    assert broken.json()["error"]["message"] == (
        f'Failed validating stack template using Heat endpoint at region "{region}" due to '
        f'"ERROR: The template section is invalid: resource"')

    # a region known only when the stack runs: the create fails with the same message
    late = _parent(None)
    late["resources"]["where"] = {"type": "OS::Heat::Value",
                                  "properties": {"value": "DARKHOLE"}}
    late["resources"]["my_stack"]["properties"]["context"] = {
        "region_name": {"get_attr": ["where", "value"]}}
    r = heat.post("/stacks", json={"stack_name": name + "-late", "template": late,
                                   "files": files})
    assert r.status_code == 201, r.text
    failed = _until(heat, f"/stacks/{name}-late/{r.json()['stack']['id']}",
                    ("CREATE_FAILED", "CREATE_COMPLETE"))
    assert failed["stack_status"] == "CREATE_FAILED"
    assert 'Cannot establish connection to Heat endpoint at region "DARKHOLE" due to ' \
        '"public endpoint for orchestration service in DARKHOLE region not found"' in \
        failed["stack_status_reason"]
    assert heat.delete(f"/stacks/{name}-late/{r.json()['stack']['id']}").status_code == 204

    r = heat.post("/stacks", json={"stack_name": name, "template": _parent(region),
                                   "files": files})
    assert r.status_code == 201, r.text
    url = f"/stacks/{name}/{r.json()['stack']['id']}"
    shown = _done(heat, url, "CREATE_COMPLETE")
    res = _resources(heat, url)
    assert {k: v["resource_type"] for k, v in res.items()} == {"my_stack": "OS::Heat::Stack"}
    remote_id = res["my_stack"]["physical_resource_id"]
    remote = heat.get_stack(remote_id)
    assert remote.id == remote_id and remote.status == "CREATE_COMPLETE"
    assert remote.parent_id is None  # a stack of its own, listed as any other
    assert remote_id in [s.id for s in heat.stacks()]
    remote_url = f"/stacks/{remote.name}/{remote.id}"
    key = _outputs(shown)["key"]["remote_key"]
    assert len(key) == 32 and _outputs(shown)["name"] == remote.name
    assert _outputs(heat.get(remote_url).json()["stack"])["remote_key"] == key
    assert set(_resources(heat, remote_url)) == {"random1"}

    # an update reaches the same remote stack
    r = heat.put(url, json={"template": _parent(region), "files": {
        "remote_stack.yaml": REMOTE.replace("random1", "random2")}})
    assert r.status_code == 202, r.text
    _done(heat, url, "UPDATE_COMPLETE")
    assert _resources(heat, url)["my_stack"]["physical_resource_id"] == remote_id
    assert set(_resources(heat, remote_url)) == {"random2"}
    assert heat.get(remote_url).json()["stack"]["stack_status"] == "UPDATE_COMPLETE"

    # suspend, resume and check go through to the remote stack
    for action in ("suspend", "resume", "check"):
        r = heat.post(url + "/actions", json={action: None})
        assert r.status_code == 200, r.text
        status = f"{action.upper()}_COMPLETE"
        _done(heat, url, status)
        assert heat.get(remote_url).json()["stack"]["stack_status"] == status
        assert _resources(heat, url)["my_stack"]["resource_status"] == status

    assert heat.delete(url).status_code == 204
    _until(heat, url, ("DELETE_COMPLETE",))
    assert heat.get(remote_url).json()["stack"]["stack_status"] == "DELETE_COMPLETE"


@sqlite_only
def test_cli_remote_stack(cloud, tmp_path):
    def cli(*args, parse=True):
        if "--wait" in args and parse:  # event lines first, then the JSON document
            out = cloud.cli(*args, cloud="stackling", parse=False)
            return json.loads(out if out.startswith("{") else out[out.index("\n{") + 1:])
        return cloud.cli(*args, cloud="stackling", parse=parse)

    (tmp_path / "remote_stack.yaml").write_text(REMOTE)
    (tmp_path / "parent.yaml").write_text(yaml.safe_dump(_parent(None)))
    name = f"rc-{uuid.uuid4().hex[:6]}"
    created = cli("stack", "create", "--wait", "-t", str(tmp_path / "parent.yaml"),
                  "-f", "json", name)
    assert created["stack_status"] == "CREATE_COMPLETE"
    remote_id = cli("stack", "resource", "show", name, "my_stack",
                    "-f", "json")["physical_resource_id"]
    remote = cli("stack", "show", remote_id, "-f", "json")
    out = cli("stack", "output", "show", name, "key", "-f", "json")
    value = out["output_value"]
    value = json.loads(value) if isinstance(value, str) else value
    assert len(value["remote_key"]) == 32
    cli("stack", "suspend", "--wait", name, parse=False)
    assert cli("stack", "show", remote_id, "-f", "json")["stack_status"] == "SUSPEND_COMPLETE"
    cli("stack", "resume", "--wait", name, parse=False)
    assert cli("stack", "show", remote_id, "-f", "json")["stack_status"] == "RESUME_COMPLETE"
    cli("stack", "delete", "--yes", "--wait", name, parse=False)
    names = [s["Stack Name"] for s in cli("stack", "list", "-f", "json")]
    assert remote["stack_name"] not in names
