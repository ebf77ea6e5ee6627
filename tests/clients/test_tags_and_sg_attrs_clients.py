"""Tags at bulk port creation, stateless security groups and normalised rule CIDRs
through the real clients: openstacksdk on every backend, the CLI on SQLite."""

from __future__ import annotations

import uuid

from tests.conftest import sqlite_only


def test_sdk_bulk_tags_and_stateless_groups(cloud):
    conn = cloud.new_project_member()["sdk"]
    net = conn.network.create_network(name=f"bulk-{uuid.uuid4().hex[:6]}")
    made = list(conn.network.create_ports([
        {"network_id": net.id, "name": "a", "tags": ["web", "blue"]},
        {"network_id": net.id, "name": "b", "tags": ["db"]}]))
    assert {p.name: sorted(p.tags) for p in made} == {"a": ["blue", "web"], "b": ["db"]}
    assert [p.name for p in conn.network.ports(network_id=net.id, tags="db")] == ["b"]
    sg = conn.network.create_security_group(name="stateless", stateful=False)
    assert conn.network.get_security_group(sg.id).stateful is False
    rule = conn.network.create_security_group_rule(
        security_group_id=sg.id, direction="ingress", remote_ip_prefix="192.0.2.77/24")
    raw = conn.network.get(f"/security-group-rules/{rule.id}").json()["security_group_rule"]
    assert raw["normalized_cidr"] == "192.0.2.0/24"


@sqlite_only
def test_cli_stateless_group_and_tagged_port(cloud):
    name = f"sl-{uuid.uuid4().hex[:6]}"
    made = cloud.cli("security", "group", "create", "--stateless", name, "-f", "json")
    assert made["stateful"] is False
    cloud.cli("security", "group", "set", "--stateful", name, parse=False)
    assert cloud.cli("security", "group", "show", name, "-f", "json")["stateful"] is True
    net = cloud.cli("network", "create", f"n-{name}", "-f", "json")
    port = cloud.cli("port", "create", "--network", net["id"], "--tag", "red", "--tag", "blue",
                     f"p-{name}", "-f", "json")
    assert sorted(port["tags"]) == ["blue", "red"]
