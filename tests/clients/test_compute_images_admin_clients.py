"""Issue 23 (compute: images through compute, admin APIs, server details) through the real
clients: openstacksdk on every backend, the openstack CLI on SQLite."""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _server(conn, **kw):
    server = conn.compute.create_server(name=_name("srv"), flavor_id="1", image_id=CIRROS,
                                        networks=kw.pop("networks", "none"), **kw)
    return conn.compute.wait_for_server(server, wait=120)


def test_sdk_snapshots_from_every_state_and_images_through_compute(cloud):
    conn = cloud.new_project_member()["sdk"]
    server = _server(conn)
    snaps = {}
    c = conn.compute
    steps = [("active", None, None, "ACTIVE"), ("paused", c.pause_server, c.unpause_server, "PAUSED"),
             ("suspended", c.suspend_server, c.resume_server, "SUSPENDED"),
             ("stopped", c.stop_server, None, "SHUTOFF")]
    for state, enter, leave, status in steps:
        if enter is not None:
            enter(server)
            c.wait_for_server(server, status=status, wait=60)
        image = c.create_server_image(server, name=f"snap-{state}-ü-日本",
                                      metadata={"state": state}, wait=True)
        assert conn.image.get_image(image.id).status == "active"
        snaps[state] = image.id
        if leave is not None:
            leave(server)
            c.wait_for_server(server, status="ACTIVE", wait=60)
    # the image proxy (below 2.36) sees them, with their metadata
    listed = {i.id: i for i in conn.compute.images()}
    assert set(snaps.values()) <= set(listed)
    shown = conn.compute.get_image(snaps["paused"])
    assert shown.name == "snap-paused-ü-日本" and shown.status == "ACTIVE"
    assert shown.metadata["state"] == "paused" and shown.metadata["instance_uuid"] == server.id
    conn.compute.set_image_metadata(shown, owner_note="kept")
    assert conn.compute.get_image_metadata(shown).metadata["owner_note"] == "kept"
    conn.compute.delete_image_metadata(shown, ["owner_note"])
    assert "owner_note" not in conn.compute.get_image_metadata(shown).metadata
    assert conn.image.get_image(shown.id).properties.get("owner_note") is None
    # a server boots from a snapshot
    booted = conn.compute.wait_for_server(conn.compute.create_server(
        name=_name("from-snap"), flavor_id="1", image_id=snaps["active"], networks="none"),
        wait=120)
    assert booted.image.id == snaps["active"]
    conn.compute.delete_image(snaps["stopped"])
    with pytest.raises(exceptions.NotFoundException):
        conn.image.get_image(snaps["stopped"])
    for s in (booted, server):
        conn.compute.delete_server(s)
        conn.compute.wait_for_delete(s, wait=120)


def test_sdk_backups_rotate(cloud):
    conn = cloud.new_project_member()["sdk"]
    server = _server(conn)
    for i in range(3):
        conn.compute.backup_server(server, f"backup-{i}", "daily", 2)
    conn.compute.backup_server(server, "weekly-0", "weekly", 1)
    names = sorted(i.name for i in conn.image.images() if i.name.startswith(("backup-", "weekly-")))
    assert names == ["backup-1", "backup-2", "weekly-0"]
    conn.compute.delete_server(server)


def test_sdk_server_details(cloud):
    member = cloud.new_project_member()
    conn = member["sdk"]
    # x509 key pairs: generated and imported (microversion 2.2)
    made = conn.compute.create_keypair(name=_name("win"), type="x509")
    assert made.type == "x509" and made.private_key.startswith("-----BEGIN RSA PRIVATE KEY")
    assert made.public_key.startswith("-----BEGIN CERTIFICATE-----")
    imported = conn.compute.create_keypair(name=_name("win-imp"), type="x509",
                                           public_key=made.public_key)
    assert imported.fingerprint == made.fingerprint
    server = _server(conn, networks="auto")
    # os-server-password
    assert conn.compute.get_server_password(server) == ""
    conn.compute.clear_server_password(server)
    # console output with a length, and the noVNC URL's page
    full = conn.compute.get_server_console_output(server)["output"]
    tail = conn.compute.get_server_console_output(server, length=2)["output"]
    assert tail.splitlines() == full.splitlines()[-2:]
    # (Nova serves os-getVNCConsole up to 2.5 only: the remote-consoles API from 2.6)
    url = conn.compute.create_server_remote_console(server, protocol="vnc", type="novnc").url
    with urllib.request.urlopen(url) as page:  # noqa: S310 (the local test cloud)
        assert page.status == 200 and server.id in page.read().decode()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url.rsplit("%3D", 1)[0] + "%3Dforged")  # noqa: S310
    assert refused.value.code == 401
    # removeSecurityGroup down to none: the server shows none
    assert [g["name"] for g in conn.compute.get_server(server).security_groups] == ["default"]
    conn.compute.remove_security_group_from_server(server, {"name": "default"})
    # (by id: a fetch into the same Server object keeps a key the answer leaves out)
    assert not conn.compute.get_server(server.id).security_groups
    conn.compute.delete_server(server)
    # the legacy extension list
    assert conn.compute.find_extension("os-keypairs", ignore_missing=False).name == "Keypairs"


@sqlite_only
def test_cli_hosts_extensions_images_and_keypairs(cloud):
    hosts = cloud.cli("host", "list", "-f", "json")
    compute = next(h["Host Name"] for h in hosts if h["Service"] == "compute")
    cloud.cli("host", "set", "--disable", compute, parse=False)
    services = cloud.cli("compute", "service", "list", "--host", compute, "--service",
                         "nova-compute", "-f", "json")
    assert services[0]["Status"] == "disabled"
    cloud.cli("host", "set", "--enable", compute, parse=False)
    failed = cloud.cli("host", "set", "--enable-maintenance", compute, check=False, parse=False)
    assert failed.returncode != 0
    extensions = cloud.cli("extension", "list", "--compute", "-f", "json")
    assert "os-hosts" in {e["Alias"] for e in extensions}
    made = cloud.cli("server", "create", "--flavor", "1", "--image", CIRROS, "--nic", "none",
                     "--wait", _name("cli-srv"), "-f", "json")
    image = cloud.cli("server", "image", "create", "--name", _name("cli-snap"), "--wait",
                      made["id"], "-f", "json")
    assert image["status"] == "active"
    cloud.cli("server", "backup", "create", "--name", "cli-bk", "--type", "daily",
              "--rotate", "1", "--wait", made["id"], parse=False)
    cloud.cli("server", "delete", "--wait", made["id"], parse=False)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_sdk_snapshot_saving_at_the_default_duration(cloud_factory, backend):
    """At the default minimum duration the snapshot is seen saving; a second one meanwhile
    is a 409; openstacksdk's wait sees it active (completed by a worker of either process)."""
    from stackling.config import ComputeSettings

    default = str(ComputeSettings().action_min_duration)
    cloud = cloud_factory(backend, workers=2,
                          extra_env={"STACKLING_COMPUTE__ACTION_MIN_DURATION": default})
    conn = cloud.new_project_member()["sdk"]
    server = _server(conn)
    image = conn.compute.create_server_image(server, name="saving-ü", wait=False)
    assert conn.image.get_image(image.id).status == "saving"
    assert conn.compute.get_server(server.id).task_state == "image_uploading"
    with pytest.raises(exceptions.ConflictException):
        conn.compute.create_server_image(server, name="second", wait=False)
    conn.image.wait_for_status(conn.image.get_image(image.id), status="active", interval=1,
                               wait=60)
    conn.compute.wait_for_server(server, status="ACTIVE", interval=1, wait=60)
    booted = conn.compute.wait_for_server(conn.compute.create_server(
        name=_name("from-saved"), flavor_id="1", image_id=image.id, networks="none"), wait=120)
    assert booted.status == "ACTIVE"
    for s in (booted, server):
        conn.compute.delete_server(s)
