"""The hardened image path through the real clients: data past the JSON body limit is
streamed (openstacksdk on every backend, the CLI on SQLite), a deleted image's id is
never reused, and a client's X-Forwarded-Host does not reach the token's catalog."""

from __future__ import annotations

import os
import uuid
from typing import Any

import httpx

from tests.conftest import ADMIN_PASSWORD, sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _download(conn: Any, image: Any) -> bytes:
    result = conn.image.download_image(image)
    return getattr(result, "content", result)


def test_sdk_image_data_is_streamed_and_a_deleted_id_stays_reserved(cloud):
    conn = cloud.new_project_member()["sdk"]
    data = os.urandom(300_000)  # well past the 112 KiB JSON body limit
    image = conn.image.create_image(name=_name("img"), data=data, disk_format="raw",
                                    container_format="bare", allow_duplicates=True)
    shown = conn.image.get_image(image.id)
    assert shown.status == "active" and shown.size == len(data)
    assert _download(conn, shown) == data
    conn.image.delete_image(shown)
    r = conn.image.post("/images", json={"id": image.id, "name": "again"}, raise_exc=False)
    assert r.status_code == 409, r.text


@sqlite_only
def test_cli_image_create_from_a_file(cloud, tmp_path):
    path = tmp_path / "disk.raw"
    path.write_bytes(os.urandom(200_000))
    name = _name("cli-img")
    created = cloud.cli("image", "create", "--file", str(path), "--disk-format", "raw",
                        "--container-format", "bare", name, "-f", "json", cloud="stackling")
    assert created["status"] == "active" and created["size"] == 200_000


def test_forwarded_host_from_a_client_does_not_reach_the_catalog(cloud):
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": ADMIN_PASSWORD}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    r = httpx.post(f"{cloud.url}/identity/v3/auth/tokens", json=body, timeout=30, headers={
        "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"})
    assert r.status_code == 201
    urls = [e["url"] for s in r.json()["token"]["catalog"] for e in s["endpoints"]]
    assert urls and all(u.startswith(cloud.url) for u in urls), urls
