"""Block storage through the real clients: openstacksdk's `block_storage` proxy (on
SQLite, PostgreSQL and MariaDB), the `openstack volume ...` CLI, and python-cinderclient's
`cinder` CLI, each as a user drives it."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest

from tests.conftest import ADMIN_PASSWORD, BIN, sqlite_only

WAIT = 120


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_sdk_volumes_snapshots_backups_types(cloud):
    conn = cloud.sdk("stackling")  # project demo's member
    admin = cloud.sdk()
    bs = conn.block_storage
    volume = bs.create_volume(name=_unique("sdk"), size=1, metadata={"a": "1"})
    volume = bs.wait_for_status(volume, "available", failures=["error"], wait=WAIT)
    assert volume.size == 1 and volume.metadata == {"a": "1"}
    assert bs.get_volume(volume.id).volume_type == "__DEFAULT__"
    assert volume.id in {v.id for v in bs.volumes(details=True)}
    bs.set_volume_metadata(volume, b="2")
    assert bs.get_volume_metadata(volume).metadata == {"a": "1", "b": "2"}
    bs.extend_volume(volume, 2)
    volume = bs.wait_for_status(bs.get_volume(volume.id), "available",
                                failures=["error_extending"], wait=WAIT)
    assert bs.get_volume(volume.id).size == 2
    bs.set_volume_bootable_status(volume, True)
    assert bs.get_volume(volume.id).is_bootable
    # a snapshot, and a volume made of it
    snap = bs.create_snapshot(volume_id=volume.id, name=_unique("snap"))
    snap = bs.wait_for_status(snap, "available", failures=["error"], wait=WAIT)
    copy = bs.create_volume(size=2, snapshot_id=snap.id, name=_unique("from-snap"))
    copy = bs.wait_for_status(copy, "available", failures=["error"], wait=WAIT)
    assert copy.snapshot_id == snap.id
    # a backup, restored to a new volume
    backup = bs.create_backup(volume_id=volume.id, name=_unique("bk"))
    backup = bs.wait_for_status(backup, "available", failures=["error"], wait=WAIT)
    restored = bs.restore_backup(backup, name=_unique("restored"))
    bs.wait_for_status(bs.get_backup(backup.id), "available", wait=WAIT)
    restored = bs.wait_for_status(bs.get_volume(restored["volume_id"]), "available",
                                  failures=["error_restoring"], wait=WAIT)
    assert restored.size == 2
    # the attachments API (3.27+) as Nova drives it
    server_id = str(uuid.uuid4())
    att = bs.create_attachment(copy, instance=server_id, connector={"host": "h1"})
    assert att.connection_info["driver_volume_type"] == "file"
    bs.complete_attachment(att)
    assert bs.get_volume(copy.id).status == "in-use"
    bs.delete_attachment(att)
    assert bs.get_volume(copy.id).status == "available"
    # quotas and limits as the member reads them
    quota = bs.get_quota_set(conn.current_project_id, usage=True)
    assert quota.usage["volumes"] >= 3
    limits = bs.get_limits()
    assert limits.absolute.max_total_volumes == quota.volumes
    # types: an admin's, private, shared with demo
    vtype = admin.block_storage.create_type(name=_unique("gold"), is_public=False,
                                            extra_specs={"volume_backend_name": "file"})
    admin.block_storage.add_type_access(vtype, conn.current_project_id)
    assert vtype.id in {t.id for t in bs.types()}
    typed = bs.create_volume(size=1, volume_type=vtype.name, name=_unique("typed"))
    typed = bs.wait_for_status(typed, "available", failures=["error"], wait=WAIT)
    assert typed.volume_type == vtype.name
    for item in (typed, restored, copy):
        bs.delete_volume(item)
    bs.delete_snapshot(snap)
    bs.wait_for_delete(snap, wait=WAIT)
    bs.delete_backup(backup)
    bs.wait_for_delete(backup, wait=WAIT)
    bs.delete_volume(volume)
    for item in (typed, restored, copy, volume):
        bs.wait_for_delete(item, wait=WAIT)
    admin.block_storage.delete_type(vtype)
    assert admin.block_storage.find_type(vtype.name) is None


def test_sdk_catalog_has_block_storage_v3(cloud):
    conn = cloud.sdk("stackling")
    assert conn.has_service("block-storage", "3")
    assert conn.block_storage.get_endpoint().endswith("/volume/v3")
    services = {s.binary for s in cloud.sdk().block_storage.services()}
    assert services == {"cinder-scheduler", "cinder-volume", "cinder-backup"}


@sqlite_only
def test_cli_volume_story(cloud):
    name = _unique("cli")
    made = cloud.cli("volume", "create", "--size", "1", "--property", "k=v", name, "-f", "json")
    assert made["size"] == 1 and made["properties"] == {"k": "v"}
    _wait_cli(cloud, "volume", name, "available")
    listed = cloud.cli("volume", "list", "-f", "json")
    assert name in {v["Name"] for v in listed}
    cloud.cli("volume", "set", "--name", f"{name}-2", "--description", "d", "--bootable",
              "--property", "x=y", name)
    name = f"{name}-2"
    shown = cloud.cli("volume", "show", name, "-f", "json")
    assert shown["description"] == "d" and shown["bootable"] in (True, "true")
    assert shown["properties"] == {"k": "v", "x": "y"}
    cloud.cli("volume", "unset", "--property", "x", name)
    cloud.cli("volume", "set", "--size", "2", name)
    _wait_cli(cloud, "volume", name, "available")
    assert cloud.cli("volume", "show", name, "-f", "json")["size"] == 2
    # snapshots
    snap = _unique("snap")
    cloud.cli("volume", "snapshot", "create", "--volume", name, snap, "-f", "json")
    _wait_cli(cloud, "volume snapshot", snap, "available")
    cloud.cli("volume", "snapshot", "set", "--property", "p=q", snap)
    assert cloud.cli("volume", "snapshot", "show", snap, "-f", "json")["properties"] == {"p": "q"}
    clone = _unique("clone")
    cloud.cli("volume", "create", "--snapshot", snap, "--size", "2", clone, "-f", "json")
    _wait_cli(cloud, "volume", clone, "available")
    # backups
    backup = _unique("bk")
    cloud.cli("volume", "backup", "create", "--name", backup, name, "-f", "json")
    _wait_cli(cloud, "volume backup", backup, "available")
    assert backup in {b["Name"] for b in cloud.cli("volume", "backup", "list", "-f", "json")}
    restored = _unique("restored")
    cloud.cli("volume", "backup", "restore", backup, restored, "-f", "json")
    _wait_cli(cloud, "volume backup", backup, "available")
    _wait_cli(cloud, "volume", restored, "available")
    # an image of the volume (os-volume_upload_image)
    image = _unique("img")
    made = cloud.cli("image", "create", "--volume", name, image, "-f", "json")
    assert made["image_name"] == image and made["status"] == "uploading"
    _wait_cli(cloud, "image", image, "active")
    _wait_cli(cloud, "volume", name, "available")
    assert cloud.cli("image", "show", image, "-f", "json")["size"] == 2 * 1024 ** 3
    cloud.cli("image", "delete", image)
    # types and QoS
    vtype = _unique("gold")
    cloud.cli("volume", "type", "create", "--property", "volume_backend_name=file",
              "--private", vtype, "-f", "json")
    cloud.cli("volume", "type", "set", "--property", "k=v", "--project", "demo", vtype)
    shown = cloud.cli("volume", "type", "show", vtype, "-f", "json")
    assert shown["properties"] == {"volume_backend_name": "file", "k": "v"}
    assert shown["is_public"] is False and len(shown["access_project_ids"]) == 1
    qos = _unique("qos")
    cloud.cli("volume", "qos", "create", "--consumer", "front-end", "--property",
              "total_iops_sec=100", qos, "-f", "json")
    cloud.cli("volume", "qos", "associate", qos, vtype)
    cloud.cli("volume", "qos", "set", "--property", "read_iops_sec=5", qos)
    cloud.cli("volume", "qos", "unset", "--property", "total_iops_sec", qos)
    shown = cloud.cli("volume", "qos", "show", qos, "-f", "json")
    assert shown["properties"] == {"read_iops_sec": "5"} and shown["associations"] == [vtype]
    cloud.cli("volume", "qos", "disassociate", "--volume-type", vtype, qos)
    cloud.cli("volume", "qos", "delete", qos)
    typed = _unique("typed")
    cloud.cli("volume", "create", "--size", "1", "--type", vtype, typed, "-f", "json")
    _wait_cli(cloud, "volume", typed, "available")
    # a transfer to project demo
    mine = _unique("gift")
    cloud.cli("volume", "create", "--size", "1", mine, "-f", "json")
    _wait_cli(cloud, "volume", mine, "available")
    transfer = cloud.cli("volume", "transfer", "request", "create", mine, "-f", "json")
    assert transfer["id"] in {t["ID"] for t in cloud.cli("volume", "transfer", "request",
                                                          "list", "-f", "json")}
    cloud.cli("volume", "transfer", "request", "accept", "--auth-key", transfer["auth_key"],
              transfer["id"], cloud="stackling")
    assert mine in {v["Name"] for v in cloud.cli("volume", "list", "-f", "json",
                                                  cloud="stackling")}
    # the operator's views
    services = cloud.cli("volume", "service", "list", "-f", "json")
    assert {s["Binary"] for s in services} == {"cinder-scheduler", "cinder-volume",
                                               "cinder-backup"}
    zones = cloud.cli("availability", "zone", "list", "--volume", "-f", "json")
    assert zones == [{"Zone Name": "nova", "Zone Status": "available"}]
    cloud.cli("quota", "set", "--volumes", "50", "admin")
    quota = cloud.cli("quota", "show", "--volume", "admin", "-f", "json")
    assert {q["Resource"]: q["Limit"] for q in quota}["volumes"] == 50
    # cleanup, as a user would
    cloud.cli("volume", "delete", mine, cloud="stackling")
    cloud.cli("volume", "backup", "delete", backup)
    cloud.cli("volume", "delete", restored, clone, typed)
    cloud.cli("volume", "snapshot", "delete", snap)
    _wait_gone(cloud, "volume snapshot", snap)
    cloud.cli("volume", "delete", name)
    for item in (name, typed):
        _wait_gone(cloud, "volume", item)
    cloud.cli("volume", "type", "delete", vtype)


def _wait_cli(cloud, kind: str, name: str, status: str) -> None:
    import time

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        shown = cloud.cli(*kind.split(), "show", name, "-f", "json")
        if shown["status"] == status:
            return
        assert not shown["status"].startswith("error"), shown
        time.sleep(0.2)
    raise AssertionError(f"{kind} {name} never {status}")


def _wait_gone(cloud, kind: str, name: str) -> None:
    import time

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if cloud.cli(*kind.split(), "show", name, check=False).returncode != 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"{kind} {name} never went away")


@sqlite_only
def test_cinderclient_cli(cloud):
    """python-cinderclient's `cinder` (negotiating its newest microversion, 3.71)."""
    cinder = BIN / "cinder"
    if not cinder.exists():
        pytest.skip("python-cinderclient is not installed (the client extra pins it)")
    env = {**os.environ, "OS_AUTH_URL": f"{cloud.url}/identity/v3", "OS_USERNAME": "admin",
           "OS_PASSWORD": ADMIN_PASSWORD, "OS_PROJECT_NAME": "admin",
           "OS_USER_DOMAIN_ID": "default", "OS_PROJECT_DOMAIN_ID": "default"}

    def run(*args: str) -> str:
        proc = subprocess.run([str(cinder), *args], env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc.stdout

    def field(out: str, key: str) -> str:
        for line in out.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 2 and cells[0] == key:
                return cells[1]
        raise AssertionError(f"{key} not in {out}")

    name = _unique("cc")
    volume_id = field(run("create", "--name", name, "1"), "id")
    _wait_cinder(run, field, "show", volume_id, "available")
    assert volume_id in run("list")
    run("extend", volume_id, "2")
    _wait_cinder(run, field, "show", volume_id, "available")
    assert field(run("show", volume_id), "size") == "2"
    snap_id = field(run("snapshot-create", "--name", f"{name}-s", volume_id), "id")
    _wait_cinder(run, field, "snapshot-show", snap_id, "available")
    backup_id = field(run("backup-create", "--name", f"{name}-b", volume_id), "id")
    _wait_cinder(run, field, "backup-show", backup_id, "available")
    assert "cinder-volume" in run("service-list")
    assert "__DEFAULT__" in run("type-list")
    assert "3.71" in run("api-version")
    run("backup-delete", backup_id)
    run("snapshot-delete", snap_id)
    _wait_cinder(run, field, "snapshot-show", snap_id, None)
    run("delete", volume_id)


def _wait_cinder(run, field, command: str, item_id: str, status: str | None) -> None:
    import time

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            out = run(command, item_id)
        except AssertionError:
            if status is None:
                return
            raise
        if status is not None and field(out, "status") == status:
            return
        time.sleep(0.2)
    raise AssertionError(f"{command} {item_id} never {status}")

