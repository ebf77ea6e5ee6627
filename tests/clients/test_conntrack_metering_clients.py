"""Router conntrack helpers and metering through the real clients: openstacksdk on every
backend, and `openstack network l3 conntrack helper ...` / `openstack network meter ...`
on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_sdk_conntrack_helpers(cloud):
    conn = cloud.new_project_member()["sdk"]
    router = conn.network.create_router(name=_name("ct"))
    helper = conn.network.create_conntrack_helper(router, protocol="udp", port=69,
                                                  helper="tftp")
    assert (helper.protocol, helper.port, helper.helper) == ("udp", 69, "tftp")
    with pytest.raises(exceptions.BadRequestException):  # the same one again
        conn.network.create_conntrack_helper(router, protocol="udp", port=69, helper="tftp")
    with pytest.raises(exceptions.BadRequestException):  # tftp is udp only
        conn.network.create_conntrack_helper(router, protocol="tcp", port=69, helper="tftp")
    helper = conn.network.update_conntrack_helper(helper, router, port=6969)
    assert helper.port == 6969
    assert [h.id for h in conn.network.conntrack_helpers(router)] == [helper.id]
    conn.network.delete_conntrack_helper(helper, router)
    assert list(conn.network.conntrack_helpers(router)) == []


def test_sdk_metering(cloud):
    admin = cloud.sdk()
    label = admin.network.create_metering_label(name=_name("meter"), description="d")
    rule = admin.network.create_metering_label_rule(
        metering_label_id=label.id, direction="egress", remote_ip_prefix="192.0.2.0/24")
    assert rule.direction == "egress" and rule.remote_ip_prefix == "192.0.2.0/24"
    with pytest.raises(exceptions.ConflictException):
        admin.network.create_metering_label_rule(
            metering_label_id=label.id, direction="egress", remote_ip_prefix="192.0.2.0/25")
    other = admin.network.create_metering_label_rule(
        metering_label_id=label.id, source_ip_prefix="198.51.100.0/24",
        destination_ip_prefix="0.0.0.0/0")
    assert other.source_ip_prefix == "198.51.100.0/24"
    assert {r.id for r in admin.network.metering_label_rules(metering_label_id=label.id)} == {
        rule.id, other.id}
    member = cloud.new_project_member()["sdk"]
    assert list(member.network.metering_labels()) == []
    with pytest.raises(exceptions.ForbiddenException):
        member.network.create_metering_label(name="x")
    admin.network.delete_metering_label(label)
    assert admin.network.find_metering_label_rule(rule.id) is None


@sqlite_only
def test_cli_conntrack_and_meter(cloud):
    router = cloud.cli("router", "create", _name("ctr"), "-f", "json")
    made = cloud.cli("network", "l3", "conntrack", "helper", "create", "--helper", "ftp",
                     "--protocol", "tcp", "--port", "21", router["id"], "-f", "json")
    assert made["helper"] == "ftp" and made["port"] == 21
    listed = cloud.cli("network", "l3", "conntrack", "helper", "list", router["id"],
                       "-f", "json")
    assert [h["ID"] for h in listed] == [made["id"]]
    cloud.cli("network", "l3", "conntrack", "helper", "delete", router["id"], made["id"],
              parse=False)
    name = _name("cli-meter")
    label = cloud.cli("network", "meter", "create", "--description", "d", name, "-f", "json")
    rule = cloud.cli("network", "meter", "rule", "create", "--egress", "--remote-ip-prefix",
                     "203.0.113.0/24", name, "-f", "json")
    assert rule["metering_label_id"] == label["id"]
    rules = cloud.cli("network", "meter", "rule", "list", "-f", "json")
    assert rule["id"] in {r["ID"] for r in rules}
    cloud.cli("network", "meter", "delete", name, parse=False)
