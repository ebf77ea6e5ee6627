"""Network segment ranges through the real clients: openstacksdk on every backend (spec
UseCase I and II, the validation errors), the `openstack network segment range` commands
on SQLite.

The session cloud runs the demo configuration, whose shared VXLAN default covers every
VNI, so the strict in-use case uses VLAN ids outside physnet1's default 100-199; the
exhaustion cases with tiny shared ranges are in tests/api/test_segment_ranges_allocation.py.
"""

from __future__ import annotations

import random

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _area(size: int) -> int:
    """A random first VNI for a test's ranges, far from other tests' (and the defaults')."""
    return random.randrange(10_000_000, 16_000_000, 1000) + random.randrange(0, 1000 - size)


def _vni(admin, net_id: str) -> int:
    return admin.network.get_network(net_id).provider_segmentation_id


def test_sdk_use_case_1_per_project_ranges(cloud):
    admin = cloud.sdk()
    a, b, c = (cloud.new_project_member() for _ in range(3))
    lo = _area(20)
    ra = admin.network.create_network_segment_range(
        name="range-a", shared=False, project_id=a["project"].id, network_type="vxlan",
        minimum=lo, maximum=lo + 2)
    rb = admin.network.create_network_segment_range(
        name="range-b", shared=False, project_id=b["project"].id, network_type="vxlan",
        minimum=lo + 3, maximum=lo + 9)
    assert not ra.shared and ra.project_id == a["project"].id and not ra.default
    assert ra.available == [lo, lo + 1, lo + 2] and ra.used == {}
    nets_a = [a["sdk"].network.create_network(name=f"a{i}") for i in range(4)]
    vnis_a = [_vni(admin, n.id) for n in nets_a]
    assert sorted(vnis_a[:3]) == [lo, lo + 1, lo + 2]  # its own range first
    assert not lo <= vnis_a[3] <= lo + 9  # full: a shared id, never b's
    nets_b = [b["sdk"].network.create_network(name="b0")]
    assert lo + 3 <= _vni(admin, nets_b[0].id) <= lo + 9
    net_c = c["sdk"].network.create_network(name="c0")
    assert not lo <= _vni(admin, net_c.id) <= lo + 9
    shown = admin.network.get_network_segment_range(ra.id)
    assert shown.used == {str(v): a["project"].id for v in vnis_a[:3]}
    assert shown.available == []
    listed = {r.id for r in admin.network.network_segment_ranges(network_type="vxlan")}
    assert {ra.id, rb.id} <= listed
    assert any(r.default for r in admin.network.network_segment_ranges())
    # admin-only: a member sees nothing and may change nothing
    assert list(a["sdk"].network.network_segment_ranges()) == []
    with pytest.raises(exceptions.NotFoundException):
        a["sdk"].network.get_network_segment_range(ra.id)
    with pytest.raises(exceptions.ForbiddenException):
        a["sdk"].network.create_network_segment_range(network_type="vxlan", minimum=lo + 10,
                                                      maximum=lo + 11)
    for user, nets in ((a, nets_a), (b, nets_b), (c, [net_c])):
        for net in nets:
            user["sdk"].network.delete_network(net)
    for rng in (ra, rb):
        admin.network.delete_network_segment_range(rng)
    assert admin.network.find_network_segment_range(ra.id) is None


def test_sdk_use_case_2_update_and_in_use_protection(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    project = member["project"].id
    lo = _area(20)
    rng = admin.network.create_network_segment_range(
        name="uc2", shared=False, project_id=project, network_type="vxlan", minimum=lo,
        maximum=lo)
    first = member["sdk"].network.create_network(name="first")
    assert _vni(admin, first.id) == lo
    # moving off an id in use is refused, even though the shared default still covers it
    with pytest.raises(exceptions.ConflictException, match="referenced by one or more"):
        admin.network.update_network_segment_range(rng, minimum=lo + 10, maximum=lo + 11)
    member["sdk"].network.delete_network(first)
    rng = admin.network.get_network_segment_range(rng.id)
    rng = admin.network.update_network_segment_range(rng, minimum=lo + 10, maximum=lo + 11)
    assert (rng.minimum, rng.maximum) == (lo + 10, lo + 11)
    later = [member["sdk"].network.create_network(name=f"later{i}") for i in range(2)]
    assert sorted(_vni(admin, n.id) for n in later) == [lo + 10, lo + 11]
    # VLAN 500-509 lies outside physnet1's default (100-199): moving off a used id strands it
    vlan = admin.network.create_network_segment_range(
        name="uc2-vlan", shared=False, project_id=project, network_type="vlan",
        physical_network="physnet1", minimum=500, maximum=509)
    pinned = admin.network.create_network(
        name="pinned", project_id=project, provider_network_type="vlan",
        provider_physical_network="physnet1", provider_segmentation_id=505)
    assert admin.network.get_network_segment_range(vlan.id).used == {"505": project}
    with pytest.raises(exceptions.ConflictException, match="referenced by one or more"):
        admin.network.update_network_segment_range(vlan, minimum=506, maximum=509)
    with pytest.raises(exceptions.ConflictException):
        admin.network.delete_network_segment_range(vlan)
    # (a refused update leaves its values on the sdk object: fetch it again)
    vlan = admin.network.get_network_segment_range(vlan.id)
    renamed = admin.network.update_network_segment_range(vlan, name="uc2-vlan-renamed")
    assert renamed.name == "uc2-vlan-renamed" and renamed.minimum == 500
    admin.network.delete_network(pinned)
    admin.network.update_network_segment_range(vlan, minimum=506, maximum=509)
    for net in later:
        member["sdk"].network.delete_network(net)
    for r in (rng, vlan):
        admin.network.delete_network_segment_range(r)


def test_sdk_validation_errors(cloud):
    admin = cloud.sdk()
    default = next(r for r in admin.network.network_segment_ranges(network_type="vxlan")
                   if r.default)
    # a bounded list of ids (the first 4,096 free ones), never the 16M of the whole range
    assert all(isinstance(x, int) for x in default.available)
    assert 0 < len(default.available) <= 4096
    with pytest.raises(exceptions.BadRequestException, match="default segment range"):
        admin.network.update_network_segment_range(default, name="x")
    with pytest.raises(exceptions.BadRequestException, match="default segment range"):
        admin.network.delete_network_segment_range(default)
    lo = _area(20)
    bad = [
        dict(network_type="flat", minimum=1, maximum=2),
        dict(network_type="vlan", minimum=1, maximum=2),  # no physical network
        dict(network_type="vlan", physical_network="physnet1", minimum=1, maximum=4095),
        dict(network_type="vxlan", minimum=1, maximum=2**24),
        dict(network_type="geneve", minimum=0, maximum=5),
        dict(network_type="gre", minimum=1, maximum=2**32),
        dict(network_type="gre", minimum=10, maximum=9),
        dict(network_type="vxlan", minimum=lo, maximum=lo + 1, shared=False, project_id=""),
        dict(network_type="vxlan", minimum=lo, maximum=lo + 1, shared=True, project_id="p"),
    ]
    for body in bad:
        with pytest.raises(exceptions.BadRequestException):
            admin.network.create_network_segment_range(**body)
    first = admin.network.create_network_segment_range(network_type="vxlan", minimum=lo,
                                                       maximum=lo + 9)
    with pytest.raises(exceptions.ConflictException, match="overlaps"):
        admin.network.create_network_segment_range(network_type="vxlan", minimum=lo + 9,
                                                   maximum=lo + 19)
    admin.network.delete_network_segment_range(first)


@sqlite_only
def test_cli_segment_range_commands(cloud):
    member = cloud.new_project_member()
    lo = _area(20)
    made = cloud.cli("network", "segment", "range", "create", "cli-range", "--private",
                     "--project", member["project"].name, "--network-type", "vxlan",
                     "--minimum", str(lo), "--maximum", str(lo + 4), "-f", "json")
    assert made["project_id"] == member["project"].id and made["shared"] is False
    assert made["available"] == [f"{lo}-{lo + 4}"] and made["used"] == {}
    listed = cloud.cli("network", "segment", "range", "list", "-f", "json")
    row = next(r for r in listed if r["ID"] == made["id"])
    assert (row["Name"], row["Minimum ID"], row["Maximum ID"]) == ("cli-range", lo, lo + 4)
    assert any(r["Default"] for r in listed)
    # A default VLAN range (physnet1 100:199) shows through the CLI's own range formatter.
    vlan = next(r for r in listed if r["Default"] and r["Network Type"] == "vlan"
                and r["Physical Network"] == "physnet1")
    default = cloud.cli("network", "segment", "range", "show", vlan["ID"], "-f", "json")
    assert default["minimum"] == 100 and default["maximum"] == 199 and default["default"]
    assert default["available"][0].startswith("1")
    net = member["sdk"].network.create_network(name="cli-net")
    cloud.cli("network", "segment", "range", "set", "cli-range", "--name", "cli-renamed",
              "--minimum", str(lo), "--maximum", str(lo + 9), parse=False)
    shown = cloud.cli("network", "segment", "range", "show", "cli-renamed", "-f", "json")
    vni = cloud.sdk().network.get_network(net.id).provider_segmentation_id
    assert shown["maximum"] == lo + 9 and shown["used"] == {member["project"].id: [str(vni)]}
    free = [x for x in range(lo, lo + 10) if x != vni]
    assert len(shown["available"]) in (1, 2) and str(vni) not in shown["available"]
    assert sum(int(r.split("-")[-1]) - int(r.split("-")[0]) + 1
               for r in shown["available"]) == len(free)
    member["sdk"].network.delete_network(net)
    # issue 23: list --long and show work on the default tunnel ranges (16M and 2^32 ids)
    long = cloud.cli("network", "segment", "range", "list", "--long", "-f", "json")
    tunnels = [r for r in long if r["Default"] and r["Network Type"] in ("vxlan", "gre")]
    assert tunnels and all(r["Available"][0].startswith("1-") for r in tunnels)
    for r in tunnels:
        shown_default = cloud.cli("network", "segment", "range", "show", r["ID"], "-f", "json")
        assert shown_default["available"] == r["Available"] and shown_default["default"]
    cloud.cli("network", "segment", "range", "delete", "cli-renamed", parse=False)
    assert cloud.cli("network", "segment", "range", "show", made["id"],
                     check=False).returncode != 0
