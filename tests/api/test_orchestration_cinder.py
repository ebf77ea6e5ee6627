"""Heat's volume attachment and a server's block devices, in process on SQLite,
PostgreSQL and MariaDB: a template with a server, a volume and an
OS::Cinder::VolumeAttachment (the volume in-use on the server, moved to another server,
extended while attached, detached and deleted with the stack), and a server booting from
an image made into a volume by its block_device_mapping_v2 (Heat's validation too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_block_storage import LATEST, V3, ok, project_id
from tests.api.test_compute import MAX, mv
from tests.api.test_orchestration import Heat, heat_error, tmpl, unique
from tests.conftest import BACKENDS, backend_api

S = "/compute/v2.1/servers"


@pytest.fixture(scope="module", params=BACKENDS)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Any]:
    yield from backend_api(request.param, tmp_path_factory, "orchestration-cinder")


@pytest.fixture(scope="module")
def heat(api):
    pid = project_id(api, "demo")
    ok(api.put(f"{V3}/os-quota-sets/{pid}", json={"quota_set": {
        k: -1 for k in ("volumes", "gigabytes", "snapshots")}}))
    api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv(MAX),
            json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})
    return Heat(api)


def _server(**props: Any) -> dict[str, Any]:
    return {"type": "OS::Nova::Server", "properties": {
        "flavor": "m1.tiny", "networks": [{"allocate_network": "none"}], **props}}


def _volume(api, vid):
    return ok(api.get(f"{V3}/volumes/{vid}", user="demo", headers=LATEST))["volume"]


def _attached(api, sid):
    return [a["id"] for a in ok(api.get(f"{S}/{sid}", user="demo", headers=mv(MAX)))[
        "server"]["os-extended-volumes:volumes_attached"]]


def _update(heat, name, template):
    url = heat.url(name)
    r = heat.req("PUT", url, json={"template": template})
    assert r.status_code == 202, r.text
    stack = heat.wait(url)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack
    return stack


def _delete(heat, name):
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    stack = heat.wait(url)
    assert stack["stack_status"] == "DELETE_COMPLETE", stack


def _attachment_template(server: str, size: int) -> dict[str, Any]:
    return tmpl({
        "one": _server(image="cirros"),
        "two": _server(image="cirros"),
        "vol": {"type": "OS::Cinder::Volume", "properties": {"size": size}},
        "att": {"type": "OS::Cinder::VolumeAttachment", "properties": {
            "instance_uuid": {"get_resource": server}, "volume_id": {"get_resource": "vol"},
            "mountpoint": "/dev/vdb"}}},
        outputs={"status": {"value": {"get_attr": ["vol", "status"]}},
                 "servers": {"value": {"get_attr": ["vol", "attachments_list"]}},
                 "size": {"value": {"get_attr": ["vol", "size"]}}})


def test_a_volume_attached_to_a_server_moved_extended_and_deleted(api, heat):
    name = unique("att")
    stack = heat.make(name, _attachment_template("one", 1))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    res = heat.resources(name)
    one, two = res["one"]["physical_resource_id"], res["two"]["physical_resource_id"]
    vid = res["vol"]["physical_resource_id"]
    assert res["att"]["physical_resource_id"] == vid  # Nova's attachment id
    assert res["att"]["resource_status"] == "CREATE_COMPLETE"
    volume = _volume(api, vid)
    assert volume["status"] == "in-use"
    assert [a["server_id"] for a in volume["attachments"]] == [one]
    assert _attached(api, one) == [vid] and _attached(api, two) == []
    out = heat.outputs(heat.wait(name))
    assert out["status"] == "in-use" and [a["server_id"] for a in out["servers"]] == [one]
    # the attachment moves to the other server (detached, then attached again)
    _update(heat, name, _attachment_template("two", 1))
    assert _attached(api, one) == [] and _attached(api, two) == [vid]
    volume = _volume(api, vid)
    assert volume["status"] == "in-use"
    assert [a["server_id"] for a in volume["attachments"]] == [two]
    # the attached volume grows in place (Cinder 3.42)
    _update(heat, name, _attachment_template("two", 2))
    assert heat.resources(name)["vol"]["physical_resource_id"] == vid
    volume = _volume(api, vid)
    assert volume["size"] == 2 and volume["status"] == "in-use"
    assert _attached(api, two) == [vid]
    _delete(heat, name)
    assert api.get(f"{V3}/volumes/{vid}", user="demo", headers=LATEST).status_code == 404
    assert api.get(f"{S}/{two}", user="demo").status_code == 404


def test_deleting_the_attachment_leaves_the_volume_available(api, heat):
    name = unique("det")
    stack = heat.make(name, _attachment_template("one", 1))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    res = heat.resources(name)
    vid, one = res["vol"]["physical_resource_id"], res["one"]["physical_resource_id"]
    t = _attachment_template("one", 1)
    del t["resources"]["att"]
    t["outputs"] = {}
    _update(heat, name, t)  # the attachment's delete: detached, volume available
    assert _volume(api, vid)["status"] == "available" and _attached(api, one) == []
    _delete(heat, name)


def test_attachment_of_a_missing_volume_is_refused(api, heat):
    r = heat.create(unique("bad"), tmpl({
        "one": _server(image="cirros"),
        "att": {"type": "OS::Cinder::VolumeAttachment", "properties": {
            "instance_uuid": {"get_resource": "one"},
            "volume_id": "0b7e8a6c-1c5e-4c46-9d1b-000000000000"}}}))
    assert "The Volume (0b7e8a6c-1c5e-4c46-9d1b-000000000000) could not be found." in \
        heat_error(r, 400)


def test_server_booted_from_an_image_made_a_volume(api, heat):
    name = unique("bfv")
    stack = heat.make(name, tmpl({"srv": _server(block_device_mapping_v2=[
        {"image": "cirros", "volume_size": 1, "delete_on_termination": True}])}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    sid = heat.resources(name)["srv"]["physical_resource_id"]
    shown = ok(api.get(f"{S}/{sid}", user="demo", headers=mv(MAX)))["server"]
    assert shown["status"] == "ACTIVE" and shown["image"] == ""
    attached = shown["os-extended-volumes:volumes_attached"]
    assert [a["delete_on_termination"] for a in attached] == [True]
    root = _volume(api, attached[0]["id"])
    assert root["status"] == "in-use" and root["bootable"] == "true"
    assert root["volume_image_metadata"]["image_name"] == "cirros"
    devices = ok(api.get(f"{S}/{sid}/os-volume_attachments", user="demo",
                         headers=mv(MAX)))["volumeAttachments"]
    assert [d["device"] for d in devices] == ["/dev/vda"]
    _delete(heat, name)
    r = api.get(f"{V3}/volumes/{root['id']}", user="demo", headers=LATEST)
    assert r.status_code == 404 or r.json()["volume"]["status"] == "deleting"


def test_server_booted_from_a_volume_of_the_stack_legacy_mapping(api, heat):
    name = unique("bdm")
    stack = heat.make(name, tmpl({
        "root": {"type": "OS::Cinder::Volume", "properties": {"size": 1, "image": "cirros"}},
        "srv": _server(block_device_mapping=[
            {"device_name": "vda", "volume_id": {"get_resource": "root"}}])}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    res = heat.resources(name)
    vid, sid = res["root"]["physical_resource_id"], res["srv"]["physical_resource_id"]
    assert _attached(api, sid) == [vid] and _volume(api, vid)["status"] == "in-use"
    _delete(heat, name)  # the server goes first: its volume detached, then deleted
    assert api.get(f"{V3}/volumes/{vid}", user="demo", headers=LATEST).status_code == 404


@pytest.mark.parametrize(("props", "message"), [
    ({"block_device_mapping": [{"device_name": "vda", "volume_id": "VOL"}],
      "block_device_mapping_v2": [{"volume_id": "VOL"}]},
     "Cannot define the following properties at the same time: block_device_mapping, "
     "block_device_mapping_v2."),
    ({"block_device_mapping": [{"device_name": "vdb"}]},
     "Either volume_id or snapshot_id must be specified for device mapping vdb"),
    ({"block_device_mapping_v2": [{"device_name": "vdb"}]},
     "Either volume_id, snapshot_id, image_id, swap_size, ephemeral_size or "
     "ephemeral_format must be specified."),
    ({"block_device_mapping_v2": [{"image": "cirros", "swap_size": 1}]},
     "Cannot define the following properties at the same time: volume_id, snapshot_id, "
     "image, swap_size, ephemeral_size, ephemeral_format."),
    ({"block_device_mapping_v2": [{"swap_size": 1}]},
     "Neither image nor bootable volume is specified for instance srv"),
    ({"image": "cirros", "block_device_mapping_v2": [{"image": "cirros", "volume_size": 1}]},
     "Multiple bootable sources for instance srv."),
])
def test_block_device_mapping_validation(api, heat, props, message):
    if "block_device_mapping" in props:
        vid = ok(api.post(f"{V3}/volumes", user="demo", headers=LATEST, json={
            "volume": {"size": 1}}), 202)["volume"]["id"]
        props = json.loads(json.dumps(props).replace("VOL", vid))
    r = heat.req("POST", "/validate", json={"template": tmpl({"srv": _server(**props)})})
    assert message in heat_error(r, 400), r.text
