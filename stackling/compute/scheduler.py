"""The scheduler: placement allocation candidates for the flavor, narrowed to the
requested availability zone and to enabled, up compute services, then a claim.

Claims run in the build's transaction; a lost race (another build took the capacity
or bumped the provider generation) moves on to the next candidate.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.errors import ApiError
from stackling.compute import hosts
from stackling.compute.errors import NoValidHost
from stackling.compute.models import (
    Aggregate,
    AggregateMetadata,
    ComputeNode,
    ComputeService,
)

MAX_CANDIDATES = 1000  # Nova's [scheduler] max_placement_results
CLAIM_ROUNDS = 5  # fresh candidate lists tried when claims lose races


def resources_for(flavor: dict[str, Any]) -> dict[str, int]:
    """What a flavor asks of placement (nova.scheduler.utils.resources_from_flavor)."""
    disk = flavor["root_gb"] + flavor["ephemeral_gb"] + (flavor["swap"] + 1023) // 1024
    resources = {"VCPU": flavor["vcpus"], "MEMORY_MB": flavor["memory_mb"]}
    if disk:
        resources["DISK_GB"] = disk
    return resources


def _az_aggregates(db: Session, zone: str) -> list[str]:
    return list(db.scalars(select(Aggregate.uuid).join(
        AggregateMetadata, AggregateMetadata.aggregate_id == Aggregate.id).where(
        AggregateMetadata.key == "availability_zone", AggregateMetadata.value == zone)))


class Destination(NamedTuple):
    host: str
    node: str  # hypervisor hostname
    zone: str


def select_destination(db: Session, instance: Any,
                       excluded: frozenset[str] = frozenset()) -> Destination:
    """Pick a host for the instance (none of `excluded`, the hosts a build already
    failed on) and claim its resources there."""
    zone, _, forced_host = (instance.requested_az or "").partition(":")
    zone = zone or None
    in_tree = hosts.node_uuid(forced_host) if forced_host else None
    member_of: list[list[str]] = []
    if zone and zone != hosts.DEFAULT_AZ:
        aggs = _az_aggregates(db, zone)
        if not aggs:
            raise NoValidHost(reason="")
        member_of = [aggs]
    for _ in range(CLAIM_ROUNDS):
        chosen, raced = _try_claim(db, instance, member_of, zone, in_tree, excluded)
        if chosen is not None:
            return chosen
        if not raced:
            break
    raise NoValidHost(reason="There are not enough hosts available.")


def _try_claim(db: Session, instance: Any, member_of: list[list[str]], zone: str | None,
               in_tree: str | None, excluded: frozenset[str]
               ) -> tuple[Destination | None, bool]:
    """One round: fresh candidates, claim the first that takes it. Returns the choice (or
    None) and whether a concurrent update (worth another round) made a claim fail."""
    from stackling.placement import errors as placement_errors
    from stackling.placement import interface as placement

    candidates = placement.get_allocation_candidates(
        db, resources_for(instance.flavor), member_of=member_of, in_tree=in_tree,
        limit=MAX_CANDIDATES)
    if not candidates:
        raise NoValidHost(reason="")
    rp_uuids = {rp for c in candidates for rp in c["allocations"]}
    # Plain (host, hypervisor hostname) pairs: a claim expires the session's objects.
    usable = {n.uuid: Destination(n.host, n.hypervisor_hostname, "") for n, s in db.execute(
        select(ComputeNode, ComputeService).join(
            ComputeService, ComputeService.id == ComputeNode.service_id).where(
            ComputeNode.uuid.in_(rp_uuids)))
        if not s.disabled and hosts.is_up(s) and n.host not in excluded}
    zones = hosts.host_zones(db)
    if zone == hosts.DEFAULT_AZ:
        usable = {u: d for u, d in usable.items() if d.host not in zones}
    choices = [c for c in candidates if set(c["allocations"]) <= set(usable)]
    if not choices:
        raise NoValidHost(reason="There are not enough hosts available.")
    random.shuffle(choices)  # spread, and keep concurrent builds off one provider
    raced = False
    consumer, project_id, user_id = instance.uuid, instance.project_id, instance.user_id
    for candidate in choices:
        try:
            placement.claim_resources(db, consumer, candidate["allocations"], project_id,
                                      user_id)
        except placement_errors.ConcurrentUpdate:
            raced = True  # another build took this provider meanwhile
            continue
        except ApiError:
            continue  # capacity gone: try the next candidate
        dest = next(usable[rp] for rp in candidate["allocations"] if rp in usable)
        return dest._replace(zone=zones.get(dest.host, hosts.DEFAULT_AZ)), raced
    return None, raced


def release(db: Session, instance_uuid: str) -> None:
    from stackling.placement import interface as placement

    placement.delete_allocation_for_instance(db, instance_uuid)
