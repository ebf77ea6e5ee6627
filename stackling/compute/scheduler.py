"""The scheduler: placement allocation candidates for the flavor, narrowed to the
requested availability zone, to enabled, up compute services and, for NICs on routed
networks, to hosts that reach a usable segment; then a claim.

Routed networks (beyond upstream, as the routed-networks spec asked): each IPv4 address a
build takes from a segment is claimed in placement on the segment's provider (uuid = the
segment id), in the same allocation as the flavor's resources. Placement's capacity check
and provider generations make the claim atomic across processes, so two concurrent boots
can never both be given a segment's last free address. Within the same transaction the
build then hands the claim over to the port (the network service keeps each compute
port's addresses as the port's own allocation, released with the port); see
`network_api.drop_ipv4_claim`.

Claims run in the caller's transaction; a lost race (another build took the capacity or
bumped a provider generation) moves on to the next candidate. Each decision (the chosen
host and why every other host was left out) is kept per server: `scheduler_decision`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.orm.util import identity_key

from stackling.common.db import utcnow_precise
from stackling.common.errors import ApiError
from stackling.compute import hosts, server_groups
from stackling.compute.errors import NoValidHost
from stackling.compute.models import (
    Aggregate,
    AggregateHost,
    AggregateMetadata,
    ComputeNode,
    ComputeService,
)
from stackling.compute.move_models import SchedulerDecision
from stackling.compute.network_api import IPV4

MAX_CANDIDATES = 1000  # Nova's [scheduler] max_placement_results
CLAIM_ROUNDS = 5  # fresh candidate lists tried when claims lose races
RACE_RETRIES = 3  # claims of one candidate retried after a generation conflict
EXPLAIN_HOSTS = 50  # per-host resource shortfalls are spelled out up to this many hosts


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


@dataclass
class RequestSpec:
    """What a build or a move asks of the scheduler."""

    consumer: str  # the instance uuid (placement consumer)
    project_id: str
    user_id: str
    flavor: dict[str, Any]
    operation: str = "build"
    zone: str | None = None  # stay within this availability zone
    host: str | None = None  # only this host (a forced or requested host)
    excluded: frozenset[str] = frozenset()  # hosts a build failed on, a move's source
    routed: list[Any] = field(default_factory=list)  # network_api.RoutedNeed
    # Allocations carried over unchanged (a move keeps its segment IPv4 claims).
    carried: dict[str, dict[str, int]] = field(default_factory=dict)
    # The placement request groups of the server's ports' `resource_request` (QoS minimum
    # bandwidth and packet rate): {"suffix", "resources", "required"}, each met by one
    # provider in the chosen host's tree, in the same claim as the flavor's resources.
    port_groups: list[dict[str, Any]] = field(default_factory=list)
    # After a claim: which provider met each port group ({suffix: [rp_uuid]}).
    port_mappings: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Decision:
    operation: str
    hosts: dict[str, str | None] = field(default_factory=dict)  # host -> why excluded
    chosen: str | None = None
    reason: str | None = None

    def exclude(self, host: str, why: str) -> None:
        if self.hosts.get(host) is None:
            self.hosts[host] = why

    def as_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "chosen": self.chosen, "reason": self.reason,
                "hosts": dict(sorted(self.hosts.items()))}


class NoValidHostFound(NoValidHost):
    """NoValidHost carrying the decision that led to it (recorded by the caller, whose
    savepoint is being rolled back)."""

    decision: Decision | None = None


def _fail(decision: Decision, reason: str) -> NoValidHostFound:
    err = NoValidHostFound(reason=reason)
    decision.reason = err.text
    err.decision = decision
    return err


# ------------------------------------------------------------------ build entry point
def select_destination(db: Session, instance: Any,
                       excluded: frozenset[str] = frozenset(),
                       lookups: Any = None) -> Destination:
    """Pick a host for a server being built (none of `excluded`, the hosts the build
    already failed on) and claim its resources there (and its IPv4 addresses on the
    segments of routed networks). `lookups` (network_api.BuildLookups) keeps what was
    read of the server's ports and networks, for the allocation that follows."""
    from stackling.compute import network_api

    zone, _, forced_host = (instance.requested_az or "").partition(":")
    spec = RequestSpec(consumer=instance.uuid, project_id=instance.project_id,
                       user_id=instance.user_id, flavor=instance.flavor, zone=zone or None,
                       host=forced_host or None, excluded=excluded,
                       routed=network_api.routed_needs_for_build(db, instance, lookups),
                       port_groups=port_request_groups(db, instance))
    dest = schedule(db, spec)
    if spec.port_groups:  # Nova tells each port where its resources were claimed
        from stackling.network import interface as net

        for port_id in _ports_of(instance):
            net.set_port_allocation(db, port_id, spec.port_mappings)
    return dest


def _ports_of(instance: Any) -> list[str]:
    requested = instance.requested_networks
    return [r["port_id"] for r in requested if isinstance(r, dict) and r.get("port_id")] \
        if isinstance(requested, list) else []


def port_request_groups(db: Session, instance: Any) -> list[dict[str, Any]]:
    """The request groups of the ports a build names (as Nova, only ports made before the
    boot carry a resource request), suffixed by their group ids."""
    from stackling.network import interface as net

    requested = instance.requested_networks
    if not isinstance(requested, list):
        return []
    groups = []
    for req in requested:
        port_id = req.get("port_id") if isinstance(req, dict) else None
        request = net.port_resource_request(db, port_id) if port_id else None
        for group in (request or {}).get("request_groups", []):
            groups.append({"suffix": group["id"], "resources": group["resources"],
                           "required": group["required"]})
    return groups


# ------------------------------------------------------------------ the scheduler
# Every compute node with its service and its host's availability zone (a host is in one
# zone at most: aggregates refuse a second), one query (built once).
_NODES = select(ComputeNode, ComputeService, select(AggregateMetadata.value).join(
    AggregateHost, AggregateHost.aggregate_id == AggregateMetadata.aggregate_id).where(
    AggregateHost.host == ComputeNode.host,
    AggregateMetadata.key == "availability_zone").limit(1).correlate(
    ComputeNode).scalar_subquery()).join(
    ComputeService, ComputeService.id == ComputeNode.service_id)


def schedule(db: Session, spec: RequestSpec) -> Destination:
    """Choose and claim a destination for `spec`, or raise NoValidHost (with the
    decision). The decision of a success is recorded here; of a failure, by the caller."""
    decision = Decision(spec.operation)
    nodes: dict[str, tuple[Any, Any]] = {}
    zones: dict[str, str] = {}  # as aggregates.host_zones, for the nodes' hosts
    for n, s, zone in db.execute(_NODES):
        nodes[n.host] = (n, s)
        if zone is not None:
            zones.setdefault(n.host, zone)
    for host, (_node, service) in nodes.items():
        if spec.host and host != spec.host:
            decision.exclude(host, "not the requested host")
        elif host in spec.excluded:
            decision.exclude(host, "excluded (the server's current host, or a host this "
                                   "build already failed on)")
        elif service.disabled:
            decision.exclude(host, "compute service disabled")
        elif not hosts.is_up(service):
            decision.exclude(host, "compute service down")
        elif spec.zone and zones.get(host, hosts.DEFAULT_AZ) != spec.zone:
            decision.exclude(host, f"not in availability zone {spec.zone}")
    # The server's group (builds and moves alike): hard policies filter hosts here and
    # are held by claim_host; soft ones weigh the candidates.
    group = server_groups.rule_for(db, spec.consumer)
    if group is not None:
        for host in nodes:
            why = group.refuses(host)
            if why is not None:
                decision.exclude(host, why)
    member_of: list[list[str]] = []
    if spec.zone and spec.zone != hosts.DEFAULT_AZ:
        aggs = _az_aggregates(db, spec.zone)
        if not aggs:
            raise _fail(decision, "")
        member_of.append(aggs)
    # Routed networks: per NIC, the aggregates of its segments (Nova's prefilter). Whether a
    # segment still has addresses is left to the claim itself (placement's capacity check,
    # atomic across processes); free addresses are only counted to explain a failure.
    routing = _Routing(spec)
    if routing.segments:
        routing.seg_aggs, routing.node_aggs = _routing_aggregates(db, routing.segments, nodes)
        for need in spec.routed:
            aggs = sorted({a for s in need.segments for a in routing.seg_aggs.get(s, [])})
            wanted = set(aggs)
            for host in nodes:
                if wanted.isdisjoint(routing.node_aggs.get(host, ())):
                    decision.exclude(host, f"segment not reachable: {need.label} needs "
                                           f"segment {' or '.join(need.segments)} of network "
                                           f"{need.network_id}")
            if not aggs:
                raise _fail(decision, f"No host reaches a segment of network "
                                      f"{need.network_id}.")
            member_of.append(aggs)
    for _ in range(CLAIM_ROUNDS):
        chosen, raced = _try_claim(db, spec, decision, nodes, zones, member_of, routing,
                                   group)
        if chosen is not None:
            decision.chosen = chosen.host
            record(db, spec.consumer, decision)
            return chosen
        if not raced:
            break
    exhausted = routing.exhausted_network(db)
    if exhausted is not None:
        raise _fail(decision, exhausted)
    raise _fail(decision, "There are not enough hosts available.")


class _Routing:
    """The routed-network side of one scheduling: segment and host aggregates, and the
    segments a claim found full."""

    def __init__(self, spec: RequestSpec) -> None:
        self.spec = spec
        self.segments = {s for need in spec.routed for s in need.segments}
        self.seg_aggs: dict[str, list[str]] = {}
        self.node_aggs: dict[str, list[str]] = {}
        self.full: set[str] = set()

    def reachable(self, host: str, need: Any) -> list[str]:
        mine = set(self.node_aggs.get(host, []))
        return [s for s in need.segments if mine & set(self.seg_aggs.get(s, []))]

    def choices(self, host: str) -> tuple[list[dict[str, int]], str | None]:
        """IPv4 claims to try on `host`: per NIC needing addresses, a segment it reaches
        that is not known to be full (one option per NIC, shuffled), or why none."""
        picks: dict[str, int] = {}
        for need in self.spec.routed:
            if not need.ipv4:
                continue
            reach = [s for s in self.reachable(host, need) if s not in self.full]
            if not reach:
                full = [s for s in self.reachable(host, need) if s in self.full]
                return [], (f"IPv4 exhausted on segment {', '.join(full)} of network "
                            f"{need.network_id}")
            seg = random.choice(reach)
            picks[seg] = picks.get(seg, 0) + need.ipv4
        return [picks], None

    def exhausted_network(self, db: Session) -> str | None:
        """NoValidHost's reason when a network has no free address on any segment."""
        needs = [n for n in self.spec.routed if n.ipv4]
        if not needs:
            return None
        free = _free_ipv4(db, {s for n in needs for s in n.segments})
        for need in needs:
            if all(free[s] < need.ipv4 for s in need.segments):
                return (f"IPv4 addresses exhausted on every segment of network "
                        f"{need.network_id} ({', '.join(need.segments)}).")
        return None


def _routing_aggregates(db: Session, segments: set[str], nodes: dict[str, Any]
                        ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The aggregates of the segment providers and, of those, each host's provider's:
    one query, sized by the segments' aggregates' membership."""
    from stackling.placement import interface as placement

    by_uuid = placement.get_aggregate_members(db, segments)
    return ({s: by_uuid[s] for s in segments if s in by_uuid},
            {host: by_uuid.get(n.uuid, []) for host, (n, _) in nodes.items()})


def _free_ipv4(db: Session, segments: set[str]) -> dict[str, int]:
    """Free IPv4 addresses of each segment provider (0 without one)."""
    from stackling.placement import interface as placement

    free = placement.free_capacity(db, segments, IPV4)
    return {seg: free.get(seg, 0) for seg in segments}


def _explain_resources(db: Session, spec: RequestSpec, decision: Decision,
                       nodes: dict[str, Any], hosts_left: list[str]) -> None:
    """Say which resource each remaining host lacks (a failure only: a few queries per
    host, bounded)."""
    from stackling.placement import interface as placement

    wanted = resources_for(spec.flavor)
    for host in hosts_left[:EXPLAIN_HOSTS]:
        node = nodes[host][0]
        try:
            inv = placement.get_inventory(db, node.uuid)
            used = placement.get_provider_usages(db, node.uuid)
        except ApiError:
            decision.exclude(host, "no resource provider")
            continue
        short = []
        for rc, amount in wanted.items():
            i = inv.get(rc)
            cap = int((i["total"] - i["reserved"]) * i["allocation_ratio"]) if i else 0
            if cap - used.get(rc, 0) < amount or (i and amount > i["max_unit"]):
                short.append(f"{rc} (needs {amount}, free {cap - used.get(rc, 0)})")
        decision.exclude(host, "not enough " + ", ".join(short) if short
                         else "no allocation candidate")


def _try_claim(db: Session, spec: RequestSpec, decision: Decision, nodes: dict[str, Any],
               zones: dict[str, str], member_of: list[list[str]],
               routing: _Routing, group: server_groups.GroupRule | None = None
               ) -> tuple[Destination | None, bool]:
    """One round: fresh candidates, claim the first that takes it. Returns the choice (or
    None) and whether a concurrent update (worth another round) made a claim fail."""
    from stackling.placement import interface as placement

    in_tree = hosts.node_uuid(spec.host) if spec.host else None
    candidates = placement.get_allocation_candidates(
        db, resources_for(spec.flavor), member_of=member_of, in_tree=in_tree,
        limit=MAX_CANDIDATES, groups=spec.port_groups)
    by_uuid = {n.uuid: h for h, (n, _) in nodes.items()}
    if spec.port_groups:  # ports' providers sit under the compute nodes: their hosts
        roots = placement.root_providers(db, {rp for c in candidates for rp in c["allocations"]})
        by_uuid.update({rp: by_uuid[root] for rp, root in roots.items() if root in by_uuid})
    eligible = [h for h in nodes if decision.hosts.get(h) is None]
    eligible_set = set(eligible)
    choices = [c for c in candidates
               if all(by_uuid.get(rp) in eligible_set for rp in c["allocations"])]
    if not choices:
        _explain_resources(db, spec, decision, nodes,
                           [h for h in eligible if nodes[h][0].uuid not in
                            {rp for c in candidates for rp in c["allocations"]}])
        # Nova: no allocation candidates at all is NoValidHost with an empty reason.
        raise _fail(decision, "There are not enough hosts available." if candidates else "")
    random.shuffle(choices)  # spread, and keep concurrent builds off one provider
    if group is not None:  # the soft policies' preference (a stable sort keeps the spread)
        choices.sort(key=lambda c: group.weight(by_uuid[next(iter(c["allocations"]))]))
    raced = False
    for candidate in choices:
        rp = next(iter(candidate["allocations"]))
        host = by_uuid[rp]
        while True:  # the same host again while a claim only found a segment full
            picks, why = routing.choices(host)
            if why is not None:
                decision.exclude(host, why)
                break
            allocations = {r: dict(res) for r, res in candidate["allocations"].items()}
            for r, res in spec.carried.items():
                allocations.setdefault(r, {}).update(res)
            # The IPv4 addresses: on a segment this host reaches, in the same claim.
            for seg, n in picks[0].items():
                allocations.setdefault(seg, {})[IPV4] = n
            # The group's host first (a build of the same group may hold it: wait for it
            # here, before taking any placement row), undone if the claim fails.
            held = db.begin_nested() if group is not None else None
            if held is not None and not server_groups.claim_host(db, group, spec.consumer,
                                                                 host):
                held.rollback()
                decision.exclude(host, f"server group {group.group_uuid} ({group.policy}): "
                                       "taken meanwhile by another member")
                raced = True
                break
            outcome = _claim(db, spec, allocations)
            if held is not None and outcome is None:
                held.commit()
            elif held is not None:
                held.rollback()
            if outcome is None:
                node = nodes[host][0]
                spec.port_mappings = candidate.get("mappings", {})
                return Destination(host, node.hypervisor_hostname,
                                   zones.get(host, hosts.DEFAULT_AZ)), raced
            if isinstance(outcome, placement.ConcurrentUpdate):
                raced = True  # another claim took a provider meanwhile: look again
                break
            full = outcome.kwargs.get("resource_provider") if isinstance(
                outcome, placement.CapacityExceeded) else None
            if full in picks[0] and outcome.kwargs.get("resource_class") == IPV4:
                routing.full.add(full)  # that segment is full: another one, same host
                continue
            decision.exclude(host, "claim failed: capacity taken meanwhile")
            break
    return None, raced


def _claim(db: Session, spec: RequestSpec, allocations: dict[str, dict[str, int]]
           ) -> ApiError | None:
    """Claim `allocations` for the consumer, retrying a lost generation race a few times;
    the error that stopped it, or None."""
    from stackling.placement import interface as placement

    err: ApiError | None = None
    for _attempt in range(RACE_RETRIES):
        try:
            placement.claim_resources(db, spec.consumer, allocations, spec.project_id,
                                      spec.user_id)
            return None
        except placement.ConcurrentUpdate as exc:
            err = exc
            continue
        except ApiError as exc:
            return exc
    return err


def release(db: Session, instance_uuid: str) -> None:
    """A server is being deleted: its allocation, the source allocation a resize or
    migration waiting for confirmation still holds (as Nova confirms it on delete) and its
    recorded decision go. Migration records stay (upstream keeps them, soft-deleted)."""
    from stackling.compute.move_models import Migration
    from stackling.placement import interface as placement

    placement.delete_allocation_for_instance(db, instance_uuid)
    for mig in db.scalars(select(Migration).where(
            Migration.instance_uuid == instance_uuid, Migration.status == "finished")):
        placement.delete_allocation_for_instance(db, mig.uuid)
        mig.status, mig.updated_at = "confirmed", utcnow_precise()
    forget(db, instance_uuid)


# ------------------------------------------------------------------ decisions
def record(db: Session, instance_uuid: str, decision: Decision) -> None:
    """Keep `decision` as the server's last one (one row per server, replaced): one
    insert-or-replace statement, unless the session holds the row already."""
    row = db.identity_map.get(identity_key(SchedulerDecision, instance_uuid))
    if row is not None:
        row.operation, row.created_at = decision.operation, utcnow_precise()
        row.decision = decision.as_dict()
        db.flush()
        return
    db.execute(_upsert(db.get_bind().dialect.name),
               {"uuid": instance_uuid, "operation": decision.operation,
                "created_at": utcnow_precise(), "decision": decision.as_dict()})


_UPSERTS: dict[str, Any] = {}  # dialect -> the decision's insert-or-replace, built once


def _upsert(dialect: str) -> Any:
    stmt = _UPSERTS.get(dialect)
    if stmt is not None:
        return stmt
    from sqlalchemy import bindparam

    table = SchedulerDecision.__table__
    values = {"instance_uuid": bindparam("uuid"), "operation": bindparam("operation"),
              "created_at": bindparam("created_at"), "decision": bindparam("decision")}
    changed = ("operation", "created_at", "decision")
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        ins: Any = pg_insert(table).values(values)
        stmt = ins.on_conflict_do_update(index_elements=[table.c.instance_uuid],
                                         set_={k: ins.excluded[k] for k in changed})
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        ins = sqlite_insert(table).values(values)
        stmt = ins.on_conflict_do_update(index_elements=[table.c.instance_uuid],
                                         set_={k: ins.excluded[k] for k in changed})
    else:
        from sqlalchemy.dialects.mysql import insert as mysql_insert

        ins = mysql_insert(table).values(values)
        stmt = ins.on_duplicate_key_update({k: ins.inserted[k] for k in changed})
    _UPSERTS[dialect] = stmt
    return stmt


def record_failure(db: Session, instance_uuid: str, err: Exception,
                   operation: str = "build") -> None:
    """Keep the decision a NoValidHost carries; one raised after scheduling (a build out
    of port-binding retries) is kept with its reason and no per-host detail."""
    decision = getattr(err, "decision", None)
    if decision is None:
        decision = Decision(operation, reason=str(getattr(err, "text", err)))
    record(db, instance_uuid, decision)


def scheduler_decision(db: Session, instance_id: str) -> dict[str, Any] | None:
    """The last scheduling decision for a server: {"operation", "created_at", "chosen",
    "reason", "hosts": {host: why it was left out, or None for a candidate}}; None when
    the server was never scheduled."""
    row = db.get(SchedulerDecision, instance_id)
    if row is None:
        return None
    return {**row.decision, "operation": row.operation,
            "created_at": row.created_at.isoformat()}


def forget(db: Session, instance_uuid: str) -> None:
    row = db.get(SchedulerDecision, instance_uuid)
    if row is not None:
        db.delete(row)
