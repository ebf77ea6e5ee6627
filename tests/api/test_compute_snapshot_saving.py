"""Issue 23: a snapshot is seen saving. With a minimum action duration, createImage and
createBackup leave the image `saving` (Nova's proxy: SAVING) while the server shows task
state `image_uploading`; a second snapshot meanwhile is Nova's 409; the image becomes
active on its own; an image deleted while it saves stays deleted; a server deleted while
its snapshot saves takes the image with it. The test waits on conditions, never on time."""

from __future__ import annotations

import shutil
import time

import pytest

from tests.api.test_compute import boot, mv, wait_status
from tests.conftest import make_api

SECONDS = 3.0  # long enough that the looks right after the 202 fall inside it


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("snapshot-saving")
    yield from make_api(data_dir, compute={"action_min_duration": SECONDS})
    shutil.rmtree(data_dir, ignore_errors=True)


def _until(check, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)


def _snap(api, sid, name="s"):
    return api.post(f"/compute/v2.1/servers/{sid}/action", user="demo", headers=mv("2.45"),
                    json={"createImage": {"name": name}})


def _server(api, sid):
    return api.get(f"/compute/v2.1/servers/{sid}", user="demo").json()["server"]


def _glance_status(api, image_id):
    r = api.get(f"/image/v2/images/{image_id}", user="demo")
    return r.json()["status"] if r.status_code == 200 else r.status_code


def test_snapshot_saving_then_active_and_a_second_one_refused(slow):
    sid = wait_status(slow, boot(slow, networks="none").json()["server"]["id"])["id"]
    r = _snap(slow, sid, "first-ü")
    assert r.status_code == 202, r.text
    image_id = r.json()["image_id"]
    server = _server(slow, sid)
    assert server["status"] == "ACTIVE" and server["OS-EXT-STS:task_state"] == "image_uploading"
    assert _glance_status(slow, image_id) == "saving"
    proxy = slow.get(f"/compute/v2.1/images/{image_id}", user="demo", headers=mv("2.35"))
    assert proxy.json()["image"]["status"] == "SAVING"
    second = _snap(slow, sid, "second")
    assert second.status_code == 409
    assert second.json()["conflictingRequest"]["message"] == (
        f"Cannot 'createImage' instance {sid} while it is in task_state image_uploading")
    _until(lambda: _server(slow, sid)["OS-EXT-STS:task_state"] is None)
    assert _glance_status(slow, image_id) == "active"
    # an image deleted while it saves stays deleted
    image_id = _snap(slow, sid, "deleted-while-saving").json()["image_id"]
    assert slow.delete(f"/image/v2/images/{image_id}", user="demo").status_code == 204
    _until(lambda: _server(slow, sid)["OS-EXT-STS:task_state"] is None)
    assert _glance_status(slow, image_id) == 404
    # a backup saves the same way
    r = slow.post(f"/compute/v2.1/servers/{sid}/action", user="demo", headers=mv("2.45"),
                  json={"createBackup": {"name": "bk", "backup_type": "daily", "rotation": 1}})
    assert r.status_code == 202 and _glance_status(slow, r.json()["image_id"]) == "saving"
    _until(lambda: _glance_status(slow, r.json()["image_id"]) == "active")
    # a server deleted while its snapshot saves takes the image with it
    image_id = _snap(slow, sid, "orphan").json()["image_id"]
    assert slow.delete(f"/compute/v2.1/servers/{sid}", user="demo").status_code == 204
    _until(lambda: _glance_status(slow, image_id) == 404)
