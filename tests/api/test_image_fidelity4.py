"""Image fidelity IV (issue 32), in-process: `PUT/DELETE /v2/images/{id}/tags/{tag}`, the
plural schemas, and the metadata definitions API with Glance's shipped namespaces."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

IMG = "/image/v2"
NS = f"{IMG}/metadefs/namespaces"
SHIPPED = json.loads((Path(__file__).parents[2] / "stackling/image/data/metadefs.json")
                     .read_text())["namespaces"]


def _image(api, user="demo"):
    r = api.post(f"{IMG}/images", user=user, json={"name": f"i-{uuid.uuid4().hex[:6]}",
                                                 "disk_format": "raw",
                                                 "container_format": "bare"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_image_tags_put_and_delete(api):
    image = _image(api)
    for _ in range(2):  # a tag the image has already changes nothing
        r = api.put(f"{IMG}/images/{image}/tags/blue", user="demo")
        assert r.status_code == 204, r.text
    api.put(f"{IMG}/images/{image}/tags/green", user="demo")
    assert api.get(f"{IMG}/images/{image}", user="demo").json()["tags"] == ["blue", "green"]
    assert api.delete(f"{IMG}/images/{image}/tags/blue", user="demo").status_code == 204
    assert api.get(f"{IMG}/images/{image}", user="demo").json()["tags"] == ["green"]
    assert api.delete(f"{IMG}/images/{image}/tags/blue", user="demo").status_code == 404
    assert api.put(f"{IMG}/images/{image}/tags/{'x' * 256}", user="demo").status_code == 400
    other = api.put(f"{IMG}/images/{image}/tags/red", user="admin")  # admin may
    assert other.status_code == 204
    listed = api.get(f"{IMG}/images?tag=green", user="demo").json()["images"]
    assert [i["id"] for i in listed] == [image]


def test_plural_schemas(api):
    images = api.get(f"{IMG}/schemas/images", user="demo").json()
    assert images["name"] == "images"
    assert images["properties"]["images"]["items"]["name"] == "image"
    members = api.get(f"{IMG}/schemas/members", user="demo").json()
    assert members["properties"]["members"]["items"]["name"] == "member"
    for kind in ("namespace", "namespaces", "object", "objects", "property", "properties",
                 "tag", "tags", "resource_type", "resource_types"):
        r = api.get(f"{IMG}/schemas/metadefs/{kind}", user="demo")
        assert r.status_code == 200, kind
        assert r.json()["name"] in (kind, {"resource_type": "resource_type_association",
                                           "resource_types": "resource_type_associations"
                                           }.get(kind))
    assert api.get(f"{IMG}/schemas/metadefs/nothing", user="demo").status_code == 404


def test_the_shipped_namespaces_are_loaded(api):
    listed = api.get(NS, user="demo").json()
    assert listed["schema"] == "/v2/schemas/metadefs/namespaces"
    names = {n["namespace"] for n in listed["namespaces"]}
    # the two shipped without a visibility are private, as Glance loads them
    assert names == {n["namespace"] for n in SHIPPED if n.get("visibility") == "public"}
    everything = api.get(f"{NS}?limit=100", user="admin").json()["namespaces"]
    assert {n["namespace"] for n in everything} == {n["namespace"] for n in SHIPPED}
    watchdog = api.get(f"{NS}/OS::Compute::Watchdog", user="demo").json()
    assert watchdog["protected"] is True and watchdog["visibility"] == "public"
    assert "watchdog_action" in watchdog["properties"]
    assert {a["name"] for a in watchdog["resource_type_associations"]} == {
        "OS::Glance::Image", "OS::Cinder::Volume", "OS::Nova::Flavor"}
    prefixed = api.get(f"{NS}/OS::Compute::Watchdog?resource_type=OS::Glance::Image",
                       user="demo").json()
    assert "hw_watchdog_action" in prefixed["properties"]
    flavor = api.get(f"{NS}?resource_types=OS::Nova::Flavor", user="demo").json()["namespaces"]
    assert "OS::Compute::Watchdog" in {n["namespace"] for n in flavor}
    assert "OS::Software::DBMS" not in {n["namespace"] for n in flavor}
    types = {t["name"] for t in api.get(f"{IMG}/metadefs/resource_types",
                                        user="demo").json()["resource_types"]}
    assert {"OS::Glance::Image", "OS::Nova::Flavor", "OS::Cinder::Volume"} <= types
    page = api.get(f"{NS}?limit=5", user="demo").json()
    assert len(page["namespaces"]) == 5 and "marker=" in page["next"]
    rest = api.get(f"{NS}?limit=100&marker={page['namespaces'][-1]['namespace']}",
                   user="demo").json()["namespaces"]
    assert len(rest) == len(names) - 5
    objects = api.get(f"{NS}/OS::Software::DBMS/objects", user="demo").json()["objects"]
    assert objects and all(o["self"].startswith("/v2/metadefs/namespaces/") for o in objects)
    r = api.delete(f"{NS}/OS::Compute::Watchdog", user="admin")
    assert r.status_code == 403  # protected
    assert api.delete(f"{NS}/OS::Compute::Watchdog", user="demo").status_code == 403


def test_a_namespace_lifecycle(api):
    name = f"Test::{uuid.uuid4().hex[:6]}"
    body = {"namespace": name, "display_name": "Test", "description": "d",
            "visibility": "private", "protected": False,
            "properties": {"p1": {"title": "P1", "type": "string"}},
            "resource_type_associations": [{"name": "OS::Glance::Image", "prefix": "t_"}]}
    assert api.post(NS, user="demo", json=body).status_code == 403
    r = api.post(NS, user="admin", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["properties"] == {"p1": {"title": "P1", "type": "string"}}
    assert api.post(NS, user="admin", json=body).status_code == 409
    # private to the admin project: another project's reader does not see it
    assert api.get(f"{NS}/{name}", user="demo").status_code == 404
    assert name not in {n["namespace"] for n in api.get(NS, user="demo").json()["namespaces"]}
    r = api.post(f"{NS}/{name}/objects", user="admin", json={
        "name": "o1", "description": "an object", "required": ["a"],
        "properties": {"a": {"title": "A", "type": "integer"}}})
    assert r.status_code == 201, r.text
    assert api.post(f"{NS}/{name}/objects", user="admin",
                    json={"name": "o1"}).status_code == 409
    r = api.put(f"{NS}/{name}/objects/o1", user="admin", json={"name": "o2"})
    assert r.status_code == 200 and r.json()["name"] == "o2"
    assert api.get(f"{NS}/{name}/objects/o1", user="admin").status_code == 404
    r = api.post(f"{NS}/{name}/properties", user="admin",
                 json={"name": "p2", "title": "P2", "type": "boolean"})
    assert r.status_code == 201, r.text
    assert api.post(f"{NS}/{name}/properties", user="admin",
                    json={"name": "p3", "type": "boolean"}).status_code == 400
    props = api.get(f"{NS}/{name}/properties", user="admin").json()["properties"]
    assert set(props) == {"p1", "p2"}
    assert api.get(f"{NS}/{name}/properties/t_p2?resource_type=OS::Glance::Image",
                   user="admin").json()["name"] == "p2"
    r = api.post(f"{NS}/{name}/tags", user="admin", json={"tags": [{"name": "a"},
                                                                   {"name": "b"}]})
    assert r.status_code == 201 and [t["name"] for t in r.json()["tags"]] == ["a", "b"]
    assert api.post(f"{NS}/{name}/tags/c", user="admin").status_code == 201
    assert api.post(f"{NS}/{name}/tags/c", user="admin").status_code == 409
    r = api.post(f"{NS}/{name}/tags", user="admin", headers={"X-Openstack-Append": "True"},
                 json={"tags": [{"name": "d"}]})
    assert r.status_code == 201
    tags = [t["name"] for t in api.get(f"{NS}/{name}/tags", user="admin").json()["tags"]]
    assert tags == ["a", "b", "c", "d"]
    r = api.post(f"{NS}/{name}/tags", user="admin", json={"tags": [{"name": "z"}]})
    assert [t["name"] for t in api.get(f"{NS}/{name}/tags",
                                       user="admin").json()["tags"]] == ["z"]
    assert api.put(f"{NS}/{name}/tags/z", user="admin",
                   json={"name": "y"}).json()["name"] == "y"
    r = api.post(f"{NS}/{name}/resource_types", user="admin",
                 json={"name": "OS::Nova::Flavor", "prefix": "t:"})
    assert r.status_code == 201 and r.json()["prefix"] == "t:"
    assocs = api.get(f"{NS}/{name}/resource_types", user="admin").json()
    assert {a["name"] for a in assocs["resource_type_associations"]} == {
        "OS::Glance::Image", "OS::Nova::Flavor"}
    assert api.delete(f"{NS}/{name}/resource_types/OS::Nova::Flavor",
                      user="admin").status_code == 204
    shown = api.get(f"{NS}/{name}", user="admin").json()
    assert [o["name"] for o in shown["objects"]] == ["o2"]
    assert shown["tags"] == [{"name": "y"}]
    r = api.put(f"{NS}/{name}", user="admin", json={"namespace": name, "visibility": "public",
                                                    "protected": True})
    assert r.status_code == 200 and r.json()["visibility"] == "public"
    assert api.get(f"{NS}/{name}", user="demo").status_code == 200  # public now
    assert api.delete(f"{NS}/{name}/objects", user="admin").status_code == 403
    api.put(f"{NS}/{name}", user="admin", json={"namespace": name, "protected": False})
    for kind in ("objects", "properties", "tags"):
        assert api.delete(f"{NS}/{name}/{kind}", user="admin").status_code == 204
    assert "objects" not in api.get(f"{NS}/{name}", user="admin").json()
    assert api.delete(f"{NS}/{name}", user="admin").status_code == 204
    assert api.get(f"{NS}/{name}", user="admin").status_code == 404


@pytest.mark.parametrize("path", [f"{NS}", f"{NS}/OS::Compute::Watchdog",
                                  f"{NS}/OS::Compute::Watchdog/properties",
                                  f"{IMG}/metadefs/resource_types"])
def test_reads_need_a_project_reader(api, path):
    assert api.get(path, user="demo").status_code == 200
    assert api.get(path, user=None).status_code == 401
