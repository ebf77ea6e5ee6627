"""Compute microversions 2.98–2.104 (in-process API): each version's request accepted or
refused below and at it, and the response shapes, as Nova's version history lists them."""

from __future__ import annotations

import pytest

from tests.api.test_compute import CIRROS, MAX, mv, wait_status
from tests.api.test_compute_actions import act, lift_quotas
from tests.api.test_compute_microversions_2_63 import active, boot, show

SERVERS = "/compute/v2.1/servers"


@pytest.fixture(scope="module", autouse=True)
def unlimited(api):
    lift_quotas(api)


def _image_with_properties(api, **properties) -> str:
    r = api.post("/image/v2/images", user="demo", json={
        "name": "props", "disk_format": "raw", "container_format": "bare", **properties})
    assert r.status_code == 201, r.text
    image = r.json()["id"]
    assert api.put(f"/image/v2/images/{image}/file", user="demo", content=b"x" * 64,
                   headers={"Content-Type": "application/octet-stream"}).status_code == 204
    return image


def test_max_is_2_104(api):
    assert MAX == "2.104"
    r = api.get(f"{SERVERS}", user="demo", headers=mv("2.104"))
    assert r.status_code == 200 and r.headers["OpenStack-API-Version"] == "compute 2.104"
    assert api.get(SERVERS, user="demo", headers=mv("2.105")).status_code == 406


def test_2_98_image_properties_as_at_boot_and_rebuild(api):
    image = _image_with_properties(api, hw_disk_bus="scsi", architecture="x86_64",
                                   os_distro="cirros", my_own="not shown")
    sid = active(api, boot(api, "2.98", imageRef=image))["id"]
    expected = {"hw_disk_bus": "scsi", "architecture": "x86_64", "os_distro": "cirros"}
    assert show(api, sid, "2.98")["image"]["properties"] == expected
    assert "properties" not in show(api, sid, "2.97")["image"]
    listed = api.get(f"{SERVERS}/detail", user="demo", headers=mv("2.98")).json()["servers"]
    assert next(s for s in listed if s["id"] == sid)["image"]["properties"] == expected
    # a later change to the image does not show: the server keeps what it booted with
    assert api.patch(f"/image/v2/images/{image}", user="demo", json=[
        {"op": "replace", "path": "/hw_disk_bus", "value": "virtio"}],
        headers={"Content-Type": "application/openstack-images-v2.1-json-patch"}
    ).status_code == 200
    updated = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.98"),
                      json={"server": {"name": "renamed"}}).json()["server"]
    assert updated["image"]["properties"] == expected
    # a rebuild takes the new image's properties
    r = act(api, sid, {"rebuild": {"imageRef": CIRROS}}, version="2.98")
    assert r.status_code == 202, r.text
    cirros = api.get(f"/image/v2/images/{CIRROS}", user="demo").json()
    assert r.json()["server"]["image"]["id"] == CIRROS
    assert r.json()["server"]["image"]["properties"] == {
        k: v for k, v in cirros.items() if k in ("hw_disk_bus", "os_distro", "architecture",
                                                 "hw_rng_model", "os_type")}
    wait_status(api, sid)
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_99_spice_direct_and_console_auth_tokens(api):
    sid = active(api, boot(api, "2.99"))["id"]
    url = f"{SERVERS}/{sid}/remote-consoles"
    spice = {"remote_console": {"protocol": "spice", "type": "spice-direct"}}
    assert api.post(url, user="demo", headers=mv("2.98"), json=spice).status_code == 400
    assert api.post(url, user="demo", headers=mv("2.99"), json=spice).status_code == 501
    vnc = api.post(url, user="demo", headers=mv("2.99"), json={
        "remote_console": {"protocol": "vnc", "type": "novnc"}})
    assert vnc.status_code == 200, vnc.text
    token = vnc.json()["remote_console"]["url"].rsplit("%3D", 1)[-1]
    tokens = "/compute/v2.1/os-console-auth-tokens"
    r = api.get(f"{tokens}/{token}", headers=mv("2.99"))
    assert r.status_code == 200, r.text
    console = r.json()["console"]
    host = show(api, sid, "2.99", user="admin")["OS-EXT-SRV-ATTR:host"]
    assert console == {"instance_uuid": sid, "host": host, "port": 5900,
                       "internal_access_path": None}
    assert api.get(f"{tokens}/{token}", headers=mv("2.30")).status_code == 400
    assert api.get(f"{tokens}/{token}", user="demo", headers=mv("2.99")).status_code == 403
    assert api.get(f"{tokens}/nope", headers=mv("2.99")).status_code == 404
    assert api.get(f"{tokens}/{token}?x=1", headers=mv("2.98")).status_code == 200
    assert api.get(f"{tokens}/{token}?x=1", headers=mv("2.99")).status_code == 400
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204
    assert api.get(f"{tokens}/{token}", headers=mv("2.99")).status_code == 404


def test_2_100_scheduler_hints(api):
    hints = {"build_near_host_ip": "10.0.0.1", "cidr": "/24", "different_host": [CIRROS]}
    sid = active(api, boot(api, "2.100", hints=hints))["id"]
    plain = active(api, boot(api, "2.100"))["id"]
    kept = {"build_near_host_ip": ["10.0.0.1"], "cidr": ["/24"], "different_host": [CIRROS]}
    assert show(api, sid, "2.100")["scheduler_hints"] == kept
    assert show(api, plain, "2.100")["scheduler_hints"] == {}
    assert "scheduler_hints" not in show(api, sid, "2.99")
    listed = api.get(f"{SERVERS}/detail", user="demo", headers=mv("2.100")).json()["servers"]
    assert {s["id"]: s["scheduler_hints"] for s in listed if s["id"] in (sid, plain)} == {
        sid: kept, plain: {}}
    assert all("scheduler_hints" not in s for s in api.get(
        SERVERS, user="demo", headers=mv("2.100")).json()["servers"])
    updated = api.put(f"{SERVERS}/{sid}", user="demo", headers=mv("2.100"),
                      json={"server": {"name": "h"}}).json()["server"]
    assert updated["scheduler_hints"] == kept
    rebuilt = act(api, sid, {"rebuild": {"imageRef": CIRROS}}, version="2.100")
    assert rebuilt.json()["server"]["scheduler_hints"] == kept
    wait_status(api, sid)
    for s in (sid, plain):
        assert api.delete(f"{SERVERS}/{s}", user="demo").status_code == 204


def test_2_102_flavors_name_filter_and_dead_fields(api):
    flavors = "/compute/v2.1/flavors"
    old = api.get(f"{flavors}/1", user="demo", headers=mv("2.101")).json()["flavor"]
    assert "rxtx_factor" in old and "OS-FLV-DISABLED:disabled" in old
    new = api.get(f"{flavors}/1", user="demo", headers=mv("2.102")).json()["flavor"]
    assert "rxtx_factor" not in new and "OS-FLV-DISABLED:disabled" not in new
    detail = api.get(f"{flavors}/detail", user="demo", headers=mv("2.102")).json()["flavors"]
    assert detail and all("rxtx_factor" not in f for f in detail)
    names = {f["name"] for f in api.get(flavors, user="demo", headers=mv("2.102")).json()[
        "flavors"]}
    tiny = api.get(f"{flavors}?name=t.ny$", user="demo", headers=mv("2.102")).json()["flavors"]
    assert [f["name"] for f in tiny] == sorted(n for n in names if n.endswith("tiny"))
    assert tiny and all(f["name"].endswith("tiny") for f in tiny)
    assert api.get(f"{flavors}?name=m1", user="demo", headers=mv("2.101")).status_code == 400
    assert api.get(f"{flavors}?sort_key=rxtx_factor", user="demo",
                   headers=mv("2.101")).status_code == 200
    assert api.get(f"{flavors}?sort_key=rxtx_factor", user="demo",
                   headers=mv("2.102")).status_code == 400
    body = {"flavor": {"name": "f102", "ram": 64, "vcpus": 1, "disk": 1, "rxtx_factor": 2.0}}
    assert api.post(flavors, headers=mv("2.102"), json=body).status_code == 400
    r = api.post(flavors, headers=mv("2.101"), json=body)
    assert r.status_code == 200 and r.json()["flavor"]["rxtx_factor"] == 2.0
    assert api.delete(f"{flavors}/{r.json()['flavor']['id']}").status_code == 202


def test_2_102_every_get_refuses_unknown_query_parameters(api):
    sid = active(api, boot(api, "2.102"))["id"]
    for url, user in ((f"{SERVERS}/{sid}", "demo"), (f"{SERVERS}/{sid}/ips", "demo"),
                      ("/compute/v2.1/flavors/1", "demo"),
                      ("/compute/v2.1/os-availability-zone", "demo"),
                      (f"{SERVERS}/{sid}/os-instance-actions", "demo"),
                      ("/compute/v2.1/os-aggregates", "admin")):
        assert api.get(f"{url}?bogus=1", user=user, headers=mv("2.101")).status_code == 200, url
        r = api.get(f"{url}?bogus=1", user=user, headers=mv("2.102"))
        assert r.status_code == 400 and "'bogus' was unexpected" in r.text, url
    # what Nova's schemas name still works
    project = api.get(f"{SERVERS}/{sid}", user="demo").json()["server"]["tenant_id"]
    for url, user in ((f"{SERVERS}?limit=1&sort_key=display_name", "demo"),
                      (f"{SERVERS}/{sid}/os-instance-actions?limit=1", "demo"),
                      ("/compute/v2.1/os-hypervisors?with_servers=true", "admin"),
                      ("/compute/v2.1/os-keypairs?limit=1", "demo"),
                      ("/compute/v2.1/os-migrations?status=done", "admin"),
                      ("/compute/v2.1/os-simple-tenant-usage?detailed=1", "admin"),
                      (f"/compute/v2.1/os-quota-sets/{project}?user_id=x", "admin"),
                      ("/compute/v2.1/os-server-groups?limit=1", "demo"),
                      ("/compute/v2.1/limits?tenant_id=x", "admin")):
        r = api.get(url, user=user, headers=mv("2.102"))
        assert r.status_code == 200, (url, r.text)
    # version discovery is exempt; the proxy APIs gone at 2.36 still 404
    assert api.get("/compute/v2.1?bogus=1", user=None).status_code == 200
    assert api.get("/compute/v2.1/os-networks?bogus=1", user="demo",
                   headers=mv("2.102")).status_code == 404
    assert api.delete(f"{SERVERS}/{sid}", user="demo").status_code == 204


def test_2_103_os_volumes_boot_is_not_served(api):
    for version in ("2.1", "2.102", "2.103"):
        r = api.post("/compute/v2.1/os-volumes_boot", user="demo", headers=mv(version),
                     json={"server": {"name": "v", "flavorRef": "1", "imageRef": CIRROS}})
        assert r.status_code == 404


def test_2_104_pinned_availability_zone_update(api):
    sid = active(api, boot(api, "2.104", availability_zone="nova"))["id"]
    url = f"{SERVERS}/{sid}"

    def put(value, version="2.104"):
        return api.put(url, user="demo", headers=mv(version),
                       json={"server": {"pinned_availability_zone": value}})

    assert put(None, "2.103").status_code == 400
    same = put("nova")
    assert same.status_code == 200 and same.json()["server"]["pinned_availability_zone"] == "nova"
    changed = put("elsewhere")
    assert changed.status_code == 409 and "Unpin first" in changed.text
    unpinned = put(None)
    assert unpinned.status_code == 200
    assert unpinned.json()["server"]["pinned_availability_zone"] is None
    assert show(api, sid, "2.104")["pinned_availability_zone"] is None
    elsewhere = put("elsewhere")
    assert elsewhere.status_code == 409 and "current availability zone 'nova'" in elsewhere.text
    repinned = put("nova")
    assert repinned.status_code == 200
    assert show(api, sid, "2.104")["pinned_availability_zone"] == "nova"
    assert put("").status_code == 400
    assert api.delete(url, user="demo").status_code == 204
