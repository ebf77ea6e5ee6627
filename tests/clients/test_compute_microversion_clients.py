"""Compute microversions past 2.62 through the real clients: the `openstack` CLI asks for
what it needs (2.73 for a lock reason and the `--locked` filter) and openstacksdk still
negotiates min(its maximum, ours)."""

from __future__ import annotations

from tests.conftest import sqlite_only


def _member_env(cloud) -> tuple[dict, dict[str, str]]:
    member = cloud.new_project_member()
    env = {"OS_AUTH_URL": f"{cloud.url}/identity", "OS_USERNAME": member["user"].name,
           "OS_PASSWORD": member["password"], "OS_PROJECT_NAME": member["project"].name,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "OS_IDENTITY_API_VERSION": "3", "OS_CLIENT_CONFIG_FILE": "/dev/null"}
    return member, env


@sqlite_only
def test_cli_lock_reason_and_locked_filter(cloud):
    member, env = _member_env(cloud)

    def cli(*args: str, **kw):
        return cloud.cli(*args, cloud="", env=env, **kw)

    ids = []
    for name in ("locked-vm", "free-vm"):
        vm = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                 "none", "--wait", name, "-f", "json")
        assert vm["status"] == "ACTIVE"
        ids.append(vm["id"])
    cli("--os-compute-api-version", "2.73", "server", "lock", "--reason", "maintenance",
        ids[0], parse=False)
    shown = cli("--os-compute-api-version", "2.73", "server", "show", ids[0], "-f", "json")
    assert shown["locked"] is True and shown["locked_reason"] == "maintenance"
    locked = cli("--os-compute-api-version", "2.73", "server", "list", "--locked",
                 "-f", "json")
    assert [s["ID"] for s in locked] == [ids[0]]
    unlocked = cli("--os-compute-api-version", "2.73", "server", "list", "--unlocked",
                   "-f", "json")
    assert [s["ID"] for s in unlocked] == [ids[1]]
    cli("server", "unlock", ids[0], parse=False)
    shown = cli("--os-compute-api-version", "2.73", "server", "show", ids[0], "-f", "json")
    assert shown["locked"] is False and shown["locked_reason"] is None
    for sid in ids:
        cli("server", "delete", "--wait", sid, parse=False)


def test_sdk_negotiates_and_sees_2_73_fields(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    server = conn.compute.create_server(name="sdk-lock", image_id=image.id,
                                        flavor_id=flavor.id, networks="none")
    server = conn.compute.wait_for_server(server, status="ACTIVE", wait=60, interval=0.2)
    conn.compute.lock_server(server, locked_reason="sdk says so")
    server = conn.compute.get_server(server.id)
    assert server.is_locked is True and server.locked_reason == "sdk says so"
    conn.compute.unlock_server(server)
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=60, interval=0.2)


def test_sdk_max_server_per_host_holds_under_parallel_boots(cloud):
    """2.64's anti-affinity rule through openstacksdk: boots racing in threads never put
    more than `max_server_per_host` members on one host (a unique slot per member row)."""
    from concurrent.futures import ThreadPoolExecutor

    member = cloud.new_project_member()
    conn = member["sdk"]
    admin = cloud.sdk()
    hosts = {h.name for h in admin.compute.hypervisors()}
    group = conn.compute.create_server_group(name="two-per-host", policy="anti-affinity",
                                             rules={"max_server_per_host": 2})
    assert group.policy == "anti-affinity" and group.rules == {"max_server_per_host": 2}
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)

    def boot(i: int):
        s = conn.compute.create_server(name=f"mph{i}", image_id=image.id, flavor_id=flavor.id,
                                       networks="none", scheduler_hints={"group": group.id})
        return _settled(conn, s.id)

    with ThreadPoolExecutor(4) as pool:
        servers = list(pool.map(boot, range(2 * len(hosts) + 1)))
    active = [s for s in servers if s.status == "ACTIVE"]
    assert len(active) == 2 * len(hosts) and len(servers) - len(active) == 1
    per_host: dict[str, int] = {}
    for s in active:
        host = admin.compute.get_server(s.id).compute_host
        per_host[host] = per_host.get(host, 0) + 1
    assert sorted(per_host.values()) == [2] * len(hosts)
    for s in servers:
        conn.compute.delete_server(s)
    for s in servers:
        conn.compute.wait_for_delete(s, wait=120, interval=0.2)
    conn.compute.delete_server_group(group)


def _settled(conn, server_id: str):
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        server = conn.compute.get_server(server_id)
        if server.status in ("ACTIVE", "ERROR"):
            return server
        time.sleep(0.2)
    raise AssertionError(f"server {server_id} never settled")
