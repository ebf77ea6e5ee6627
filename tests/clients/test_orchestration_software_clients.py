"""Software configuration through the real clients: openstacksdk's orchestration proxy on
every backend (configs and deployments, a stack's HEAT_SIGNAL deployment completed by an
update of its deployment), and `openstack software config/deployment ...` on SQLite."""

from __future__ import annotations

import json
import uuid

import yaml

from tests.conftest import sqlite_only

STACK = {"heat_template_version": "2018-08-31", "resources": {
    "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
        "group": "script", "config": "#!/bin/sh\necho hi", "outputs": [{"name": "result"}]}},
    "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
        "config": {"get_resource": "config"}, "server": "srv-sdk",
        "signal_transport": "HEAT_SIGNAL"}}},
    "outputs": {"stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}},
                "result": {"value": {"get_attr": ["deployment", "result"]}}}}


def test_sdk_software_configs_and_deployments(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    sc = heat.create_software_config(name="sdk-cfg", group="script", config="echo",
                                     inputs=[{"name": "foo"}])
    assert heat.get_software_config(sc.id).config == "echo"
    assert sc.id in [c.id for c in heat.software_configs()]
    server = f"srv-{uuid.uuid4().hex[:6]}"
    dep = heat.create_software_deployment(config_id=sc.id, server_id=server,
                                          action="CREATE", status="IN_PROGRESS",
                                          input_values={"foo": "bar"})
    assert heat.get_software_deployment(dep.id).status == "IN_PROGRESS"
    dep = heat.update_software_deployment(dep, status="COMPLETE",
                                          output_values={"deploy_stdout": "done"})
    assert dep.status == "COMPLETE"
    assert [d.id for d in heat.software_deployments(server_id=server)] == [dep.id]
    heat.delete_software_deployment(dep)
    heat.delete_software_config(sc)
    assert sc.id not in [c.id for c in heat.software_configs()]

    stack = heat.create_stack(name=f"sw-{uuid.uuid4().hex[:6]}", template=STACK)
    res = {r.name: r for r in heat.resources(stack)}
    assert res["deployment"].status == "CREATE_IN_PROGRESS"
    heat.update_software_deployment(res["deployment"].physical_resource_id,
                                    status="COMPLETE", output_values={
                                        "deploy_stdout": "out", "result": "r"})
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="CREATE_COMPLETE",
                                 failures=["CREATE_FAILED"], interval=0.1, wait=120)
    outputs = {o["output_key"]: o["output_value"] for o in heat.get_stack(stack.id).outputs}
    assert outputs == {"stdout": "out", "result": "r"}
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)


@sqlite_only
def test_cli_software_config_and_deployment(cloud, tmp_path):
    def cli(*args, parse=True):
        return cloud.cli(*args, cloud="stackling", parse=parse)

    (tmp_path / "cfg.sh").write_text("#!/bin/sh\necho cli\n")
    (tmp_path / "defn.yaml").write_text(yaml.safe_dump({
        "inputs": [{"name": "foo"}], "outputs": [{"name": "result"}]}))
    sc = cli("software", "config", "create", "--config-file", str(tmp_path / "cfg.sh"),
             "--definition-file", str(tmp_path / "defn.yaml"), "--group", "script",
             "-f", "json", "cli-cfg")
    assert sc["group"] == "script" and "echo cli" in sc["config"]
    assert sc["id"] in [c["id"] for c in cli("software", "config", "list", "-f", "json")]
    shown = cli("software", "config", "show", "-f", "json", sc["id"])
    assert shown["name"] == "cli-cfg"
    server = f"srv-{uuid.uuid4().hex[:6]}"
    dep = cli("software", "deployment", "create", "--config", sc["id"], "--server", server,
              "--signal-transport", "NO_SIGNAL", "--input-value", "foo=bar", "-f", "json",
              "cli-dep")
    assert dep["server_id"] == server
    listed = cli("software", "deployment", "list", "--server", server, "-f", "json")
    assert [d["id"] for d in listed] == [dep["id"]]
    meta = json.loads(cli("software", "deployment", "metadata", "show", server, parse=False))
    assert any(i.get("value") == "bar" for m in meta for i in m["inputs"]
               if i["name"] == "foo")
    assert cli("software", "deployment", "show", "-f", "json", dep["id"])["id"] == dep["id"]
    cli("software", "deployment", "delete", dep["id"], parse=False)
    cli("software", "config", "delete", sc["id"], parse=False)
    assert sc["id"] not in [c["id"] for c in cli("software", "config", "list", "-f", "json")]
