"""kill -9 of the cloud in the middle of a volume's copy from an image: after a restart
the copy is taken over (the dead process's lease runs out), the volume ends `available`
with the image's bytes, and no partial file is left. On SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import hashlib
import os
import time

LEASE = {"STACKLING_BLOCK_STORAGE__LEASE_SECONDS": "2"}
MB = 1024 * 1024


def test_kill_9_mid_copy_then_restart(cloud_factory, backend):
    cloud = cloud_factory(backend, extra_env=LEASE)
    client = cloud.http(cloud.token())
    image = client.post("/image/v2/images", json={
        "name": "big", "disk_format": "raw", "container_format": "bare"}).json()
    block = os.urandom(MB)
    digest = hashlib.sha256()
    for _ in range(256):
        digest.update(block)

    def chunks():
        for _ in range(256):
            yield block

    r = client.put(f"/image/v2/images/{image['id']}/file", content=chunks(),
                   headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    r = client.post("/volume/v3/volumes", json={"volume": {"size": 1, "imageRef": image["id"]}})
    assert r.status_code == 202, r.text
    volume_id = r.json()["volume"]["id"]
    volumes = cloud.data_dir / "volumes"
    part = volumes / f"{volume_id}.part"
    deadline = time.monotonic() + 60
    while not part.exists() and not (volumes / volume_id).exists():
        assert time.monotonic() < deadline, "the copy never started"
        time.sleep(0.001)
    cloud.stop(kill=True)  # kill -9, the copy half done (or just done, unrecorded)
    cloud.start()
    client = cloud.http(cloud.token())
    deadline = time.monotonic() + 120
    while True:
        status = client.get(f"/volume/v3/volumes/{volume_id}").json()["volume"]["status"]
        if status != "creating":
            break
        assert time.monotonic() < deadline, "the copy was never taken over"
        time.sleep(0.1)
    assert status == "available"
    assert not part.exists()
    copied = hashlib.sha256()
    with open(volumes / volume_id, "rb") as fh:
        remaining = 256 * MB
        while remaining:
            data = fh.read(min(MB, remaining))
            copied.update(data)
            remaining -= len(data)
    assert copied.hexdigest() == digest.hexdigest()
    assert (volumes / volume_id).stat().st_size == 1024 ** 3
