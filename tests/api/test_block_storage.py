"""Cinder v3 in process, on SQLite, PostgreSQL and MariaDB: volumes and their files,
types, QoS, snapshots, backups, attachments (and their races), transfers, quotas."""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BACKENDS, backend_api

V3 = "/volume/v3"
LATEST = {"OpenStack-API-Version": "volume latest"}
GiB = 1024 ** 3


@pytest.fixture(scope="module", params=BACKENDS)
def bapi(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[Any]:
    yield from backend_api(request.param, tmp_path_factory, "block-storage",
                           block_storage={"backup_chunk_size": 65536})


@pytest.fixture(autouse=True)
def unlimited(bapi: Any) -> None:
    """Projects demo and admin make many volumes here (a 1 TiB one): no quota."""
    for name in ("demo", "admin"):
        ok(bapi.put(f"{V3}/os-quota-sets/{project_id(bapi, name)}", json={"quota_set": {
            k: -1 for k in ("volumes", "gigabytes", "snapshots", "backups",
                            "backup_gigabytes")}}))


# ------------------------------------------------------------------ helpers
def data_dir(api: Any) -> Path:
    return Path(api.runtime.settings.data_dir)


def ok(r: Any, status: int = 200) -> Any:
    assert r.status_code == status, (r.status_code, r.text)
    return r.json() if r.content else None


def wait(api: Any, kind: str, item_id: str, until: tuple[str, ...] = ("available",),
         user: str = "admin") -> dict[str, Any]:
    key = kind[:-1]
    for _ in range(800):
        r = api.get(f"{V3}/{kind}/{item_id}", user=user, headers=LATEST)
        if r.status_code == 404 and "deleted" in until:
            return {}
        body = ok(r)[key]
        if body["status"] in until:
            return body
        if body["status"] in ("error", "error_deleting", "error_restoring") and \
                body["status"] not in until:
            raise AssertionError(body)
        time.sleep(0.025)
    raise AssertionError(f"{key} {item_id} never reached {until}: {body['status']}")


def volume(api: Any, user: str = "demo", **fields: Any) -> dict[str, Any]:
    body = {"size": 1, "name": f"v-{uuid.uuid4().hex[:6]}", **fields}
    made = ok(api.post(f"{V3}/volumes", user=user, json={"volume": body}, headers=LATEST), 202)
    assert made["volume"]["status"] == "creating"
    return wait(api, "volumes", made["volume"]["id"], user=user)


def write(api: Any, volume_id: str, offset: int, data: bytes) -> None:
    with open(data_dir(api) / "volumes" / volume_id, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


def read(api: Any, volume_id: str, offset: int, size: int) -> bytes:
    with open(data_dir(api) / "volumes" / volume_id, "rb") as fh:
        fh.seek(offset)
        return fh.read(size)


def project_id(api: Any, name: str) -> str:
    return ok(api.get(f"/identity/v3/projects?name={name}"))["projects"][0]["id"]


# ------------------------------------------------------------------ discovery
def test_version_discovery_and_catalog(bapi):
    r = bapi.get("/volume/", user=None)
    assert r.status_code == 300
    (version,) = r.json()["versions"]
    assert version["id"] == "v3.0" and version["min_version"] == "3.0"
    assert version["version"] == "3.71"
    assert ok(bapi.get("/volume/v3/", user=None))["versions"][0]["status"] == "CURRENT"
    r = bapi.get(f"{V3}/volumes", headers={"OpenStack-API-Version": "volume 3.71"})
    assert r.headers["OpenStack-API-Version"] == "volume 3.71"
    r = bapi.get(f"{V3}/volumes", headers={"OpenStack-API-Version": "volume 3.72"})
    assert r.status_code == 406
    catalog = {c["type"]: c for c in ok(bapi.get("/identity/v3/auth/catalog"))["catalog"]}
    for kind in ("block-storage", "volumev3"):
        assert catalog[kind]["endpoints"][0]["url"].endswith("/volume/v3")


def test_errors_are_cinder_faults(bapi):
    r = bapi.get(f"{V3}/volumes/{uuid.uuid4()}")
    assert r.status_code == 404 and set(r.json()) == {"itemNotFound"}
    assert r.json()["itemNotFound"]["code"] == 404
    r = bapi.post(f"{V3}/volumes", json={"volume": {"size": 0}})
    assert r.status_code == 400 and "badRequest" in r.json()
    r = bapi.post(f"{V3}/volumes", json={"volume": {"size": 1, "volume_type": "nope"}})
    assert r.status_code == 404


# ------------------------------------------------------------------ volumes
def test_volume_lifecycle_and_its_sparse_file(bapi):
    v = volume(bapi, size=1024, metadata={"a": "1"})  # 1 TiB: no disk until written
    path = data_dir(bapi) / "volumes" / v["id"]
    assert path.stat().st_size == 1024 * GiB and path.stat().st_blocks == 0
    assert v["volume_type"] == "__DEFAULT__" and v["bootable"] == "false"
    assert v["metadata"] == {"a": "1"} and v["attachments"] == []
    demo = project_id(bapi, "demo")
    # both URL forms
    assert ok(bapi.get(f"{V3}/{demo}/volumes/{v['id']}", user="demo"))["volume"]["id"] == v["id"]
    listed = ok(bapi.get(f"{V3}/volumes", user="demo"))["volumes"]
    assert {"id", "name", "links"} == set(listed[0]) and v["id"] in {x["id"] for x in listed}
    detail = ok(bapi.get(f"{V3}/volumes/detail?name={v['name']}", user="demo"))["volumes"]
    assert [x["id"] for x in detail] == [v["id"]]
    summary = ok(bapi.get(f"{V3}/volumes/summary", user="demo", headers=LATEST))
    assert summary["volume-summary"]["total_count"] >= 1
    ok(bapi.put(f"{V3}/volumes/{v['id']}", user="demo", json={"volume": {"name": "renamed"}}))
    ok(bapi.put(f"{V3}/volumes/{v['id']}/metadata/b", user="demo", json={"meta": {"b": "2"}}))
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}/metadata", user="demo"))["metadata"] == {
        "a": "1", "b": "2"}
    # another project sees nothing of it
    bapi.get(f"{V3}/volumes", user="admin")
    assert bapi.get(f"{V3}/volumes/{v['id']}", user="admin").status_code == 200
    ok(bapi.delete(f"{V3}/volumes/{v['id']}", user="demo"), 202)
    wait(bapi, "volumes", v["id"], until=("deleted",))
    assert not path.exists()


def test_create_from_image_streams_its_data(bapi):
    data = os.urandom(3 * 1024 * 1024 + 17)
    image = ok(bapi.post("/image/v2/images", json={
        "name": "raw", "disk_format": "raw", "container_format": "bare",
        "visibility": "public", "min_disk": 1}), 201)
    r = bapi.put(f"/image/v2/images/{image['id']}/file", content=data,
                 headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    v = volume(bapi, imageRef=image["id"])
    assert v["bootable"] == "true" and v["size"] == 1
    assert v["volume_image_metadata"]["image_id"] == image["id"]
    assert read(bapi, v["id"], 0, len(data)) == data
    assert (data_dir(bapi) / "volumes" / v["id"]).stat().st_size == GiB
    r = bapi.post(f"{V3}/volumes", json={"volume": {"size": 1, "imageRef": str(uuid.uuid4())}})
    assert r.status_code == 400


def test_a_failed_create_leaves_no_file_and_says_why(bapi, monkeypatch):
    """The disk fills in the middle of a copy from an image: the volume ends in `error`
    with the reason, no file (nor a part of one) stays, and its deletion frees it."""
    from stackling.block_storage import backend

    image = ok(bapi.post("/image/v2/images", json={
        "name": "big", "disk_format": "raw", "container_format": "bare"}), 201)
    bapi.put(f"/image/v2/images/{image['id']}/file", content=b"x" * 4096,
             headers={"Content-Type": "application/octet-stream"})
    real = backend._stream

    def full_disk(src, dst, **kwargs):
        dst.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backend, "_stream", full_disk)
    made = ok(bapi.post(f"{V3}/volumes", json={"volume": {
        "size": 1, "imageRef": image["id"]}}), 202)["volume"]
    failed = wait(bapi, "volumes", made["id"], until=("error",))
    monkeypatch.setattr(backend, "_stream", real)
    assert failed["status"] == "error"
    assert not (data_dir(bapi) / "volumes" / made["id"]).exists()
    assert not (data_dir(bapi) / "volumes" / (made["id"] + ".part")).exists()
    from stackling.block_storage.models import Volume

    with bapi.runtime.db.transaction(write=False) as db:
        assert "No space left" in db.get(Volume, made["id"]).fault
    ok(bapi.delete(f"{V3}/volumes/{made['id']}"), 202)
    wait(bapi, "volumes", made["id"], until=("deleted",))


def test_snapshot_clone_and_revert_keep_the_data(bapi):
    v = volume(bapi)
    write(bapi, v["id"], 5 * 1024 * 1024, b"snapshot me")
    snap = ok(bapi.post(f"{V3}/snapshots", user="demo", json={"snapshot": {
        "volume_id": v["id"], "name": "s1", "metadata": {"k": "v"}}}), 202)["snapshot"]
    snap = wait(bapi, "snapshots", snap["id"], user="demo")
    assert snap["size"] == 1 and snap["metadata"] == {"k": "v"}
    assert (data_dir(bapi) / "volumes" / "snapshots" / snap["id"]).exists()
    from_snap = volume(bapi, snapshot_id=snap["id"], size=2)
    assert from_snap["snapshot_id"] == snap["id"] and from_snap["size"] == 2
    assert read(bapi, from_snap["id"], 5 * 1024 * 1024, 11) == b"snapshot me"
    clone = volume(bapi, source_volid=v["id"])
    assert read(bapi, clone["id"], 5 * 1024 * 1024, 11) == b"snapshot me"
    write(bapi, v["id"], 5 * 1024 * 1024, b"overwritten")
    r = bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo", headers=LATEST,
                  json={"revert": {"snapshot_id": snap["id"]}})
    assert r.status_code == 202, r.text
    assert read(bapi, v["id"], 5 * 1024 * 1024, 11) == b"snapshot me"
    # a volume with snapshots is deleted only with cascade
    assert bapi.delete(f"{V3}/volumes/{v['id']}", user="demo").status_code == 400
    ok(bapi.delete(f"{V3}/volumes/{v['id']}?cascade=true", user="demo"), 202)
    wait(bapi, "volumes", v["id"], until=("deleted",), user="demo")
    assert bapi.get(f"{V3}/snapshots/{snap['id']}", user="demo").status_code == 404
    assert not (data_dir(bapi) / "volumes" / "snapshots" / snap["id"]).exists()


def test_backups_full_incremental_restore_export_import(bapi):
    v = volume(bapi)
    write(bapi, v["id"], 0, b"A" * 65536)
    write(bapi, v["id"], 10 * 65536, b"B" * 100)
    full = ok(bapi.post(f"{V3}/backups", user="demo", json={"backup": {
        "volume_id": v["id"], "name": "full"}}), 202)["backup"]
    full = wait(bapi, "backups", full["id"], user="demo")
    assert full["object_count"] == 2 and not full["is_incremental"]  # the zero chunks: holes
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "available"
    write(bapi, v["id"], 20 * 65536, b"C" * 10)
    incr = ok(bapi.post(f"{V3}/backups", user="demo", json={"backup": {
        "volume_id": v["id"], "incremental": True}}), 202)["backup"]
    incr = wait(bapi, "backups", incr["id"], user="demo")
    assert incr["is_incremental"] and incr["object_count"] == 1  # only the changed chunk
    full = ok(bapi.get(f"{V3}/backups/{full['id']}", user="demo"))["backup"]
    assert full["has_dependent_backups"]
    assert bapi.delete(f"{V3}/backups/{full['id']}", user="demo").status_code == 400
    # restore to a new volume
    restored = ok(bapi.post(f"{V3}/backups/{incr['id']}/restore", user="demo",
                            json={"restore": {"name": "r1"}}), 202)["restore"]
    wait(bapi, "backups", incr["id"], user="demo")
    wait(bapi, "volumes", restored["volume_id"], user="demo")
    assert read(bapi, restored["volume_id"], 0, 65536) == b"A" * 65536
    assert read(bapi, restored["volume_id"], 10 * 65536, 100) == b"B" * 100
    assert read(bapi, restored["volume_id"], 20 * 65536, 10) == b"C" * 10
    # restore the full one onto an existing volume
    target = volume(bapi)
    ok(bapi.post(f"{V3}/backups/{full['id']}/restore", user="demo",
                 json={"restore": {"volume_id": target["id"]}}), 202)
    wait(bapi, "backups", full["id"], user="demo")
    wait(bapi, "volumes", target["id"], user="demo")
    assert read(bapi, target["id"], 20 * 65536, 10) == bytes(10)
    assert read(bapi, target["id"], 0, 4) == b"AAAA"
    # export, forget, import: the record comes back and restores
    record = ok(bapi.get(f"{V3}/backups/{full['id']}/export_record"))["backup-record"]
    ok(bapi.post(f"{V3}/backups/{incr['id']}/action", json={"os-reset_status": {
        "status": "available"}}), 202)
    assert record["backup_service"].endswith("PosixBackupDriver")
    imported = bapi.post(f"{V3}/backups/import_record", json={"backup-record": record})
    assert imported.status_code == 400  # it exists already


def test_extend_retype_bootable_readonly_image_metadata(bapi):
    v = volume(bapi)
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                 json={"os-extend": {"new_size": 3}}), 202)
    v = wait(bapi, "volumes", v["id"], user="demo")
    assert v["size"] == 3
    assert (data_dir(bapi) / "volumes" / v["id"]).stat().st_size == 3 * GiB
    assert bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                     json={"os-extend": {"new_size": 2}}).status_code == 400
    vtype = ok(bapi.post(f"{V3}/types", json={"volume_type": {"name": f"gold-{v['id'][:6]}"}}))
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                 json={"os-retype": {"new_type": vtype["volume_type"]["name"]}}), 202)
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                 json={"os-set_bootable": {"bootable": True}}), 200)
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                 json={"os-update_readonly_flag": {"readonly": True}}), 202)
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                 json={"os-set_image_metadata": {"metadata": {"hw_disk_bus": "scsi"}}}))
    shown = ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo", headers=LATEST))["volume"]
    assert shown["volume_type"] == vtype["volume_type"]["name"]
    assert shown["volume_type_id"] == vtype["volume_type"]["id"]
    assert shown["bootable"] == "true"
    assert shown["volume_image_metadata"] == {"hw_disk_bus": "scsi"}
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                 json={"os-unset_image_metadata": {"key": "hw_disk_bus"}}))
    # admins only: reset-status and force-delete
    assert bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo", json={
        "os-reset_status": {"status": "error"}}).status_code == 403
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", json={
        "os-reset_status": {"status": "error"}}), 202)
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", json={"os-force_delete": {}}), 202)
    wait(bapi, "volumes", v["id"], until=("deleted",))


# ------------------------------------------------------------------ attachments
def test_attachments_api_states(bapi):
    v = volume(bapi)
    server = str(uuid.uuid4())
    att = ok(bapi.post(f"{V3}/attachments", user="demo", headers=LATEST, json={"attachment": {
        "volume_uuid": v["id"], "instance_uuid": server}}))["attachment"]
    assert att["status"] == "reserved" and att["connection_info"] is None
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "reserved"
    # a second reservation of a non-multiattach volume is refused
    r = bapi.post(f"{V3}/attachments", user="demo", headers=LATEST, json={"attachment": {
        "volume_uuid": v["id"], "instance_uuid": str(uuid.uuid4())}})
    assert r.status_code == 400 and "reserved" in r.json()["badRequest"]["message"]
    # a delete during the attach is refused
    assert bapi.delete(f"{V3}/volumes/{v['id']}", user="demo").status_code == 400
    att = ok(bapi.put(f"{V3}/attachments/{att['id']}", user="demo", headers=LATEST, json={
        "attachment": {"connector": {"host": "compute1", "mountpoint": "/dev/vdb"}}}))[
            "attachment"]
    info = att["connection_info"]
    assert att["status"] == "attaching" and info["driver_volume_type"] == "file"
    assert info["data"]["path"] == str(data_dir(bapi) / "volumes" / v["id"])
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "attaching"
    r = bapi.post(f"{V3}/attachments/{att['id']}/action", user="demo", headers=LATEST,
                  json={"os-complete": None})
    assert r.status_code == 204, r.text
    shown = ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]
    assert shown["status"] == "in-use"
    assert shown["attachments"][0]["server_id"] == server
    assert shown["attachments"][0]["device"] == "/dev/vdb"
    listed = ok(bapi.get(f"{V3}/attachments?instance_id={server}", user="demo",
                         headers=LATEST))["attachments"]
    assert [a["id"] for a in listed] == [att["id"]]
    # extend while attached needs 3.42
    r = bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                  json={"os-extend": {"new_size": 2}})
    assert r.status_code == 400
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo", headers=LATEST,
                 json={"os-extend": {"new_size": 2}}), 202)
    assert wait(bapi, "volumes", v["id"], until=("in-use",), user="demo")["size"] == 2
    ok(bapi.delete(f"{V3}/attachments/{att['id']}", user="demo", headers=LATEST))
    shown = ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]
    assert shown["status"] == "available" and shown["attachments"] == []
    # below 3.27 the attachments API does not exist
    assert bapi.get(f"{V3}/attachments", user="demo").status_code == 404


def test_legacy_attach_actions(bapi):
    v = volume(bapi)
    url = f"{V3}/volumes/{v['id']}/action"
    ok(bapi.post(url, user="demo", json={"os-reserve": {}}), 202)
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "attaching"
    ok(bapi.post(url, user="demo", json={"os-unreserve": {}}), 202)
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "available"
    ok(bapi.post(url, user="demo", json={"os-reserve": {}}), 202)
    info = ok(bapi.post(url, user="demo", json={"os-initialize_connection": {
        "connector": {"host": "h1"}}}))["connection_info"]
    assert info["driver_volume_type"] == "file"
    server = str(uuid.uuid4())
    ok(bapi.post(url, user="demo", json={"os-attach": {
        "instance_uuid": server, "mountpoint": "/dev/vdc", "mode": "rw"}}), 202)
    shown = ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]
    assert shown["status"] == "in-use" and shown["attachments"][0]["device"] == "/dev/vdc"
    ok(bapi.post(url, user="demo", json={"os-begin_detaching": {}}), 202)
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "detaching"
    ok(bapi.post(url, user="demo", json={"os-roll_detaching": {}}), 202)
    ok(bapi.post(url, user="demo", json={"os-begin_detaching": {}}), 202)
    ok(bapi.post(url, user="demo", json={"os-terminate_connection": {
        "connector": {"host": "h1"}}}), 202)
    ok(bapi.post(url, user="demo", json={"os-detach": {
        "attachment_id": shown["attachments"][0]["attachment_id"]}}), 202)
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"]["status"] == "available"


def test_two_attaches_at_once_one_wins(bapi):
    """Two transactions reserve one volume at the same moment: the conditional UPDATE lets
    exactly one through, on every database; the volume has one attachment."""
    from stackling.block_storage import interface
    from stackling.common.context import RequestContext

    v = volume(bapi)
    demo = project_id(bapi, "demo")
    ctx = RequestContext(user_id="u", project_id=demo, roles=("member", "reader"))
    barrier = threading.Barrier(2)
    results: list[str] = []

    def attach() -> None:
        barrier.wait()
        try:
            with bapi.runtime.db.transaction() as db:
                interface.attachment_create(db, ctx, v["id"], str(uuid.uuid4()))
            results.append("won")
        except interface.InvalidVolume:
            results.append("refused")
        except Exception as err:  # noqa: BLE001 - a lost lock race is a refusal too
            from stackling.common.db import is_deadlock

            results.append("refused" if is_deadlock(err) else repr(err))

    threads = [threading.Thread(target=attach) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["refused", "won"], results
    with bapi.runtime.db.transaction(write=False) as db:
        info = interface.get_volume(db, ctx, v["id"])
    assert info.status == "reserved" and len(info.attachments) == 1


# ------------------------------------------------------------------ types and QoS
def test_types_access_default_types_and_qos(bapi):
    name = f"private-{uuid.uuid4().hex[:6]}"
    vtype = ok(bapi.post(f"{V3}/types", json={"volume_type": {
        "name": name, "os-volume-type-access:is_public": False,
        "extra_specs": {"volume_backend_name": "file"}}}))["volume_type"]
    assert vtype["is_public"] is False and vtype["extra_specs"] == {"volume_backend_name": "file"}
    assert bapi.post(f"{V3}/types", json={"volume_type": {"name": name}}).status_code == 409
    demo_types = ok(bapi.get(f"{V3}/types", user="demo"))["volume_types"]
    assert name not in {t["name"] for t in demo_types}
    assert "qos_specs_id" not in demo_types[0] and "extra_specs" in demo_types[0]  # readers see specs
    demo = project_id(bapi, "demo")
    ok(bapi.post(f"{V3}/types/{vtype['id']}/action", json={"addProjectAccess": {
        "project": demo}}), 202)
    assert name in {t["name"] for t in ok(bapi.get(f"{V3}/types", user="demo"))["volume_types"]}
    access = ok(bapi.get(f"{V3}/types/{vtype['id']}/os-volume-type-access"))
    assert access["volume_type_access"] == [{"volume_type_id": vtype["id"], "project_id": demo}]
    ok(bapi.post(f"{V3}/types/{vtype['id']}/extra_specs", json={"extra_specs": {"k": "v"}}))
    assert ok(bapi.get(f"{V3}/types/{vtype['id']}/extra_specs/k")) == {"k": "v"}
    ok(bapi.delete(f"{V3}/types/{vtype['id']}/extra_specs/k"), 202)
    # the default type: __DEFAULT__, then the project's own (3.62)
    assert ok(bapi.get(f"{V3}/types/default", user="demo"))["volume_type"]["name"] == "__DEFAULT__"
    admin = project_id(bapi, "admin")
    r = bapi.put(f"{V3}/default-types/{admin}", headers=LATEST, json={
        "default_type": {"volume_type": vtype["id"]}})
    assert ok(r)["default_type"] == {"project_id": admin, "volume_type_id": vtype["id"]}
    made = volume(bapi, user="admin")
    assert made["volume_type"] == name
    assert bapi.delete(f"{V3}/types/{vtype['id']}").status_code == 400  # a default type
    assert bapi.get(f"{V3}/default-types", headers=LATEST).status_code == 200
    ok(bapi.delete(f"{V3}/default-types/{admin}", headers=LATEST), 204)
    assert bapi.get(f"{V3}/default-types/{admin}", headers=LATEST).status_code == 404
    assert bapi.delete(f"{V3}/types/{vtype['id']}").status_code == 400  # volumes of it
    # QoS specs
    qos = ok(bapi.post(f"{V3}/qos-specs", json={"qos_specs": {
        "name": f"q-{name}", "consumer": "front-end", "total_iops_sec": "500"}}))["qos_specs"]
    assert qos["consumer"] == "front-end" and qos["specs"] == {"total_iops_sec": "500"}
    ok(bapi.put(f"{V3}/qos-specs/{qos['id']}", json={"qos_specs": {"read_iops_sec": "100"}}))
    ok(bapi.put(f"{V3}/qos-specs/{qos['id']}/delete_keys", json={"keys": ["total_iops_sec"]}),
       202)
    assert bapi.get(f"{V3}/qos-specs/{qos['id']}/associate?vol_type_id={vtype['id']}"
                    ).status_code == 202
    assoc = ok(bapi.get(f"{V3}/qos-specs/{qos['id']}/associations"))["qos_associations"]
    assert assoc == [{"association_type": "volume_type", "name": name, "id": vtype["id"]}]
    assert ok(bapi.get(f"{V3}/types/{vtype['id']}"))["volume_type"]["qos_specs_id"] == qos["id"]
    assert bapi.delete(f"{V3}/qos-specs/{qos['id']}").status_code == 400
    ok(bapi.delete(f"{V3}/qos-specs/{qos['id']}?force=true"), 202)
    assert bapi.get(f"{V3}/qos-specs", user="demo").status_code == 403


# ------------------------------------------------------------------ quotas
def test_quotas_usage_per_type_and_classes(bapi):
    project = ok(bapi.post("/identity/v3/projects", json={"project": {
        "name": f"q-{uuid.uuid4().hex[:6]}", "domain_id": "default"}}), 201)["project"]
    user = ok(bapi.post("/identity/v3/users", json={"user": {
        "name": f"u-{project['name']}", "password": "pw-secret", "domain_id": "default"}}),
        201)["user"]
    roles = {r["name"]: r["id"] for r in ok(bapi.get("/identity/v3/roles"))["roles"]}
    bapi.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{roles['member']}")
    token = bapi.token(user["name"], project["name"], "pw-secret")
    pid = project["id"]
    quota = ok(bapi.get(f"{V3}/os-quota-sets/{pid}"))["quota_set"]
    assert quota["volumes"] == 10 and quota["gigabytes"] == 1000
    assert "volumes___DEFAULT__" in quota
    ok(bapi.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {"volumes": 1,
                                                                  "gigabytes": 5}}))
    made = ok(bapi.post(f"{V3}/volumes", token=token, json={"volume": {"size": 2}}), 202)
    r = bapi.post(f"{V3}/volumes", token=token, json={"volume": {"size": 1}})
    assert r.status_code == 413 and "overLimit" in r.json(), r.text
    assert r.headers["Retry-After"] == "0"
    ok(bapi.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {"volumes": 5}}))
    r = bapi.post(f"{V3}/volumes", token=token, json={"volume": {"size": 4}})
    assert r.status_code == 413 and "gigabytes" in r.text
    ok(bapi.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {"volumes___DEFAULT__": 1}}))
    r = bapi.post(f"{V3}/volumes", token=token, json={"volume": {"size": 1}})
    assert r.status_code == 413 and "volumes___DEFAULT__" in r.text
    usage = ok(bapi.get(f"{V3}/os-quota-sets/{pid}?usage=True", token=token))["quota_set"]
    assert usage["volumes"] == {"limit": 5, "in_use": 1, "reserved": 0, "allocated": 0}
    assert usage["gigabytes"]["in_use"] == 2
    limits = ok(bapi.get(f"{V3}/limits", token=token))["limits"]["absolute"]
    assert limits["totalVolumesUsed"] == 1 and limits["maxTotalVolumes"] == 5
    # a member may not change its quotas
    r = bapi.put(f"{V3}/os-quota-sets/{pid}", token=token, json={"quota_set": {"volumes": 99}})
    assert r.status_code == 403
    ok(bapi.delete(f"{V3}/os-quota-sets/{pid}"))
    assert ok(bapi.get(f"{V3}/os-quota-sets/{pid}"))["quota_set"]["volumes"] == 10
    assert ok(bapi.get(f"{V3}/os-quota-sets/{pid}/defaults"))["quota_set"]["volumes"] == 10
    ok(bapi.put(f"{V3}/os-quota-class-sets/default", json={"quota_class_set": {"volumes": 20}}))
    assert ok(bapi.get(f"{V3}/os-quota-sets/{pid}/defaults"))["quota_set"]["volumes"] == 20
    ok(bapi.put(f"{V3}/os-quota-class-sets/default", json={"quota_class_set": {"volumes": 10}}))
    wait(bapi, "volumes", made["volume"]["id"])


# ------------------------------------------------------------------ transfers
def test_transfer_between_projects(bapi):
    v = volume(bapi, user="demo")
    snap = ok(bapi.post(f"{V3}/snapshots", user="demo", json={"snapshot": {
        "volume_id": v["id"]}}), 202)["snapshot"]
    wait(bapi, "snapshots", snap["id"], user="demo")
    transfer = ok(bapi.post(f"{V3}/volume-transfers", user="demo", headers=LATEST, json={
        "transfer": {"volume_id": v["id"], "name": "t"}}), 202)["transfer"]
    assert len(transfer["auth_key"]) == 16 and transfer["no_snapshots"] is False
    assert ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo"))["volume"][
        "status"] == "awaiting-transfer"
    listed = ok(bapi.get(f"{V3}/os-volume-transfer/detail", user="demo"))["transfers"]
    assert transfer["id"] in {t["id"] for t in listed}
    r = bapi.post(f"{V3}/os-volume-transfer/{transfer['id']}/accept", user="admin",
                  json={"accept": {"auth_key": "wrong"}})
    assert r.status_code == 400
    accepted = ok(bapi.post(f"{V3}/os-volume-transfer/{transfer['id']}/accept", user="admin",
                            json={"accept": {"auth_key": transfer["auth_key"]}}), 202)
    assert accepted["transfer"]["volume_id"] == v["id"]
    assert bapi.get(f"{V3}/volumes/{v['id']}", user="demo").status_code == 404
    shown = ok(bapi.get(f"{V3}/volumes/{v['id']}", user="admin"))["volume"]
    assert shown["status"] == "available"
    assert shown["os-vol-tenant-attr:tenant_id"] == project_id(bapi, "admin")
    assert ok(bapi.get(f"{V3}/snapshots/{snap['id']}"))["snapshot"][
        "os-extended-snapshot-attributes:project_id"] == project_id(bapi, "admin")


# ------------------------------------------------------------------ the rest
def test_services_zones_and_empty_lists(bapi):
    services = ok(bapi.get(f"{V3}/os-services"))["services"]
    assert {(s["binary"], s["host"]) for s in services} == {
        ("cinder-scheduler", "stackling"), ("cinder-volume", "stackling@file"),
        ("cinder-backup", "stackling")}
    assert all(s["state"] == "up" and s["status"] == "enabled" for s in services)
    assert bapi.get(f"{V3}/os-services", user="demo").status_code == 403
    zones = ok(bapi.get(f"{V3}/os-availability-zone", user="demo"))["availabilityZoneInfo"]
    assert zones == [{"zoneName": "nova", "zoneState": {"available": True}}]
    assert ok(bapi.get(f"{V3}/messages", user="demo")) == {"messages": []}


def test_work_of_a_dead_process_is_taken_over(bapi):
    """A create claimed by a process that died (its lease over) is done by another."""
    import datetime as dt

    from stackling.block_storage import work
    from stackling.block_storage.models import Volume

    made = ok(bapi.post(f"{V3}/volumes", json={"volume": {"size": 1}}), 202)["volume"]
    wait(bapi, "volumes", made["id"])
    with bapi.runtime.db.transaction() as db:
        row = db.get(Volume, made["id"])
        row.status, row.task, row.task_args = "creating", "create", {"source": "blank"}
        row.claimed_by = "a-dead-process"
        row.claimed_until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=60)
    (data_dir(bapi) / "volumes" / made["id"]).unlink()
    assert work.run_next(bapi.runtime, (Volume, made["id"])) is False  # still leased
    with bapi.runtime.db.transaction() as db:
        db.get(Volume, made["id"]).claimed_until = dt.datetime.now(dt.UTC) - dt.timedelta(1)
    work.wake(bapi.runtime)
    wait(bapi, "volumes", made["id"])
    assert (data_dir(bapi) / "volumes" / made["id"]).exists()


def test_checksummed_chunks(bapi):
    """A backup chunk changed on disk fails its restore (SHA-256 per chunk)."""
    v = volume(bapi)
    write(bapi, v["id"], 0, b"Z" * 65536)
    backup = ok(bapi.post(f"{V3}/backups", user="demo", json={"backup": {
        "volume_id": v["id"]}}), 202)["backup"]
    wait(bapi, "backups", backup["id"], user="demo")
    chunk = data_dir(bapi) / "backups" / backup["id"] / "00000000"
    assert hashlib.sha256(chunk.read_bytes()).hexdigest()
    chunk.write_bytes(b"Y" * 65536)
    restored = ok(bapi.post(f"{V3}/backups/{backup['id']}/restore", user="demo",
                            json={"restore": {}}), 202)["restore"]
    wait(bapi, "volumes", restored["volume_id"], until=("error_restoring",), user="demo")


def test_groups_and_group_snapshots(bapi):
    gtype = ok(bapi.post(f"{V3}/group_types", headers=LATEST, json={"group_type": {
        "name": f"gt-{uuid.uuid4().hex[:6]}", "group_specs": {"k": "v"}}}))["group_type"]
    assert gtype["group_specs"] == {"k": "v"}
    assert bapi.get(f"{V3}/group_types", headers=LATEST, user="demo").status_code == 200
    assert bapi.post(f"{V3}/group_types", headers=LATEST, user="demo", json={
        "group_type": {"name": "x"}}).status_code == 403
    made = ok(bapi.post(f"{V3}/groups", user="demo", headers=LATEST, json={"group": {
        "name": "g1", "group_type": gtype["id"], "volume_types": ["__DEFAULT__"]}}), 202)
    group_id = made["group"]["id"]
    v = volume(bapi, group_id=group_id)
    shown = ok(bapi.get(f"{V3}/volumes/{v['id']}", user="demo", headers=LATEST))["volume"]
    assert shown["group_id"] == group_id
    group = ok(bapi.get(f"{V3}/groups/{group_id}?list_volume=True", user="demo",
                        headers=LATEST))["group"]
    assert group["volumes"] == [v["id"]] and group["status"] == "available"
    gs = ok(bapi.post(f"{V3}/group_snapshots", user="demo", headers=LATEST, json={
        "group_snapshot": {"group_id": group_id, "name": "gs1"}}), 202)["group_snapshot"]
    for _ in range(400):
        status = ok(bapi.get(f"{V3}/group_snapshots/{gs['id']}", user="demo",
                             headers=LATEST))["group_snapshot"]["status"]
        if status != "creating":
            break
        time.sleep(0.025)
    assert status == "available"
    snaps = ok(bapi.get(f"{V3}/snapshots?volume_id={v['id']}", user="demo"))["snapshots"]
    assert len(snaps) == 1
    # a group with a group snapshot is not deleted; without one, with its volumes
    r = bapi.post(f"{V3}/groups/{group_id}/action", user="demo", headers=LATEST,
                  json={"delete": {"delete-volumes": True}})
    assert r.status_code == 400
    ok(bapi.delete(f"{V3}/group_snapshots/{gs['id']}", user="demo", headers=LATEST), 202)
    wait(bapi, "snapshots", snaps[0]["id"], until=("deleted",), user="demo")
    ok(bapi.post(f"{V3}/groups/{group_id}/action", user="demo", headers=LATEST,
                 json={"delete": {"delete-volumes": True}}), 202)
    assert bapi.get(f"{V3}/groups/{group_id}", user="demo", headers=LATEST).status_code == 404
    wait(bapi, "volumes", v["id"], until=("deleted",), user="demo")
    ok(bapi.delete(f"{V3}/group_types/{gtype['id']}", headers=LATEST), 202)


def test_upload_a_volume_to_an_image(bapi):
    v = volume(bapi, size=1)
    write(bapi, v["id"], 0, b"from a volume")
    r = bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo", headers=LATEST, json={
        "os-volume_upload_image": {"image_name": "from-volume", "disk_format": "raw",
                                   "container_format": "bare"}})
    assert r.status_code == 202, r.text
    upload = r.json()["os-volume_upload_image"]
    assert upload["status"] == "uploading" and upload["image_name"] == "from-volume"
    for _ in range(800):
        image = ok(bapi.get(f"/image/v2/images/{upload['image_id']}", user="demo"))
        if image["status"] == "active":
            break
        time.sleep(0.025)
    assert image["status"] == "active" and image["size"] == GiB
    assert image["visibility"] == "private"
    wait(bapi, "volumes", v["id"], user="demo")
    r = bapi.get(f"/image/v2/images/{upload['image_id']}/file", user="demo",
                 headers={"Range": "bytes=0-12"})
    assert r.content[:13] == b"from a volume"
    # public images are an admin's
    r = bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo", headers=LATEST, json={
        "os-volume_upload_image": {"image_name": "pub", "visibility": "public"}})
    assert r.status_code == 403


def test_reimage_and_time_filters(bapi):
    data = b"new root" * 1000
    image = ok(bapi.post("/image/v2/images", json={
        "name": "reimage", "disk_format": "raw", "container_format": "bare",
        "visibility": "public"}), 201)
    bapi.put(f"/image/v2/images/{image['id']}/file", content=data,
             headers={"Content-Type": "application/octet-stream"})
    v = volume(bapi)
    write(bapi, v["id"], 0, b"old data")
    r = bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo",
                  json={"os-reimage": {"image_id": image["id"]}})
    assert r.status_code == 400  # 3.68
    ok(bapi.post(f"{V3}/volumes/{v['id']}/action", user="demo", headers=LATEST,
                 json={"os-reimage": {"image_id": image["id"]}}), 202)
    shown = wait(bapi, "volumes", v["id"], user="demo")
    assert shown["volume_image_metadata"]["image_id"] == image["id"]
    assert read(bapi, v["id"], 0, len(data)) == data
    # 3.60: created_at comparisons
    created = shown["created_at"]
    later = ok(bapi.get(f"{V3}/volumes?created_at=gt:{created}", user="demo",
                        headers=LATEST))["volumes"]
    assert v["id"] not in {x["id"] for x in later}
    since = ok(bapi.get(f"{V3}/volumes?created_at=gte:{created}", user="demo",
                        headers=LATEST))["volumes"]
    assert v["id"] in {x["id"] for x in since}
    assert bapi.get(f"{V3}/volumes?created_at=xx:{created}", user="demo",
                    headers=LATEST).status_code == 400


def test_microversion_table():
    from stackling.block_storage import microversions
    from stackling.common.microversion import Version

    versions = [Version.parse(v) for v, _ in microversions.HISTORY]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert [v.minor for v in versions] == list(range(72))  # 3.0 .. 3.71, no gap
    assert str(microversions.SPEC.max_version) == "3.71"  # upstream's current maximum


def test_a_delete_racing_an_attach(bapi):
    """A delete and a reservation of one available volume at the same moment: exactly one
    of them wins, and the loser changes nothing (no attachment of a deleting volume, no
    deletion of a reserved one), on every database."""
    from stackling.block_storage import interface
    from stackling.common.context import RequestContext
    from stackling.common.db import is_deadlock

    demo = project_id(bapi, "demo")
    ctx = RequestContext(user_id="u", project_id=demo, roles=("member", "reader"))
    for _ in range(5):
        _race_once(bapi, interface, ctx, is_deadlock, volume(bapi)["id"])


def _race_once(bapi: Any, interface: Any, ctx: Any, is_deadlock: Any, volume_id: str) -> None:
    barrier = threading.Barrier(2)
    results: dict[str, str] = {}

    def run(kind: str, fn: Any) -> None:
        barrier.wait()
        try:
            with bapi.runtime.db.transaction() as db:
                fn(db)
            results[kind] = "won"
        except interface.InvalidVolume:
            results[kind] = "refused"
        except Exception as err:  # noqa: BLE001 - a lost lock race is a refusal
            results[kind] = "refused" if is_deadlock(err) else repr(err)

    threads = [
        threading.Thread(target=run, args=("attach", lambda db: interface.attachment_create(
            db, ctx, volume_id, str(uuid.uuid4())))),
        threading.Thread(target=run, args=("delete", lambda db: interface.delete_volume(
            db, ctx, volume_id))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == ["refused", "won"], results
    with bapi.runtime.db.transaction(write=False) as db:
        try:
            info = interface.get_volume(db, ctx, volume_id)
        except interface.VolumeNotFound:
            info = None
    if results["attach"] == "won":
        assert info is not None and info.status == "reserved" and len(info.attachments) == 1
    else:
        assert info is None or (info.status == "deleting" and not info.attachments)
