"""A security group rule's remote references (issue 19, item 9; issue 23).

`remote_group_id` must name a group the caller can see (404 otherwise), and so must
`remote_address_group_id` name an address group the rule's project sees
(`security-groups-remote-address-group`: 404 AddressGroupNotFound, nothing stored); at
most one of remote_ip_prefix, remote_group_id and remote_address_group_id is given.
"""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error


def test_remote_address_group_must_be_visible_and_alone(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"address-group", "security-groups-remote-address-group"} <= aliases
    mine = create(api, "security-groups", "security_group", {"name": "remotes"}, user="demo")
    other = create(api, "security-groups", "security_group", {"name": "admin-remote"})
    admins_ag = create(api, "address-groups", "address_group", {"name": "adm"})
    my_ag = create(api, "address-groups", "address_group", {"name": "mine"}, user="demo")
    rule = {"security_group_id": mine["id"], "direction": "ingress", "protocol": "tcp",
            "port_range_min": 22, "port_range_max": 22}
    # another project's address group, or an unknown one: 404, nothing stored
    for remote in (admins_ag["id"], "0b7e6a42-9d1f-4c55-8d77-6c1d2f0c4e11"):
        neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "remote_address_group_id": remote}}), 404,
            "AddressGroupNotFound")
    # with another remote: 400
    for extra in ({"remote_ip_prefix": "10.0.0.0/8"}, {"remote_group_id": mine["id"]}):
        neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "remote_address_group_id": my_ag["id"], **extra}}),
            400, "SecurityGroupMultipleRemoteEntites")
    rules = api.get(f"{N}/security-group-rules?security_group_id={mine['id']}",
                    user="demo").json()["security_group_rules"]
    assert not any(r["protocol"] == "tcp" for r in rules)
    # the caller's own group: made, and shown
    r = api.post(f"{N}/security-group-rules", user="demo", json={
        "security_group_rule": {**rule, "remote_address_group_id": my_ag["id"]}})
    assert r.status_code == 201, r.text
    assert r.json()["security_group_rule"]["remote_address_group_id"] == my_ag["id"]
    listed = api.get(f"{N}/security-group-rules?remote_address_group_id={my_ag['id']}",
                     user="demo").json()["security_group_rules"]
    assert [x["id"] for x in listed] == [r.json()["security_group_rule"]["id"]]
    # null is no reference: the rule is made
    r = api.post(f"{N}/security-group-rules", user="demo", json={
        "security_group_rule": {**rule, "port_range_min": 24, "port_range_max": 24,
                                "remote_address_group_id": None}})
    assert r.status_code == 201, r.text
    # another project's group, or an unknown one, as remote_group_id: 404 as before
    for remote in (other["id"], "0b7e6a42-9d1f-4c55-8d77-6c1d2f0c4e11"):
        neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "port_range_min": 23, "port_range_max": 23,
                                    "remote_group_id": remote}}), 404, "SecurityGroupNotFound")
