"""Trunks through the real clients: openstacksdk on every backend (create with sub-ports,
add/remove/get sub-ports, the parent's `trunk_details`, the rules as the sdk's
exceptions), the `openstack network trunk` / `subport` commands on SQLite, and two
trunks racing for one parent port on PostgreSQL and MariaDB."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from openstack import exceptions

from tests.conftest import sqlite_only

N = "/networking/v2.0"


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _nets(conn: Any) -> tuple[Any, Any]:
    out = []
    for i in range(2):
        net = conn.network.create_network(name=_name(f"trunk-net{i}"))
        conn.network.create_subnet(network_id=net.id, ip_version=4,
                                   cidr=f"10.{120 + i}.{uuid.uuid4().int % 250}.0/24")
        out.append(net)
    return out[0], out[1]


def test_sdk_trunk_lifecycle(cloud):
    conn = cloud.new_project_member()["sdk"]
    net_a, net_b = _nets(conn)
    parent = conn.network.create_port(network_id=net_a.id)
    sub1 = conn.network.create_port(network_id=net_b.id)
    sub2 = conn.network.create_port(network_id=net_b.id)
    trunk = conn.network.create_trunk(port_id=parent.id, name=_name("trunk"), sub_ports=[
        {"port_id": sub1.id, "segmentation_type": "vlan", "segmentation_id": 101}])
    assert trunk.status == "DOWN" and trunk.is_admin_state_up is True
    assert [s["port_id"] for s in trunk.sub_ports] == [sub1.id]
    conn.network.add_trunk_subports(trunk, [
        {"port_id": sub2.id, "segmentation_type": "vlan", "segmentation_id": 102}])
    got = conn.network.get_trunk_subports(trunk)
    assert sorted(s["segmentation_id"] for s in got["sub_ports"]) == [101, 102]
    details = conn.network.get_port(parent.id).trunk_details
    assert details["trunk_id"] == trunk.id
    assert {s["port_id"]: s["mac_address"] for s in details["sub_ports"]} == {
        sub1.id: sub1.mac_address, sub2.id: sub2.mac_address}
    assert conn.network.get_port(sub1.id).device_owner == "trunk:subport"
    assert [t.id for t in conn.network.trunks(port_id=parent.id)] == [trunk.id]
    # the rules, as the sdk raises them
    with pytest.raises(exceptions.ConflictException):
        conn.network.delete_port(parent, ignore_missing=False)
    with pytest.raises(exceptions.ConflictException):
        conn.network.create_trunk(port_id=sub1.id)
    with pytest.raises(exceptions.BadRequestException):
        conn.network.add_trunk_subports(trunk, [
            {"port_id": conn.network.create_port(network_id=net_b.id).id,
             "segmentation_type": "vlan", "segmentation_id": 5000}])
    conn.network.delete_trunk_subports(trunk, [{"port_id": sub1.id}])
    assert [s["port_id"] for s in conn.network.get_trunk(trunk.id).sub_ports] == [sub2.id]
    updated = conn.network.update_trunk(trunk, name="renamed", description="d")
    assert updated.name == "renamed" and updated.description == "d"
    conn.network.delete_trunk(trunk)
    assert conn.network.find_trunk(trunk.id) is None
    conn.network.delete_port(parent)


@sqlite_only
def test_cli_trunk_and_subport_commands(cloud):
    conn = cloud.sdk()
    net_a, net_b = _nets(conn)
    parent = conn.network.create_port(network_id=net_a.id)
    sub1 = conn.network.create_port(network_id=net_b.id)
    sub2 = conn.network.create_port(network_id=net_b.id)
    name = _name("cli-trunk")
    made = cloud.cli("network", "trunk", "create", "--parent-port", parent.id, "--subport",
                     f"port={sub1.id},segmentation-type=vlan,segmentation-id=200",
                     name, "-f", "json")
    assert made["name"] == name and made["status"] == "DOWN"
    cloud.cli("network", "trunk", "set", "--subport",
              f"port={sub2.id},segmentation-type=vlan,segmentation-id=201", name, parse=False)
    subs = cloud.cli("network", "subport", "list", "--trunk", name, "-f", "json")
    assert sorted(s["Segmentation ID"] for s in subs) == [200, 201]
    cloud.cli("network", "trunk", "unset", "--subport", sub1.id, name, parse=False)
    shown = cloud.cli("network", "trunk", "show", name, "-f", "json")
    assert [s["port_id"] for s in shown["sub_ports"]] == [sub2.id]
    listed = cloud.cli("network", "trunk", "list", "-f", "json")
    assert name in {t["Name"] for t in listed}
    cloud.cli("network", "trunk", "set", "--disable", name, parse=False)
    refused = cloud.cli("network", "trunk", "delete", name, check=False, parse=False)
    assert refused.returncode != 0
    cloud.cli("network", "trunk", "set", "--enable", name, parse=False)
    cloud.cli("network", "trunk", "delete", name, parse=False)
    assert name not in {t["Name"] for t in cloud.cli("network", "trunk", "list", "-f", "json")}


@pytest.mark.parametrize("cloud", ["postgresql", "mariadb"], indirect=True)
def test_parallel_claims_of_one_port_one_wins(cloud):
    """Eight trunks claim one parent at once: exactly one is made, the others get
    ParentPortInUse; then a trunk and an add_subports race for one port: one wins."""
    conn = cloud.sdk()
    net_a, net_b = _nets(conn)
    token = cloud.token()
    for _ in range(3):
        parent = conn.network.create_port(network_id=net_a.id)
        results = _parallel(cloud, token, 8, lambda http, i, p=parent.id: http.post(
            f"{N}/trunks", json={"trunk": {"port_id": p, "name": f"race-{i}"}}))
        assert sorted(r.status_code for r in results) == [201] + [409] * 7, \
            [r.text for r in results]
        assert {r.json()["NeutronError"]["type"] for r in results if r.status_code == 409} == {
            "ParentPortInUse"}
        assert len(list(conn.network.trunks(port_id=parent.id))) == 1
    # one port: the parent of a new trunk, or a sub-port of an existing one, never both
    holder = conn.network.create_trunk(port_id=conn.network.create_port(network_id=net_a.id).id)
    for i in range(3):
        contested = conn.network.create_port(network_id=net_b.id)

        def claim(http: httpx.Client, k: int, port: str = contested.id, base: int = 10 * i
                  ) -> httpx.Response:
            if k % 2:
                return http.post(f"{N}/trunks", json={"trunk": {"port_id": port}})
            return http.put(f"{N}/trunks/{holder.id}/add_subports", json={"sub_ports": [{
                "port_id": port, "segmentation_type": "vlan", "segmentation_id": base + k + 1}]})

        results = _parallel(cloud, token, 4, claim)
        assert sorted(r.status_code for r in results).count(409) == 3, [r.text for r in results]
        as_parent = list(conn.network.trunks(port_id=contested.id))
        as_sub = [s for s in conn.network.get_trunk(holder.id).sub_ports
                  if s["port_id"] == contested.id]
        assert len(as_parent) + len(as_sub) == 1


def _parallel(cloud: Any, token: str, n: int, call: Any) -> list[httpx.Response]:
    barrier = threading.Barrier(n)

    def run(i: int) -> httpx.Response:
        with httpx.Client(base_url=cloud.url, headers={"X-Auth-Token": token},
                          timeout=120) as http:
            barrier.wait()
            return call(http, i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))
