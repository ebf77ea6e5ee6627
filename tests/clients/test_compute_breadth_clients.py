"""Issue 23 (compute: flavor management, server groups) through the real clients:
openstacksdk on every backend, the openstack CLI on SQLite."""

from __future__ import annotations

import random
import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_sdk_flavor_ids_access_and_extra_specs(cloud):
    admin = cloud.sdk()
    friend = cloud.new_project_member()
    flavor_id = random.randint(100000, 999999)
    flavor = admin.compute.create_flavor(name=_name("intid"), ram=64, vcpus=1, disk=0,
                                         id=flavor_id, is_public=False, swap=128,
                                         ephemeral=1)
    assert flavor.id == str(flavor_id) and flavor.is_public is False
    assert flavor.swap == 128 and flavor.ephemeral == 1
    with pytest.raises(exceptions.NotFoundException):
        friend["sdk"].compute.get_flavor(flavor.id)
    admin.compute.flavor_add_tenant_access(flavor, friend["project"].id)
    assert admin.compute.get_flavor_access(flavor) == [
        {"flavor_id": flavor.id, "tenant_id": friend["project"].id}]
    assert friend["sdk"].compute.get_flavor(flavor.id).name == flavor.name
    assert flavor.id in [f.id for f in friend["sdk"].compute.flavors()]
    admin.compute.flavor_remove_tenant_access(flavor, friend["project"].id)
    with pytest.raises(exceptions.NotFoundException):
        friend["sdk"].compute.get_flavor(flavor.id)
    admin.compute.create_flavor_extra_specs(flavor, {"hw:cpu_policy": "shared", "k": "v"})
    admin.compute.delete_flavor_extra_specs_property(flavor, "k")  # 200, as Nova
    assert admin.compute.fetch_flavor_extra_specs(flavor).extra_specs == {
        "hw:cpu_policy": "shared"}
    admin.compute.delete_flavor(flavor)
    with pytest.raises(exceptions.NotFoundException):
        admin.compute.get_flavor(flavor.id)


def test_sdk_server_group_anti_affinity(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    group = conn.compute.create_server_group(name=_name("spread"), policies=["anti-affinity"])
    assert group.policies == ["anti-affinity"]
    servers = []
    for i in range(2):
        s = conn.compute.create_server(name=f"g{i}", flavor_id="1", image_id=CIRROS,
                                       networks="none", scheduler_hints={"group": group.id})
        servers.append(conn.compute.wait_for_server(s, wait=120))
    hosts = {cloud.sdk().compute.get_server(s.id).compute_host for s in servers}
    assert len(hosts) == 2
    assert set(conn.compute.get_server_group(group).member_ids) == {s.id for s in servers}
    assert group.id in [g.id for g in conn.compute.server_groups()]
    conn.compute.delete_server(servers[0])
    conn.compute.wait_for_delete(servers[0], wait=120)
    assert conn.compute.get_server_group(group).member_ids == [servers[1].id]
    conn.compute.delete_server(servers[1])
    conn.compute.wait_for_delete(servers[1], wait=120)
    conn.compute.delete_server_group(group)
    with pytest.raises(exceptions.NotFoundException):
        conn.compute.get_server_group(group.id)


@sqlite_only
def test_cli_flavor_and_server_group(cloud):
    project = cloud.new_project_member()["project"]
    fid = str(random.randint(100000, 999999))
    name = _name("cli-flavor")
    made = cloud.cli("flavor", "create", "--id", fid, "--ram", "64", "--vcpus", "1",
                     "--disk", "0", "--private", "--project", project.id, name, "-f", "json")
    assert made["id"] == fid and made["os-flavor-access:is_public"] is False
    shown = cloud.cli("flavor", "show", fid, "-f", "json")
    assert shown["access_project_ids"] == [project.id]
    cloud.cli("flavor", "unset", "--project", project.id, fid)
    assert cloud.cli("flavor", "show", fid, "-f", "json")["access_project_ids"] == []
    cloud.cli("flavor", "delete", fid)
    group = cloud.cli("server", "group", "create", "--policy", "soft-anti-affinity",
                      _name("cli-group"), "-f", "json")
    # the CLI negotiates 2.64 or later: one `policy`, no `policies` list
    assert group["policy"] == "soft-anti-affinity" and group["members"] == []
    listed = cloud.cli("server", "group", "list", "-f", "json")
    assert group["id"] in [g["ID"] for g in listed]
    cloud.cli("server", "group", "delete", group["id"])
    cloud.cli("quota", "set", "--server-groups", "7", "--server-group-members", "3",
              project.id)
    quota = cloud.cli("quota", "show", project.id, "-f", "json")
    values = {q["Resource"]: q["Limit"] for q in quota} if isinstance(quota, list) else quota
    assert values["server-groups"] == 7 and values["server-group-members"] == 3


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sdk_sees_the_reboot_and_rebuild_states_at_the_default_duration(cloud_factory, backend):
    """openstacksdk waits for HARD_REBOOT / REBUILD as a client polling every second would
    (the default minimum duration, 2 s, which the test suite otherwise sets to 0), then
    for ACTIVE; the completion is a worker's, after the request answered."""
    from stackling.config import ComputeSettings

    default = str(ComputeSettings().action_min_duration)
    cloud = cloud_factory(backend, workers=2,
                          extra_env={"STACKLING_COMPUTE__ACTION_MIN_DURATION": default})
    conn = cloud.new_project_member()["sdk"]
    server = conn.compute.wait_for_server(conn.compute.create_server(
        name="observed", flavor_id="1", image_id=CIRROS, networks="none"), wait=120)
    conn.compute.reboot_server(server, "HARD")
    conn.compute.wait_for_server(server, status="HARD_REBOOT", interval=1, wait=30)
    conn.compute.wait_for_server(server, status="ACTIVE", interval=1, wait=60)
    conn.compute.rebuild_server(server, image=CIRROS)
    conn.compute.wait_for_server(server, status="REBUILD", interval=1, wait=30)
    conn.compute.wait_for_server(server, status="ACTIVE", interval=1, wait=60)
    conn.compute.delete_server(server)
