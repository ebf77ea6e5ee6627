"""Streamed image downloads through the real clients (issue 19, item 2): openstacksdk
streams the data and checks it against `Content-MD5`, and `openstack image save` writes
the same bytes; a ranged GET answers as Glance does."""

from __future__ import annotations

import hashlib
import os
import uuid

import httpx

from tests.conftest import sqlite_only


@sqlite_only
def test_sdk_and_cli_download_a_streamed_image(cloud, tmp_path):
    conn = cloud.sdk()
    data = os.urandom(3 * (1 << 20) + 12345)  # a few chunks and a partial one
    image = conn.image.create_image(name=f"dl-{uuid.uuid4().hex[:6]}", data=data,
                                    disk_format="raw", container_format="bare",
                                    allow_duplicates=True)
    # The sdk compares the streamed data with the Content-MD5 header (and raises if not).
    streamed = conn.image.download_image(image, stream=True)
    assert streamed.headers["Content-MD5"] == hashlib.md5(data, usedforsecurity=False).hexdigest()
    assert b"".join(streamed.iter_content(65536)) == data
    out = tmp_path / "saved.raw"
    cloud.cli("image", "save", "--file", str(out), image.id)
    assert out.read_bytes() == data
    r = httpx.get(f"{cloud.url}/image/v2/images/{image.id}/file", timeout=60,
                  headers={"X-Auth-Token": cloud.token(), "Range": "bytes=-10"})
    assert r.status_code == 206
    assert r.content == data[-10:]
    assert r.headers["Content-Range"] == f"bytes {len(data) - 10}-{len(data) - 1}/{len(data)}"
