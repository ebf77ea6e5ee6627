"""The compute in-process interface (what orchestration calls), on the in-process cloud."""

from __future__ import annotations

import time

import pytest

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError
from stackling.compute import interface

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def _demo_ctx(api) -> RequestContext:
    token = api.get("/identity/v3/auth/tokens", user="demo",
                    headers={"X-Subject-Token": api.token("demo")}).json()["token"]
    return RequestContext(user_id=token["user"]["id"], project_id=token["project"]["id"],
                          roles=tuple(r["name"] for r in token["roles"]))


def test_create_wait_delete(api):
    ctx = _demo_ctx(api)
    db_ = api.runtime.db
    with db_.transaction() as db:
        assert interface.find_flavor(db, ctx, "m1.tiny")["id"] == "1"
        (server,) = interface.create_server(db, ctx, {
            "name": "heat-vm", "flavorRef": "1", "imageRef": CIRROS, "networks": "none"})
    assert server["status"] == "BUILD"
    interface.wake_builder(api.runtime)
    deadline = time.monotonic() + 60
    while True:
        with db_.transaction(write=False) as db:
            shown = interface.get_server(db, ctx, server["id"])
        if shown["status"] == "ACTIVE" or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert shown["status"] == "ACTIVE"
    with db_.transaction() as db:
        interface.delete_server(db, ctx, server["id"])
    with db_.transaction(write=False) as db, pytest.raises(ApiError) as err:
        interface.get_server(db, ctx, server["id"])
    assert err.value.status == 404


def test_create_validates_like_the_api(api):
    ctx = _demo_ctx(api)
    with api.runtime.db.transaction() as db, pytest.raises(ApiError) as err:
        interface.create_server(db, ctx, {"name": "x", "flavorRef": "1", "imageRef": CIRROS},
                                version="2.37")
    assert err.value.status == 400 and "'networks' is a required property" in err.value.text


def test_microversion_history_is_gapless_and_pinned():
    from stackling.common.microversion import Version
    from stackling.compute import microversions

    versions = [Version.parse(v) for v, _ in microversions.HISTORY]
    assert versions == [Version(2, n) for n in range(1, len(versions) + 1)]
    assert all(note for _, note in microversions.HISTORY)
    assert str(microversions.MAX) == "2.104"  # raising it means reproducing every body change


def test_hosts_from_configuration_are_synced_at_start(api):
    from stackling.compute import hosts
    from stackling.config import HostSettings
    from stackling.placement import interface as placement

    configured = [*api.runtime.settings.compute.hosts,
                  HostSettings(name="compute-r3-1", vcpus=4, availability_zone="az3")]
    with api.runtime.db.transaction() as db:
        assert hosts.sync_hosts(db, configured) == ["compute-r3-1"]
    with api.runtime.db.transaction() as db:
        assert hosts.sync_hosts(db, configured) == []  # nothing changed: nothing done
        inventory = placement.get_inventory(db, hosts.node_uuid("compute-r3-1"))
        assert inventory["VCPU"]["total"] == 4 and inventory["VCPU"]["allocation_ratio"] == 4.0
        assert inventory["MEMORY_MB"]["reserved"] == 512
    zones = api.get("/compute/v2.1/os-availability-zone").json()["availabilityZoneInfo"]
    assert "az3" in {z["zoneName"] for z in zones}
    configured[-1] = HostSettings(name="compute-r3-1", vcpus=16, availability_zone="az3")
    with api.runtime.db.transaction() as db:
        assert hosts.sync_hosts(db, configured) == ["compute-r3-1"]
        assert placement.get_inventory(db, hosts.node_uuid("compute-r3-1"))["VCPU"]["total"] == 16
