"""Default security group rules through the real clients: openstacksdk on every backend
(a template shapes the next group, then goes), the `openstack default security group
rule` commands on SQLite. Each on a server of its own: a template changes every group
created meanwhile, which would surprise other tests sharing a server."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_sdk_default_rule_templates(cloud_factory, backend):
    cloud = cloud_factory(backend)
    admin = cloud.sdk()
    assert len(list(admin.network.default_security_group_rules())) >= 4
    port = 20000 + uuid.uuid4().int % 10000
    rule = admin.network.create_default_security_group_rule(
        direction="ingress", protocol="tcp", port_range_min=port, port_range_max=port,
        used_in_default_sg=False, used_in_non_default_sg=True)
    try:
        member = cloud.new_project_member()["sdk"]
        sg = member.network.create_security_group(name="from-templates")
        ports = {r["port_range_min"] for r in sg.security_group_rules}
        assert port in ports
    finally:
        admin.network.delete_default_security_group_rule(rule)
    assert admin.network.find_default_security_group_rule(rule.id) is None
    sg2 = member.network.create_security_group(name="after")
    assert port not in {r["port_range_min"] for r in sg2.security_group_rules}


@pytest.mark.cli
def test_cli_default_rule_templates(cloud_factory):
    cloud = cloud_factory("sqlite")
    port = str(30000 + uuid.uuid4().int % 10000)
    made = cloud.cli("default", "security", "group", "rule", "create", "--ingress",
                     "--protocol", "udp", "--dst-port", port, "--for-default-sg",
                     "-f", "json")
    assert made["used_in_default_sg"] is True
    listed = cloud.cli("default", "security", "group", "rule", "list", "-f", "json")
    assert made["id"] in {r["ID"] for r in listed}
    shown = cloud.cli("default", "security", "group", "rule", "show", made["id"], "-f", "json")
    assert shown["port_range_min"] == int(port)
    cloud.cli("default", "security", "group", "rule", "delete", made["id"], parse=False)
