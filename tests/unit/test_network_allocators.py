"""The network allocators on their own: segmentation ids, IP addresses, subnet-pool
prefixes. Cost must not grow with the configured range or with what is already taken."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import netaddr
import pytest
from sqlalchemy import event, func, insert, select

from stackling.common.db import Base, Database, utcnow
from stackling.migrations.schema import all_metadata
from stackling.network import errors
from stackling.network.core import ipam, subnetpools
from stackling.network.core.models import (
    IPAllocation,
    Network,
    Port,
    SegmentAllocation,
    Subnet,
    SubnetPool,
    SubnetPoolPrefix,
)
from stackling.network.netconfig import parse
from stackling.network.segments import segmentation
from stackling.network.segments.segmentation import RangeAllocator, RangeFull, SegmentSpec, Taken


@pytest.fixture
def db(tmp_path) -> Iterator:
    all_metadata()
    database = Database(f"sqlite:///{tmp_path / 'net.db'}")
    Base.metadata.create_all(database.engine)
    with database.transaction() as session:
        yield session
    database.dispose()


class Statements:
    def __init__(self, session) -> None:
        self.count = 0
        event.listen(session.get_bind(), "before_cursor_execute", self._hit)

    def _hit(self, *args) -> None:
        self.count += 1


# ------------------------------------------------------------------ segmentation ids
def test_huge_ranges_cost_nothing_until_used(db):
    gre = RangeAllocator("gre", None)
    ids = {gre.allocate_next(db, [(1, 2**32 - 1)]) for _ in range(50)}
    assert len(ids) == 50 and all(1 <= i < 2**32 for i in ids)
    assert db.scalar(select(func.count()).select_from(SegmentAllocation)) == 50


def test_small_range_fills_then_reports_full_and_release_frees(db):
    vlan = RangeAllocator("vlan", "physnet1")
    got = sorted(vlan.allocate_next(db, [(10, 14)]) for _ in range(5))
    assert got == [10, 11, 12, 13, 14]
    with pytest.raises(RangeFull):
        vlan.allocate_next(db, [(10, 14)])
    # ranges are tried in order; the second has room
    assert vlan.allocate_next(db, [(10, 14), (20, 20)]) == 20
    vlan.release(db, 12)
    assert vlan.allocate_next(db, [(10, 14)]) == 12
    with pytest.raises(Taken):
        vlan.allocate(db, 13)
    # another physnet is another pool
    assert RangeAllocator("vlan", "physnet2").allocate_next(db, [(10, 10)]) == 10


def test_gap_search_is_a_constant_number_of_statements(db):
    vx = RangeAllocator("vxlan", None)
    db.execute(insert(SegmentAllocation), [
        {"network_type": "vxlan", "physical_network": "", "segmentation_id": i}
        for i in range(1, 20001)])
    counter = Statements(db)
    for start in (1, 500, 19999, 20000):
        assert vx.find_free(db, 1, 30000, start) == 20001
    assert counter.count <= 8  # two queries per search, whatever the run of taken ids
    assert vx.find_free(db, 1, 20000, 7) is None  # wraps around, finds nothing
    assert vx.find_free(db, 1, 20001, 20001) == 20001


def test_candidate_ranges_are_pluggable(db):
    previous = segmentation.set_range_source(
        lambda db_, t, p, project: [(700, 700)] if project == "p1" else [(800, 801)])
    try:
        assert segmentation.allocate_project_segment(db, "p1") == SegmentSpec("vxlan", None, 700)
        assert segmentation.allocate_project_segment(db, "p2").segmentation_id in (800, 801)
        with pytest.raises(errors.NoNetworkAvailable):
            segmentation.allocate_project_segment(db, "p1")
    finally:
        segmentation.set_range_source(previous)


def test_mtu_per_type():
    cfg = parse(__import__("stackling.config", fromlist=["x"]).NetworkSettings())
    assert {t: segmentation.mtu(cfg, t, "physnet1") for t in
            ("flat", "vlan", "vxlan", "gre", "geneve")} == {
        "flat": 1500, "vlan": 1500, "vxlan": 1450, "gre": 1458, "geneve": 1442}


# ------------------------------------------------------------------ IPAM
def _subnet(db, cidr: str) -> Subnet:
    now = utcnow()
    net = Network(project_id="p", name="n", created_at=now, updated_at=now)
    db.add(net)
    db.flush()
    ip_net = netaddr.IPNetwork(cidr)
    first = ip_net.first + 1
    last = ip_net.last - 1 if ip_net.version == 4 else ip_net.last
    subnet = Subnet(project_id="p", network_id=net.id, ip_version=ip_net.version, cidr=cidr,
                    gateway_ip=None, created_at=now, updated_at=now,
                    allocation_pools=[{"start": str(netaddr.IPAddress(first, ip_net.version)),
                                       "end": str(netaddr.IPAddress(last, ip_net.version))}])
    db.add(subnet)
    db.flush()
    return subnet


def _port(db, subnet: Subnet) -> str:
    pid = str(uuid.uuid4())
    db.execute(insert(Port).values(id=pid, project_id="p", network_id=subnet.network_id,
                                   mac_address=pid[:17], created_at=utcnow(),
                                   updated_at=utcnow()))
    return pid


def _seed(db, subnet: Subnet, values: list[int]) -> None:
    pid = _port(db, subnet)
    db.execute(insert(IPAllocation), [
        {"subnet_id": subnet.id, "ip_address": str(netaddr.IPAddress(v, subnet.ip_version)),
         "port_id": pid, "network_id": subnet.network_id, "ip_key": ipam.key(v),
         "next_key": ipam.key(v + 1), "ordinal": 0} for v in values])


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "fd00:1::/64"])
def test_ip_allocation_cost_is_flat(db, cidr):
    subnet = _subnet(db, cidr)
    first = netaddr.IPNetwork(cidr).first + 1
    _seed(db, subnet, list(range(first, first + 20000)))  # a long run of taken addresses
    pid = _port(db, subnet)
    counter = Statements(db)
    ips = {ipam.allocate_any(db, subnet, pid, i) for i in range(50)}
    assert len(ips) == 50 and all(netaddr.IPAddress(ip) in netaddr.IPNetwork(cidr)
                                  for ip in ips)
    # per address: at most two searches of two queries plus the savepoint'd insert
    assert counter.count <= 50 * 7


def test_small_subnet_exhaustion_and_lowest_first(db):
    subnet = _subnet(db, "10.1.0.0/29")  # pool .1 - .6
    pid = _port(db, subnet)
    assert ipam.allocate_any(db, subnet, pid, 0, "network:dhcp") == "10.1.0.1"
    got = {ipam.allocate_any(db, subnet, pid, 0) for _ in range(5)}
    assert got == {f"10.1.0.{i}" for i in range(2, 7)}
    assert ipam.allocate_any(db, subnet, pid, 0) is None
    with pytest.raises(errors.IpAddressAlreadyAllocated):  # another port's address
        ipam.allocate_specific(db, subnet, "10.1.0.3", _port(db, subnet), 0)
    # the port's own address asked again is its own (concurrent identical updates)
    assert ipam.allocate_specific(db, subnet, "10.1.0.3", pid, 0) == "10.1.0.3"
    with pytest.raises(errors.InvalidIpForSubnet):
        ipam.allocate_specific(db, subnet, "10.1.0.7", pid, 0)  # broadcast
    # a specific address outside the pools but inside the CIDR is fine
    ipam.release_port(db, pid)
    assert ipam.allocate_specific(db, subnet, "10.1.0.3", pid, 0) == "10.1.0.3"


def test_eui64():
    subnet = Subnet(cidr="2001:db8::/64", ip_version=6, ipv6_address_mode="slaac")
    assert ipam.eui64(subnet, "fa:16:3e:11:22:33") == "2001:db8::f816:3eff:fe11:2233"


# ------------------------------------------------------------------ subnet pools
def _pool(db, prefixes: list[str], default: int, quota: int | None = None) -> SubnetPool:
    now = utcnow()
    pool = SubnetPool(project_id="p", name="pool", ip_version=4, default_prefixlen=default,
                      min_prefixlen=8, max_prefixlen=32, default_quota=quota,
                      created_at=now, updated_at=now)
    pool.prefixes = [SubnetPoolPrefix(cidr=c) for c in prefixes]
    db.add(pool)
    db.flush()
    return pool


def _take(db, pool: SubnetPool, cidr: str, project: str = "p") -> None:
    net = Network(project_id="p", name="n", created_at=utcnow(), updated_at=utcnow())
    db.add(net)
    db.flush()
    db.add(Subnet(project_id=project, network_id=net.id, ip_version=4, cidr=cidr,
                  subnetpool_id=pool.id, created_at=utcnow(), updated_at=utcnow()))
    db.flush()


def test_prefix_allocation_takes_smallest_fitting_block(db):
    pool = _pool(db, ["10.0.0.0/8"], 24)
    assert subnetpools.allocate(db, pool, "p") == "10.0.0.0/24"
    _take(db, pool, "10.0.0.0/24")
    _take(db, pool, "10.0.2.0/24")
    # 10.0.1.0/24 is the smallest free block that fits a /24
    assert subnetpools.allocate(db, pool, "p") == "10.0.1.0/24"
    assert subnetpools.allocate(db, pool, "p", prefixlen=16) == "10.1.0.0/16"
    with pytest.raises(errors.SubnetAllocationError):
        subnetpools.allocate(db, pool, "p", requested="10.0.2.0/25")
    assert subnetpools.allocate(db, pool, "p", requested="10.0.3.0/25") == "10.0.3.0/25"


def test_prefix_exhaustion_and_quota(db):
    pool = _pool(db, ["192.168.0.0/30"], 31)
    _take(db, pool, "192.168.0.0/31")
    _take(db, pool, "192.168.0.2/31")
    with pytest.raises(errors.SubnetAllocationError) as exc:
        subnetpools.allocate(db, pool, "p")
    assert exc.value.status == 409
    quota_pool = _pool(db, ["172.16.0.0/16"], 24, quota=256)
    _take(db, quota_pool, "172.16.0.0/24", project="q")
    with pytest.raises(errors.SubnetPoolQuotaExceeded):
        subnetpools.allocate(db, quota_pool, "q")
    assert subnetpools.allocate(db, quota_pool, "other") == "172.16.1.0/24"


def test_flat_one_network_per_physnet(db):
    spec = SegmentSpec("flat", "physnet1", None)
    segmentation.reserve(db, spec)
    with pytest.raises(errors.FlatNetworkInUse):
        segmentation.reserve(db, spec)
    segmentation.release(db, spec)
    segmentation.reserve(db, spec)


def test_last_ipv6_address_has_no_successor(db):
    subnet = _subnet(db, "ffff:ffff:ffff:ffff::/126")  # pool ...:1 - ...:3
    pid = _port(db, subnet)
    last = "ffff:ffff:ffff:ffff::3"
    assert ipam.allocate_specific(db, subnet, last, pid, 0) == last
    got = {ipam.allocate_any(db, subnet, pid, 0) for _ in range(2)}
    assert got == {"ffff:ffff:ffff:ffff::1", "ffff:ffff:ffff:ffff::2"}
    assert ipam.allocate_any(db, subnet, pid, 0) is None
