"""Quotas through the real clients: openstacksdk's compute and network quota calls on
every backend, and `openstack quota show/set` through the CLI."""

from __future__ import annotations

import pytest

from tests.conftest import sqlite_only

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def test_sdk_compute_quotas(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    project = member["project"]
    quotas = admin.get_compute_quotas(project.id)
    assert quotas.instances == 10 and quotas.cores == 20 and quotas.ram == 51200
    admin.set_compute_quotas(project.id, instances=1, cores=4)
    quotas = admin.get_compute_quotas(project.id)
    assert quotas.instances == 1 and quotas.cores == 4
    usage = admin.compute.get_quota_set(project.id, usage=True)
    assert usage.usage["instances"] == 0
    conn = member["sdk"]
    conn.compute.create_server(name="q1", flavor_id="1", image_id=CIRROS, networks="none")
    from openstack import exceptions

    with pytest.raises(exceptions.ForbiddenException) as err:
        conn.compute.create_server(name="q2", flavor_id="1", image_id=CIRROS, networks="none")
    assert "Quota exceeded for instances: Requested 1, but already used 1 of 1 instances" in str(
        err.value)
    limits = conn.compute.get_limits()
    assert limits.absolute.instances == 1 and limits.absolute.instances_used == 1
    admin.delete_compute_quotas(project.id)
    assert admin.get_compute_quotas(project.id).instances == 10
    for server in conn.compute.servers():
        conn.compute.delete_server(server)


def test_sdk_network_quotas(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    project = member["project"]
    admin.set_network_quotas(project.id, networks=1)
    assert admin.get_network_quotas(project.id).networks == 1
    conn = member["sdk"]
    conn.network.create_network(name="one")
    from openstack import exceptions

    with pytest.raises(exceptions.ConflictException) as err:
        conn.network.create_network(name="two")
    assert "Quota exceeded for resources: ['network']." in str(err.value)
    details = admin.get_network_quotas(project.id, details=True)
    assert details["network"] == {"limit": 1, "used": 1, "reserved": 0}
    admin.delete_network_quotas(project.id)
    assert admin.get_network_quotas(project.id).networks == 100


@sqlite_only
def test_cli_quota_show_and_set(cloud):
    member = cloud.new_project_member()
    name = member["project"].name
    cloud.cli("quota", "set", "--instances", "7", "--cores", "9", "--networks", "3", name,
              parse=False)
    shown = cloud.cli("quota", "show", name, "-f", "json")
    values = {row["Resource"]: row["Limit"] for row in shown} if isinstance(shown, list) \
        else shown
    assert values["instances"] == 7 and values["cores"] == 9 and values["networks"] == 3
