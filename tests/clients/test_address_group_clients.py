"""Address groups through the real clients: openstacksdk on every backend (create, add and
remove addresses, RBAC sharing, a rule naming a group, in-use refusal) and the
`openstack address group` / `security group rule create --remote-address-group`
commands on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_sdk_address_groups(cloud):
    owner = cloud.new_project_member()
    other = cloud.new_project_member()
    conn = owner["sdk"]
    group = conn.network.create_address_group(name=_name("ag"), description="d",
                                              addresses=["10.0.0.7/24"])
    assert group.addresses == ["10.0.0.0/24"]
    group = conn.network.add_addresses_to_address_group(group, ["192.0.2.1/32", "2001:db8::/64"])
    assert sorted(group.addresses) == ["10.0.0.0/24", "192.0.2.1/32", "2001:db8::/64"]
    group = conn.network.remove_addresses_from_address_group(group, ["10.0.0.0/24"])
    assert sorted(group.addresses) == ["192.0.2.1/32", "2001:db8::/64"]
    with pytest.raises(exceptions.BadRequestException):
        conn.network.add_addresses_to_address_group(group, ["192.0.2.1/32"])
    with pytest.raises(exceptions.NotFoundException):
        conn.network.remove_addresses_from_address_group(group, ["198.51.100.0/24"])
    assert group.id in {g.id for g in conn.network.address_groups()}
    # not visible to another project until shared with it
    assert other["sdk"].network.find_address_group(group.id) is None
    conn.network.create_rbac_policy(object_type="address_group", object_id=group.id,
                                    action="access_as_shared",
                                    target_project_id=other["project"].id)
    assert other["sdk"].network.get_address_group(group.id).id == group.id
    sg = other["sdk"].network.create_security_group(name=_name("sg"))
    rule = other["sdk"].network.create_security_group_rule(
        security_group_id=sg.id, direction="ingress", protocol="tcp", port_range_min=443,
        port_range_max=443, remote_address_group_id=group.id)
    assert rule.remote_address_group_id == group.id
    with pytest.raises(exceptions.ConflictException):
        conn.network.delete_address_group(group)
    other["sdk"].network.delete_security_group_rule(rule)
    conn.network.delete_address_group(group)
    assert conn.network.find_address_group(group.id) is None


@sqlite_only
def test_cli_address_groups(cloud):
    name = _name("cli-ag")
    made = cloud.cli("address", "group", "create", "--address", "10.20.0.0/16",
                     "--address", "10.30.0.5", "--description", "web", name, "-f", "json")
    assert sorted(made["addresses"]) == ["10.20.0.0/16", "10.30.0.5/32"]
    cloud.cli("address", "group", "set", "--address", "10.40.0.0/16", name, parse=False)
    cloud.cli("address", "group", "unset", "--address", "10.20.0.0/16", name, parse=False)
    shown = cloud.cli("address", "group", "show", name, "-f", "json")
    assert sorted(shown["addresses"]) == ["10.30.0.5/32", "10.40.0.0/16"]
    assert name in {g["Name"] for g in cloud.cli("address", "group", "list", "-f", "json")}
    sg = _name("cli-sg")
    cloud.cli("security", "group", "create", sg, parse=False)
    rule = cloud.cli("security", "group", "rule", "create", "--protocol", "tcp",
                     "--dst-port", "22", "--remote-address-group", name, sg, "-f", "json")
    assert rule["remote_address_group_id"] == shown["id"]
    refused = cloud.cli("address", "group", "delete", name, check=False, parse=False)
    assert refused.returncode != 0
    cloud.cli("security", "group", "rule", "delete", rule["id"], parse=False)
    cloud.cli("address", "group", "delete", name, parse=False)


@pytest.mark.parametrize("cloud", ["postgresql", "mariadb"], indirect=True)
def test_parallel_delete_and_rules_never_leave_a_dangling_reference(cloud):
    """A group deleted while rules naming it are made: either the delete wins (the rules
    get 404) or a rule does (the delete gets 409); never a rule naming a missing group."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    conn = cloud.sdk()
    token = cloud.token()
    sg = conn.network.create_security_group(name=_name("race-sg"))
    for round_ in range(4):
        group = conn.network.create_address_group(name=_name("race-ag"))
        barrier = threading.Barrier(4)

        def call(k: int, gid: str = group.id, base: int = 100 * round_,
                 barrier: threading.Barrier = barrier) -> httpx.Response:
            with httpx.Client(base_url=cloud.url, headers={"X-Auth-Token": token},
                              timeout=120) as http:
                barrier.wait()
                if k == 0:
                    return http.delete(f"/networking/v2.0/address-groups/{gid}")
                return http.post("/networking/v2.0/security-group-rules", json={
                    "security_group_rule": {
                        "security_group_id": sg.id, "direction": "ingress", "protocol": "tcp",
                        "port_range_min": base + k, "port_range_max": base + k,
                        "remote_address_group_id": gid}})

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(call, range(4)))
        deleted = results[0].status_code == 204
        made = [r for r in results[1:] if r.status_code == 201]
        assert results[0].status_code in (204, 409), results[0].text
        assert all(r.status_code in (201, 404) for r in results[1:]), [r.text for r in results]
        assert deleted != bool(made), [r.status_code for r in results]
        for r in made:
            conn.network.delete_security_group_rule(r.json()["security_group_rule"]["id"])
        if not deleted:
            conn.network.delete_address_group(group)
