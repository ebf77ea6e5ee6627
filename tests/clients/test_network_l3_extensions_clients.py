"""Issue 23's L3 and port extensions through the real clients: floating IP pools
(`floatingip-pools`) — openstacksdk on every backend, the `openstack` CLI on SQLite where
it has commands."""

from __future__ import annotations

import uuid

from tests.conftest import sqlite_only  # noqa: F401  (CLI tests below)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------ floatingip-pools
def test_sdk_floatingip_pools(cloud):
    # openstacksdk has no floating IP pool resource (nor the CLI a command for Neutron's):
    # its network adapter's raw GET, as a client of the extension would call it
    admin = cloud.sdk()
    ext = admin.network.create_network(name=_name("fpool"), is_router_external=True)
    sub = admin.network.create_subnet(network_id=ext.id, ip_version=4, cidr="203.0.113.0/24",
                                      name=_name("fpool"))
    member = cloud.new_project_member()
    conn = member["sdk"]
    assert conn.network.find_extension("floatingip-pools") is not None
    r = conn.network.get(f"/floatingip_pools?network_id={ext.id}")
    assert r.status_code == 200, r.text
    assert r.json()["floatingip_pools"] == [{
        "subnet_id": sub.id, "subnet_name": sub.name, "network_id": ext.id,
        "cidr": "203.0.113.0/24", "project_id": member["project"].id,
        "tenant_id": member["project"].id}]
    # the pool is where a floating IP of that subnet comes from
    fip = conn.network.create_ip(floating_network_id=ext.id, subnet_id=sub.id)
    assert fip.floating_ip_address.startswith("203.0.113.")
    conn.network.delete_ip(fip)
    admin.network.delete_network(ext)
