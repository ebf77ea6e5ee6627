"""Glance multi-store through the real clients, on a cloud with two file stores
(`STACKLING_IMAGE__STORES=fast,cheap`): openstacksdk lists the stores, uploads into one,
copies into the other (copy-image) and deletes a store's copy; the `openstack` CLI runs
`image import --method copy-image --store ...`; `POST /v2/tasks` through openstacksdk.
The writes run on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import http.server
import threading

import pytest

STORES = {"STACKLING_IMAGE__STORES": "fast,cheap"}
DATA = b"copied between stores " * 500


def _wait_stores(conn, image_id: str, expected: str):
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        image = conn.image.get_image(image_id)
        if (image.properties or {}).get("stores") == expected:  # not an sdk attribute
            return image
        time.sleep(0.2)
    raise AssertionError(f"image {image_id} never reached stores {expected}")


def test_sdk_upload_copy_and_delete_from_store(cloud_factory, backend):
    cloud = cloud_factory(backend, extra_env=STORES)
    admin = cloud.sdk()
    stores = {s.id: s for s in admin.image.stores()}
    assert set(stores) == {"fast", "cheap"} and stores["fast"].is_default
    info = admin.image.get_import_info()
    assert "copy-image" in info.import_methods["value"]
    image = admin.image.upload_image(container_format="bare", disk_format="raw",
                                     name="ms-data", data=DATA)
    image = admin.image.wait_for_status(image, status="active", wait=60)
    assert image.properties["stores"] == "fast"
    admin.image.import_image(image, method="copy-image", stores=["cheap"])
    image = _wait_stores(admin, image.id, "fast,cheap")
    assert image.properties.get("os_glance_failed_import", "") == ""
    admin.image.delete_image(image.id, store="cheap")  # that store's copy only
    assert admin.image.get_image(image.id).properties["stores"] == "fast"
    # openstacksdk's store= sends the header and the body: accepted when they agree
    admin.image.import_image(image, method="copy-image", store="cheap")
    _wait_stores(admin, image.id, "fast,cheap")
    assert admin.image.download_image(image.id).content == DATA
    admin.image.delete_image(image)


@pytest.mark.cli
@pytest.mark.parametrize("backend", ["sqlite"])
def test_cli_image_import_copy_image(cloud_factory, backend):
    cloud = cloud_factory(backend, extra_env=STORES)
    stores = cloud.cli("image", "stores", "list", "-f", "json")
    assert {s["ID"] for s in stores} == {"fast", "cheap"}
    image = cloud.cli("image", "create", "--disk-format", "raw", "--container-format", "bare",
                      "--file", "/etc/hostname", "cli-ms", "-f", "json")

    def stores_of(image_id: str) -> str:  # the CLI shows it among the properties
        return cloud.cli("image", "show", image_id, "-f", "json")["properties"]["stores"]

    assert stores_of(image["id"]) == "fast"
    cloud.cli("image", "import", image["id"], "--method", "copy-image", "--store", "cheap",
              parse=False)
    assert stores_of(image["id"]) == "fast,cheap"
    # a second copy is Glance's 400 (the CLI, through openstacksdk, does not report it)
    conn = cloud.sdk()
    answer = conn.image.import_image(conn.image.get_image(image["id"]), method="copy-image",
                                     stores=["cheap"])
    assert answer.status_code == 400 and "already present" in answer.text
    cloud.cli("image", "delete", "--store", "cheap", image["id"], parse=False)
    assert stores_of(image["id"]) == "fast"
    cloud.cli("image", "delete", image["id"], parse=False)


@pytest.fixture
def web_server():
    payload = b"imported by a task " * 300

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/disk.img", payload
    server.shutdown()
    server.server_close()


def test_sdk_create_import_task(cloud, web_server):
    uri, payload = web_server
    admin = cloud.sdk()
    task = admin.image.create_task(type="import", input={
        "import_from": uri, "import_from_format": "raw",
        "image_properties": {"name": "task-made", "disk_format": "raw",
                             "container_format": "bare"}})
    task = admin.image.wait_for_task(task, status="success", wait=60)
    image = admin.image.get_image(task.result["image_id"])
    assert image.status == "active" and image.size == len(payload)
    assert admin.image.download_image(image.id).content == payload
    failed = admin.image.create_task(type="import", input={
        "import_from": "http://127.0.0.1:9/none",
        "image_properties": {"name": "never", "disk_format": "raw", "container_format": "bare"}})
    assert admin.image.get_task(failed.id).status == "failure"
    admin.image.delete_image(image)
