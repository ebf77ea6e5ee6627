"""Placement through the real clients: openstacksdk on every backend, osc-placement on SQLite."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import sqlite_only


def test_sdk_placement_round_trip(cloud):
    placement = cloud.sdk().placement
    name = f"sdk-rp-{uuid.uuid4().hex[:6]}"
    rp = placement.create_resource_provider(name=name)
    assert rp.name == name and rp.generation == 0
    placement.create_resource_provider_inventory(rp, resource_class="VCPU", total=8,
                                                 allocation_ratio=2.0)
    inv = {i.resource_class: i for i in placement.resource_provider_inventories(rp)}
    assert inv["VCPU"].total == 8 and inv["VCPU"].allocation_ratio == 2.0
    rp = placement.get_resource_provider(rp.id)
    assert rp.generation == 1
    assert name in {p.name for p in placement.resource_providers()}
    placement.delete_resource_provider(rp)
    assert name not in {p.name for p in placement.resource_providers(name=name)}


def test_sdk_member_is_refused(cloud):
    from openstack import exceptions

    with pytest.raises(exceptions.ForbiddenException):
        list(cloud.sdk("stackling").placement.resource_providers())


@sqlite_only
def test_cli_placement_story(cloud):
    """osc-placement as an operator uses it, at the microversion it negotiates (1.29)."""
    c = cloud
    name = f"cli-rp-{uuid.uuid4().hex[:6]}"
    rp = c.cli("resource", "provider", "create", name, "-f", "json")
    rp_uuid = rp["uuid"]
    assert rp["generation"] == 0 and rp["root_provider_uuid"] == rp_uuid
    c.cli("resource", "provider", "set", "--name", f"{name}-x", rp_uuid, "-f", "json")
    shown = c.cli("resource", "provider", "show", rp_uuid, "-f", "json")
    assert shown["name"] == f"{name}-x"
    listed = c.cli("resource", "provider", "list", "--name", f"{name}-x", "-f", "json")
    assert [p["uuid"] for p in listed] == [rp_uuid]

    inv = c.cli("resource", "provider", "inventory", "set", rp_uuid, "--resource", "VCPU=8",
                "--resource", "VCPU:allocation_ratio=2.0", "--resource", "MEMORY_MB=4096",
                "--resource", "DISK_GB=100", "-f", "json")
    assert {i["resource_class"]: i["total"] for i in inv} == {
        "VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100}
    c.cli("resource", "provider", "inventory", "delete", rp_uuid, "--resource-class", "DISK_GB",
          parse=False)
    listed = c.cli("resource", "provider", "inventory", "list", rp_uuid, "-f", "json")
    assert {i["resource_class"] for i in listed} == {"VCPU", "MEMORY_MB"}

    agg = str(uuid.uuid4())
    generation = c.cli("resource", "provider", "show", rp_uuid, "-f", "json")["generation"]
    c.cli("resource", "provider", "aggregate", "set", "--aggregate", agg, "--generation",
          str(generation), rp_uuid, "-f", "json")
    aggs = c.cli("resource", "provider", "aggregate", "list", rp_uuid, "-f", "json")
    assert [a["uuid"] for a in aggs] == [agg]

    c.cli("resource", "class", "create", "CUSTOM_CLI_GPU", parse=False)
    classes = c.cli("resource", "class", "list", "-f", "json")
    assert {"VCPU", "CUSTOM_CLI_GPU"} <= {rc["name"] for rc in classes}
    traits = c.cli("trait", "list", "-f", "json")
    assert "HW_CPU_X86_AVX2" in {t["name"] for t in traits}
    c.cli("resource", "provider", "trait", "set", "--trait", "HW_CPU_X86_AVX2", rp_uuid,
          "-f", "json")
    assert [t["name"] for t in c.cli("resource", "provider", "trait", "list", rp_uuid,
                                     "-f", "json")] == ["HW_CPU_X86_AVX2"]

    cands = c.cli("allocation", "candidate", "list", "--resource", "VCPU=2", "--resource",
                  "MEMORY_MB=1024", "--required", "HW_CPU_X86_AVX2", "--member-of", agg,
                  "-f", "json")
    assert [x["resource provider"] for x in cands] == [rp_uuid]

    project, consumer = str(uuid.uuid4()), str(uuid.uuid4())
    c.cli("resource", "provider", "allocation", "set", consumer, "--allocation",
          f"rp={rp_uuid},VCPU=2,MEMORY_MB=1024", "--project-id", project, "--user-id", "u1",
          "-f", "json")
    usage = c.cli("resource", "provider", "usage", "show", rp_uuid, "-f", "json")
    assert {u["resource_class"]: u["usage"] for u in usage} == {"VCPU": 2, "MEMORY_MB": 1024}
    totals = c.cli("resource", "usage", "show", project, "-f", "json")
    assert {u["resource_class"]: u["usage"] for u in totals} == {"VCPU": 2, "MEMORY_MB": 1024}

    # Deleting a provider with allocations is refused; after release it goes.
    refused = c.cli("resource", "provider", "delete", rp_uuid, check=False)
    assert refused.returncode != 0 and "409" in refused.stderr
    c.cli("resource", "provider", "allocation", "delete", consumer, parse=False)
    c.cli("resource", "provider", "delete", rp_uuid, parse=False)
    gone = c.cli("resource", "provider", "show", rp_uuid, check=False)
    assert gone.returncode != 0 and "No resource provider with uuid" in gone.stderr
