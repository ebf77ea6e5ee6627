"""Secure RBAC through the real clients: a project reader reads but writes nothing
(openstacksdk on every backend, the CLI on SQLite); markers and device ownership as a
member of another project sees them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _member_and_reader(cloud: Any) -> tuple[Any, Any, dict[str, Any]]:
    """A fresh project with a member, plus a user holding only `reader` there."""
    member = cloud.new_project_member()
    admin = cloud.sdk()
    user = admin.identity.create_user(name=_name("reader"), password="pw-secret",
                                      domain_id="default")
    admin.identity.assign_project_role_to_user(member["project"], user,
                                               admin.identity.find_role("reader"))
    from tests.conftest import sdk_connection

    reader = sdk_connection(None, None, auth={
        "auth_url": f"{cloud.url}/identity", "username": user.name, "password": "pw-secret",
        "project_name": member["project"].name, "user_domain_id": "default",
        "project_domain_id": "default"})
    return member["sdk"], reader, {"user": user.name, "project": member["project"].name}


def test_sdk_reader_reads_but_writes_nothing(cloud):
    member, reader, _ = _member_and_reader(cloud)
    net = member.network.create_network(name=_name("net"))
    subnet = member.network.create_subnet(network_id=net.id, cidr="10.31.0.0/24",
                                          ip_version=4)
    port = member.network.create_port(network_id=net.id)
    group = member.network.create_security_group(name=_name("sg"))
    rule = member.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", protocol="tcp",
        port_range_min=22, port_range_max=22)
    image = member.image.create_image(name=_name("img"), disk_format="raw",
                                      container_format="bare")
    before = (subnet.name, list(port.fixed_ips), image.name)  # the sdk edits its objects
    # reads work
    assert reader.network.get_network(net.id).id == net.id
    assert port.id in {p.id for p in reader.network.ports(network_id=net.id)}
    assert reader.image.get_image(image.id).id == image.id
    # writes are 403
    writes = [
        lambda: reader.network.create_network(name="r"),
        lambda: reader.network.create_subnet(network_id=net.id, cidr="10.32.0.0/24",
                                             ip_version=4),
        lambda: reader.network.update_subnet(subnet, name="r"),
        lambda: reader.network.delete_subnet(subnet),
        lambda: reader.network.update_port(port, fixed_ips=[]),
        lambda: reader.network.update_port(port, security_group_ids=[]),
        lambda: reader.network.delete_port(port),
        lambda: reader.network.delete_security_group_rule(rule),
        lambda: reader.image.create_image(name="r", disk_format="raw",
                                          container_format="bare"),
        lambda: reader.image.update_image(image, name="r"),
        lambda: reader.image.delete_image(image),
    ]
    for write in writes:
        with pytest.raises(exceptions.ForbiddenException):
            write()
    # nothing changed
    assert member.network.get_subnet(subnet.id).name == before[0]
    assert member.network.get_port(port.id).fixed_ips == before[1]
    assert member.network.get_security_group_rule(rule.id).id == rule.id
    assert member.image.get_image(image.id).name == before[2]


def test_sdk_marker_and_device_of_another_project(cloud):
    victim = cloud.new_project_member()["sdk"]
    intruder = cloud.new_project_member()["sdk"]
    hidden = victim.network.create_network(name=_name("hidden"))
    router = victim.network.create_router(name=_name("router"))
    with pytest.raises(exceptions.NotFoundException):
        list(intruder.network.networks(limit=1, marker=hidden.id))
    own = intruder.network.create_network(name=_name("own"))
    with pytest.raises(exceptions.ConflictException) as err:
        intruder.network.create_port(network_id=own.id, device_owner="network:router_interface",
                                     device_id=router.id)
    assert "not owned by your tenant" in str(err.value)


@sqlite_only
def test_cli_reader_cannot_create(cloud):
    _, _, who = _member_and_reader(cloud)
    env = {"OS_AUTH_URL": f"{cloud.url}/identity", "OS_USERNAME": who["user"],
           "OS_PASSWORD": "pw-secret", "OS_PROJECT_NAME": who["project"],
           "OS_USER_DOMAIN_ID": "default", "OS_PROJECT_DOMAIN_ID": "default",
           "OS_IDENTITY_API_VERSION": "3", "OS_REGION_NAME": "RegionOne"}
    proc = cloud.cli("network", "create", _name("r"), cloud="", check=False, env=env)
    assert proc.returncode != 0
    assert "403" in proc.stderr or "disallowed by policy" in proc.stderr, proc.stderr
    listed = cloud.cli("network", "list", "-f", "json", cloud="", env=env)
    assert isinstance(listed, list)
