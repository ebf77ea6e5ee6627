"""Orchestration fidelity IV (issue 32) through the real clients: a server with an
explicit port whose `user_data` changes is replaced, the port moving to the new server,
and back again (the `openstack stack ...` CLI on SQLite; openstacksdk on every backend)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import yaml

from tests.api.test_orchestration_fidelity4 import port_template
from tests.conftest import sqlite_only


def _outputs(cloud: Any, name: str) -> dict[str, Any]:
    out = cloud.cli("stack", "output", "show", "--all", "-f", "json", name,
                    cloud="stackling")
    return {k: v["output_value"] for k, v in out.items()}


def _waited(cloud: Any, *args: str) -> dict[str, Any]:
    out = cloud.cli(*args, cloud="stackling", parse=False)
    return json.loads(out[out.index("{"):])


@sqlite_only
def test_cli_user_data_replacement_moves_the_port_and_back(cloud, tmp_path):
    name = f"portmove-{uuid.uuid4().hex[:6]}"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(port_template("one")))
    created = _waited(cloud, "stack", "create", "-t", str(path), "--wait", "-f", "json", name)
    assert created["stack_status"] == "CREATE_COMPLETE", created
    first = _outputs(cloud, name)
    seen = [first["server"]]
    for user_data in ("two", "one"):  # replaced, then replaced back
        path.write_text(yaml.safe_dump(port_template(user_data)))
        updated = _waited(cloud, "stack", "update", "-t", str(path), "--wait", "-f", "json",
                          name)
        assert updated["stack_status"] == "UPDATE_COMPLETE", updated
        now = _outputs(cloud, name)
        assert now["port"] == first["port"] and now["server"] not in seen
        seen.append(now["server"])
        port = cloud.cli("port", "show", "-f", "json", first["port"], cloud="stackling")
        assert port["device_id"] == now["server"]
    cloud.cli("stack", "delete", "--yes", "--wait", name, cloud="stackling", parse=False)
    listed = cloud.cli("server", "list", "-f", "json", cloud="stackling")
    assert not {s["ID"] for s in listed} & set(seen)


def test_sdk_user_data_replacement_moves_the_port(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    stack = heat.create_stack(name=f"portmove-{uuid.uuid4().hex[:6]}",
                              template=port_template("one"))
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=120)
    first = {o["output_key"]: o["output_value"] for o in heat.get_stack(stack.id).outputs}
    heat.update_stack(stack, template=port_template("two"))
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="UPDATE_COMPLETE",
                                 failures=["UPDATE_FAILED"], interval=0.1, wait=120)
    now = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert now["server"] != first["server"]
    assert conn.network.get_port(first["port"]).device_id == now["server"]
    assert conn.compute.find_server(first["server"]) is None
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)
    assert conn.network.find_port(first["port"]) is None
