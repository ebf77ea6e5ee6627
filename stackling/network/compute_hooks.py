"""What the network service asks of compute, as functions compute registers at load.

Compute calls network through `network.interface` (ports, host mappings). The other
direction is Neutron's Nova notifier: a routed segment's host aggregate is created, kept
in step with the segment's hosts and deleted through Nova, and a port's `compute:*`
device owner is checked against the server's project. Network imports nothing of compute:
compute registers these functions (`network.interface.register_compute`) when its component
is loaded. Until then (a deployment without compute) there are no servers to protect and
no aggregates to keep: reads answer None and writes do nothing.

Aggregates are named by the caller (`Neutron segment id <id>`, upstream's name); every
function runs in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy.orm import Session


class Aggregate(NamedTuple):
    uuid: str
    hosts: list[str]  # sorted


@dataclass(frozen=True)
class ComputeHooks:
    # The project of server `server_id`, None when there is no such server.
    server_project: Callable[[Session, str], str | None]
    # The uuid of the aggregate of that name, None when there is none.
    aggregate_uuid: Callable[[Session, str], str | None]
    # Create the named aggregate with these hosts (those without a compute node are
    # skipped) and return its uuid; an aggregate of that name already: its uuid, as it is.
    ensure_aggregate: Callable[[Session, str, list[str]], str]
    # Remove the named aggregate's hosts, then the aggregate; absent: nothing.
    delete_aggregate: Callable[[Session, str], None]
    # Add a host to / remove it from the named aggregate; no aggregate, a host already
    # there (or not there), or one without a compute node: nothing.
    add_host: Callable[[Session, str, str], None]
    remove_host: Callable[[Session, str, str], None]
    # For the routed-network audit (segments/consistency.py), read only: the named
    # aggregate with its hosts; every host's aggregate uuids; the aggregates whose name
    # starts with a prefix (uuid -> name); a host's compute-node provider uuid.
    aggregate_members: Callable[[Session, str], Aggregate | None]
    host_aggregate_uuids: Callable[[Session], dict[str, list[str]]]
    aggregates_named_like: Callable[[Session, str], dict[str, str]]
    node_provider: Callable[[str], str]


def _none(*_args: object) -> None:
    return None


NO_COMPUTE = ComputeHooks(server_project=_none, aggregate_uuid=_none,
                          ensure_aggregate=_none,  # type: ignore[arg-type]
                          delete_aggregate=_none, add_host=_none, remove_host=_none,
                          aggregate_members=_none, host_aggregate_uuids=lambda db: {},
                          aggregates_named_like=lambda db, prefix: {},
                          node_provider=lambda host: "")
_registered: list[ComputeHooks] = []


def register(hooks: ComputeHooks) -> None:
    """Compute's functions (the last registration wins: one compute per process)."""
    _registered[:] = [hooks]


def compute() -> ComputeHooks:
    return _registered[0] if _registered else NO_COMPUTE
