"""Glance's interoperable import (glance-direct) over the in-process app: discovery, the
stage then import flow and its status transitions, and the errors of each step."""

from __future__ import annotations

import hashlib

V2 = "/image/v2"


def _new(api, **extra) -> dict:
    r = api.post(f"{V2}/images", user="demo", json={"name": "imp", "disk_format": "raw",
                                                   "container_format": "bare", **extra})
    assert r.status_code == 201, r.text
    assert r.headers["OpenStack-image-import-methods"] == "glance-direct,web-download"
    return r.json()


def test_discovery(api):
    info = api.get(f"{V2}/info/import", user="demo").json()
    assert info["import-methods"]["value"] == ["glance-direct", "web-download"]
    assert info["import-methods"]["type"] == "array"
    stores = api.get(f"{V2}/info/stores", user="demo").json()["stores"]
    assert stores == [{"id": "file", "description": "Local filesystem store", "default": True}]
    assert api.get(f"{V2}/info/import", user=None).status_code == 401


def test_stage_then_import(api):
    image = _new(api)
    data = b"\x00\x01" * 300_000
    r = api.put(f"{V2}/images/{image['id']}/stage", user="demo", content=data,
                headers={"content-type": "application/octet-stream"})
    assert r.status_code == 204, r.text
    staged = api.get(f"{V2}/images/{image['id']}", user="demo").json()
    assert staged["status"] == "uploading"
    # staging twice is a conflict
    r = api.put(f"{V2}/images/{image['id']}/stage", user="demo", content=b"x",
                headers={"content-type": "application/octet-stream"})
    assert r.status_code == 409
    r = api.post(f"{V2}/images/{image['id']}/import", user="demo",
                 json={"method": {"name": "glance-direct"}})
    assert r.status_code == 202, r.text
    done = api.get(f"{V2}/images/{image['id']}", user="demo").json()
    assert done["status"] == "active" and done["size"] == len(data)
    assert done["checksum"] == hashlib.md5(data).hexdigest()
    assert done["os_hash_value"] == hashlib.sha512(data).hexdigest()
    got = api.get(f"{V2}/images/{image['id']}/file", user="demo")
    assert got.status_code == 200 and got.content == data
    # importing again: nothing staged
    r = api.post(f"{V2}/images/{image['id']}/import", user="demo",
                 json={"method": {"name": "glance-direct"}})
    assert r.status_code == 409


def test_import_errors(api):
    image = _new(api)
    url = f"{V2}/images/{image['id']}/import"
    r = api.post(url, user="demo", json={"method": {"name": "glance-direct"}})
    assert r.status_code == 409  # not staged
    assert api.post(url, user="demo", json={"method": {"name": "bogus"}}).status_code == 400
    assert api.post(url, user="demo", json={"method": {"name": "web-download",
                                                       "uri": "http://x/y"}}).status_code == 400
    assert api.post(url, user="demo", json={}).status_code == 400
    assert api.get(f"{V2}/images/{image['id']}", user="demo").json()["status"] == "queued"
    # another project cannot stage into it
    other = api.post(f"{V2}/images", user="admin", json={"name": "admins"}).json()
    r = api.put(f"{V2}/images/{other['id']}/stage", user="demo", content=b"x",
                headers={"content-type": "application/octet-stream"})
    assert r.status_code == 404
    # formats are needed before the import
    bare = api.post(f"{V2}/images", user="demo", json={"name": "noformat"}).json()
    api.put(f"{V2}/images/{bare['id']}/stage", user="demo", content=b"abc",
            headers={"content-type": "application/octet-stream"})
    r = api.post(f"{V2}/images/{bare['id']}/import", user="demo",
                 json={"method": {"name": "glance-direct"}})
    assert r.status_code == 400
    assert api.get(f"{V2}/images/{bare['id']}", user="demo").json()["status"] == "uploading"


def test_deleting_a_staged_image_discards_its_data(api):
    from pathlib import Path

    image = _new(api)
    api.put(f"{V2}/images/{image['id']}/stage", user="demo", content=b"abc",
            headers={"content-type": "application/octet-stream"})
    staged = Path(api.runtime.settings.data_dir) / "images" / "staging" / image["id"]
    assert staged.exists()
    assert api.delete(f"{V2}/images/{image['id']}", user="demo").status_code == 204
    assert not staged.exists()
