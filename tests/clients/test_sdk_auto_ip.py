"""openstacksdk's `create_server(auto_ip=True, wait=True)` (what Ansible's
openstack.cloud.server calls). Its answer has `public_v4`, `private_v4` and `access_ipv4`
empty on any cloud: the cloud layer's floating-IP attach (`_attach_ip_to_server`, in
cloud/_network_common.py) waits with the proxy's `compute.get_server` and returns that
object, which never went through `meta.add_server_interfaces` (the function that fills
those fields). Our server record is Nova's (`accessIPv4` "" unless a user sets it, the
floating IP in `addresses` as type `floating`), so reading the server again fills them."""

from __future__ import annotations

import pytest


@pytest.mark.cli
def test_sdk_create_server_auto_ip_then_get_server(cloud_factory) -> None:
    # a cloud of its own: the SDK takes the first external network it lists, and the
    # session cloud's other tests make external networks without an IPv4 subnet
    cloud = cloud_factory("sqlite")
    member = cloud.new_project_member()
    conn = member["sdk"]
    topology = conn.network.get_auto_allocated_topology()
    created = conn.create_server("auto-ip", image="cirros", flavor="m1.tiny",
                                 network=topology.id, auto_ip=True, wait=True, timeout=120)
    floating = [a["addr"] for entries in created["addresses"].values() for a in entries
                if a["OS-EXT-IPS:type"] == "floating" and a["version"] == 4]
    fixed = [a["addr"] for entries in created["addresses"].values() for a in entries
             if a["OS-EXT-IPS:type"] == "fixed" and a["version"] == 4]
    assert len(floating) == 1 and len(fixed) == 1, created["addresses"]
    # the SDK's own answer (upstream's behaviour, whatever the cloud)
    assert (created["public_v4"], created["private_v4"]) == ("", "")
    # read again, as Ansible's server_info and the inventory do
    server = conn.get_server(created["id"])
    assert server["public_v4"] == floating[0]
    assert server["private_v4"] == fixed[0]
    assert server["access_ipv4"] == floating[0]
    raw = conn.compute.get(f"/servers/{created['id']}").json()["server"]
    assert raw["accessIPv4"] == "" and raw["accessIPv6"] == ""  # Nova's, unless set
    conn.delete_server(created["id"], wait=True, delete_ips=True)
