"""A security group rule's remote references (issue 19, item 9).

`remote_group_id` must name a group the caller can see (404 otherwise). Address groups do
not exist here and the `address-group` extension is not advertised, so a rule naming one
(`remote_address_group_id`) is refused as Neutron refuses an attribute of an extension it
has not loaded: 400, whoever's id it is, and nothing is stored.
"""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error


def test_remote_address_group_is_refused_and_not_advertised(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert "address-group" not in aliases
    mine = create(api, "security-groups", "security_group", {"name": "remotes"}, user="demo")
    other = create(api, "security-groups", "security_group", {"name": "admin-remote"})
    rule = {"security_group_id": mine["id"], "direction": "ingress", "protocol": "tcp",
            "port_range_min": 22, "port_range_max": 22}
    for remote in (other["id"], mine["id"], "0b7e6a42-9d1f-4c55-8d77-6c1d2f0c4e11"):
        for user in ("demo", "admin"):
            err = neutron_error(api.post(f"{N}/security-group-rules", user=user, json={
                "security_group_rule": {**rule, "remote_address_group_id": remote}}), 400)
            assert "remote_address_group_id" in err["message"]
    rules = api.get(f"{N}/security-group-rules?security_group_id={mine['id']}",
                    user="demo").json()["security_group_rules"]
    assert not any(r.get("remote_address_group_id") for r in rules)
    assert not any(r["protocol"] == "tcp" for r in rules)
    # null is no reference: the rule is made
    r = api.post(f"{N}/security-group-rules", user="demo", json={
        "security_group_rule": {**rule, "remote_address_group_id": None}})
    assert r.status_code == 201, r.text
    # another project's group, or an unknown one, as remote_group_id: 404 as before
    for remote in (other["id"], "0b7e6a42-9d1f-4c55-8d77-6c1d2f0c4e11"):
        neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "port_range_min": 23, "port_range_max": 23,
                                    "remote_group_id": remote}}), 404, "SecurityGroupNotFound")
