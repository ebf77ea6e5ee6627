"""Template introspection and validation through python-heatclient's `openstack
orchestration ...` commands on SQLite."""

from __future__ import annotations

from tests.conftest import sqlite_only


@sqlite_only
def test_cli_template_versions_and_functions(cloud):
    def cli(*args):
        return cloud.cli(*args, cloud="stackling")

    versions = cli("orchestration", "template", "version", "list", "-f", "json")
    assert {"Version": "heat_template_version.2018-08-31", "Type": "hot",
            "Aliases": ["heat_template_version.rocky"]} in versions
    fns = cli("orchestration", "template", "function", "list", "-f", "json",
              "heat_template_version.2016-10-14")
    by_name = {f["Functions"]: f["Description"] for f in fns}
    assert "map_replace" in by_name and by_name["get_param"]
    cond = cli("orchestration", "template", "function", "list", "-f", "json",
               "--with_conditions", "heat_template_version.2016-10-14")
    assert {f["Functions"] for f in cond} == {"get_param", "equals", "not", "and", "or"}


@sqlite_only
def test_cli_template_validate_nested_and_environment(cloud, tmp_path):
    from tests.api.test_orchestration_template_api import APARAM, PARENT, RANDOM

    (tmp_path / "mynested.yaml").write_text(RANDOM)
    parent = tmp_path / "parent.yaml"
    parent.write_text(PARENT)
    env = tmp_path / "env.yaml"
    env.write_text("parameter_defaults:\n  pparam: 7\n")

    def validate(*extra):
        return cloud.cli("orchestration", "template", "validate", "-f", "json", "-t",
                         str(parent), *extra, cloud="stackling")

    plain = validate()
    assert plain["Description"] == "the parent template"
    assert plain["Parameters"]["pparam"]["Default"] == 5 and "NestedParameters" not in plain
    nested = validate("-e", str(env), "--show-nested")
    assert nested["Parameters"]["pparam"]["Default"] == 7
    assert nested["Environment"]["parameter_defaults"] == {"pparam": 7}
    nres = nested["NestedParameters"]["nres"]
    assert nres["Type"].endswith("mynested.yaml")
    assert nres["Parameters"]["aparam"] == {**APARAM, "Value": 7}
    assert validate("--ignore-errors", "99001")["Parameters"]["pparam"]["Type"] == "Number"


@sqlite_only
def test_cli_stack_create_dry_run_nested(cloud, tmp_path):
    import yaml

    from tests.api.test_orchestration_template_api import GROUPED, NESTED

    (tmp_path / "nested.yaml").write_text(NESTED)
    main = tmp_path / "main.yaml"
    main.write_text(yaml.safe_dump(GROUPED))
    out = cloud.cli("stack", "create", "--dry-run", "-t", str(main), "-f", "json", "pv",
                    cloud="stackling")
    assert out["stack_name"] == "pv"
    text = str(out["resources"])
    assert "pv-grp-" in text and "pv-tres" in text and "m1" in text
    # nothing was created (the shared cloud may hold other tests' stacks)
    names = [s["Stack Name"] for s in cloud.cli("stack", "list", "-f", "json", cloud="stackling")]
    assert "pv" not in names


@sqlite_only
def test_cli_nested_output_error(cloud, tmp_path):
    import json

    from tests.api.test_orchestration_template_api import BROKEN

    (tmp_path / "broken.yaml").write_text(BROKEN)
    main = tmp_path / "main.yaml"
    main.write_text(json.dumps({
        "heat_template_version": "2018-08-31", "resources": {"nres": {"type": "broken.yaml"}},
        "outputs": {"bad": {"value": {"get_attr": ["nres", "out"]}}}}))
    out = cloud.cli("stack", "create", "--wait", "-t", str(main), "outerr", cloud="stackling",
                    parse=False)
    assert "CREATE_COMPLETE" in out
    # heatclient prints the output's error and fails, as against upstream
    proc = cloud.cli("stack", "output", "show", "-f", "json", "outerr", "bad",
                     cloud="stackling", check=False)
    assert proc.returncode == 1
    assert "Output error: Error in nres output out: Incorrect index" in proc.stderr


def test_sdk_external_id_adopt_update_delete(cloud):
    """external_id through openstacksdk on every backend: adopted, kept, refused, retained."""
    from tests.api.test_orchestration_template_api import _adopting

    conn = cloud.new_project_member()["sdk"]
    net = conn.network.create_network(name="outside")
    heat = conn.orchestration
    stack = heat.create_stack(name="ext", template=_adopting(), parameters={"netid": net.id})
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=120)
    res = {r.name: r for r in heat.resources(stack)}
    assert res["net"].physical_resource_id == net.id
    assert res["net"].status == "ADOPT_COMPLETE"
    other = conn.network.create_network(name="other")
    heat.update_stack(stack, template=_adopting("x"), parameters={"netid": other.id})
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="UPDATE_FAILED",
                                 failures=["UPDATE_COMPLETE"], interval=0.1, wait=120)
    assert "Update to property external_id of net" in stack.status_reason
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)
    assert conn.network.get_network(net.id).name == "outside"
    assert list(conn.network.subnets(network_id=net.id)) == []


@sqlite_only
def test_cli_external_id(cloud, tmp_path):
    import json

    from tests.api.test_orchestration_template_api import _adopting

    def cli(*args, **kw):
        return cloud.cli(*args, cloud="stackling", **kw)

    net = cli("network", "create", "-f", "json", "outside")
    main = tmp_path / "main.yaml"
    main.write_text(json.dumps(_adopting()))
    cli("stack", "create", "--wait", "-t", str(main), "--parameter", f"netid={net['id']}",
        "ext", parse=False)
    res = cli("stack", "resource", "show", "-f", "json", "ext", "net")
    assert res["physical_resource_id"] == net["id"]
    assert res["resource_status"] == "ADOPT_COMPLETE"
    cli("stack", "delete", "--yes", "--wait", "ext", parse=False)
    assert cli("network", "show", "-f", "json", net["id"])["name"] == "outside"


def test_sdk_nested_output_error_and_preview(cloud):
    """A nested output's error through openstacksdk on every backend, and a preview that
    writes nothing."""
    from tests.api.test_orchestration_template_api import BROKEN, GROUPED, NESTED

    heat = cloud.new_project_member()["sdk"].orchestration
    template = {"heat_template_version": "2018-08-31",
                "resources": {"nres": {"type": "broken.yaml"}},
                "outputs": {"bad": {"value": {"get_attr": ["nres", "out"]}}}}
    stack = heat.create_stack(name="outerr", template=template, files={"broken.yaml": BROKEN})
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=120)
    bad = heat.get_stack(stack.id).outputs[0]
    assert bad["output_error"].startswith("Error in nres output out: Incorrect index")
    preview = heat.post("/stacks/preview", json={
        "stack_name": "pv", "template": GROUPED, "files": {"nested.yaml": NESTED}}).json()
    assert sum(isinstance(r, list) for r in preview["stack"]["resources"]) == 2
    assert [s.name for s in heat.stacks()] == ["outerr"]
