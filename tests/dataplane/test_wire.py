"""The wire (issue 22): each compute host is a namespace wired only to its physical
networks; flat, VLAN and VXLAN segments carry their own traffic across hosts, and two
networks with the same addresses never meet (VLAN 200 and VXLAN 200 included)."""

from __future__ import annotations

import subprocess
from typing import Any

from tests.dataplane.conftest import DataplaneCloud

CIDR = "10.70.0.0/24"


def provider_network(dp: DataplaneCloud, name: str, kind: str, physnet: str | None,
                     seg: int | None) -> tuple[Any, Any]:
    attrs: dict[str, Any] = {"provider_network_type": kind}
    if physnet:
        attrs["provider_physical_network"] = physnet
    if seg is not None:
        attrs["provider_segmentation_id"] = seg
    net = dp.sdk.network.create_network(name=name, **attrs)
    subnet = dp.sdk.network.create_subnet(network_id=net.id, cidr=CIDR, ip_version=4,
                                          name=f"{name}-subnet")
    return net, subnet


def boot_on(dp: DataplaneCloud, name: str, net: Any, subnet: Any, address: str,
            host: str) -> Any:
    """A server on `host` (the admin's `nova:<host>` zone) with a port at `address`."""
    port = dp.sdk.network.create_port(network_id=net.id, name=f"{name}-port", fixed_ips=[
        {"subnet_id": subnet.id, "ip_address": address}])
    image = dp.sdk.image.find_image("cirros")
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    server = dp.sdk.compute.create_server(
        name=name, image_id=image.id, flavor_id=flavor.id, key_name=dp.keypair().name,
        networks=[{"port": port.id}], availability_zone=f"nova:{host}")
    return dp.sdk.compute.wait_for_server(server, wait=120, interval=0.2)


def links(dp: DataplaneCloud, namespace: str) -> set[str]:
    out = subprocess.run(["ip", "-n", namespace, "-o", "link"], capture_output=True,
                         text=True, check=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


PAIRS = [
    # (label, A's segment, A's hosts, B's segment, B's hosts)
    ("flat", ("flat", "physnet1", None), ("compute-r1-1", "compute-r1-2"),
     ("flat", "physnet2", None), ("compute-r2-1", "compute-r2-2")),
    ("vlan", ("vlan", "physnet1", 150), ("compute-r1-1", "compute-r1-2"),
     ("vlan", "physnet1", 151), ("compute-r1-2", "compute-r1-1")),
    ("vxlan", ("vxlan", None, 300), ("compute-r1-1", "compute-r2-1"),
     ("vxlan", None, 301), ("compute-r2-1", "compute-r1-1")),
    ("v200", ("vlan", "physnet2", 200), ("compute-r2-1", "compute-r2-2"),
     ("vxlan", None, 200), ("compute-r2-2", "compute-r1-2")),
]


def test_segments_carry_their_own_traffic_across_hosts_and_never_meet(
        dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    dp.sdk.set_compute_quotas(dp.sdk.current_project_id, instances=40, cores=40, ram=40960)
    servers: dict[str, Any] = {}
    for label, seg_a, hosts_a, seg_b, hosts_b in PAIRS:
        for side, seg, hosts in (("a", seg_a, hosts_a), ("b", seg_b, hosts_b)):
            net, subnet = provider_network(dp, f"{label}-{side}", *seg)
            # the same two addresses on both networks, each pair on two hosts
            servers[f"{label}-{side}1"] = boot_on(dp, f"{label}-{side}1", net, subnet,
                                                  "10.70.0.11", hosts[0])
            servers[f"{label}-{side}2"] = boot_on(dp, f"{label}-{side}2", net, subnet,
                                                  "10.70.0.12", hosts[1])
    for label, *_ in PAIRS:
        for side in "ab":
            two = servers[f"{label}-{side}2"]
            # .11 seen from .12 of the same network, on another host, is its own network's
            answer = dp.wait_ssh(dp.names.guest(two.id), "10.70.0.11").strip()
            assert answer == f"{label}-{side}1", (label, side, answer)

    # hosts are wired only to their physical networks
    n = dp.names
    rack1 = links(dp, n.host("compute-r1-1"))
    flat = {"network_type": "flat", "network_id": "", "segmentation_id": None}
    assert n.channel({**flat, "physical_network": "physnet1"}) in rack1
    assert n.channel({**flat, "physical_network": "physnet2"}) not in rack1
    switch2 = links(dp, n.switch("physnet2"))
    assert not any(n.switch_port(n.host(h), {**flat, "physical_network": "physnet2"}) in switch2
                   for h in ("compute-r1-1", "compute-r1-2"))
    # VLAN 200 of physnet2 and VXLAN 200 are two bridges on compute-r2-2
    vlan200 = n.segment_bridge({"network_type": "vlan", "physical_network": "physnet2",
                                "segmentation_id": 200, "network_id": ""})
    vxlan200 = n.segment_bridge({"network_type": "vxlan", "physical_network": None,
                                 "segmentation_id": 200, "network_id": ""})
    assert {vlan200, vxlan200} <= links(dp, n.host("compute-r2-2"))
