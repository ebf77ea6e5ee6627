"""Address groups (`address-group`, `rbac-address-group`) over the in-process app: CRUD,
the address actions with Neutron's normalisation and errors, sharing by RBAC, and the
group kept while a security group rule names it."""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3_topology import new_user


def test_crud_and_address_actions(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"address-group", "rbac-address-group"} <= aliases
    g = create(api, "address-groups", "address_group", {
        "name": "web", "description": "d" * 1024,
        "addresses": ["10.0.0.1/24", "2001:db8::1/64", "192.168.1.5/32"]}, user="demo")
    # normalised to the networks, as upstream
    assert g["addresses"] == ["10.0.0.0/24", "192.168.1.5/32", "2001:db8::/64"]
    assert g["name"] == "web" and g["project_id"] == g["tenant_id"]
    assert "shared" not in g
    url = f"{N}/address-groups/{g['id']}"
    assert api.get(url, user="demo").json()["address_group"]["id"] == g["id"]
    assert [x["id"] for x in api.get(f"{N}/address-groups?name=web", user="demo").json()[
        "address_groups"]] == [g["id"]]
    r = api.put(f"{url}/add_addresses", user="demo", json={"addresses": ["10.1.0.0/16"]})
    assert r.status_code == 200, r.text
    assert "10.1.0.0/16" in r.json()["address_group"]["addresses"]
    err = neutron_error(api.put(f"{url}/add_addresses", user="demo",
                                json={"addresses": ["10.1.2.3/16"]}), 400, "AddressesAlreadyExist")
    assert "10.1.0.0/16" in err["message"]
    r = api.put(f"{url}/remove_addresses", user="demo", json={"addresses": ["10.0.0.9/24"]})
    assert r.status_code == 200 and "10.0.0.0/24" not in r.json()["address_group"]["addresses"]
    neutron_error(api.put(f"{url}/remove_addresses", user="demo",
                          json={"addresses": ["10.0.0.0/24"]}), 404, "AddressesNotFound")
    for bad in ({}, {"addresses": "10.0.0.0/8"}, {"addresses": ["nope"]},
                {"addresses": ["10.0.0.1"]}):
        neutron_error(api.put(f"{url}/add_addresses", user="demo", json=bad), 400)
    r = api.put(url, user="demo", json={"address_group": {"name": "web2"}})
    assert r.status_code == 200 and r.json()["address_group"]["name"] == "web2"
    neutron_error(api.put(url, user="demo", json={"address_group": {"addresses": []}}), 400)
    assert api.delete(url, user="demo").status_code == 204
    neutron_error(api.get(url, user="demo"), 404, "AddressGroupNotFound")


def test_bad_addresses_on_create_are_400(api):
    for addresses in (["10.0.0.1"], ["10.1/16"], ["x"], ["10.0.0.0/8", "10.0.0.0/8"], "x", [1]):
        r = api.post(f"{N}/address-groups", user="demo",
                     json={"address_group": {"name": "bad", "addresses": addresses}})
        neutron_error(r, 400)
    assert api.get(f"{N}/address-groups?name=bad", user="demo").json()["address_groups"] == []


def test_in_use_by_a_rule_is_kept(api):
    g = create(api, "address-groups", "address_group", {"name": "used"}, user="demo")
    sg = create(api, "security-groups", "security_group", {"name": "ag-user"}, user="demo")
    rule = create(api, "security-group-rules", "security_group_rule", {
        "security_group_id": sg["id"], "direction": "ingress",
        "remote_address_group_id": g["id"]}, user="demo")
    neutron_error(api.delete(f"{N}/address-groups/{g['id']}", user="demo"), 409,
                  "AddressGroupInUse")
    api.delete(f"{N}/security-group-rules/{rule['id']}", user="demo")
    assert api.delete(f"{N}/address-groups/{g['id']}", user="demo").status_code == 204


def test_shared_by_rbac(api):
    g = create(api, "address-groups", "address_group", {"name": "shared-ag",
                                                        "addresses": ["10.9.0.0/16"]},
               user="demo")
    other = new_user(api, "member")
    as_other = {"user": None, "token": other["token"]}
    neutron_error(api.get(f"{N}/address-groups/{g['id']}", **as_other), 404)
    assert api.get(f"{N}/address-groups", **as_other).json()["address_groups"] == []
    policy = api.post(f"{N}/rbac-policies", user="demo", json={"rbac_policy": {
        "object_type": "address_group", "object_id": g["id"], "action": "access_as_shared",
        "target_tenant": other["project_id"]}})
    assert policy.status_code == 201, policy.text
    assert api.get(f"{N}/address-groups/{g['id']}", **as_other).status_code == 200
    assert [x["id"] for x in api.get(f"{N}/address-groups", **as_other).json()[
        "address_groups"]] == [g["id"]]
    # the project it is shared with may name it in its rules, not change it
    sg = api.post(f"{N}/security-groups", **as_other,
                  json={"security_group": {"name": "o"}}).json()["security_group"]
    r = api.post(f"{N}/security-group-rules", **as_other, json={"security_group_rule": {
        "security_group_id": sg["id"], "direction": "ingress",
        "remote_address_group_id": g["id"]}})
    assert r.status_code == 201, r.text
    neutron_error(api.put(f"{N}/address-groups/{g['id']}/add_addresses", **as_other,
                          json={"addresses": ["10.10.0.0/16"]}), 403)
    # a third project still sees nothing
    third = new_user(api, "member")
    neutron_error(api.get(f"{N}/address-groups/{g['id']}", user=None, token=third["token"]), 404)
    # the owner cannot delete it while the other project's rule names it
    neutron_error(api.delete(f"{N}/address-groups/{g['id']}", user="demo"), 409,
                  "AddressGroupInUse")
    # a wildcard grant needs an admin; an admin's makes it visible to all
    r = api.post(f"{N}/rbac-policies", user="demo", json={"rbac_policy": {
        "object_type": "address_group", "object_id": g["id"], "action": "access_as_shared",
        "target_tenant": "*"}})
    assert r.status_code == 403, r.text
    r = api.post(f"{N}/rbac-policies", json={"rbac_policy": {
        "object_type": "address_group", "object_id": g["id"], "action": "access_as_shared",
        "target_tenant": "*"}})
    assert r.status_code == 201, r.text
    assert api.get(f"{N}/address-groups/{g['id']}", user=None,
                   token=third["token"]).status_code == 200
    # not an access_as_external type
    neutron_error(api.post(f"{N}/rbac-policies", user="demo", json={"rbac_policy": {
        "object_type": "address_group", "object_id": g["id"],
        "action": "access_as_external", "target_tenant": third["project_id"]}}), 400)
