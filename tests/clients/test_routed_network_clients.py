"""Routed networks through the real clients: openstacksdk on SQLite, PostgreSQL and
MariaDB for segments, subnets on segments, the host mapping and placement view, and
deferred ports; the `openstack network segment` commands and `stackling audit` on SQLite.

The session cloud runs the demo configuration: compute-r1-* reach physnet1 (VLAN
100-199), compute-r2-* reach physnet2 (VLAN 200-299). After every test the audit
(`GET /audit`, admin) must find nothing.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import uuid

import pytest
from openstack import exceptions

from tests.conftest import BIN, ROOT, SERVER_ENV, sqlite_only

RACK1 = ["compute-r1-1", "compute-r1-2"]
RACK2 = ["compute-r2-1", "compute-r2-2"]
PLACEMENT = {"OpenStack-API-Version": "placement 1.28"}


@pytest.fixture(autouse=True)
def audited(cloud):
    yield
    with cloud.http(cloud.token()) as http:
        r = http.get("/audit")
    assert r.status_code == 200, r.text
    assert r.json() == {"findings": []}


def _routed(admin, tag: str, cidrs: tuple[str, str] = ("", "")):
    """A network with a VLAN segment per rack and an IPv4 subnet on each."""
    net = admin.network.create_network(name=f"routed-{tag}", provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    seg1 = next(iter(admin.network.segments(network_id=net.id)))
    seg2 = admin.network.create_segment(network_id=net.id, network_type="vlan",
                                        physical_network="physnet2", name=f"rack2-{tag}")
    n = uuid.uuid4().int % 200 + 20
    c1 = cidrs[0] or f"10.{n}.1.0/24"
    c2 = cidrs[1] or f"10.{n}.2.0/24"
    s1 = admin.network.create_subnet(network_id=net.id, ip_version=4, cidr=c1,
                                     segment_id=seg1.id)
    s2 = admin.network.create_subnet(network_id=net.id, ip_version=4, cidr=c2,
                                     segment_id=seg2.id)
    return net, seg1, seg2, s1, s2


def _cleanup(admin, net) -> None:
    for port in admin.network.ports(network_id=net.id):
        admin.network.delete_port(port)
    admin.network.delete_network(net)


def _placement(cloud, path: str):
    with cloud.http(cloud.token()) as http:
        return http.get(f"/placement{path}", headers=PLACEMENT)


# ------------------------------------------------------------------ 1. segments
def test_sdk_segments_make_a_multi_segment_network(cloud):
    admin = cloud.sdk()
    net = admin.network.create_network(name="multi", provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    assert net.provider_network_type == "vlan" and 100 <= net.provider_segmentation_id <= 199
    seg1 = next(iter(admin.network.segments(network_id=net.id)))
    assert seg1.segmentation_id == net.provider_segmentation_id
    seg2 = admin.network.create_segment(network_id=net.id, network_type="vlan",
                                        physical_network="physnet2", name="rack2",
                                        description="second rack")
    assert 200 <= seg2.segmentation_id <= 299 and seg2.name == "rack2"
    shown = admin.network.get_network(net.id)
    assert shown.provider_network_type is None
    assert [s["provider:physical_network"] for s in shown.segments] == ["physnet1", "physnet2"]
    assert {s.id for s in admin.network.segments(network_id=net.id,
                                                 physical_network="physnet2")} == {seg2.id}
    seg2 = admin.network.update_segment(seg2, name="renamed")
    assert seg2.name == "renamed"
    with pytest.raises(exceptions.ConflictException):
        admin.network.create_segment(network_id=net.id, network_type="vlan",
                                     physical_network="physnet2",
                                     segmentation_id=seg2.segmentation_id)
    with pytest.raises(exceptions.BadRequestException):
        admin.network.create_segment(network_id=net.id, network_type="vlan",
                                     physical_network="nowhere")
    member = cloud.new_project_member()
    assert list(member["sdk"].network.segments()) == []
    with pytest.raises(exceptions.NotFoundException):
        member["sdk"].network.get_segment(seg2.id)
    admin.network.delete_segment(seg2)
    shown = admin.network.get_network(net.id)
    assert shown.provider_physical_network == "physnet1"
    admin.network.delete_network(net)
    assert admin.network.find_segment(seg1.id) is None


# ------------------------------------------------------------------ 2. subnets on segments
def test_sdk_subnets_on_segments(cloud):
    admin = cloud.sdk()
    net, seg1, seg2, s1, s2 = _routed(admin, "subnets")
    assert s1.segment_id == seg1.id and s2.segment_id == seg2.id
    with cloud.http(cloud.token()) as http:
        body = http.get(f"/networking/v2.0/networks/{net.id}").json()["network"]
    assert body["l2_adjacency"] is False
    # peer routes: each subnet reaches the other rack's through its own gateway
    s1 = admin.network.get_subnet(s1.id)
    assert s1.host_routes == [{"destination": s2.cidr, "nexthop": s1.gateway_ip}]
    assert admin.network.get_subnet(s2.id).host_routes == [
        {"destination": s1.cidr, "nexthop": s2.gateway_ip}]
    with pytest.raises(exceptions.BadRequestException) as e:
        admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.250.9.0/24")
    assert "must either all be associated with segments" in str(e.value)
    with pytest.raises(exceptions.BadRequestException):
        admin.network.update_subnet(s1, segment_id=seg2.id)
    with pytest.raises(exceptions.ConflictException) as e:
        admin.network.delete_segment(seg2)
    assert "cannot be deleted" in str(e.value)
    admin.network.delete_subnet(s2)
    assert admin.network.get_subnet(s1.id).host_routes == []
    admin.network.delete_segment(seg2)
    # subnet-segmentid-writable: an existing subnet joins the network's only segment
    plain = admin.network.create_network(name="writable", provider_network_type="vlan",
                                         provider_physical_network="physnet2")
    seg = next(iter(admin.network.segments(network_id=plain.id)))
    sub = admin.network.create_subnet(network_id=plain.id, ip_version=4, cidr="10.251.0.0/24")
    assert admin.network.update_subnet(sub, segment_id=seg.id).segment_id == seg.id
    assert _placement(cloud, f"/resource_providers/{seg.id}").status_code == 200
    admin.network.delete_network(plain)
    _cleanup(admin, net)


# ------------------------------------------------------------------ 3 + 5. hosts, placement
def test_sdk_segment_providers_aggregates_and_hosts(cloud):
    admin = cloud.sdk()
    net, seg1, seg2, s1, s2 = _routed(admin, "placement")
    for seg, subnet, rack in ((seg1, s1, RACK1), (seg2, s2, RACK2)):
        rp = _placement(cloud, f"/resource_providers/{seg.id}").json()
        assert rp["name"] == f"Neutron segment id {seg.id}"
        inv = _placement(cloud, f"/resource_providers/{seg.id}/inventories").json()
        pool = ipaddress.ip_network(subnet.cidr).num_addresses - 3  # network, bcast, gateway
        assert inv["inventories"]["IPV4_ADDRESS"] == {
            "total": pool + 1, "reserved": 2, "min_unit": 1, "max_unit": 1, "step_size": 1,
            "allocation_ratio": 1.0}
        aggs = _placement(cloud, f"/resource_providers/{seg.id}/aggregates").json()
        agg = next(a for a in admin.compute.aggregates()
                   if a.name == f"Neutron segment id {seg.id}")
        assert aggs["aggregates"] == [agg.uuid]
        assert sorted(agg.hosts) == rack and agg.availability_zone is None
        members = _placement(cloud, f"/resource_providers?member_of={agg.uuid}").json()
        assert sorted(p["name"] for p in members["resource_providers"]) == sorted(
            [rp["name"], *rack])
    # the provider and aggregate go with the last IPv4 subnet
    admin.network.delete_subnet(s2)
    assert _placement(cloud, f"/resource_providers/{seg2.id}").status_code == 404
    assert not [a for a in admin.compute.aggregates()
                if a.name == f"Neutron segment id {seg2.id}"]
    _cleanup(admin, net)
    assert _placement(cloud, f"/resource_providers/{seg1.id}").status_code == 404


# ------------------------------------------------------------------ 4. ports
def test_sdk_deferred_ports_and_binding(cloud):
    admin = cloud.sdk()
    net, seg1, seg2, s1, s2 = _routed(admin, "ports")
    port = admin.network.create_port(network_id=net.id, device_owner="compute:nova")
    assert port.ip_allocation == "deferred" and port.fixed_ips == []
    none = admin.network.create_port(network_id=net.id, fixed_ips=[])
    assert none.ip_allocation == "none"
    bound = admin.network.update_port(port, binding_host_id="compute-r2-1")
    assert [ip["subnet_id"] for ip in bound.fixed_ips] == [s2.id]
    assert ipaddress.ip_address(bound.fixed_ips[0]["ip_address"]) in ipaddress.ip_network(
        s2.cidr)
    usage = _placement(cloud, f"/resource_providers/{seg2.id}/usages").json()["usages"]
    assert usage == {"IPV4_ADDRESS": 1}
    with pytest.raises(exceptions.ConflictException) as e:
        admin.network.update_port(bound, binding_host_id="compute-r1-1")
    assert "is not connected to a segment where the existing fixed_ips" in str(e.value)
    assert admin.network.get_port(port.id).binding_host_id == "compute-r2-1"
    immediate = admin.network.create_port(network_id=net.id, binding_host_id="compute-r1-2")
    assert immediate.ip_allocation == "immediate"
    assert [ip["subnet_id"] for ip in immediate.fixed_ips] == [s1.id]
    with pytest.raises(exceptions.ConflictException) as e:
        admin.network.create_port(network_id=net.id, binding_host_id="nowhere-host")
    assert "is not connected to any segments" in str(e.value)
    admin.network.delete_port(port)
    usage = _placement(cloud, f"/resource_providers/{seg2.id}/usages").json()["usages"]
    assert usage.get("IPV4_ADDRESS", 0) == 0
    _cleanup(admin, net)


# ------------------------------------------------------------------ the CLI and the audit
@sqlite_only
def test_cli_segments_and_stackling_audit(cloud):
    net = cloud.cli("network", "create", "cli-routed", "--provider-network-type", "vlan",
                    "--provider-physical-network", "physnet1", "-f", "json")
    seg = cloud.cli("network", "segment", "create", "--network", net["id"], "--network-type",
                    "vlan", "--physical-network", "physnet2", "cli-rack2", "-f", "json")
    assert seg["network_type"] == "vlan" and 200 <= seg["segmentation_id"] <= 299
    listed = cloud.cli("network", "segment", "list", "--network", net["id"], "-f", "json")
    assert {s["ID"] for s in listed} >= {seg["id"]}
    cloud.cli("subnet", "create", "--network", net["id"], "--network-segment", seg["id"],
              "--subnet-range", "10.252.0.0/24", "cli-sub", "-f", "json")
    inv = cloud.cli("resource", "provider", "inventory", "list", seg["id"], "-f", "json",
                    env={"OS_PLACEMENT_API_VERSION": "1.28"})
    assert [i["resource_class"] for i in inv] == ["IPV4_ADDRESS"]
    proc = subprocess.run([str(BIN / "stackling"), "audit", "--database-url",
                           cloud.database_url], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **SERVER_ENV}, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 finding(s)" in proc.stderr
    cloud.cli("subnet", "delete", "cli-sub", parse=False)
    cloud.cli("network", "segment", "delete", seg["id"], parse=False)
    cloud.cli("network", "delete", net["id"], parse=False)
