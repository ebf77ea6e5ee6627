"""createImage of a volume-backed server, in process on SQLite, PostgreSQL and MariaDB:
as Nova's snapshot_volume_backed, a Cinder snapshot of each volume (forced: attached) and
an image with no data whose `block_device_mapping` points at them; a server booted from
that image gets new volumes made from the snapshots (the image's mappings merged into
the request's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_block_storage import LATEST, V3, ok, project_id, wait
from tests.api.test_compute import CIRROS, MAX, mv, wait_status
from tests.conftest import BACKENDS, backend_api

S = "/compute/v2.1/servers"


@pytest.fixture(scope="module", params=BACKENDS)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Any]:
    yield from backend_api(request.param, tmp_path_factory, "volume-snapshot-image")


@pytest.fixture(autouse=True)
def unlimited(api: Any) -> None:
    pid = project_id(api, "demo")
    ok(api.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {
        k: -1 for k in ("volumes", "gigabytes", "snapshots")}}))
    api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv(MAX),
            json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})


def boot(api: Any, **server: Any) -> dict[str, Any]:
    body = {"name": "vm", "flavorRef": "1", "networks": "none", **server}
    r = api.post(S, user="demo", headers=mv(MAX), json={"server": body})
    assert r.status_code == 202, r.text
    srv = wait_status(api, r.json()["server"]["id"])
    assert srv["status"] == "ACTIVE", srv.get("fault")
    return srv


def volume(api: Any, vid: str) -> dict[str, Any]:
    return ok(api.get(f"{V3}/volumes/{vid}", user="demo", headers=LATEST))["volume"]


def test_create_image_of_a_volume_backed_server_and_boot_it(api):
    src = boot(api, imageRef="", block_device_mapping_v2=[
        {"uuid": CIRROS, "source_type": "image", "destination_type": "volume",
         "boot_index": 0, "volume_size": 1, "delete_on_termination": True},
        {"source_type": "blank", "destination_type": "volume", "volume_size": 1,
         "boot_index": -1}])
    root_id, data_id = [a["id"] for a in src["os-extended-volumes:volumes_attached"]]
    r = api.post(f"{S}/{src['id']}/action", user="demo", headers=mv(MAX),
                 json={"createImage": {"name": "vb-snap", "metadata": {"purpose": "test"}}})
    assert r.status_code == 202, r.text
    image_id = r.json()["image_id"]
    image = ok(api.get(f"/image/v2/images/{image_id}", user="demo"))
    assert image["status"] == "active" and image["size"] == 0
    assert image["visibility"] == "private"
    assert image["disk_format"] == "qcow2" and image["container_format"] == "bare"
    assert image["bdm_v2"] == "True" and image["root_device_name"] == "/dev/vda"
    assert image["purpose"] == "test"
    assert "image_name" not in image  # the volume's image attributes are not properties
    mapping = json.loads(image["block_device_mapping"])
    assert [(m["source_type"], m["destination_type"], m["boot_index"], m["device_name"],
             m["volume_size"], m["delete_on_termination"]) for m in mapping] == [
        ("snapshot", "volume", 0, "/dev/vda", 1, True),
        ("snapshot", "volume", -1, "/dev/vdb", 1, False)]
    assert all(m["volume_id"] is None and m["image_id"] is None for m in mapping)
    # a Cinder snapshot of each volume, of the attached volumes (forced)
    snaps = [wait(api, "snapshots", m["snapshot_id"], user="demo") for m in mapping]
    assert [s["volume_id"] for s in snaps] == [root_id, data_id]
    assert [s["name"] for s in snaps] == ["snapshot for vb-snap"] * 2
    assert volume(api, root_id)["status"] == "in-use"
    actions = ok(api.get(f"{S}/{src['id']}/os-instance-actions", user="demo",
                         headers=mv(MAX)))["instanceActions"]
    assert actions[0]["action"] == "createImage"
    # booting the image makes new volumes from the snapshots
    new = boot(api, imageRef=image_id)
    attached = new["os-extended-volumes:volumes_attached"]
    assert len(attached) == 2 and not {a["id"] for a in attached} & {root_id, data_id}
    made = [volume(api, a["id"]) for a in attached]
    assert [v["snapshot_id"] for v in made] == [s["id"] for s in snaps]
    assert [v["status"] for v in made] == ["in-use", "in-use"]
    assert [a["delete_on_termination"] for a in attached] == [True, False]
    devices = ok(api.get(f"{S}/{new['id']}/os-volume_attachments", user="demo",
                         headers=mv(MAX)))["volumeAttachments"]
    assert [d["device"] for d in devices] == ["/dev/vda", "/dev/vdb"]
    # a request's mapping on the image's device name overrides the image's
    extra = boot(api, imageRef=image_id, block_device_mapping_v2=[
        {"source_type": "blank", "destination_type": "volume", "volume_size": 2,
         "device_name": "/dev/vdb", "boot_index": -1}])
    sizes = [volume(api, a["id"])["size"]
             for a in extra["os-extended-volumes:volumes_attached"]]
    assert sizes == [1, 2]


def test_create_image_of_an_image_backed_server_is_unchanged(api):
    srv = boot(api, imageRef=CIRROS)
    r = api.post(f"{S}/{srv['id']}/action", user="demo", headers=mv(MAX),
                 json={"createImage": {"name": "ib-snap"}})
    assert r.status_code == 202, r.text
    image = ok(api.get(f"/image/v2/images/{r.json()['image_id']}", user="demo"))
    assert image["image_type"] == "snapshot" and "block_device_mapping" not in image
