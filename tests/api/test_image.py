"""Glance v2 (minimal) over the in-process app."""

from __future__ import annotations

PATCH = {"content-type": "application/openstack-images-v2.1-json-patch"}


def test_versions_and_cirros(api):
    r = api.get("/image/", user=None)
    assert r.status_code == 300
    assert r.json()["versions"][0]["status"] == "CURRENT"
    assert r.json()["versions"][0]["links"][0]["href"].endswith("/image/v2/")
    assert api.get("/image/versions", user=None).status_code == 200
    r = api.get("/image/v2/images?name=cirros", user="demo")
    images = r.json()["images"]
    assert [i["name"] for i in images] == ["cirros"]
    cirros = images[0]
    assert cirros["status"] == "active" and cirros["visibility"] == "public"
    assert (cirros["disk_format"], cirros["container_format"]) == ("qcow2", "bare")
    assert cirros["min_disk"] == 0 and cirros["min_ram"] == 0 and cirros["size"] > 0
    assert r.json()["first"] == "/v2/images" and r.json()["schema"] == "/v2/schemas/images"
    assert api.get(f"/image/v2/images/{cirros['id']}", user="demo").json()["id"] == cirros["id"]
    assert api.get("/image/v2/images/cirros", user="demo").status_code == 404
    by_ids = api.get(f"/image/v2/images?id=in:{cirros['id']},nope", user="demo").json()
    assert [i["id"] for i in by_ids["images"]] == [cirros["id"]]
    assert api.get("/image/v2/images", user=None).status_code == 401


def test_create_patch_upload_delete(api):
    r = api.post("/image/v2/images", user="demo", json={
        "name": "mine", "disk_format": "raw", "container_format": "bare", "os_distro": "x"})
    assert r.status_code == 201, r.text
    image = r.json()
    assert image["status"] == "queued" and image["visibility"] == "shared"
    assert image["os_distro"] == "x"
    url = f"/image/v2/images/{image['id']}"
    r = api.patch(url, user="demo", headers=PATCH, json=[
        {"op": "replace", "path": "/name", "value": "renamed"},
        {"op": "add", "path": "/hw_disk_bus", "value": "scsi"},
        {"op": "remove", "path": "/os_distro"}])
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "renamed" and r.json()["hw_disk_bus"] == "scsi"
    assert "os_distro" not in r.json()
    assert api.patch(url, user="demo", json=[]).status_code == 415
    r = api.put(f"{url}/file", user="demo", content=b"data" * 100,
                headers={"content-type": "application/octet-stream"})
    assert r.status_code == 204
    image = api.get(url, user="demo").json()
    assert image["status"] == "active" and image["size"] == 400 and image["checksum"]
    assert api.get(f"{url}/file", user="demo").content == b"data" * 100
    # Private to its project: the admin project's member doesn't list it unless admin.
    assert api.post("/image/v2/images", user="demo", json={"visibility": "public"}
                    ).status_code == 403
    assert api.delete(url, user="demo").status_code == 204
    assert api.get(url, user="demo").status_code == 404


def test_list_paging(api):
    for n in range(3):
        api.post("/image/v2/images", user="demo", json={"name": f"page-{n}"})
    r = api.get("/image/v2/images?limit=2", user="demo").json()
    assert len(r["images"]) == 2 and "marker=" in r["next"]
    marker = r["images"][-1]["id"]
    rest = api.get(f"/image/v2/images?limit=50&marker={marker}", user="demo").json()
    seen = {i["id"] for i in r["images"]} | {i["id"] for i in rest["images"]}
    assert len(seen) == len(r["images"]) + len(rest["images"])
    assert api.get("/image/v2/images?marker=nope", user="demo").status_code == 400
