"""Nova's side of block storage, in process on SQLite, PostgreSQL and MariaDB:
os-volume_attachments (attach, detach, update, swap), volumes_attached, boot from volume
(block_device_mapping_v2 and legacy), BDM validation errors, delete_on_termination,
moves keeping volumes, racing attaches."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_block_storage import LATEST, V3, ok, project_id, wait
from tests.api.test_block_storage import volume as make_volume
from tests.api.test_compute import CIRROS, MAX, mv, wait_status
from tests.conftest import BACKENDS, backend_api

S = "/compute/v2.1/servers"


@pytest.fixture(scope="module", params=BACKENDS)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Any]:
    yield from backend_api(request.param, tmp_path_factory, "compute-volumes")


@pytest.fixture(autouse=True)
def unlimited(api: Any) -> None:
    for name in ("demo", "admin"):
        pid = project_id(api, name)
        ok(api.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {
            k: -1 for k in ("volumes", "gigabytes", "snapshots")}}))
        api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv(MAX),
                json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})


def boot(api: Any, user: str = "demo", version: str = MAX, **server: Any) -> Any:
    body = {"name": "vm", "flavorRef": "1", "imageRef": CIRROS, "networks": "none", **server}
    return api.post(S, user=user, headers=mv(version), json={"server": body})


def server(api: Any, **kw: Any) -> dict[str, Any]:
    r = boot(api, **kw)
    assert r.status_code == 202, r.text
    return wait_status(api, r.json()["server"]["id"])


def show(api: Any, sid: str, version: str = MAX, user: str = "demo") -> dict[str, Any]:
    return ok(api.get(f"{S}/{sid}", user=user, headers=mv(version)))["server"]


def attach(api: Any, sid: str, vid: str, version: str = "2.79", **extra: Any) -> Any:
    return api.post(f"{S}/{sid}/os-volume_attachments", user="demo", headers=mv(version),
                    json={"volumeAttachment": {"volumeId": vid, **extra}})


def vstatus(api: Any, vid: str) -> str:
    return ok(api.get(f"{V3}/volumes/{vid}", user="demo", headers=LATEST))["volume"]["status"]


def test_attach_list_show_detach(api):
    sid = server(api)["id"]
    v1, v2 = make_volume(api)["id"], make_volume(api)["id"]
    r = attach(api, sid, v1, tag="data", delete_on_termination=False, version="2.79")
    body = ok(r)["volumeAttachment"]
    assert body == {"id": v1, "serverId": sid, "volumeId": v1, "device": "/dev/vdb",
                    "tag": "data", "delete_on_termination": False}
    assert vstatus(api, v1) == "in-use"
    assert attach(api, sid, v2, version=MAX).status_code == 202  # 2.101: no body
    listed = ok(api.get(f"{S}/{sid}/os-volume_attachments", user="demo",
                        headers=mv(MAX)))["volumeAttachments"]
    assert [(a["volumeId"], a["device"]) for a in listed] == [(v1, "/dev/vdb"),
                                                               (v2, "/dev/vdc")]
    assert "id" not in listed[0] and listed[0]["attachment_id"] and listed[0]["bdm_uuid"]
    one = ok(api.get(f"{S}/{sid}/os-volume_attachments/{v2}", user="demo",
                     headers=mv("2.1")))["volumeAttachment"]
    assert one == {"id": v2, "volumeId": v2, "serverId": sid, "device": "/dev/vdc"}
    assert show(api, sid)["os-extended-volumes:volumes_attached"] == [
        {"id": v1, "delete_on_termination": False}, {"id": v2, "delete_on_termination": False}]
    assert show(api, sid, "2.1")["os-extended-volumes:volumes_attached"] == [
        {"id": v1}, {"id": v2}]
    detail = ok(api.get(f"{S}/detail", user="demo", headers=mv(MAX)))["servers"]
    assert [s for s in detail if s["id"] == sid][0][
        "os-extended-volumes:volumes_attached"][0]["id"] == v1
    # a second attach of an in-use volume: Cinder refuses the reservation (400)
    other = server(api)["id"]
    r = attach(api, other, v1)
    assert r.status_code == 400 and "status must be available" in r.json()["badRequest"][
        "message"], r.text
    r = attach(api, sid, v1)
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        f"Invalid volume: volume {v1} already attached")
    assert api.delete(f"{S}/{sid}/os-volume_attachments/{v1}", user="demo",
                      headers=mv(MAX)).status_code == 202
    assert vstatus(api, v1) == "available"
    r = api.get(f"{S}/{sid}/os-volume_attachments/{v1}", user="demo", headers=mv(MAX))
    assert r.status_code == 404 and r.json()["itemNotFound"]["message"] == (
        f"Instance {sid} is not attached to volume {v1}")
    # the next attach takes the first free name again
    assert ok(attach(api, sid, v1))["volumeAttachment"]["device"] == "/dev/vdb"


def test_attach_errors(api):
    sid = server(api)["id"]
    missing = "7d8f6c52-0000-4000-8000-000000000000"
    r = attach(api, sid, missing)
    assert r.status_code == 404 and r.json()["itemNotFound"]["message"] == (
        f"Volume {missing} could not be found.")
    r = attach(api, sid, "not-a-uuid")
    assert r.status_code == 400
    r = attach(api, sid, make_volume(api)["id"], version="2.48", tag="x")
    assert r.status_code == 400  # tag from 2.49
    r = api.delete(f"{S}/{sid}/os-volume_attachments/{missing}", user="demo", headers=mv(MAX))
    assert r.status_code == 404
    # a server that cannot take a volume now: Nova's 409
    vid = make_volume(api)["id"]
    assert api.post(f"{S}/{sid}/action", user="demo", headers=mv(MAX),
                    json={"lock": None}).status_code == 202
    r = attach(api, sid, vid)
    assert r.status_code == 409 and r.json()["conflictingRequest"]["message"] == (
        f"Instance {sid} is locked")
    api.post(f"{S}/{sid}/action", user="demo", headers=mv(MAX), json={"unlock": None})
    # another project's volume is not found
    theirs = make_volume(api, user="admin")["id"]
    assert attach(api, sid, theirs).status_code == 404


def test_update_and_swap(api):
    sid = server(api)["id"]
    vid = make_volume(api)["id"]
    ok(attach(api, sid, vid))
    url = f"{S}/{sid}/os-volume_attachments/{vid}"
    r = api.put(url, user="demo", headers=mv("2.85"),
                json={"volumeAttachment": {"volumeId": vid, "delete_on_termination": True}})
    assert r.status_code == 202, r.text
    assert show(api, sid)["os-extended-volumes:volumes_attached"] == [
        {"id": vid, "delete_on_termination": True}]
    r = api.put(url, user="demo", headers=mv("2.85"),
                json={"volumeAttachment": {"volumeId": vid, "device": "/dev/vdz"}})
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        "The device property is not mutable")
    # swap is Cinder's (a migrating volume): a member may not, an admin gets Nova's 409
    new = make_volume(api)["id"]
    r = api.put(url, user="demo", headers=mv("2.84"), json={"volumeAttachment": {"volumeId": new}})
    assert r.status_code == 403
    r = api.put(url, user="admin", headers=mv("2.84"),
                json={"volumeAttachment": {"volumeId": new}})
    assert r.status_code == 409 and "is not migrating" in r.text


def test_delete_on_termination(api):
    sid = server(api)["id"]
    keep, drop = make_volume(api)["id"], make_volume(api)["id"]
    ok(attach(api, sid, keep))
    ok(attach(api, sid, drop, delete_on_termination=True))
    assert api.delete(f"{S}/{sid}", user="demo", headers=mv(MAX)).status_code == 204
    assert vstatus(api, keep) == "available"
    wait(api, "volumes", drop, until=("deleted",), user="demo")


def test_two_attaches_of_one_volume_at_once(api):
    a, b = server(api)["id"], server(api)["id"]
    vid = make_volume(api)["id"]
    results: list[int] = []
    gate = threading.Barrier(2)

    def go(sid: str) -> None:
        gate.wait()
        results.append(attach(api, sid, vid).status_code)

    threads = [threading.Thread(target=go, args=(s,)) for s in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200, 400]
    assert vstatus(api, vid) == "in-use"
    owners = [s for s in (a, b) if show(api, s)["os-extended-volumes:volumes_attached"]]
    assert len(owners) == 1


def test_boot_from_volume_image_blank_and_existing(api):
    r = boot(api, imageRef="", block_device_mapping_v2=[
        {"uuid": CIRROS, "source_type": "image", "destination_type": "volume",
         "boot_index": 0, "volume_size": 1, "delete_on_termination": True},
        {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
         "boot_index": -1}])
    assert r.status_code == 202, r.text
    srv = wait_status(api, r.json()["server"]["id"])
    assert srv["status"] == "ACTIVE", srv.get("fault")
    assert srv["image"] == ""
    attached = srv["os-extended-volumes:volumes_attached"]
    assert [a["delete_on_termination"] for a in attached] == [True, False]
    root, blank = attached[0]["id"], attached[1]["id"]
    assert vstatus(api, root) == "in-use" and vstatus(api, blank) == "in-use"
    devices = ok(api.get(f"{S}/{srv['id']}/os-volume_attachments", user="demo",
                         headers=mv(MAX)))["volumeAttachments"]
    assert [d["device"] for d in devices] == ["/dev/vda", "/dev/vdb"]
    r = api.delete(f"{S}/{srv['id']}/os-volume_attachments/{root}", user="demo",
                   headers=mv(MAX))
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        "Cannot detach a root device volume")
    from stackling.compute import interface

    with api.runtime.db.transaction(write=False) as db:
        mine = [s for s in interface.dataplane_servers(db) if s["id"] == srv["id"]][0]
    assert [v["device"] for v in mine["volumes"]] == ["/dev/vda", "/dev/vdb"]
    assert mine["root_volume"]["volume_id"] == root
    assert mine["root_volume"]["serial"] == root[:20]
    assert mine["volumes"][1]["path"].endswith(blank)
    assert api.delete(f"{S}/{srv['id']}", user="demo").status_code == 204
    wait(api, "volumes", root, until=("deleted",), user="demo")
    assert vstatus(api, blank) == "available"
    # boot from that existing blank volume: not bootable
    r = boot(api, imageRef="", block_device_mapping_v2=[
        {"uuid": blank, "source_type": "volume", "destination_type": "volume",
         "boot_index": 0}])
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        f"Block Device {blank} is not bootable.")
    ok(api.post(f"{V3}/volumes/{blank}/action", user="demo", headers=LATEST,
                json={"os-set_bootable": {"bootable": True}}), 200)
    r = boot(api, imageRef="", block_device_mapping=[
        {"volume_id": blank, "device_name": "vda", "delete_on_termination": "false"}])
    assert r.status_code == 202, r.text
    srv = wait_status(api, r.json()["server"]["id"])
    assert srv["status"] == "ACTIVE" and srv["image"] == ""
    assert srv["os-extended-volumes:volumes_attached"] == [
        {"id": blank, "delete_on_termination": False}]
    # a volume-backed server keeps its volume through a cold migration
    assert api.post(f"{S}/{srv['id']}/action", user="admin", headers=mv(MAX),
                    json={"migrate": None}).status_code == 202
    assert show(api, srv["id"])["os-extended-volumes:volumes_attached"][0]["id"] == blank
    assert vstatus(api, blank) == "in-use"


def test_boot_from_snapshot(api):
    vid = make_volume(api)["id"]
    snap = ok(api.post(f"{V3}/snapshots", user="demo", headers=LATEST,
                       json={"snapshot": {"volume_id": vid}}), 202)["snapshot"]["id"]
    wait(api, "snapshots", snap, user="demo")
    r = boot(api, block_device_mapping_v2=[
        {"uuid": CIRROS, "source_type": "image", "destination_type": "local",
         "boot_index": 0},
        {"uuid": snap, "source_type": "snapshot", "destination_type": "volume",
         "boot_index": 1, "delete_on_termination": True}])
    assert r.status_code == 202, r.text
    srv = wait_status(api, r.json()["server"]["id"])
    assert srv["status"] == "ACTIVE", srv.get("fault")
    assert srv["image"]["id"] == CIRROS
    made = srv["os-extended-volumes:volumes_attached"][0]["id"]
    assert ok(api.get(f"{V3}/volumes/{made}", user="demo", headers=LATEST))["volume"][
        "snapshot_id"] == snap


def test_build_fails_when_a_volume_cannot_be_made(api):
    missing = "5b1f3c9e-0000-4000-8000-000000000000"
    r = boot(api, imageRef="", block_device_mapping_v2=[
        {"uuid": missing, "source_type": "snapshot", "destination_type": "volume",
         "boot_index": 0}])
    assert r.status_code == 202, r.text
    srv = wait_status(api, r.json()["server"]["id"])
    assert srv["status"] == "ERROR"
    assert srv["fault"]["message"].startswith(
        f"Build of instance {srv['id']} aborted: ")


@pytest.mark.parametrize(("bdms", "message"), [
    ([{"source_type": "blank", "destination_type": "volume", "boot_index": 0}],
     "Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size"),
    ([{"source_type": "image", "destination_type": "volume", "boot_index": 0,
       "uuid": CIRROS}],
     "Images with destination_type 'volume' need to have a non-zero size specified"),
    ([{"source_type": "volume", "destination_type": "volume", "boot_index": 0}],
     "Block Device Mapping is Invalid: Missing device UUID."),
    ([{"source_type": "blank", "uuid": CIRROS, "destination_type": "volume"}],
     "Block Device Mapping is Invalid: Invalid device UUID."),
    ([{"source_type": "blank", "destination_type": "volume", "volume_size": 1,
       "boot_index": 1}],
     "Block Device Mapping is Invalid: Boot sequence for the instance and image/block "
     "device mapping combination is not valid."),
    ([{"source_type": "image", "destination_type": "local", "uuid": CIRROS,
       "boot_index": 1}],
     "Block Device Mapping is Invalid: Mapping image to local is not supported."),
    ([{"source_type": "volume", "destination_type": "volume", "boot_index": 0,
       "uuid": "5b1f3c9e-0000-4000-8000-000000000001"}],
     "Block Device Mapping is Invalid: failed to get volume "
     "5b1f3c9e-0000-4000-8000-000000000001."),
    ([{"source_type": "blank", "destination_type": "local", "volume_size": 1,
       "guest_format": "swap", "boot_index": -1},
      {"source_type": "image", "destination_type": "volume", "uuid": CIRROS,
       "volume_size": 1, "boot_index": 0}],
     "Swap drive requested is larger than instance type allows."),
])
def test_bdm_validation(api, bdms, message):
    r = boot(api, imageRef="", block_device_mapping_v2=bdms)
    assert r.status_code == 400, r.text
    assert r.json()["badRequest"]["message"] == message


def test_bdm_syntaxes_and_multiple_instances(api):
    vid = make_volume(api)["id"]
    r = boot(api, block_device_mapping=[{"volume_id": vid}], block_device_mapping_v2=[
        {"uuid": vid, "source_type": "volume", "destination_type": "volume"}])
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        "Using different block_device_mapping syntaxes is not allowed in the same request.")
    r = boot(api, imageRef="", max_count=2, block_device_mapping_v2=[
        {"uuid": vid, "source_type": "volume", "destination_type": "volume",
         "boot_index": 0}])
    assert r.status_code == 400 and r.json()["badRequest"]["message"] == (
        "Cannot attach one or more volumes to multiple instances")
