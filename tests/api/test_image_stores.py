"""Glance multi-store over the in-process API (settings `image.stores: [fast, cheap]`):
store discovery, uploads and imports into named stores, the copy-image import method with
its progress properties and tasks, deleting data from one store, and `POST /v2/tasks`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.api.test_image_breadth import web_server  # noqa: F401 - a fixture
from tests.conftest import make_api

V2 = "/image/v2"
DATA = b"stackling multi-store " * 100


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("stores")
    yield from make_api(data_dir, image={"stores": ["fast", "cheap"]})
    shutil.rmtree(data_dir, ignore_errors=True)


def _images_dir(api) -> Path:
    return Path(api.runtime.settings.data_dir) / "images"


def _new(api, user="demo", **extra) -> str:
    r = api.post(f"{V2}/images", user=user, json={
        "name": "ms", "disk_format": "raw", "container_format": "bare", **extra})
    assert r.status_code == 201, r.text
    assert r.headers["OpenStack-image-store-ids"] == "fast,cheap"
    assert "copy-image" in r.headers["OpenStack-image-import-methods"]
    return r.json()["id"]


def _upload(api, image, store=None, user="demo"):
    headers = {"Content-Type": "application/octet-stream"}
    if store:
        headers["X-Image-Meta-Store"] = store
    return api.put(f"{V2}/images/{image}/file", user=user, content=DATA, headers=headers)


def _copy(api, image, user="admin", **body):
    return api.post(f"{V2}/images/{image}/import", user=user,
                    json={"method": {"name": "copy-image"}, **body})


def _show(api, image, user="demo") -> dict:
    return api.get(f"{V2}/images/{image}", user=user).json()


def test_store_discovery(api):
    stores = api.get(f"{V2}/info/stores", user="demo").json()["stores"]
    assert [s["id"] for s in stores] == ["fast", "cheap"]
    assert stores[0]["default"] == "true" and "default" not in stores[1]
    methods = api.get(f"{V2}/info/import", user="demo").json()["import-methods"]["value"]
    assert methods == ["glance-direct", "web-download", "copy-image"]
    detail = api.get(f"{V2}/info/stores/detail", user="admin")
    assert detail.status_code == 200
    assert {s["id"]: s["type"] for s in detail.json()["stores"]} == {"fast": "file",
                                                                       "cheap": "file"}
    assert api.get(f"{V2}/info/stores/detail", user="demo").status_code == 403


def test_upload_into_a_named_store_and_copy_image(api):
    image = _new(api)
    assert _upload(api, image, store="nowhere").status_code == 400
    assert _show(api, image)["status"] == "queued"
    assert _upload(api, image, store="cheap").status_code == 204
    shown = _show(api, image)
    assert shown["status"] == "active" and shown["stores"] == "cheap"
    assert (_images_dir(api) / "stores" / "cheap" / image).read_bytes() == DATA
    assert not (_images_dir(api) / image).exists()
    assert api.get(f"{V2}/images/{image}/file", user="demo").content == DATA
    # copy-image is an admin's (Glance's copy_image policy)
    assert _copy(api, image, user="demo", stores=["fast"]).status_code == 403
    assert _copy(api, image, stores=["elsewhere"]).status_code == 409
    assert _copy(api, image, stores=["cheap"]).status_code == 400  # already there
    r = _copy(api, image, stores=["fast"])
    assert r.status_code == 202, r.text
    shown = _show(api, image)
    assert shown["stores"] == "cheap,fast"
    assert shown["os_glance_importing_to_stores"] == ""
    assert shown["os_glance_failed_import"] == ""
    assert (_images_dir(api) / image).read_bytes() == DATA
    # every store holds it now: all_stores has nothing left to do
    assert _copy(api, image, all_stores=True).status_code == 202
    assert _copy(api, image, all_stores=True, stores=["fast"]).status_code == 400
    tasks = api.get(f"{V2}/tasks?type=api_image_import", user="admin").json()["tasks"]
    mine = [api.get(f"{V2}/tasks/{t['id']}", user="admin").json() for t in tasks
            if t["image_id"] == image]
    assert [t["input"]["backend"] for t in mine] == [["fast"]]
    assert mine[0]["status"] == "success" and mine[0]["result"] == {"image_id": image}
    # the data leaves one store; the last one cannot be emptied
    assert api.delete(f"{V2}/stores/cheap/{image}", user="demo").status_code == 403
    assert api.delete(f"{V2}/stores/elsewhere/{image}", user="admin").status_code == 409
    assert api.delete(f"{V2}/stores/cheap/{image}", user="admin").status_code == 204
    assert _show(api, image)["stores"] == "fast"
    assert not (_images_dir(api) / "stores" / "cheap" / image).exists()
    # one store left: Glance refuses (403) before looking for the data elsewhere
    assert api.delete(f"{V2}/stores/cheap/{image}", user="admin").status_code == 403
    assert api.delete(f"{V2}/stores/fast/{image}", user="admin").status_code == 403
    assert api.get(f"{V2}/images/{image}/file", user="demo").content == DATA
    assert _copy(api, image, stores=["cheap"]).status_code == 202
    assert api.delete(f"{V2}/images/{image}", user="demo").status_code == 204
    assert not (_images_dir(api) / image).exists()
    assert not (_images_dir(api) / "stores" / "cheap" / image).exists()


def test_copy_needs_an_active_image(api):
    image = _new(api)
    r = _copy(api, image, stores=["cheap"])
    assert r.status_code == 409 and "Only images with status active" in r.text
    assert api.delete(f"{V2}/images/{image}", user="demo").status_code == 204


def test_glance_direct_into_several_stores(api):
    image = _new(api)
    assert api.put(f"{V2}/images/{image}/stage", user="demo", content=DATA,
                   headers={"Content-Type": "application/octet-stream"}).status_code == 204
    body = {"method": {"name": "glance-direct"}, "stores": ["cheap", "fast"]}
    assert api.post(f"{V2}/images/{image}/import", user="demo", json={
        **body, "all_stores": True}).status_code == 400
    r = api.post(f"{V2}/images/{image}/import", user="demo", json=body)
    assert r.status_code == 202, r.text
    shown = _show(api, image)
    assert shown["status"] == "active" and shown["stores"] == "cheap,fast"
    assert shown["size"] == len(DATA)
    for folder in (_images_dir(api), _images_dir(api) / "stores" / "cheap"):
        assert (folder / image).read_bytes() == DATA
    assert api.delete(f"{V2}/images/{image}", user="demo").status_code == 204


def test_a_failed_copy_is_listed_and_undone(api):
    image = _new(api)
    assert _upload(api, image).status_code == 204
    assert _show(api, image)["stores"] == "fast"
    (_images_dir(api) / image).unlink()  # the data is gone from under the store
    r = _copy(api, image, stores=["cheap"])
    assert r.status_code == 202
    shown = _show(api, image)
    assert shown["stores"] == "fast" and shown["os_glance_failed_import"] == "cheap"
    tasks = api.get(f"{V2}/tasks?type=api_image_import&status=failure",
                    user="admin").json()["tasks"]
    assert any(t["image_id"] == image for t in tasks)
    r = _copy(api, image, stores=["cheap"], all_stores_must_succeed=False)
    assert r.status_code == 202
    assert _show(api, image)["os_glance_failed_import"] == "cheap"


def test_post_tasks_import(api, web_server):  # noqa: F811
    uri = f"{web_server[0]}/data"
    body = {"type": "import", "input": {
        "import_from": uri, "import_from_format": "raw",
        "image_properties": {"name": "from-task", "disk_format": "raw",
                             "container_format": "bare"}}}
    assert api.post(f"{V2}/tasks", user="demo", json=body).status_code == 403
    r = api.post(f"{V2}/tasks", user="admin", json=body)
    assert r.status_code == 201, r.text
    task = r.json()
    assert task["type"] == "import" and task["status"] == "success"
    assert r.headers["Location"].endswith(f"/v2/tasks/{task['id']}")
    image = task["result"]["image_id"]
    shown = _show(api, image, user="admin")
    assert shown["status"] == "active" and shown["name"] == "from-task"
    assert shown["stores"] == "fast" and shown["size"] > 0
    assert api.get(f"{V2}/tasks/{task['id']}", user="admin").json()["input"] == body["input"]
    for bad in ({"type": "import"}, {"input": {}}, {"type": "nope", "input": {}},
                {"type": "import", "input": {"import_from": "file:///etc/passwd"}},
                {"type": "import", "input": {"import_from": "ftp://127.0.0.1/x"}},
                {"type": "import", "input": {"import_from": "http://192.0.2.1/x"}}):
        assert api.post(f"{V2}/tasks", user="admin", json=bad).status_code == 400, bad
    refused = api.post(f"{V2}/tasks", user="admin", json={
        "type": "import", "input": {"import_from": f"{web_server[0]}/none",  # a 404
                                    "image_properties": {"name": "never",
                                                         "disk_format": "raw",
                                                         "container_format": "bare"}}})
    assert refused.status_code == 201 and refused.json()["status"] == "failure"
    assert refused.json()["message"].startswith("Error: ")
    assert api.delete(f"{V2}/images/{image}", user="admin").status_code == 204


def test_a_server_snapshot_lands_in_the_default_store(api):
    from tests.api.test_compute import mv, wait_status

    image = _new(api)
    assert _upload(api, image, store="cheap").status_code == 204
    r = api.post("/compute/v2.1/servers", user="demo", headers=mv("2.45"), json={"server": {
        "name": "snapper", "flavorRef": "1", "imageRef": image, "networks": "none"}})
    assert r.status_code == 202, r.text
    sid = wait_status(api, r.json()["server"]["id"])["id"]
    r = api.post(f"/compute/v2.1/servers/{sid}/action", user="demo", headers=mv("2.45"),
                 json={"createImage": {"name": "snap"}})
    assert r.status_code == 202, r.text
    snap = r.json()["image_id"]
    shown = _show(api, snap)
    assert shown["status"] == "active" and shown["stores"] == "fast"
    assert api.get(f"{V2}/images/{snap}/file", user="demo").content == DATA
    assert api.delete(f"/compute/v2.1/servers/{sid}", user="demo").status_code == 204
    for i in (snap, image):
        assert api.delete(f"{V2}/images/{i}", user="demo").status_code == 204


def test_web_download_into_all_stores(api, web_server):  # noqa: F811
    image = _new(api)
    r = api.post(f"{V2}/images/{image}/import", user="demo", json={
        "method": {"name": "web-download", "uri": f"{web_server[0]}/data"},
        "all_stores": True})
    assert r.status_code == 202, r.text
    shown = _show(api, image)
    assert shown["status"] == "active" and shown["stores"] == "fast,cheap"
    assert shown["os_glance_importing_to_stores"] == "" and shown["os_glance_failed_import"] == ""
    for folder in (_images_dir(api), _images_dir(api) / "stores" / "cheap"):
        assert (folder / image).read_bytes() == web_server[1]
    other = _new(api)
    r = api.post(f"{V2}/images/{other}/import", user="demo", json={
        "method": {"name": "web-download", "uri": f"{web_server[0]}/data"},
        "stores": ["nowhere"]})
    assert r.status_code == 409 and "Unknown scheme 'nowhere'" in r.text
    assert _show(api, other)["status"] == "queued"
    for i in (image, other):
        assert api.delete(f"{V2}/images/{i}", user="demo").status_code == 204
