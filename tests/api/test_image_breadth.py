"""Glance breadth (issue 23) over the in-process app: deactivate/reactivate, image members
and the `shared` listing rules, list filters with operators, and the tasks API."""

from __future__ import annotations

import hashlib
import http.server
import threading

import pytest

from tests.api.test_network_l3_topology import new_user

V2 = "/image/v2"
PATCH = {"Content-Type": "application/openstack-images-v2.1-json-patch"}


def _image(api, user="demo", data: bytes | None = b"data", **extra) -> dict:
    r = api.post(f"{V2}/images", user=user, json={"name": "b", "disk_format": "raw",
                                                 "container_format": "bare", **extra})
    assert r.status_code == 201, r.text
    image = r.json()
    if data is not None:
        r = api.put(f"{V2}/images/{image['id']}/file", user=user, content=data,
                    headers={"content-type": "application/octet-stream"})
        assert r.status_code == 204, r.text
    return image


def _as(api, who: dict, method: str, url: str, **kw):
    return api.request(method, url, user=None, token=who["token"], **kw)


def test_deactivate_and_reactivate(api):
    image = _image(api)
    url = f"{V2}/images/{image['id']}"
    assert api.post(f"{url}/actions/deactivate", user="demo").status_code == 204
    assert api.get(url, user="demo").json()["status"] == "deactivated"
    # the data of a deactivated image is the admin's alone
    r = api.get(f"{url}/file", user="demo")
    assert r.status_code == 403 and "deactivated" in r.text
    assert api.get(f"{url}/file", user="admin").content == b"data"
    assert api.post(f"{url}/actions/deactivate", user="demo").status_code == 204  # stays so
    assert api.post(f"{url}/actions/reactivate", user="demo").status_code == 204
    assert api.get(url, user="demo").json()["status"] == "active"
    assert api.get(f"{url}/file", user="demo").content == b"data"
    # a queued image is neither; another project's image is hidden
    queued = _image(api, data=None)
    r = api.post(f"{V2}/images/{queued['id']}/actions/deactivate", user="demo")
    assert r.status_code == 403
    assert api.post(f"{V2}/images/{queued['id']}/actions/reactivate",
                    user="demo").status_code == 403
    other = new_user(api, "member")
    assert _as(api, other, "POST", f"{url}/actions/deactivate").status_code == 404
    assert api.post(f"{V2}/images/nope/actions/deactivate", user="demo").status_code == 404


def test_members_share_accept_and_list(api):
    friend, stranger = new_user(api, "member"), new_user(api, "member")
    private = _image(api, visibility="private")
    r = api.post(f"{V2}/images/{private['id']}/members", user="demo",
                 json={"member": friend["project_id"]})
    assert r.status_code == 403  # only shared images have members
    image = _image(api, name="shared-one", visibility="shared")
    members = f"{V2}/images/{image['id']}/members"
    r = api.post(members, user="demo", json={"member": friend["project_id"]})
    assert r.status_code == 200, r.text
    m = r.json()
    assert (m["member_id"], m["image_id"], m["status"]) == (friend["project_id"], image["id"],
                                                           "pending")
    assert m["schema"] == "/v2/schemas/member"
    assert api.post(members, user="demo", json={"member": friend["project_id"]}).status_code == 409
    assert api.post(members, user="demo", json={}).status_code == 400
    assert api.post(members, user="demo", json={"member": "x" * 256}).status_code == 400
    # the friend sees the image by id while pending, but no list shows it yet
    assert _as(api, friend, "GET", f"{V2}/images/{image['id']}").status_code == 200
    assert _as(api, stranger, "GET", f"{V2}/images/{image['id']}").status_code == 404
    listed = lambda q="": [i["id"] for i in _as(api, friend, "GET",  # noqa: E731
                                                f"{V2}/images{q}").json()["images"]]
    assert image["id"] not in listed()
    assert image["id"] not in listed("?visibility=shared")
    assert image["id"] in listed("?visibility=shared&member_status=pending")
    assert image["id"] in listed("?visibility=shared&member_status=all")
    # only the member answers; the owner may not
    one = f"{members}/{friend['project_id']}"
    assert api.put(one, user="demo", json={"status": "accepted"}).status_code == 403
    assert _as(api, friend, "PUT", one, json={"status": "bogus"}).status_code == 400
    r = _as(api, friend, "PUT", one, json={"status": "accepted"})
    assert r.status_code == 200 and r.json()["status"] == "accepted"
    assert image["id"] in listed() and image["id"] in listed("?visibility=shared")
    assert image["id"] not in listed("?visibility=shared&member_status=pending")
    assert _as(api, friend, "GET", f"{V2}/images/{image['id']}/file").content == b"data"
    # the owner lists every member, a member only itself; a stranger sees nothing
    api.post(members, user="demo", json={"member": stranger["project_id"]})
    owner_view = api.get(members, user="demo").json()
    assert {m["member_id"] for m in owner_view["members"]} == {friend["project_id"],
                                                               stranger["project_id"]}
    assert owner_view["schema"] == "/v2/schemas/members"
    assert [m["member_id"] for m in _as(api, friend, "GET", members).json()["members"]] == [
        friend["project_id"]]
    assert _as(api, friend, "GET", f"{members}/{stranger['project_id']}").status_code == 404
    r = _as(api, stranger, "PUT", f"{members}/{stranger['project_id']}",
            json={"status": "rejected"})
    assert r.status_code == 200
    assert image["id"] not in [i["id"] for i in _as(api, stranger, "GET",
                                                    f"{V2}/images").json()["images"]]
    # a member may not share onwards nor remove anyone; the owner removes
    assert _as(api, friend, "POST", members, json={"member": "x"}).status_code == 403
    assert _as(api, friend, "DELETE", one).status_code == 403
    assert api.delete(one, user="demo").status_code == 204
    assert api.get(one, user="demo").status_code == 404
    assert _as(api, friend, "GET", f"{V2}/images/{image['id']}").status_code == 404


def test_list_filters_with_operators(api):
    small = _image(api, name="flt-small", data=b"x" * 10)
    big = _image(api, name="flt-big", data=b"x" * 1000)
    names = lambda q: {i["name"] for i in api.get(  # noqa: E731
        f"{V2}/images?name=in:flt-small,flt-big&{q}", user="demo").json()["images"]}
    assert names("") == {"flt-small", "flt-big"}
    assert names("size_min=11") == {"flt-big"}
    assert names("size_max=999") == {"flt-small"}
    assert names("size_min=10&size_max=1000") == {"flt-small", "flt-big"}
    both = {"flt-small", "flt-big"}
    assert names(f"created_at=gt:{big['created_at']}") == set()
    assert names(f"created_at=gte:{small['created_at']}") == both
    assert names(f"created_at=lte:{big['created_at']}") == both
    assert names(f"created_at=lt:{small['created_at']}") == set()
    assert names("created_at=lt:2999-01-01T00:00:00Z") == both
    assert names("created_at=gte:2999-01-01T00:00:00%2B02:00") == set()
    if small["created_at"] != big["created_at"]:  # (the wire's resolution is a second)
        assert names(f"created_at=neq:{small['created_at']}") == {"flt-big"}
    assert "flt-small" in names(f"created_at={small['created_at']}")  # no operator: eq
    assert names("updated_at=gte:2000-01-01T00:00:00Z") == {"flt-small", "flt-big"}
    assert names("status=in:active,queued&disk_format=in:raw,qcow2") == {"flt-small", "flt-big"}
    assert names(f"id=in:{small['id']}") == {"flt-small"}
    for bad in ("created_at=foo:2020-01-01T00:00:00Z", "created_at=gte:yesterday",
                "size_min=ten", "size_max=-1", "member_status=maybe"):
        assert api.get(f"{V2}/images?{bad}", user="demo").status_code == 400, bad


def test_imports_leave_tasks(api):
    image = _image(api, data=None)
    r = api.put(f"{V2}/images/{image['id']}/stage", user="demo", content=b"abc",
                headers={"content-type": "application/octet-stream"})
    assert r.status_code == 204
    r = api.post(f"{V2}/images/{image['id']}/import", user="demo",
                 json={"method": {"name": "glance-direct"}})
    assert r.status_code == 202
    listed = api.get(f"{V2}/tasks", user="admin").json()
    assert listed["first"] == "/v2/tasks" and listed["schema"] == "/v2/schemas/tasks"
    stub = next(t for t in listed["tasks"] if t["image_id"] == image["id"])
    assert stub["type"] == "api_image_import" and stub["status"] == "success"
    assert "input" not in stub and "result" not in stub
    task = api.get(f"{V2}/tasks/{stub['id']}", user="admin").json()
    assert task["input"]["image_id"] == image["id"]
    assert task["input"]["import_req"] == {"method": {"name": "glance-direct"}}
    assert task["result"] == {"image_id": image["id"]} and task["self"] == f"/v2/tasks/{task['id']}"
    assert task["expires_at"] > task["created_at"]
    assert api.get(f"{V2}/tasks?status=success&type=api_image_import",
                   user="admin").json()["tasks"]
    assert api.get(f"{V2}/tasks?status=failure", user="admin").json()["tasks"] == []
    assert api.get(f"{V2}/tasks?status=bogus", user="admin").status_code == 400
    assert api.get(f"{V2}/tasks/nope", user="admin").status_code == 404
    # Glance's defaults: the tasks API is an admin's
    assert api.get(f"{V2}/tasks", user="demo").status_code == 403
    assert api.get(f"{V2}/tasks/{task['id']}", user="demo").status_code == 403


@pytest.fixture
def web_server(api, monkeypatch):
    """A loopback HTTP server: /data answers some bytes, anything else a 404; the cloud
    allowed to fetch from it as from a local mirror (its port, the loopback network)."""
    payload = b"web-download data " * 1000

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            if self.path == "/data":
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            else:
                self.send_error(404)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    image = api.runtime.settings.image
    monkeypatch.setattr(image, "web_download_allowed_ports", [server.server_address[1]])
    monkeypatch.setattr(image, "web_download_allowed_networks", ["127.0.0.1/32"])
    yield f"http://127.0.0.1:{server.server_address[1]}", payload
    server.shutdown()
    server.server_close()


def test_web_download_from_loopback(api, web_server):
    base, payload = web_server
    image = _image(api, data=None)
    url = f"{V2}/images/{image['id']}/import"
    r = api.post(url, user="demo", json={"method": {"name": "web-download",
                                                    "uri": f"{base}/data"}})
    assert r.status_code == 202, r.text
    done = api.get(f"{V2}/images/{image['id']}", user="demo").json()
    assert done["status"] == "active" and done["size"] == len(payload)
    assert done["checksum"] == hashlib.md5(payload).hexdigest()
    assert api.get(f"{V2}/images/{image['id']}/file", user="demo").content == payload
    tasks = api.get(f"{V2}/tasks?status=success", user="admin").json()["tasks"]
    assert any(t["image_id"] == image["id"] for t in tasks)
    # an active image is not imported again
    assert api.post(url, user="demo", json={"method": {
        "name": "web-download", "uri": f"{base}/data"}}).status_code == 409


def test_web_download_refuses_and_fails_as_glance(api, web_server):
    base, _ = web_server
    image = _image(api, data=None)
    url = f"{V2}/images/{image['id']}/import"
    port = base.rsplit(":", 1)[1]
    # not loopback, not an allowed host or scheme, no uri: refused by the filter (400)
    for uri in ("http://192.0.2.1/data", "http://example.com/data", f"ftp://127.0.0.1:{port}/d",
                "file:///etc/passwd", f"http://user:pw@127.0.0.1:{port}/data", None):
        body = {"method": {"name": "web-download", **({"uri": uri} if uri else {})}}
        assert api.post(url, user="demo", json=body).status_code == 400, uri
    # allowed but failing: 202, a failure task, the image still queued
    r = api.post(url, user="demo", json={"method": {"name": "web-download",
                                                    "uri": f"{base}/missing"}})
    assert r.status_code == 202
    assert api.get(f"{V2}/images/{image['id']}", user="demo").json()["status"] == "queued"
    failed = [t for t in api.get(f"{V2}/tasks?status=failure", user="admin").json()["tasks"]
              if t["image_id"] == image["id"]]
    assert len(failed) == 1 and "404" in failed[0]["message"]
    # copy-image needs several stores: not enabled
    r = api.post(url, user="demo", json={"method": {"name": "copy-image"}, "stores": ["file"]})
    assert r.status_code == 400


def test_a_snapshot_has_its_servers_disk(api):
    from tests.api.test_compute import CIRROS, MAX, boot, mv, wait_status

    data = b"disk " * 5000
    base = _image(api, data=data)
    snaps = []
    for image_ref in (base["id"], CIRROS):
        r = boot(api, imageRef=image_ref, networks="none")
        assert r.status_code == 202, r.text
        sid = wait_status(api, r.json()["server"]["id"], user="demo")["id"]
        r = api.post(f"/compute/v2.1/servers/{sid}/action", user="demo", headers=mv(MAX),
                     json={"createImage": {"name": "snap"}})
        assert r.status_code == 202, r.text
        snap = api.get(f"{V2}/images/{r.json()['image_id']}", user="demo").json()
        source = api.get(f"{V2}/images/{image_ref}", user="demo").json()
        assert snap["size"] == source["size"] and snap["checksum"] == source["checksum"]
        assert snap["os_hash_value"] == source["os_hash_value"] and snap["size"]
        snaps.append(snap)
    # the snapshot of the uploaded image holds its data (the demo cirros has none to hold)
    got = api.get(f"{V2}/images/{snaps[0]['id']}/file", user="demo")
    assert got.status_code == 200 and got.content == data
    assert api.delete(f"{V2}/images/{snaps[0]['id']}", user="demo").status_code == 204
    assert api.get(f"{V2}/images/{base['id']}/file", user="demo").content == data


def test_image_member_quota(api, monkeypatch):
    from stackling.image import members

    monkeypatch.setattr(members, "MEMBER_QUOTA", 2)  # Glance's image_member_quota, made small
    image = _image(api, visibility="shared")
    url = f"{V2}/images/{image['id']}/members"
    for n in range(2):
        assert api.post(url, user="demo", json={"member": f"p{n}"}).status_code == 200
    assert api.post(url, user="demo", json={"member": "p2"}).status_code == 413
    assert api.delete(f"{url}/p0", user="demo").status_code == 204
    assert api.post(url, user="demo", json={"member": "p2"}).status_code == 200
