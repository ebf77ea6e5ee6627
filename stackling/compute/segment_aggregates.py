"""Compute's side of network's routed segments (Neutron's Nova notifier): the host
aggregate of each segment, named by network; with the project of a server a port names.

Network imports nothing of compute: `register()` hands these functions to it
(`network.interface.register_compute`) when the compute component is loaded.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.compute import aggregates
from stackling.compute.errors import (
    AggregateHostExists,
    AggregateHostNotFound,
    AggregateNameExists,
    ComputeHostNotFound,
)
from stackling.compute.models import Aggregate, AggregateHost


def _named(db: Session, name: str) -> Aggregate | None:
    return db.scalars(select(Aggregate).where(Aggregate.name == name)).first()


def aggregate_uuid(db: Session, name: str) -> str | None:
    agg = _named(db, name)
    return agg.uuid if agg is not None else None


def ensure_aggregate(db: Session, name: str, hosts: list[str]) -> str:
    try:
        agg = aggregates.create_aggregate(db, name, None)
    except AggregateNameExists:
        return _named(db, name).uuid  # type: ignore[union-attr]
    aggregates.add_hosts(db, agg, hosts)
    return agg.uuid


def delete_aggregate(db: Session, name: str) -> None:
    agg = _named(db, name)
    if agg is None:
        return
    for host in list(db.scalars(select(AggregateHost.host).where(
            AggregateHost.aggregate_id == agg.id))):
        aggregates.remove_host(db, str(agg.id), host)
    aggregates.delete_aggregate(db, str(agg.id))


def add_host(db: Session, name: str, host: str) -> None:
    agg = _named(db, name)
    if agg is not None:
        try:
            aggregates.add_host(db, str(agg.id), host)
        except (AggregateHostExists, ComputeHostNotFound):
            pass


def remove_host(db: Session, name: str, host: str) -> None:
    agg = _named(db, name)
    if agg is not None:
        try:
            aggregates.remove_host(db, str(agg.id), host)
        except AggregateHostNotFound:
            pass


def aggregate_members(db: Session, name: str) -> Any:
    from stackling.network.interface import Aggregate as Members

    agg = _named(db, name)
    if agg is None:
        return None
    return Members(agg.uuid, sorted(db.scalars(select(AggregateHost.host).where(
        AggregateHost.aggregate_id == agg.id))))


def aggregates_named_like(db: Session, prefix: str) -> dict[str, str]:
    return dict(db.execute(select(Aggregate.uuid, Aggregate.name).where(
        Aggregate.name.startswith(prefix, autoescape=True))).all())


def register() -> None:
    from stackling.compute.hosts import node_uuid
    from stackling.compute.interface import server_project
    from stackling.network import interface as network

    network.register_compute(network.ComputeHooks(
        server_project=server_project, aggregate_uuid=aggregate_uuid,
        ensure_aggregate=ensure_aggregate, delete_aggregate=delete_aggregate,
        add_host=add_host, remove_host=remove_host, aggregate_members=aggregate_members,
        host_aggregate_uuids=aggregates.host_aggregate_uuids,
        aggregates_named_like=aggregates_named_like, node_provider=node_uuid))
