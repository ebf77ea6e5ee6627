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


def test_external_access_in_use_by_routers_is_kept(api):
    net, rbac = _external(api)
    user, other = new_user(api, "member"), new_user(api, "member")
    router = api.post(f"{N}/routers", user=None, token=user["token"], json={"router": {
        "name": "gw", "external_gateway_info": {"network_id": net["id"]}}})
    assert router.status_code == 201, router.text
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
    # once the router is gone, the policy may go
    gone = api.delete(f"{N}/routers/{router.json()['router']['id']}", user=None,
                      token=user["token"])
    assert gone.status_code == 204
    assert api.delete(url).status_code == 204
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["router:external"] is False


def test_external_access_is_not_held_by_floating_ips(api):
    # Neutron judges routers' gateways only: a floating IP does not keep the policy
    net, rbac = _external(api)
    user = new_user(api, "member")
    fip = api.post(f"{N}/floatingips", user=None, token=user["token"],
                   json={"floatingip": {"floating_network_id": net["id"]}})
    assert fip.status_code == 201, fip.text
    assert api.delete(f"{N}/rbac-policies/{rbac['id']}").status_code == 204
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
    # whoever uses it: with the router gone too, and narrowed as well as deleted
    assert api.delete(f"{N}/routers/{router.json()['router']['id']}", user=None,
                      token=user["token"]).status_code == 204
    for r in (api.delete(f"{N}/rbac-policies/{rbac['id']}"),
              api.put(f"{N}/rbac-policies/{rbac['id']}",
                      json={"rbac_policy": {"target_tenant": user["project_id"]}})):
        err = neutron_error(r, 409, "RbacPolicyInUse")
        assert err["message"] == (f"RBAC policy on object {public['id']} cannot be removed "
                                  "because other objects depend on it.\nDetails: Default "
                                  "external networks must be shared to everyone."), err
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


def _as(api, who: dict, method: str, url: str, **kw):
    return api.request(method, url, user=None, token=who["token"], **kw)


def test_security_group_negatives(api):
    user = new_user(api, "member")
    sg = _as(api, user, "POST", f"{N}/security-groups",
             json={"security_group": {"name": "web"}}).json()["security_group"]
    net = _as(api, user, "POST", f"{N}/networks", json={"network": {"name": "sgn"}}).json()
    # the same group twice on a port is the group once (upstream de-duplicates)
    port = _as(api, user, "POST", f"{N}/ports", json={"port": {
        "network_id": net["network"]["id"], "security_groups": [sg["id"], sg["id"]]}})
    assert port.status_code == 201 and port.json()["port"]["security_groups"] == [sg["id"]]
    rules = f"{N}/security-group-rules"

    def rule(protocol, ethertype="IPv4"):
        return _as(api, user, "POST", rules, json={"security_group_rule": {
            "security_group_id": sg["id"], "direction": "ingress", "protocol": protocol,
            "ethertype": ethertype}})
    # names and numbers are one protocol: the number after the name is a duplicate
    assert rule("tcp").status_code == 201
    neutron_error(rule("6"), 409, "SecurityGroupRuleExists")
    made = rule("132")
    assert made.status_code == 201 and made.json()["security_group_rule"]["protocol"] == "132"
    neutron_error(rule("sctp"), 409, "SecurityGroupRuleExists")
    assert rule("ipv6-icmp", "IPv6").status_code == 201
    neutron_error(rule("58", "IPv6"), 409, "SecurityGroupRuleExists")
    for bad in ("256", "-1", "bogus"):
        neutron_error(rule(bad), 400)
    # bulk create
    r = _as(api, user, "POST", f"{N}/security-groups", json={"security_groups": [
        {"name": "b1"}, {"name": "b2"}]})
    assert r.status_code == 201 and [g["name"] for g in r.json()["security_groups"]] == ["b1", "b2"]
    assert all(len(g["security_group_rules"]) == 2 for g in r.json()["security_groups"])
    # a group whose default rules would pass the rule quota is refused
    used = len(_as(api, user, "GET", f"{rules}?project_id={user['project_id']}"
                   ).json()["security_group_rules"])
    r = api.put(f"{N}/quotas/{user['project_id']}",
                json={"quota": {"security_group_rule": used + 1}})
    assert r.status_code == 200, r.text
    groups = len(_as(api, user, "GET", f"{N}/security-groups").json()["security_groups"])
    neutron_error(_as(api, user, "POST", f"{N}/security-groups",
                      json={"security_group": {"name": "over"}}), 409, "OverQuota")
    assert len(_as(api, user, "GET", f"{N}/security-groups").json()["security_groups"]) == groups
    api.put(f"{N}/quotas/{user['project_id']}", json={"quota": {"security_group_rule": used + 2}})
    assert _as(api, user, "POST", f"{N}/security-groups",
               json={"security_group": {"name": "fits"}}).status_code == 201


def test_subnet_sorting_and_paging_over_shared_and_owned(api):
    shared = create(api, "networks", "network", {"name": "pg-shared", "shared": True})
    mine = create(api, "networks", "network", {"name": "pg-own"}, user="demo")
    names = []
    for i, (net, user) in enumerate([(shared, "admin")] * 3 + [(mine, "demo")] * 3):
        names.append(f"pg-{i}")
        create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                          "name": names[-1], "cidr": f"10.90.{i}.0/24"},
               user=user)
    q = "name=" + "&name=".join(names)
    everything = api.get(f"{N}/subnets?{q}&sort_key=name&sort_dir=asc&limit=0",
                         user="demo").json()
    assert [s["name"] for s in everything["subnets"]] == names
    assert "subnets_links" not in everything
    pages, url = [], f"{N}/subnets?{q}&sort_key=name&sort_dir=desc&limit=4"
    while url:
        body = api.get(url, user="demo").json()
        pages.append([s["name"] for s in body["subnets"]])
        nxt = [link["href"] for link in body.get("subnets_links", []) if link["rel"] == "next"]
        # a full page links to the next one (an empty page ends the walk)
        url = "/networking" + nxt[0].split("/networking", 1)[1] if nxt and body["subnets"] \
            else None
        assert len(pages) <= 3
    assert [n for page in pages for n in page] == names[::-1]
    # page_reverse from a marker walks back
    marker = api.get(f"{N}/subnets?name={names[3]}", user="demo").json()["subnets"][0]["id"]
    back = api.get(f"{N}/subnets?{q}&sort_key=name&sort_dir=asc&limit=2&marker={marker}"
                   "&page_reverse=True", user="demo").json()
    assert [s["name"] for s in back["subnets"]] == names[1:3]
    assert {link["rel"] for link in back["subnets_links"]} == {"next", "previous"}


def test_service_types_pick_the_subnet_a_port_allocates_from(api):
    net = create(api, "networks", "network", {"name": "svc"}, user="demo")
    project = net["project_id"]
    plain = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                              "cidr": "10.91.0.0/24"}, user="demo")
    custom = create(api, "subnets", "subnet", {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.91.1.0/24",
        "project_id": project, "service_types": ["compute:rack-7", "neutron:thing"]})
    assert custom["service_types"] == ["compute:rack-7", "neutron:thing"]
    for bad in ("no-prefix", "vendor:thing"):  # upstream's device-owner prefixes only
        neutron_error(api.post(f"{N}/subnets", json={"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": "10.91.2.0/24",
            "service_types": [bad]}}), 400)

    def subnet_of(owner):
        port = create(api, "ports", "port", {"network_id": net["id"], "device_owner": owner},
                      user="demo")
        return port["fixed_ips"][0]["subnet_id"]
    assert subnet_of("compute:rack-7") == custom["id"]
    assert subnet_of("neutron:thing") == custom["id"]
    assert subnet_of("compute:nova") == plain["id"]
    assert subnet_of("") == plain["id"]


def test_address_scope_and_subnet_pool_rbac(api):
    user = new_user(api, "member")
    scope = create(api, "address_scopes", "address_scope", {"name": "as-rbac", "ip_version": 4})
    pool = create(api, "subnetpools", "subnetpool", {"name": "sp-rbac", "prefixes": [
        "10.92.0.0/16"], "default_prefixlen": 24, "address_scope_id": scope["id"]})
    assert _as(api, user, "GET", f"{N}/address-scopes/{scope['id']}").status_code == 404
    assert _as(api, user, "GET", f"{N}/subnetpools/{pool['id']}").status_code == 404
    grants = {}
    for kind, obj in (("address_scope", scope), ("subnetpool", pool)):
        r = api.post(f"{N}/rbac-policies", json={"rbac_policy": {
            "object_type": kind, "object_id": obj["id"], "action": "access_as_shared",
            "target_tenant": user["project_id"]}})
        assert r.status_code == 201, r.text
        grants[kind] = r.json()["rbac_policy"]
    assert _as(api, user, "GET", f"{N}/address-scopes/{scope['id']}").status_code == 200
    net = _as(api, user, "POST", f"{N}/networks", json={"network": {"name": "rb"}}).json()
    sub = _as(api, user, "POST", f"{N}/subnets", json={"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "subnetpool_id": pool["id"]}})
    assert sub.status_code == 201, sub.text
    # the pool's grant is in use by the project's subnet: it may not be taken back
    neutron_error(api.delete(f"{N}/rbac-policies/{grants['subnetpool']['id']}"), 409,
                  "RbacPolicyInUse")
    # a shared scope is seen, not used: only its owner puts pools in it (upstream)
    own_pool = _as(api, user, "POST", f"{N}/subnetpools", json={"subnetpool": {
        "name": "own", "prefixes": ["10.93.0.0/16"], "address_scope_id": scope["id"]}})
    neutron_error(own_pool, 400, "IllegalSubnetPoolAssociationToAddressScope")
    # the grant's target may not share onwards with everyone (an admin's, by policy)
    neutron_error(_as(api, user, "POST", f"{N}/rbac-policies", json={"rbac_policy": {
        "object_type": "address_scope", "object_id": scope["id"],
        "action": "access_as_shared", "target_tenant": "*"}}), 403)
    assert _as(api, user, "DELETE", f"{N}/subnets/{sub.json()['subnet']['id']}"
               ).status_code == 204
    assert api.delete(f"{N}/rbac-policies/{grants['subnetpool']['id']}").status_code == 204
    assert api.delete(f"{N}/rbac-policies/{grants['address_scope']['id']}").status_code == 204
    assert _as(api, user, "GET", f"{N}/subnetpools/{pool['id']}").status_code == 404


def test_subnets_filtered_by_shared_as_their_networks_are_shared_with_the_caller(api):
    user = new_user(api, "member")
    everyone = create(api, "networks", "network", {"name": "to-all", "shared": True})
    granted = create(api, "networks", "network", {"name": "to-one"})
    create(api, "rbac-policies", "rbac_policy", {
        "object_type": "network", "object_id": granted["id"], "action": "access_as_shared",
        "target_tenant": user["project_id"]})
    own = api.post(f"{N}/networks", user=None, token=user["token"],
                   json={"network": {"name": "mine"}}).json()["network"]
    subnets = {}
    for i, net in enumerate((everyone, granted)):
        subnets[net["name"]] = create(api, "subnets", "subnet", {
            "network_id": net["id"], "ip_version": 4, "cidr": f"10.91.{i}.0/24"})["id"]
    r = api.post(f"{N}/subnets", user=None, token=user["token"], json={"subnet": {
        "network_id": own["id"], "ip_version": 4, "cidr": "10.91.9.0/24"}})
    assert r.status_code == 201, r.text
    subnets["mine"] = r.json()["subnet"]["id"]

    def listed(value: str) -> set[str]:
        r = api.get(f"{N}/subnets?shared={value}", user=None, token=user["token"])
        assert r.status_code == 200, r.text
        return {s["id"] for s in r.json()["subnets"]} & set(subnets.values())

    assert listed("true") == {subnets["to-all"], subnets["to-one"]}
    assert listed("False") == {subnets["mine"]}
    neutron_error(api.get(f"{N}/subnets?shared=maybe", user=None, token=user["token"]), 400)
