"""Heat's cinder resources in process: OS::Cinder::Volume (created until available,
extended and renamed in place, deleted until gone), OS::Cinder::VolumeType and
OS::Cinder::QoSSpecs (admin only, by Cinder's policy)."""

from __future__ import annotations

import pytest

from tests.api.test_orchestration import Heat, tmpl, unique

V3 = "/volume/v3"


@pytest.fixture(scope="module")
def demo(api):
    return Heat(api)


@pytest.fixture(scope="module")
def admin(api):
    return Heat(api, user="admin")


def _delete(heat, name):
    url = heat.url(name)
    assert heat.req("DELETE", url).status_code == 204
    stack = heat.wait(url)
    assert stack["stack_status"] == "DELETE_COMPLETE", stack


def test_volume_created_extended_renamed_deleted(api, demo):
    name = unique("vol")
    stack = demo.make(name, tmpl({"v": {"type": "OS::Cinder::Volume", "properties": {
        "size": 1, "name": name, "metadata": {"a": "b"}}}}, outputs={
        "status": {"value": {"get_attr": ["v", "status"]}},
        "size": {"value": {"get_attr": ["v", "size"]}},
        "meta": {"value": {"get_attr": ["v", "metadata_values"]}}}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    out = demo.outputs(demo.wait(name))
    assert out["status"] == "available" and out["size"] == 1 and out["meta"] == {"a": "b"}
    volume_id = demo.resources(name)["v"]["physical_resource_id"]
    t2 = tmpl({"v": {"type": "OS::Cinder::Volume", "properties": {
        "size": 2, "name": f"{name}-2", "metadata": {"a": "c"}}}})
    url = demo.url(name)
    assert demo.req("PUT", url, json={"template": t2}).status_code == 202
    assert demo.wait(url)["stack_status"] == "UPDATE_COMPLETE"
    assert demo.resources(name)["v"]["physical_resource_id"] == volume_id  # in place
    shown = api.get(f"{V3}/volumes/{volume_id}", token=demo.token).json()["volume"]
    assert shown["size"] == 2 and shown["name"] == f"{name}-2"
    assert shown["metadata"] == {"a": "c"} and shown["status"] == "available"
    _delete(demo, name)
    assert api.get(f"{V3}/volumes/{volume_id}", token=demo.token).status_code == 404


def test_volume_from_a_volume_and_a_failed_create(api, demo):
    name = unique("clone")
    stack = demo.make(name, tmpl({
        "src": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "copy": {"type": "OS::Cinder::Volume", "properties": {
            "source_volid": {"get_resource": "src"}}}}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    copy_id = demo.resources(name)["copy"]["physical_resource_id"]
    shown = api.get(f"{V3}/volumes/{copy_id}", token=demo.token).json()["volume"]
    assert shown["source_volid"] == demo.resources(name)["src"]["physical_resource_id"]
    _delete(demo, name)
    bad = unique("badtype")
    demo.create(bad, tmpl({"v": {"type": "OS::Cinder::Volume", "properties": {
        "size": 1, "volume_type": "no-such-type"}}}), disable_rollback=True)
    stack = demo.wait(bad)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "no-such-type" in stack["stack_status_reason"]


def test_volume_type_and_qos_specs_are_admin_only(api, demo, admin):
    name = unique("vt")
    t = tmpl({
        "vt": {"type": "OS::Cinder::VolumeType", "properties": {
            "name": name, "metadata": {"volume_backend_name": "file"}, "is_public": False,
            "projects": [api.get("/identity/v3/projects?name=demo").json()[
                "projects"][0]["id"]]}},
        "qos": {"type": "OS::Cinder::QoSSpecs", "properties": {
            "name": f"{name}-qos", "specs": {"total_iops_sec": "100"}}}})
    demo.create(name, t, disable_rollback=True)
    assert demo.wait(name)["stack_status"] == "CREATE_FAILED"  # Cinder's admin_api
    admin_name = unique("vt-admin")
    stack = admin.make(admin_name, tmpl({
        "vt": {"type": "OS::Cinder::VolumeType", "properties": {
            "name": admin_name, "metadata": {"volume_backend_name": "file"},
            "is_public": False, "projects": [api.get("/identity/v3/projects?name=demo").json()[
                "projects"][0]["id"]]}},
        "qos": {"type": "OS::Cinder::QoSSpecs", "properties": {
            "name": f"{admin_name}-qos", "specs": {"total_iops_sec": "100"}}}}))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    resources = admin.resources(admin_name)
    type_id = resources["vt"]["physical_resource_id"]
    qos_id = resources["qos"]["physical_resource_id"]
    vtype = api.get(f"{V3}/types/{type_id}").json()["volume_type"]
    assert vtype["is_public"] is False and vtype["extra_specs"] == {"volume_backend_name": "file"}
    names = {t["name"] for t in api.get(f"{V3}/types", token=demo.token).json()["volume_types"]}
    assert admin_name in names  # shared with demo
    t2 = tmpl({
        "vt": {"type": "OS::Cinder::VolumeType", "properties": {
            "name": admin_name, "metadata": {"k": "v"}, "is_public": False}},
        "qos": {"type": "OS::Cinder::QoSSpecs", "properties": {
            "name": f"{admin_name}-qos", "specs": {"read_iops_sec": "5"}}}})
    url = admin.url(admin_name)
    assert admin.req("PUT", url, json={"template": t2}).status_code == 202
    assert admin.wait(url)["stack_status"] == "UPDATE_COMPLETE"
    assert api.get(f"{V3}/types/{type_id}").json()["volume_type"]["extra_specs"] == {"k": "v"}
    assert api.get(f"{V3}/qos-specs/{qos_id}").json()["qos_specs"]["specs"] == {
        "read_iops_sec": "5"}
    _delete(admin, admin_name)
    assert api.get(f"{V3}/types/{type_id}").status_code == 404
    assert api.get(f"{V3}/qos-specs/{qos_id}").status_code == 404
