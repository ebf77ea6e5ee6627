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


def test_candidates_and_claims_on_every_backend(cloud):
    """The one-query candidate search and the claim path speak each backend's SQL."""
    v = {"OpenStack-API-Version": "placement 1.39"}
    agg = str(uuid.uuid4())
    tag = uuid.uuid4().hex[:6]
    with cloud.http(cloud.token()) as http:
        hosts = []
        for i in range(3):
            rp = http.post("/placement/resource_providers", headers=v,
                           json={"name": f"be-{tag}-{i}"}).json()["uuid"]
            gen = http.put(f"/placement/resource_providers/{rp}/inventories", headers=v, json={
                "resource_provider_generation": 0, "inventories": {
                    "VCPU": {"total": 4 + i, "allocation_ratio": 1.5},
                    "MEMORY_MB": {"total": 2048, "reserved": 512}}}).json()[
                "resource_provider_generation"]
            gen = http.put(f"/placement/resource_providers/{rp}/traits", headers=v, json={
                "traits": ["HW_CPU_X86_AVX2"] if i else [], "resource_provider_generation": gen}
            ).json()["resource_provider_generation"]
            assert http.put(f"/placement/resource_providers/{rp}/aggregates", headers=v, json={
                "aggregates": [agg], "resource_provider_generation": gen}).status_code == 200
            hosts.append(rp)
        url = (f"/placement/allocation_candidates?resources=VCPU:2,MEMORY_MB:256"
               f"&member_of={agg}&required=HW_CPU_X86_AVX2")
        body = http.get(url, headers=v).json()
        assert [list(c["allocations"]) for c in body["allocation_requests"]] == [
            [hosts[2]], [hosts[1]]]
        assert body["provider_summaries"][hosts[2]] == {
            "resources": {"VCPU": {"capacity": 9, "used": 0},
                          "MEMORY_MB": {"capacity": 1536, "used": 0}},
            "traits": ["HW_CPU_X86_AVX2"], "parent_provider_uuid": None,
            "root_provider_uuid": hosts[2]}
        old = http.get(url.replace("&required=HW_CPU_X86_AVX2", "") + "&limit=1", headers={
            "OpenStack-API-Version": "placement 1.21"}).json()
        assert len(old["allocation_requests"]) == 1
        assert set(old["provider_summaries"][hosts[2]]["resources"]) == {"VCPU", "MEMORY_MB"}
        consumer = str(uuid.uuid4())
        assert http.put(f"/placement/allocations/{consumer}", headers=v, json={
            "allocations": {hosts[2]: {"resources": {"VCPU": 9}}}, "project_id": "p",
            "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"}
        ).status_code == 204
        body = http.get(url, headers=v).json()
        assert [list(c["allocations"]) for c in body["allocation_requests"]] == [[hosts[1]]]
        assert http.delete(f"/placement/allocations/{consumer}", headers=v).status_code == 204
        for rp in hosts:
            assert http.delete(f"/placement/resource_providers/{rp}", headers=v).status_code == 204


def test_wide_provider_summary_is_whole_on_every_backend(cloud):
    """A provider with many classes: its aggregated summary is not truncated anywhere."""
    v = {"OpenStack-API-Version": "placement 1.39"}
    names = [f"CUSTOM_WIDE_CLASS_NUMBER_{i:02d}" for i in range(40)]
    with cloud.http(cloud.token()) as http:
        for name in names:
            assert http.put(f"/placement/resource_classes/{name}", headers=v).status_code in (
                201, 204)
        rp = http.post("/placement/resource_providers", headers=v,
                       json={"name": f"wide-{uuid.uuid4().hex[:6]}"}).json()["uuid"]
        assert http.put(f"/placement/resource_providers/{rp}/inventories", headers=v, json={
            "resource_provider_generation": 0,
            "inventories": {n: {"total": 100} for n in names}}).status_code == 200
        body = http.get(f"/placement/allocation_candidates?resources={names[0]}:1&in_tree={rp}",
                        headers=v).json()
        assert len(body["provider_summaries"][rp]["resources"]) == 40
        assert http.delete(f"/placement/resource_providers/{rp}", headers=v).status_code == 204
