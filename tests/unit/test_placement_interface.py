"""The in-process Placement interface compute and network call (SQLite, no HTTP)."""

from __future__ import annotations

import uuid

import pytest

from stackling.common.db import Database
from stackling.migrations.schema import upgrade
from stackling.placement import errors
from stackling.placement import interface as placement

INV = {"VCPU": {"total": 8, "allocation_ratio": 2.0},
       "MEMORY_MB": {"total": 4096, "reserved": 512},
       "DISK_GB": {"total": 100}}


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('placement') / 'p.db'}")
    upgrade(db.engine)
    yield db
    db.dispose()


def host(database, name=None, inventory=INV, aggregates=(), traits=()):
    rp_uuid = str(uuid.uuid4())
    with database.transaction() as db:
        rp = placement.ensure_resource_provider(db, rp_uuid, name or f"host-{rp_uuid[:8]}")
        placement.set_inventory_for_provider(db, rp_uuid, inventory)
        placement.set_aggregates_for_provider(db, rp_uuid, list(aggregates))
        placement.set_traits_for_provider(db, rp_uuid, list(traits))
    return rp


def test_provider_is_created_once_and_inventory_defaults(database):
    rp = host(database)
    assert rp["generation"] == 0 and rp["root_provider_uuid"] == rp["uuid"]
    with database.transaction() as db:
        again = placement.ensure_resource_provider(db, rp["uuid"], "other-name")
        inv = placement.get_inventory(db, rp["uuid"])
    assert again["name"] == rp["name"] and again["generation"] == 1  # one inventory write
    assert inv["VCPU"] == {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 2147483647,
                           "step_size": 1, "allocation_ratio": 2.0}
    with database.transaction() as db:  # unchanged sets do not bump the generation
        placement.set_inventory_for_provider(db, rp["uuid"], INV)
        assert placement.get_resource_provider(db, rp["uuid"])["generation"] == 1


def test_claim_until_full_then_capacity_exceeded(database):
    agg = str(uuid.uuid4())
    rp = host(database, aggregates=[agg], traits=["HW_CPU_X86_AVX2"])
    rp_uuid = rp["uuid"]
    with database.transaction() as db:
        cands = placement.get_allocation_candidates(
            db, {"VCPU": 4, "MEMORY_MB": 1024}, required=["HW_CPU_X86_AVX2"], member_of=[[agg]])
    assert cands == [{"allocations": {rp_uuid: {"VCPU": 4, "MEMORY_MB": 1024}}}]
    consumers = [str(uuid.uuid4()) for _ in range(5)]
    for c in consumers[:4]:  # 16 VCPU of capacity = 4 claims of 4
        with database.transaction() as db:
            placement.claim_resources(db, c, {rp_uuid: {"VCPU": 4}}, "proj", "user")
    with database.transaction() as db:
        with pytest.raises(errors.ClaimFailed) as exc:
            placement.claim_resources(db, consumers[4], {rp_uuid: {"VCPU": 4}}, "proj", "user")
        assert isinstance(exc.value, errors.CapacityExceeded)
        # the caller's transaction is still usable and nothing was written
        assert placement.get_allocations_for_consumer(db, consumers[4]) == {}
        assert placement.get_provider_usages(db, rp_uuid)["VCPU"] == 16
        assert placement.get_allocation_candidates(
            db, {"VCPU": 1}, member_of=[[agg]]) == []
    with database.transaction() as db:
        allocs = placement.get_allocations_for_consumer(db, consumers[0])
        assert allocs[rp_uuid]["resources"] == {"VCPU": 4}
        placement.delete_allocation_for_instance(db, consumers[0])
        placement.delete_allocation_for_instance(db, consumers[0])  # no-op
        assert placement.get_provider_usages(db, rp_uuid)["VCPU"] == 12
        with pytest.raises(errors.InventoryInUse):
            placement.set_inventory_for_provider(db, rp_uuid, {"DISK_GB": {"total": 10}})


def test_candidates_order_most_free_first_and_limit(database):
    agg = str(uuid.uuid4())
    busy, idle = host(database, aggregates=[agg]), host(database, aggregates=[agg])
    with database.transaction() as db:
        placement.claim_resources(db, str(uuid.uuid4()), {busy["uuid"]: {"VCPU": 10}}, "p", "u")
        cands = placement.get_allocation_candidates(db, {"VCPU": 1}, member_of=[[agg]])
        assert [list(c["allocations"]) for c in cands] == [[idle["uuid"]], [busy["uuid"]]]
        assert len(placement.get_allocation_candidates(
            db, {"VCPU": 1}, member_of=[[agg]], limit=1)) == 1
        with pytest.raises(errors.ResourceClassNotFound):
            placement.get_allocation_candidates(db, {"CUSTOM_NOPE": 1})
        with pytest.raises(errors.TraitNotFound):
            placement.get_allocation_candidates(db, {"VCPU": 1}, required=["CUSTOM_NOPE"])


def test_min_max_step_and_unknown_provider(database):
    rp = host(database, inventory={"VCPU": {"total": 8, "max_unit": 4, "step_size": 2}})
    with database.transaction() as db:
        for amount in (3, 6):
            with pytest.raises(errors.ConstraintsViolated):
                placement.claim_resources(db, str(uuid.uuid4()), {rp["uuid"]: {"VCPU": amount}},
                                          "p", "u")
        with pytest.raises(errors.InvalidAllocation):
            placement.claim_resources(db, str(uuid.uuid4()), {rp["uuid"]: {"DISK_GB": 1}}, "p", "u")
        with pytest.raises(errors.BadRequest):
            placement.claim_resources(db, str(uuid.uuid4()), {str(uuid.uuid4()): {"VCPU": 2}},
                                      "p", "u")


def test_move_allocations_to_migration(database):
    rp = host(database)
    instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
    with database.transaction() as db:
        placement.claim_resources(db, instance, {rp["uuid"]: {"VCPU": 2, "DISK_GB": 5}}, "p", "u")
        assert placement.move_allocations(db, instance, migration)
        assert placement.get_allocations_for_consumer(db, instance) == {}
        moved = placement.get_allocations_for_consumer(db, migration)
        assert moved[rp["uuid"]]["resources"] == {"VCPU": 2, "DISK_GB": 5}
        assert not placement.move_allocations(db, instance, migration)
