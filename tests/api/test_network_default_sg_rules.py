"""Default security group rules (`security-groups-default-rules`) over the in-process app:
Neutron's four templates, admin-only writes, and new groups starting with the templates
that apply to them."""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3_topology import new_user

URL = f"{N}/default-security-group-rules"


def _sorted(items: list[tuple]) -> list[tuple]:
    return sorted(items, key=str)


def _rules(api, sg_id: str, user: str = "demo") -> list[tuple]:
    got = api.get(f"{N}/security-group-rules?security_group_id={sg_id}",
                  user=user).json()["security_group_rules"]
    return sorted(((r["direction"], r["ethertype"], r["protocol"], r["port_range_min"],
                    r["remote_group_id"] == sg_id) for r in got), key=str)


def test_neutrons_defaults_are_listed(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert "security-groups-default-rules" in aliases
    got = api.get(URL, user="demo").json()["default_security_group_rules"]
    assert sorted((r["direction"], r["ethertype"], r["remote_group_id"],
                   r["used_in_default_sg"], r["used_in_non_default_sg"]) for r in got) == [
        ("egress", "IPv4", None, True, True), ("egress", "IPv6", None, True, True),
        ("ingress", "IPv4", "PARENT", True, False), ("ingress", "IPv6", "PARENT", True, False)]
    one = api.get(f"{URL}/{got[0]['id']}", user="demo").json()["default_security_group_rule"]
    assert one == got[0]
    neutron_error(api.get(f"{URL}/00000000-0000-4000-8000-000000000000"), 404,
                  "DefaultSecurityGroupRuleNotFound")


def test_templates_shape_new_groups(api):
    ssh = create(api, "default-security-group-rules", "default_security_group_rule", {
        "direction": "ingress", "protocol": "tcp", "port_range_min": 22,
        "port_range_max": 22, "remote_ip_prefix": "0.0.0.0/0", "description": "ssh",
        "used_in_default_sg": True, "used_in_non_default_sg": True})
    assert ssh["description"] == "ssh" and ssh["remote_ip_prefix"] == "0.0.0.0/0"
    web = create(api, "default-security-group-rules", "default_security_group_rule", {
        "direction": "ingress", "protocol": "tcp", "port_range_min": 80, "port_range_max": 80})
    assert (web["used_in_default_sg"], web["used_in_non_default_sg"]) == (False, True)
    # a new project's default group: the default-group templates (ssh, not web)
    user = new_user(api, "member")
    token = {"user": None, "token": user["token"]}
    default = api.get(f"{N}/security-groups?name=default", **token).json()["security_groups"][0]
    assert _rules(api, default["id"], "admin") == _sorted([
        ("egress", "IPv4", None, None, False), ("egress", "IPv6", None, None, False),
        ("ingress", "IPv4", None, None, True), ("ingress", "IPv6", None, None, True),
        ("ingress", "IPv4", "tcp", 22, False)])
    # another group: the non-default templates (egress, ssh, web), counted in the quota
    sg = api.post(f"{N}/security-groups", **token, json={"security_group": {"name": "g"}})
    assert sg.status_code == 201, sg.text
    assert len(sg.json()["security_group"]["security_group_rules"]) == 4
    assert _rules(api, sg.json()["security_group"]["id"], "admin") == _sorted([
        ("egress", "IPv4", None, None, False), ("egress", "IPv6", None, None, False),
        ("ingress", "IPv4", "tcp", 22, False), ("ingress", "IPv4", "tcp", 80, False)])
    # gone templates no longer apply
    assert api.delete(f"{URL}/{ssh['id']}").status_code == 204
    assert api.delete(f"{URL}/{web['id']}").status_code == 204
    sg2 = api.post(f"{N}/security-groups", **token, json={"security_group": {"name": "g2"}})
    assert len(sg2.json()["security_group"]["security_group_rules"]) == 2


def test_writes_are_admin_only_and_checked(api):
    body = {"default_security_group_rule": {"direction": "ingress", "protocol": "udp",
                                            "port_range_min": 53, "port_range_max": 53}}
    neutron_error(api.post(URL, user="demo", json=body), 403)
    made = api.post(URL, json=body)
    assert made.status_code == 201, made.text
    neutron_error(api.post(URL, json=body), 409, "DefaultSecurityGroupRuleExists")
    neutron_error(api.delete(f"{URL}/{made.json()['default_security_group_rule']['id']}",
                             user="demo"), 403)
    for bad in ({"direction": "sideways"}, {"direction": "ingress", "remote_group_id": "x"},
                {"direction": "ingress", "protocol": "tcp", "port_range_min": 5,
                 "port_range_max": 1},
                {"direction": "ingress", "remote_ip_prefix": "10.0.0.0/8",
                 "remote_group_id": "PARENT"},
                {"direction": "ingress", "project_id": "p"}):
        neutron_error(api.post(URL, json={"default_security_group_rule": bad}), 400)
    neutron_error(api.put(f"{URL}/{made.json()['default_security_group_rule']['id']}",
                          json={"default_security_group_rule": {"description": "x"}}), 405)
    api.delete(f"{URL}/{made.json()['default_security_group_rule']['id']}")
