"""Server actions and moves through the real clients: openstacksdk on every backend, the
`openstack` CLI for a representative few on SQLite."""

from __future__ import annotations

import httpx

from tests.conftest import sqlite_only

WAIT = {"wait": 60, "interval": 0.2}


def _boot(conn, name="act-vm"):
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    server = conn.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                        networks="none")
    return conn.compute.wait_for_server(server, status="ACTIVE", **WAIT)


def _wait(conn, server, status):
    # A fresh copy: the SDK returns at once when the object it is given has the status.
    return conn.compute.wait_for_server(conn.compute.get_server(server.id), status=status,
                                        **WAIT)


def test_sdk_state_actions(cloud):
    conn = cloud.new_project_member()["sdk"]
    server = _boot(conn)
    conn.compute.pause_server(server)
    assert _wait(conn, server, "PAUSED").power_state == 3
    conn.compute.unpause_server(server)
    _wait(conn, server, "ACTIVE")
    conn.compute.suspend_server(server)
    _wait(conn, server, "SUSPENDED")
    conn.compute.resume_server(server)
    _wait(conn, server, "ACTIVE")
    conn.compute.rescue_server(server, admin_pass="rescue-pw")
    _wait(conn, server, "RESCUE")
    conn.compute.unrescue_server(server)
    _wait(conn, server, "ACTIVE")
    conn.compute.shelve_server(server)
    shelved = _wait(conn, server, "SHELVED_OFFLOADED")
    assert shelved.compute_host is None
    conn.compute.unshelve_server(server)
    _wait(conn, server, "ACTIVE")
    image = conn.image.find_image("cirros", ignore_missing=False)
    rebuilt = conn.compute.rebuild_server(server, image=image.id, name="rebuilt",
                                          admin_password="pw")
    assert rebuilt.name == "rebuilt"
    assert _wait(conn, server, "ACTIVE").name == "rebuilt"
    actions = [a.action for a in conn.compute.server_actions(server)]
    assert actions[:8] == ["rebuild", "unshelve", "shelve", "unrescue", "rescue", "resume",
                           "suspend", "unpause"]
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, **WAIT)


def test_sdk_images_consoles_and_diagnostics(cloud):
    conn = cloud.new_project_member()["sdk"]
    server = _boot(conn)
    image = conn.compute.create_server_image(server, "snap", metadata={"kind": "test"},
                                             wait=True, timeout=60)
    assert image.name == "snap" and image.status == "active"
    assert conn.image.get_image(image.id).properties["kind"] == "test"
    output = conn.compute.get_server_console_output(server)["output"]
    assert "login:" in output
    console = conn.compute.create_console(server, console_type="novnc")
    assert console["type"] == "novnc"
    page = httpx.get(console["url"], timeout=30)
    assert page.status_code == 200 and server.id in page.text
    conn.compute.trigger_server_crash_dump(server)
    admin = cloud.sdk()
    diagnostics = admin.compute.get_server_diagnostics(server)
    assert diagnostics.state == "running" and diagnostics.num_cpus == 1
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, **WAIT)
    conn.image.delete_image(image)


def test_sdk_moves(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    conn = member["sdk"]
    server = _boot(conn, "mover")
    source = admin.compute.get_server(server.id).compute_host
    admin.compute.migrate_server(server)
    moved = _wait(admin, server, "VERIFY_RESIZE")
    assert moved.compute_host != source
    conn.compute.confirm_server_resize(server)
    assert _wait(admin, server, "ACTIVE").compute_host == moved.compute_host
    admin.compute.live_migrate_server(server, host=None, block_migration="auto")
    live = _wait(admin, server, "ACTIVE")
    assert live.compute_host != moved.compute_host
    small = conn.compute.find_flavor("m1.small", ignore_missing=False)
    conn.compute.resize_server(server, small)
    assert _wait(conn, server, "VERIFY_RESIZE").flavor.original_name == "m1.small"
    conn.compute.revert_server_resize(server)
    back = _wait(admin, server, "ACTIVE")
    assert back.flavor.original_name == "m1.tiny" and back.compute_host == live.compute_host
    migrations = list(admin.compute.migrations(instance_uuid=server.id))
    kinds = sorted((m.migration_type, m.status) for m in migrations)
    assert kinds == [("live-migration", "completed"), ("migration", "confirmed"),
                     ("resize", "reverted")]
    assert list(admin.compute.server_migrations(server)) == []
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, **WAIT)
    # nothing left in placement for the server or its migrations
    for consumer in [server.id, *(m.uuid for m in migrations)]:
        assert consumer
        assert admin.placement.get(f"/allocations/{consumer}").json()["allocations"] == {}


@sqlite_only
def test_cli_actions_and_moves(cloud):
    c = cloud
    vm = c.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none",
               "--wait", "cli-mover", "-f", "json")
    host = c.cli("server", "show", vm["id"], "-f", "json")["OS-EXT-SRV-ATTR:host"]
    c.cli("server", "pause", vm["id"], parse=False)
    assert c.cli("server", "show", vm["id"], "-f", "json")["status"] == "PAUSED"
    c.cli("server", "unpause", vm["id"], parse=False)
    c.cli("server", "migrate", "--wait", vm["id"], parse=False)
    shown = c.cli("server", "show", vm["id"], "-f", "json")
    assert shown["status"] == "VERIFY_RESIZE" and shown["OS-EXT-SRV-ATTR:host"] != host
    c.cli("server", "migration", "confirm", vm["id"], parse=False)
    assert c.cli("server", "show", vm["id"], "-f", "json")["status"] == "ACTIVE"
    c.cli("server", "migrate", "--live-migration", "--wait", vm["id"], parse=False)
    migrations = c.cli("server", "migration", "list", "--server", vm["id"], "-f", "json")
    assert sorted(m["Type"] for m in migrations) == ["live-migration", "migration"]
    log = c.cli("console", "log", "show", vm["id"], parse=False)
    assert "login:" in log
    url = c.cli("console", "url", "show", vm["id"], "-f", "json")
    assert httpx.get(url["url"], timeout=30).status_code == 200
    c.cli("server", "shelve", "--wait", vm["id"], parse=False)
    assert c.cli("server", "show", vm["id"], "-f", "json")["status"] == "SHELVED_OFFLOADED"
    c.cli("server", "unshelve", "--wait", vm["id"], parse=False)
    assert c.cli("server", "show", vm["id"], "-f", "json")["status"] == "ACTIVE"
    c.cli("server", "delete", "--wait", vm["id"], parse=False)
