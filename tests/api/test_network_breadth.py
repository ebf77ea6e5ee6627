"""Networking breadth (issue 23) over the in-process app: an external network's
`access_as_external` policy cannot be taken from projects using it, a subnet update
revises its network, IPv6 needs an MTU of 1280."""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3_topology import new_user


def _external(api) -> tuple[dict, dict]:
    net = create(api, "networks", "network", {"name": "ext", "router:external": True})
    create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                      "cidr": "198.18.0.0/24"})
    rbac = api.get(f"{N}/rbac-policies?object_id={net['id']}&action=access_as_external"
                   ).json()["rbac_policies"]
    assert len(rbac) == 1 and rbac[0]["target_tenant"] == "*"
    return net, rbac[0]


def test_external_access_in_use_by_floating_ips_is_kept(api):
    net, rbac = _external(api)
    user, other = new_user(api, "member"), new_user(api, "member")
    fip = api.post(f"{N}/floatingips", user=None, token=user["token"],
                   json={"floatingip": {"floating_network_id": net["id"]}})
    assert fip.status_code == 201, fip.text
    url = f"{N}/rbac-policies/{rbac['id']}"
    neutron_error(api.delete(url), 409, "RbacPolicyInUse")
    # narrowing the wildcard to a project that is not the one using it: refused too
    narrow = {"rbac_policy": {"target_tenant": other["project_id"]}}
    neutron_error(api.put(url, json=narrow), 409, "RbacPolicyInUse")
    shown = api.get(f"{N}/networks/{net['id']}").json()["network"]
    assert shown["router:external"] is True
    # to the project using it: allowed (no one else loses anything in use)
    r = api.put(url, json={"rbac_policy": {"target_tenant": user["project_id"]}})
    assert r.status_code == 200, r.text
    # once the floating IP is gone, the policy may go
    assert api.delete(f"{N}/floatingips/{fip.json()['floatingip']['id']}").status_code == 204
    assert api.delete(url).status_code == 204
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["router:external"] is False


def test_the_default_external_network_keeps_its_policy_while_used(api):
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]
    user = new_user(api, "member")
    router = api.post(f"{N}/routers", user=None, token=user["token"], json={"router": {
        "name": "gw", "external_gateway_info": {"network_id": public["id"]}}})
    assert router.status_code == 201, router.text
    rbac = api.get(f"{N}/rbac-policies?object_id={public['id']}&action=access_as_external"
                   ).json()["rbac_policies"][0]
    neutron_error(api.delete(f"{N}/rbac-policies/{rbac['id']}"), 409, "RbacPolicyInUse")
    assert api.get(f"{N}/networks/{public['id']}").json()["network"]["router:external"] is True


def test_a_subnet_update_revises_its_network(api):
    net = create(api, "networks", "network", {"name": "rev"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": "10.77.0.0/24"}, user="demo")
    before = api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]
    r = api.put(f"{N}/subnets/{sub['id']}", user="demo", json={"subnet": {"name": "x"}})
    assert r.status_code == 200
    after = api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]
    assert after["revision_number"] == before["revision_number"] + 1


def test_ipv6_needs_an_mtu_of_1280(api):
    small = create(api, "networks", "network", {"name": "small", "mtu": 1279})
    r = api.post(f"{N}/subnets", json={"subnet": {"network_id": small["id"], "ip_version": 6,
                                                  "cidr": "fd00:77::/64"}})
    neutron_error(r, 409)
    assert api.get(f"{N}/subnets?network_id={small['id']}").json()["subnets"] == []
    # IPv4 is fine there; an IPv6 network cannot go below 1280
    create(api, "subnets", "subnet", {"network_id": small["id"], "ip_version": 4,
                                      "cidr": "10.78.0.0/24"})
    v6 = create(api, "networks", "network", {"name": "v6"})
    create(api, "subnets", "subnet", {"network_id": v6["id"], "ip_version": 6,
                                      "cidr": "fd00:78::/64"})
    neutron_error(api.put(f"{N}/networks/{v6['id']}", json={"network": {"mtu": 1279}}), 400)
    r = api.put(f"{N}/networks/{v6['id']}", json={"network": {"mtu": 1280}})
    assert r.status_code == 200 and r.json()["network"]["mtu"] == 1280


def test_agents_update_and_delete(api):
    agent = api.get(f"{N}/agents").json()["agents"][0]
    url = f"{N}/agents/{agent['id']}"
    r = api.put(url, json={"agent": {"description": "rack 4", "admin_state_up": False}})
    assert r.status_code == 200, r.text
    assert r.json()["agent"]["description"] == "rack 4"
    shown = api.get(url).json()["agent"]
    assert shown["description"] == "rack 4" and shown["admin_state_up"] is False
    assert [a["id"] for a in api.get(f"{N}/agents?admin_state_up=false").json()["agents"]] == [
        agent["id"]]
    neutron_error(api.put(url, json={"agent": {"host": "elsewhere"}}), 400)
    neutron_error(api.put(url, json={"agent": {"admin_state_up": "maybe"}}), 400)
    neutron_error(api.put(url, json={"agent": {"description": "x"}}, user="demo"), 404)
    neutron_error(api.delete(url, user="demo"), 404)
    neutron_error(api.put(f"{N}/agents/nope", json={"agent": {"description": "x"}}), 404)
    # a delete forgets the admin's edits; the live agent registers again at once
    assert api.delete(url).status_code == 204
    back = api.get(url).json()["agent"]
    assert back["description"] is None and back["admin_state_up"] is True and back["alive"]
    assert back["created_at"] >= agent["created_at"]


def test_a_router_interface_pins_its_subnet_gateway(api):
    net = create(api, "networks", "network", {"name": "pinned"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": "10.79.0.0/24"}, user="demo")
    router = create(api, "routers", "router", {"name": "pin"}, user="demo")
    r = api.put(f"{N}/routers/{router['id']}/add_router_interface", user="demo",
                json={"subnet_id": sub["id"]})
    assert r.status_code == 200, r.text
    url = f"{N}/subnets/{sub['id']}"
    for gateway in ("10.79.0.9", None):
        err = neutron_error(api.put(url, user="demo", json={"subnet": {"gateway_ip": gateway}}),
                            409, "GatewayIpInUse")
        assert "10.79.0.1" in err["message"]
    assert api.get(url, user="demo").json()["subnet"]["gateway_ip"] == "10.79.0.1"
    # once the interface is gone the gateway moves freely
    api.put(f"{N}/routers/{router['id']}/remove_router_interface", user="demo",
            json={"subnet_id": sub["id"]})
    r = api.put(url, user="demo", json={"subnet": {"gateway_ip": "10.79.0.9"}})
    assert r.status_code == 200 and r.json()["subnet"]["gateway_ip"] == "10.79.0.9"
    r = api.put(url, user="demo", json={"subnet": {"gateway_ip": None}})
    assert r.status_code == 200 and r.json()["subnet"]["gateway_ip"] is None


def test_enable_snat_on_external_gateways(api):
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]
    router = create(api, "routers", "router", {"name": "snat", "external_gateway_info": {
        "network_id": public["id"]}}, user="demo")
    assert router["external_gateway_info"]["enable_snat"] is True
    url = f"{N}/routers/{router['id']}"
    off = {"router": {"external_gateway_info": {"network_id": public["id"],
                                                "enable_snat": False}}}
    assert api.put(url, user="demo", json=off).status_code == 403  # an admin's, as upstream
    r = api.put(url, json=off)
    assert r.status_code == 200 and r.json()["router"]["external_gateway_info"][
        "enable_snat"] is False
    assert api.get(url, user="demo").json()["router"]["external_gateway_info"][
        "enable_snat"] is False
