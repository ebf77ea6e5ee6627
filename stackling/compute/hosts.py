"""Compute hosts from configuration: services, compute nodes, availability zones, and their
placement resource providers; the admin views over them (os-services, os-hypervisors).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stackling.common.db import in_int_range, is_deadlock, utcnow_precise
from stackling.compute.aggregates import create_aggregate, host_aggregate_uuids
from stackling.compute.errors import ComputeHostNotFound, HypervisorNotFound, ServiceNotFound
from stackling.compute.models import (
    Aggregate,
    AggregateHost,
    ComputeNode,
    ComputeService,
    Instance,
)

DEFAULT_AZ = "nova"
SERVICE_VERSION = 66  # the compute service version stackling's build worker speaks
# Nova's initial allocation ratios and reserved host memory (nova.conf defaults).
CPU_ALLOCATION_RATIO = 4.0
RAM_ALLOCATION_RATIO = 1.0
DISK_ALLOCATION_RATIO = 1.0
RESERVED_HOST_MEMORY_MB = 512
_NS = uuid.UUID("5a0b6e0e-3c9f-4b55-9d77-6c1d2f0c4e11")


def node_uuid(host: str) -> str:
    """Stable per host name, so every process and every restart agree on it."""
    return str(uuid.uuid5(_NS, f"compute-node:{host}"))


def service_uuid(host: str, binary: str = "nova-compute") -> str:
    return str(uuid.uuid5(_NS, f"service:{binary}:{host}"))


def sync_hosts(db: Session, configured: list[Any]) -> list[str]:
    """Register the configured hosts, as nova-compute services do when they start: a
    service, a compute node and a placement resource provider with its inventory for
    each host that is new or whose size changed; hosts of a non-default AZ join an
    aggregate of that name carrying the AZ metadata. Returns the hosts it touched.

    Cost grows with the configured hosts (a handful), never with servers; a start with
    nothing changed is one query.
    """
    existing = {n.host: n for n in db.scalars(select(ComputeNode))}
    touched = []
    for host in configured:
        node = existing.get(host.name)
        size = (host.vcpus, host.memory_mb, host.disk_gb, list(host.physical_networks))
        if node is not None and (node.vcpus, node.memory_mb, node.local_gb,
                                 list(node.physical_networks or [])) == size:
            continue
        if node is None:
            node = _register(db, host)
        else:
            node.vcpus, node.memory_mb, node.local_gb = host.vcpus, host.memory_mb, host.disk_gb
            node.physical_networks = list(host.physical_networks)
        db.flush()
        _report_to_placement(db, node)
        touched.append(host.name)
    # The network service maps hosts to routed-network segments by physical network
    # (what an L2 agent's bridge mappings tell Neutron).
    from stackling.network import interface as network

    network.record_hosts(db, [(h.name, list(h.physical_networks)) for h in configured])
    if configured:
        _ensure_control_services(db, configured[0].name)
    return touched


# The services Nova runs beside its computes (a DevStack host lists them in os-services and
# os-hosts, in zone `internal`): their work is done in process here; only their rows exist.
CONTROL_SERVICES = ("nova-scheduler", "nova-conductor")


def _ensure_control_services(db: Session, host: str) -> None:
    """Register the control services once, on the first configured host (a deleted one
    comes back at the next start, as a restarted Nova service registers again)."""
    have = set(db.scalars(select(ComputeService.binary).where(
        ComputeService.binary.in_(CONTROL_SERVICES))))
    for binary in CONTROL_SERVICES:
        if binary not in have:
            db.add(ComputeService(uuid=service_uuid(host, binary), host=host, binary=binary,
                                  topic=binary.removeprefix("nova-"), version=SERVICE_VERSION,
                                  updated_at=utcnow_precise()))
    db.flush()


def _register(db: Session, host: Any) -> ComputeNode:
    service = ComputeService(uuid=service_uuid(host.name), host=host.name,
                             binary="nova-compute", version=SERVICE_VERSION,
                             updated_at=utcnow_precise())
    db.add(service)
    db.flush()
    node = ComputeNode(uuid=node_uuid(host.name), service_id=service.id, host=host.name,
                       hypervisor_hostname=host.name, vcpus=host.vcpus,
                       memory_mb=host.memory_mb, local_gb=host.disk_gb,
                       availability_zone=host.availability_zone,
                       physical_networks=list(host.physical_networks))
    db.add(node)
    if host.availability_zone != DEFAULT_AZ:
        agg = db.scalars(select(Aggregate).where(Aggregate.name == host.availability_zone)
                         ).first()
        if agg is None:
            agg = create_aggregate(db, host.availability_zone, host.availability_zone)
        db.add(AggregateHost(aggregate_id=agg.id, host=host.name))
    return node


def _report_to_placement(db: Session, node: ComputeNode) -> None:
    from stackling.placement import interface as placement

    placement.ensure_resource_provider(db, node.uuid, node.hypervisor_hostname)
    placement.set_inventory_for_provider(db, node.uuid, inventory(node))
    aggs = host_aggregate_uuids(db, node.host).get(node.host, [])
    if aggs:
        placement.set_aggregates_for_provider(db, node.uuid, aggs)


def start_hosts(runtime: Any) -> None:
    """At process start; concurrent starts (workers) race on the unique rows and retry."""
    from sqlalchemy.exc import IntegrityError

    from stackling.common.db import retry_on_conflict

    def attempt() -> list[str]:
        with runtime.db.transaction() as db:
            return sync_hosts(db, runtime.settings.compute.hosts)

    retry_on_conflict(attempt, attempts=5,
                      retry_if=lambda err: isinstance(err, IntegrityError) or is_deadlock(err))


def inventory(node: ComputeNode) -> dict[str, dict[str, Any]]:
    return {
        "VCPU": {"total": node.vcpus, "reserved": 0, "min_unit": 1, "max_unit": node.vcpus,
                 "step_size": 1, "allocation_ratio": CPU_ALLOCATION_RATIO},
        "MEMORY_MB": {"total": node.memory_mb, "reserved": RESERVED_HOST_MEMORY_MB,
                      "min_unit": 1, "max_unit": node.memory_mb, "step_size": 1,
                      "allocation_ratio": RAM_ALLOCATION_RATIO},
        "DISK_GB": {"total": node.local_gb, "reserved": 0, "min_unit": 1,
                    "max_unit": node.local_gb, "step_size": 1,
                    "allocation_ratio": DISK_ALLOCATION_RATIO},
    }


# ------------------------------------------------------------------ services
def list_services(db: Session, host: str | None = None,
                  binary: str | None = None) -> list[ComputeService]:
    stmt = select(ComputeService).order_by(ComputeService.id)
    if host:
        stmt = stmt.where(ComputeService.host == host)
    if binary:
        stmt = stmt.where(ComputeService.binary == binary)
    return list(db.scalars(stmt))


def get_service_by_host_binary(db: Session, host: str, binary: str) -> ComputeService:
    service = db.scalars(select(ComputeService).where(ComputeService.host == host,
                                                      ComputeService.binary == binary)).first()
    if service is None:
        raise ServiceNotFound(service_id=f"{host}/{binary}")
    return service


def _check_uuid(ident: str) -> None:
    from stackling.compute.errors import ValidationError
    from stackling.compute.validation import is_uuid_like

    if not is_uuid_like(ident):
        raise ValidationError(detail=f"Invalid uuid {ident}")


def get_service_by_uuid(db: Session, ident: str) -> ComputeService:
    _check_uuid(ident)
    service = db.scalars(select(ComputeService).where(ComputeService.uuid == ident)).first()
    if service is None:
        raise ServiceNotFound(service_id=ident)
    return service


def get_service_by_id(db: Session, ident: str) -> ComputeService:
    try:
        numeric = int(ident)
        service = db.get(ComputeService, numeric) if in_int_range(numeric) else None
    except ValueError:
        service = None
    if service is None:
        raise ServiceNotFound(service_id=ident)
    return service


def delete_service(db: Session, service: ComputeService) -> None:
    """Forget a compute service, its node and its resource provider; refused (409) while
    it hosts instances or belongs to an aggregate, as Nova refuses."""
    from stackling.common.errors import Conflict

    if service.binary != "nova-compute":  # a control service has no node nor instances
        db.delete(service)
        db.flush()
        return
    if count_instances_on(db, service.host):
        raise Conflict("Unable to delete compute service that is hosting instances. "
                       "Migrate or delete the instances first.")
    if db.scalars(select(AggregateHost).where(AggregateHost.host == service.host)).first():
        raise Conflict("Unable to delete compute service that is in an aggregate. Remove "
                       f"host {service.host} from the aggregate first.")
    node = db.scalars(select(ComputeNode).where(ComputeNode.service_id == service.id)).first()
    if node is not None:
        from stackling.placement import interface as placement

        placement.delete_resource_provider(db, node.uuid)
        db.delete(node)
    db.delete(service)
    db.flush()


def set_service_status(db: Session, host: str, binary: str, *, disabled: bool | None = None,
                       reason: str | None = None, forced_down: bool | None = None
                       ) -> ComputeService:
    if not db.scalars(select(ComputeService.id).where(ComputeService.host == host)).first():
        raise ComputeHostNotFound(host=host)
    service = get_service_by_host_binary(db, host, binary)
    if disabled is not None:
        service.disabled = disabled
        service.disabled_reason = reason if disabled else None
    if forced_down is not None:
        service.forced_down = forced_down
    service.updated_at = utcnow_precise()
    db.flush()
    return service


def is_up(service: ComputeService) -> bool:
    # No heartbeat to miss: hosts are configuration. Only forced_down makes one "down".
    return not service.forced_down


# ------------------------------------------------------------------ hypervisors
def list_nodes(db: Session) -> list[tuple[ComputeNode, ComputeService]]:
    stmt = select(ComputeNode, ComputeService).join(
        ComputeService, ComputeService.id == ComputeNode.service_id).order_by(ComputeNode.id)
    return [(n, s) for n, s in db.execute(stmt)]


def get_node(db: Session, node_id: str) -> tuple[ComputeNode, ComputeService]:
    try:
        numeric = int(node_id)
    except ValueError:
        raise HypervisorNotFound(id=node_id) from None
    if not in_int_range(numeric):
        raise HypervisorNotFound(id=node_id)
    row = db.execute(select(ComputeNode, ComputeService).join(
        ComputeService, ComputeService.id == ComputeNode.service_id).where(
        ComputeNode.id == numeric)).first()
    if row is None:
        raise HypervisorNotFound(id=node_id)
    return row[0], row[1]


def get_node_by_uuid(db: Session, ident: str) -> tuple[ComputeNode, ComputeService]:
    _check_uuid(ident)
    row = db.execute(select(ComputeNode, ComputeService).join(
        ComputeService, ComputeService.id == ComputeNode.service_id).where(
        ComputeNode.uuid == ident)).first()
    if row is None:
        raise HypervisorNotFound(id=ident)
    return row[0], row[1]


def node_usage(db: Session, hosts: list[str] | None = None) -> dict[str, dict[str, int]]:
    """Per host: vcpus/ram/disk used and running instances, from the instances there."""
    stmt = select(Instance.host, Instance.flavor).where(Instance.host.is_not(None))
    if hosts is not None:
        stmt = stmt.where(Instance.host.in_(hosts))
    usage: dict[str, dict[str, int]] = {}
    for host, flavor in db.execute(stmt):
        u = usage.setdefault(host, {"vcpus": 0, "ram": 0, "disk": 0, "vms": 0})
        u["vcpus"] += flavor["vcpus"]
        u["ram"] += flavor["memory_mb"]
        u["disk"] += flavor["root_gb"] + flavor["ephemeral_gb"]
        u["vms"] += 1
    return usage


def count_instances_on(db: Session, host: str) -> int:
    return db.scalar(select(func.count()).select_from(Instance).where(Instance.host == host)) or 0


def uptime_line(db: Session, host: str) -> str:
    """`uptime`'s line for a host, counted from when its service was registered."""
    service = db.scalars(select(ComputeService).where(ComputeService.host == host)).first()
    started = service.created_at if service is not None else utcnow_precise()
    now = utcnow_precise()
    up = now - started
    hours, rest = divmod(int(up.total_seconds()) % 86400, 3600)
    return (f" {now:%H:%M:%S} up {up.days} days, {hours:2d}:{rest // 60:02d},  0 users,  "
            "load average: 0.00, 0.00, 0.00")
