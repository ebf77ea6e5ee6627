"""Image fidelity IV (issue 32) through the real clients: image tags with openstacksdk
(`PUT/DELETE /v2/images/{id}/tags/{tag}`), the metadefs catalog with Glance's shipped
namespaces through `openstack image metadef ...` (SQLite) and openstacksdk (every backend,
writes included), and the plural schemas."""

from __future__ import annotations

import uuid

from tests.conftest import sqlite_only


def test_sdk_image_tags_and_metadefs(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()["sdk"]
    image = member.image.create_image(name=f"t-{uuid.uuid4().hex[:6]}", disk_format="raw",
                                      container_format="bare")
    member.image.add_tag(image, "blue")
    member.image.add_tag(image, "green")
    member.image.remove_tag(image, "blue")
    assert member.image.get_image(image.id).tags == ["green"]
    assert member.image.get_images_schema().properties["images"]["items"]["name"] == "image"
    assert member.image.get_members_schema().properties["members"]["type"] == "array"
    # the shipped catalog, as any project's reader sees it
    names = {n.namespace for n in member.image.metadef_namespaces()}
    assert {"OS::Compute::Watchdog", "OS::Compute::Hypervisor", "OS::Software::DBMS"} <= names
    watchdog = member.image.get_metadef_namespace("OS::Compute::Watchdog")
    assert watchdog.is_protected and watchdog.visibility == "public"
    assert "watchdog_action" in {p.name for p in member.image.metadef_properties(watchdog)}
    assert "OS::Nova::Flavor" in {t.name for t in member.image.metadef_resource_types()}
    assert member.image.get_metadef_namespace_schema().name == "namespace"
    # an admin's own namespace, written through the sdk
    name = f"Test::{uuid.uuid4().hex[:6]}"
    ns = admin.image.create_metadef_namespace(namespace=name, visibility="public")
    admin.image.create_metadef_property(ns, name="speed", title="Speed", type="integer")
    admin.image.create_metadef_object(ns, name="disk", properties={
        "size": {"title": "Size", "type": "integer"}})
    admin.image.create_metadef_resource_type_association(ns, name="OS::Glance::Image",
                                                         prefix="t_")
    admin.image.add_tag_to_metadef_namespace(ns, "fast")
    assert member.image.get_metadef_namespace(name).visibility == "public"
    assert [o.name for o in member.image.metadef_objects(name)] == ["disk"]
    assert [p.name for p in member.image.metadef_properties(name)] == ["speed"]
    assert [a.name for a in member.image.metadef_resource_type_associations(name)] == [
        "OS::Glance::Image"]
    admin.image.remove_tags_from_metadef_namespace(ns)
    admin.image.delete_metadef_namespace(ns)
    assert name not in {n.namespace for n in admin.image.metadef_namespaces()}
    member.image.delete_image(image)


@sqlite_only
def test_cli_metadefs(cloud):
    def cli(*args: str, **kw: object) -> object:
        return cloud.cli(*args, **kw)

    listed = cli("image", "metadef", "namespace", "list", "-f", "json", cloud="stackling")
    assert "OS::Compute::Watchdog" in {n.get("Namespace", n.get("namespace")) for n in listed}
    shown = cli("image", "metadef", "namespace", "show", "-f", "json",
                "OS::Compute::Watchdog", cloud="stackling")
    assert shown["protected"] is True or shown["protected"] == "True"
    types = cli("image", "metadef", "resource", "type", "list", "-f", "json",
                cloud="stackling")
    assert "OS::Glance::Image" in {t.get("Name", t.get("name")) for t in types}
    props = cli("image", "metadef", "property", "list", "-f", "json",
                "OS::Compute::Watchdog", cloud="stackling")
    assert "watchdog_action" in {p["name"] for p in props}
    name = f"Cli::{uuid.uuid4().hex[:6]}"
    cli("image", "metadef", "namespace", "create", "--public", "-f", "json", name)
    cli("image", "metadef", "property", "create", "--name", "speed", "--title", "Speed",
        "--type", "integer", "--schema", "{}", "-f", "json", name)
    cli("image", "metadef", "object", "create", "-f", "json", "--namespace", name, "disk")
    objects = cli("image", "metadef", "object", "list", "-f", "json", name)
    assert [o["name"] for o in objects] == ["disk"]
    cli("image", "metadef", "resource", "type", "association", "create", name,
        "OS::Nova::Flavor", parse=False)
    assocs = cli("image", "metadef", "resource", "type", "association", "list", "-f", "json",
                 name)
    assert [a.get("Name", a.get("name")) for a in assocs] == ["OS::Nova::Flavor"]
    cli("image", "metadef", "namespace", "delete", name, parse=False)
    listed = cli("image", "metadef", "namespace", "list", "-f", "json")
    assert name not in {n.get("Namespace", n.get("namespace")) for n in listed}
