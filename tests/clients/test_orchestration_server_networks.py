"""Server network updates that keep the server's ports and addresses (issue 20 part 1),
through the real clients: the `openstack stack ...` CLI (python-heatclient) on SQLite for
each case of upstream's heat-tempest-plugin tests, and openstacksdk on every backend for
the update to the server's own port (it never ended before) and the stack's delete."""

from __future__ import annotations

import json
import uuid
from typing import Any

import yaml

from tests.conftest import sqlite_only

NET = {"get_resource": "net"}
SUBNET = {"get_resource": "subnet"}


def template(networks: Any, cidr: str, sg: bool = True) -> dict[str, Any]:
    """The tempest tests' template; `sg`: the server in the_sg (not with a `port` entry,
    a 400 as upstream)."""
    prefix = cidr.rsplit(".", 1)[0]
    t = {
        "heat_template_version": "2016-04-08",
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": "the_net"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": NET, "cidr": cidr,
                "allocation_pools": [{"start": f"{prefix}.2", "end": f"{prefix}.9"}]}},
            "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"name": "the_sg"}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "image": "cirros", "flavor": "m1.tiny", "networks": networks}},
        },
        "outputs": {f"port{i}": {"value": {"get_attr": ["server", "addresses", "the_net", i,
                                                        "port"]}} for i in range(3)},
    }
    if sg:
        t["resources"]["server"]["properties"]["security_groups"] = [{"get_resource": "sg"}]
    return t


@sqlite_only
def test_cli_network_updates_keep_the_ports(cloud, tmp_path):
    def cli(*args: str, parse: bool = True) -> Any:
        return cloud.cli(*args, cloud="stackling", parse=parse)

    def waited(*args: str) -> dict[str, Any]:
        out = cloud.cli(*args, cloud="stackling", parse=False)
        return json.loads(out[out.index("{"):] if out.startswith("{") else
                          out[out.index("\n{") + 1:])

    def ports(name: str) -> list[str | None]:
        out = cli("stack", "output", "show", "--all", "-f", "json", name)
        return [out[f"port{i}"]["output_value"] for i in range(3)]

    def run(name: str, before: Any, after: Any, keep: int = 1, sg: bool = True) -> None:
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(template(before, "11.11.11.0/24", sg)))
        created = waited("stack", "create", "-t", str(path), "--wait", "-f", "json", name)
        assert created["stack_status"] == "CREATE_COMPLETE"
        first = ports(name)
        if callable(after):
            after = after(first)
        path.write_text(yaml.safe_dump(template(after, "11.11.11.0/24", sg)))
        updated = waited("stack", "update", "-t", str(path), "--wait", "-f", "json", name)
        assert updated["stack_status"] == "UPDATE_COMPLETE", updated
        assert ports(name)[:keep] == first[:keep] and all(first[:keep])
        server = cli("stack", "resource", "show", "-f", "json", name, "server")
        shown = cli("server", "show", "-f", "json", server["physical_resource_id"])
        if sg:  # the groups of its ports
            assert shown["security_groups"] in ([{"name": "the_sg"}], "name='the_sg'")
        cli("stack", "delete", "--yes", "--wait", name, parse=False)

    run("swap-net-subnet", [{"network": NET}], [{"subnet": SUBNET}])
    run("swap-subnet-net", [{"subnet": SUBNET}], [{"network": NET}])
    run("add-subnet", [{"network": NET}], [{"network": NET, "subnet": SUBNET}])
    run("own-port", [{"network": NET}], lambda first: [{"port": first[0]}], sg=False)
    run("multi-swaps", [{"network": NET}, {"network": NET, "fixed_ip": "11.11.11.33"},
                        {"subnet": SUBNET}],
        [{"subnet": SUBNET}, {"network": NET}, {"network": NET, "subnet": SUBNET}], keep=3)


def test_sdk_update_to_the_servers_own_port_and_delete(cloud):
    conn = cloud.new_project_member()["sdk"]
    heat = conn.orchestration
    name = f"own-port-{uuid.uuid4().hex[:6]}"
    stack = heat.create_stack(name=name, template=template([{"network": NET}], "11.12.0.0/24", False))
    stack = heat.wait_for_status(stack, status="CREATE_COMPLETE", failures=["CREATE_FAILED"],
                                 interval=0.1, wait=120)
    outputs = {o["output_key"]: o["output_value"] for o in heat.get_stack(stack.id).outputs}
    port0 = outputs["port0"]
    address = conn.network.get_port(port0).fixed_ips[0]["ip_address"]
    heat.update_stack(stack, template=template([{"port": port0}], "11.12.0.0/24", False))
    stack = heat.wait_for_status(heat.get_stack(stack.id), status="UPDATE_COMPLETE",
                                 failures=["UPDATE_FAILED"], interval=0.1, wait=120)
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["port0"] == port0
    assert conn.network.get_port(port0).fixed_ips[0]["ip_address"] == address
    heat.delete_stack(stack)
    heat.wait_for_delete(stack, interval=0.1, wait=120)
    assert conn.network.find_port(port0) is None
