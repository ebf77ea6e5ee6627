"""IP address management for fixed IPs.

One row per *taken* address (`network_ip_allocation`, primary key (subnet_id,
ip_address)); free addresses are the subnet's allocation pools minus those rows. A free
address is found with at most two indexed queries per pool range, whatever the subnet
size or fill level:

1. pick a random start inside the pools (uniformly over all pool addresses);
2. "first taken key >= start" — if it is not the start itself, the start is free;
3. else "first taken t >= start whose successor (t+1, stored as `next_key`) is not
   taken": t+1 is free; past the end of the range, wrap around to its beginning and
   then try the other pools.

The insert runs in a savepoint; a concurrent request that took the same address makes
it fail with IntegrityError and we try again from a new random start (bounded). Keys are
32-digit hex strings of the 128-bit address value, so they sort like addresses for IPv4
and IPv6 on every backend.

Deviation from neutron's reference driver: it picks among the *first 1000* free
addresses; we pick uniformly over the pools, which keeps the cost flat however many
addresses are taken (the properties clients can observe — a free address of the pool,
never a duplicate — are the same).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import netaddr
from sqlalchemy import bindparam, delete, exists, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from stackling.network import errors
from stackling.network.core.models import IPAllocation, Port, Subnet

ATTEMPTS = 32
LOWEST_FIRST_OWNERS = ("network:dhcp", "network:distributed")
SLAAC_MODES = ("slaac", "dhcpv6-stateless")


def key(value: int) -> str:
    return f"{value:032x}"


def pool_ranges(subnet: Subnet) -> list[tuple[int, int]]:
    return [(int(netaddr.IPAddress(p["start"])), int(netaddr.IPAddress(p["end"])))
            for p in subnet.allocation_pools or []]


def is_slaac(subnet: Subnet) -> bool:
    return subnet.ip_version == 6 and subnet.ipv6_address_mode in SLAAC_MODES


def eui64(subnet: Subnet, mac: str) -> str:
    prefix = netaddr.IPNetwork(subnet.cidr).first
    return str(netaddr.EUI(mac).ipv6(prefix))


# ------------------------------------------------------------------ storage
def _insert(db: Session, subnet: Subnet, value: int, port_id: str, ordinal: int) -> bool:
    """Take one address; False when it was already taken (by anyone).

    SQLite and PostgreSQL skip a taken address in the statement itself (ON CONFLICT DO
    NOTHING on the primary key, the row count tells). SQLite's writers run one at a time,
    so nothing else (a subnet deleted meanwhile) can fail the insert; on PostgreSQL that
    foreign key violation ends the request: the subnet is gone (404). MariaDB inserts in a
    savepoint and counts any integrity error as taken."""
    ip = str(netaddr.IPAddress(value, subnet.ip_version))
    row = {"subnet_id": subnet.id, "ip_address": ip, "port_id": port_id,
           "network_id": subnet.network_id, "ip_key": key(value),
           # the last IPv6 address has no successor: pointing at itself reads as taken
           "next_key": key(min(value + 1, 2**128 - 1)), "ordinal": ordinal}
    stmt = _SKIP_TAKEN.get(db.get_bind().dialect.name)
    if stmt is not None:
        try:
            return db.execute(stmt, row).rowcount == 1  # type: ignore[attr-defined]
        except IntegrityError:  # PostgreSQL: the subnet was deleted meanwhile
            raise errors.SubnetNotFound(subnet_id=subnet.id) from None
    try:
        with db.begin_nested():
            db.execute(insert(IPAllocation).values(**row))
    except IntegrityError:
        return False
    return True


def _skip_taken() -> dict[str, Any]:
    from sqlalchemy.dialects.postgresql import insert as pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    pk = ["subnet_id", "ip_address"]  # only the primary key: any other error still raises
    table = IPAllocation.__table__  # a Core insert: its result has the row count
    return {name: ins(table).on_conflict_do_nothing(index_elements=pk)
            .execution_options(preserve_rowcount=True)
            for name, ins in (("sqlite", sqlite_insert), ("postgresql", pg_insert))}


_SKIP_TAKEN = _skip_taken()  # built once: every address taken runs one


def _gap_queries() -> tuple[Any, Any]:
    """The two searches, built once (building them per call costs more than running them)."""
    a, b = IPAllocation, aliased(IPAllocation)
    sid, lo, hi = bindparam("sid"), bindparam("lo"), bindparam("hi")
    first = (select(a.ip_key).where(a.subnet_id == sid, a.ip_key >= lo, a.ip_key <= hi)
             .order_by(a.ip_key).limit(1))
    gap = (select(a.ip_key).where(
        a.subnet_id == sid, a.ip_key >= lo, a.ip_key < hi,
        ~exists().where(b.subnet_id == sid, b.ip_key == a.next_key))
        .order_by(a.ip_key).limit(1))
    return first, gap


_FIRST_TAKEN, _FIRST_GAP = _gap_queries()


def _free_in(db: Session, subnet_id: str, lo: int, hi: int) -> int | None:
    args = {"sid": subnet_id, "lo": key(lo), "hi": key(hi)}
    first = db.scalar(_FIRST_TAKEN, args)
    if first is None or int(first, 16) > lo:
        return lo
    taken = db.scalar(_FIRST_GAP, args)
    return None if taken is None else int(taken, 16) + 1


def find_free(db: Session, subnet: Subnet, *, lowest: bool = False) -> int | None:
    """A free address of the subnet's pools (None when they are full)."""
    ranges = pool_ranges(subnet)
    if not ranges:
        return None
    if lowest:
        order = [(lo, hi) for lo, hi in ranges]
    else:
        sizes = [hi - lo + 1 for lo, hi in ranges]
        pick = random.randrange(sum(sizes))
        i = 0
        while pick >= sizes[i]:
            pick -= sizes[i]
            i += 1
        lo, hi = ranges[i]
        start = lo + pick
        order = [(start, hi), *ranges[i + 1:], *ranges[:i]]
        if start > lo:
            order.append((lo, start - 1))
    for lo, hi in order:
        found = _free_in(db, subnet.id, lo, hi)
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------ the allocator
def allocate_any(db: Session, subnet: Subnet, port_id: str, ordinal: int,
                 device_owner: str = "") -> str | None:
    """Take a free pool address of `subnet` for the port; None when the pools are full."""
    lowest = device_owner in LOWEST_FIRST_OWNERS
    for _ in range(ATTEMPTS):
        value = find_free(db, subnet, lowest=lowest)
        if value is None:
            return None
        if _insert(db, subnet, value, port_id, ordinal):
            return str(netaddr.IPAddress(value, subnet.ip_version))
    raise errors.IpAddressGenerationFailure(net_id=subnet.network_id)


def allocate_specific(db: Session, subnet: Subnet, ip: str, port_id: str,
                      ordinal: int) -> str:
    """Take exactly `ip` (inside the CIDR, not necessarily in a pool)."""
    check_in_subnet(subnet, ip)
    value = int(netaddr.IPAddress(ip))
    if not _insert(db, subnet, value, port_id, ordinal) and _holder(db, subnet, value) != port_id:
        raise errors.IpAddressAlreadyAllocated(ip=ip, subnet_id=subnet.id)
    return str(netaddr.IPAddress(value, subnet.ip_version))


def _holder(db: Session, subnet: Subnet, value: int) -> str | None:
    """The port holding the address now. A concurrent identical update of the same port
    may have committed it after this request read the port's addresses: the address is
    then this port's own, which is what was asked (read committed sees that commit)."""
    return db.scalar(select(IPAllocation.port_id).where(
        IPAllocation.subnet_id == subnet.id,
        IPAllocation.ip_address == str(netaddr.IPAddress(value, subnet.ip_version))))


def check_in_subnet(subnet: Subnet, ip: str) -> None:
    """400 InvalidIpForSubnet unless `ip` is a usable address of the subnet's CIDR."""
    addr = netaddr.IPAddress(ip)
    net = netaddr.IPNetwork(subnet.cidr)
    if addr.version != net.version or addr not in net:
        raise errors.InvalidIpForSubnet(ip_address=ip)
    if net.version == 4 and net.prefixlen <= 30 and int(addr) in (net.first, net.last):
        raise errors.InvalidIpForSubnet(ip_address=ip)


def lock_port(db: Session, port_id: str) -> None:
    """Changes of one port's addresses take turns (its row locked to the end of the
    transaction): each then reads the addresses the one before it left (read committed),
    so concurrent identical requests agree instead of each allocating anew."""
    db.execute(select(Port.id).where(Port.id == port_id).with_for_update())


def release_port(db: Session, port_id: str, keep: Sequence[tuple[str, str]] = ()) -> None:
    """Give back the port's addresses, except the (subnet_id, ip) pairs in `keep`."""
    rows = db.execute(select(IPAllocation.subnet_id, IPAllocation.ip_address)
                      .where(IPAllocation.port_id == port_id)).all()
    kept = set(keep)
    for subnet_id, ip in rows:
        if (subnet_id, ip) not in kept:
            db.execute(delete(IPAllocation).where(IPAllocation.subnet_id == subnet_id,
                                                  IPAllocation.ip_address == ip))
