"""Network fidelity (issue 11): paging links, security group errors, external networks'
subnets and floating IPs, agents and subnet-pool prefix operations, as upstream."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3 import public


# ------------------------------------------------------------------ paging links
def _links(body: dict, collection: str) -> dict[str, dict]:
    return {link["rel"]: parse_qs(urlsplit(link["href"]).query)
            for link in body.get(f"{collection}_links", [])}


def test_paging_links_as_neutron_builds_them(api):
    made = sorted(create(api, "networks", "network", {"name": f"pl-{i}", "description": "pl"},
                         user="demo")["id"] for i in range(4))
    q = f"{N}/networks?description=pl&limit=2"
    first = api.get(q, user="demo").json()
    assert [n["id"] for n in first["networks"]] == made[:2]
    links = _links(first, "networks")
    assert links["next"]["marker"] == [made[1]] and "page_reverse" not in links["next"]
    assert links["previous"]["marker"] == [made[0]]
    assert links["previous"]["page_reverse"] == ["True"]
    # the last page is full: it still offers `next` ...
    second = api.get(f"{q}&marker={made[1]}", user="demo").json()
    assert [n["id"] for n in second["networks"]] == made[2:]
    links = _links(second, "networks")
    assert links["next"]["marker"] == [made[3]] and links["previous"]["marker"] == [made[2]]
    # ... whose page is empty and carries only `previous`
    empty = api.get(f"{q}&marker={made[3]}", user="demo").json()
    assert empty["networks"] == [] and set(_links(empty, "networks")) == {"previous"}
    # a short page going forwards: no next
    short = api.get(f"{q}&marker={made[2]}", user="demo").json()
    assert set(_links(short, "networks")) == {"previous"}
    # backwards from the third: the first two, and a full page keeps both links
    back = api.get(f"{q}&marker={made[2]}&page_reverse=True", user="demo").json()
    assert [n["id"] for n in back["networks"]] == made[:2]
    assert set(_links(back, "networks")) == {"next", "previous"}
    # a short page going backwards: no previous
    back = api.get(f"{q}&marker={made[1]}&page_reverse=True", user="demo").json()
    assert [n["id"] for n in back["networks"]] == made[:1]
    assert set(_links(back, "networks")) == {"next"}
    # the same on another collection, and nothing without a limit
    sgs = api.get(f"{N}/security-groups?limit=1", user="demo").json()
    assert "next" in _links(sgs, "security_groups")
    assert "networks_links" not in api.get(f"{N}/networks", user="demo").json()


# ------------------------------------------------------------------ security groups
def test_security_group_errors_as_upstream(api):
    sg = create(api, "security-groups", "security_group", {"name": "fid"}, user="demo")
    rule = {"security_group_id": sg["id"], "direction": "ingress", "protocol": "tcp"}
    for bad in (70000, -1, "abc"):
        err = neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "port_range_min": bad, "port_range_max": 80}}),
            400, "SecurityGroupInvalidPortValue")
        assert err["message"].startswith(f"Invalid value for port {bad}")
    err = neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
        "security_group_rule": {**rule, "port_range_min": 0, "port_range_max": 80}}),
        400, "SecurityGroupInvalidPortValue")
    assert err["message"].startswith("Invalid value for port 0")
    # tempest's invalid-port cases, messages included
    for proto, pmin, pmax, msg in (
            ("tcp", -16, 80, "Invalid value for port -16"),
            ("tcp", 80, 79, "port_range_min must be <= port_range_max"),
            ("tcp", 80, 65536, "Invalid value for port 65536"),
            ("tcp", None, 6, "port_range_min must be <= port_range_max"),
            ("icmp", 1, 256, "Invalid value for ICMP code"),
            ("icmp", -1, 25, "Invalid value"),
            ("icmp", None, 6, "ICMP type (port-range-min) is missing"),
            ("icmp", 300, 1, "Invalid value for ICMP type")):
        err = neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "protocol": proto, "port_range_min": pmin,
                                    "port_range_max": pmax}}), 400)
        assert msg in err["message"], (pmin, pmax, err)
    for prefix in ("192.168.1./24", "192.168.1.1/33", "bad_prefix", "256"):
        neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "remote_ip_prefix": prefix}}), 400)
    # an unknown remote group is 404, whether or not it looks like a UUID
    for remote in ("0b7e6a42-9d1f-4c55-8d77-6c1d2f0c4e11", "not-a-uuid"):
        err = neutron_error(api.post(f"{N}/security-group-rules", user="demo", json={
            "security_group_rule": {**rule, "remote_group_id": remote}}),
            404, "SecurityGroupNotFound")
        assert remote in err["message"]
    # 'default' is reserved: neither created nor renamed to (any case)
    for name in ("default", "Default"):
        neutron_error(api.put(f"{N}/security-groups/{sg['id']}", user="demo", json={
            "security_group": {"name": name}}), 409, "SecurityGroupDefaultAlreadyExists")
        neutron_error(api.post(f"{N}/security-groups", user="demo", json={
            "security_group": {"name": name}}), 409, "SecurityGroupDefaultAlreadyExists")
    shown = api.get(f"{N}/security-groups/{sg['id']}", user="demo").json()["security_group"]
    assert shown["name"] == "fid"
    r = api.put(f"{N}/security-groups/{sg['id']}", user="demo",
                json={"security_group": {"name": "renamed"}})
    assert r.status_code == 200 and r.json()["security_group"]["name"] == "renamed"


# ------------------------------------------------------------------ external networks
def test_external_subnets_hidden_unless_shared(api):
    ext = create(api, "networks", "network", {"name": "ext-fid", "router:external": True})
    sub = create(api, "subnets", "subnet", {"network_id": ext["id"], "ip_version": 4,
                                            "cidr": "203.0.113.0/24"})
    # the network is visible to every project, its subnet is not
    assert api.get(f"{N}/networks/{ext['id']}", user="demo").status_code == 200
    neutron_error(api.get(f"{N}/subnets/{sub['id']}", user="demo"), 404, "SubnetNotFound")
    listed = api.get(f"{N}/subnets?network_id={ext['id']}", user="demo").json()["subnets"]
    assert listed == []
    assert api.get(f"{N}/networks/{ext['id']}", user="demo").json()["network"]["subnets"]
    # shared: now visible
    api.put(f"{N}/networks/{ext['id']}", json={"network": {"shared": True}})
    assert api.get(f"{N}/subnets/{sub['id']}", user="demo").status_code == 200
    assert [s["id"] for s in api.get(f"{N}/subnets?network_id={ext['id']}",
                                     user="demo").json()["subnets"]] == [sub["id"]]
    # admins see it either way
    api.put(f"{N}/networks/{ext['id']}", json={"network": {"shared": False}})
    assert api.get(f"{N}/subnets/{sub['id']}").status_code == 200


def test_deleting_an_external_network_deletes_its_floating_ips(api):
    ext = create(api, "networks", "network", {"name": "ext-fips", "router:external": True})
    create(api, "subnets", "subnet", {"network_id": ext["id"], "ip_version": 4,
                                      "cidr": "198.51.100.0/24"})
    fips = [create(api, "floatingips", "floatingip", {"floating_network_id": ext["id"]},
                   user=user) for user in ("demo", "admin")]
    assert api.delete(f"{N}/networks/{ext['id']}").status_code == 204
    for fip in fips:
        neutron_error(api.get(f"{N}/floatingips/{fip['id']}"), 404)
    assert api.get(f"{N}/ports?network_id={ext['id']}").json()["ports"] == []
    assert public(api)["id"] != ext["id"]


# ------------------------------------------------------------------ agents
def test_agents_one_per_host_admin_only(api):
    hosts = {h.name: h for h in api.runtime.settings.compute.hosts}
    agents = api.get(f"{N}/agents").json()["agents"]
    assert sorted(a["host"] for a in agents) == sorted(hosts)
    for a in agents:
        assert a["agent_type"] == "Open vSwitch agent" and a["alive"] is True
        assert a["binary"] == "neutron-openvswitch-agent" and a["admin_state_up"] is True
        assert set(a["configurations"]["bridge_mappings"]) == set(
            hosts[a["host"]].physical_networks)
    one = agents[0]
    shown = api.get(f"{N}/agents/{one['id']}").json()["agent"]
    assert shown["host"] == one["host"] and shown["id"] == one["id"]
    by_host = api.get(f"{N}/agents?host={one['host']}").json()["agents"]
    assert [a["id"] for a in by_host] == [one["id"]]
    assert api.get(f"{N}/agents?agent_type=DHCP%20agent").json()["agents"] == []
    page = api.get(f"{N}/agents?limit=1").json()
    assert len(page["agents"]) == 1 and any(
        link["rel"] == "next" for link in page["agents_links"])
    # admin-only: a member lists nothing and shows 404
    assert api.get(f"{N}/agents", user="demo").json()["agents"] == []
    neutron_error(api.get(f"{N}/agents/{one['id']}", user="demo"), 404, "AgentNotFound")
    neutron_error(api.get(f"{N}/agents/nope"), 404, "AgentNotFound")
    neutron_error(api.get(f"{N}/agents?bogus=1"), 400)
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert "agent" in aliases


# ------------------------------------------------------------------ RBAC policies
RB = f"{N}/rbac-policies"


def _policy(api, user: str = "admin", **body) -> dict:
    r = api.post(RB, user=user, json={"rbac_policy": body})
    assert r.status_code == 201, r.text
    return r.json()["rbac_policy"]


def _token_project(api, user: str) -> str:
    r = api.post(f"{N}/security-groups", user=user, json={"security_group": {"name": "who"}})
    sg = r.json()["security_group"]
    api.delete(f"{N}/security-groups/{sg['id']}", user=user)
    return sg["project_id"]


def test_rbac_share_a_network_with_one_project(api):
    from tests.api.test_segment_ranges_allocation import new_member

    other, other_project = new_member(api)
    third, _ = new_member(api)
    demo_project = _token_project(api, "demo")
    net = create(api, "networks", "network", {"name": "rbac-net"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": "10.77.0.0/24"}, user="demo")
    neutron_error(api.get(f"{N}/networks/{net['id']}", user=other), 404)
    # the owner (a member) shares it with one project; only an admin may use '*'
    neutron_error(api.post(RB, user="demo", json={"rbac_policy": {
        "object_type": "network", "object_id": net["id"], "action": "access_as_shared",
        "target_tenant": "*"}}), 403, "PolicyNotAuthorized")
    p = _policy(api, "demo", object_type="network", object_id=net["id"],
                action="access_as_shared", target_tenant=other_project)
    assert p["project_id"] == p["tenant_id"] == demo_project
    assert p["target_tenant"] == other_project and p["action"] == "access_as_shared"
    bumped = api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]
    assert bumped["revision_number"] > net["revision_number"]
    neutron_error(api.post(RB, user="demo", json={"rbac_policy": {
        "object_type": "network", "object_id": net["id"], "action": "access_as_shared",
        "target_tenant": other_project}}), 409, "DuplicateRbacPolicy")
    # the target sees the network (shared: true for it) and its subnet, and plugs in
    shown = api.get(f"{N}/networks/{net['id']}", user=other).json()["network"]
    assert shown["shared"] is True
    assert api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]["shared"] \
        is False
    assert net["id"] in {n["id"] for n in api.get(f"{N}/networks?shared=true",
                                                   user=other).json()["networks"]}
    assert api.get(f"{N}/subnets/{sub['id']}", user=other).status_code == 200
    port = create(api, "ports", "port", {"network_id": net["id"],
                                         "fixed_ips": [{"subnet_id": sub["id"]}]}, user=other)
    assert port["fixed_ips"][0]["subnet_id"] == sub["id"]
    # a third project still sees nothing
    neutron_error(api.get(f"{N}/networks/{net['id']}", user=third), 404)
    assert api.get(f"{N}/subnets?network_id={net['id']}", user=third).json()["subnets"] == []
    # the policy is the owner's: listed for it (and admins), invisible to the target
    assert [x["id"] for x in api.get(f"{RB}?object_id={net['id']}",
                                     user="demo").json()["rbac_policies"]] == [p["id"]]
    assert api.get(RB, user=other).json()["rbac_policies"] == []
    neutron_error(api.get(f"{RB}/{p['id']}", user=other), 404, "RbacPolicyNotFound")
    # in use by the target's port: neither removed nor re-targeted (409), nothing changes
    err = neutron_error(api.delete(f"{RB}/{p['id']}", user="demo"), 409, "RbacPolicyInUse")
    assert net["id"] in err["message"]
    neutron_error(api.put(f"{RB}/{p['id']}", user="demo", json={"rbac_policy": {
        "target_tenant": "someone-else"}}), 409, "RbacPolicyInUse")
    assert api.get(f"{N}/networks/{net['id']}", user=other).status_code == 200
    assert api.delete(f"{N}/ports/{port['id']}", user=other).status_code == 204
    assert api.delete(f"{RB}/{p['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/networks/{net['id']}", user=other), 404)
    # deleting the network deletes its policies
    p = _policy(api, "demo", object_type="network", object_id=net["id"],
                action="access_as_shared", target_tenant=other_project)
    assert api.delete(f"{N}/networks/{net['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{RB}/{p['id']}"), 404)


def test_rbac_shared_flag_is_the_wildcard_policy(api):
    from tests.api.test_segment_ranges_allocation import new_member

    other, _ = new_member(api)
    net = create(api, "networks", "network", {"name": "flag-net", "shared": True})
    wild = api.get(f"{RB}?object_id={net['id']}").json()["rbac_policies"]
    assert [(x["action"], x["target_tenant"]) for x in wild] == [("access_as_shared", "*")]
    assert api.get(f"{N}/networks/{net['id']}", user=other).json()["network"]["shared"]
    # deleting the wildcard unshares the network; creating one shares it again
    assert api.delete(f"{RB}/{wild[0]['id']}").status_code == 204
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["shared"] is False
    neutron_error(api.get(f"{N}/networks/{net['id']}", user=other), 404)
    _policy(api, object_type="network", object_id=net["id"], action="access_as_shared",
            target_tenant="*")
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["shared"] is True
    # shared=false through the network removes the wildcard
    api.put(f"{N}/networks/{net['id']}", json={"network": {"shared": False}})
    assert api.get(f"{RB}?object_id={net['id']}").json()["rbac_policies"] == []


def test_rbac_external_with_chosen_projects(api):
    from tests.api.test_segment_ranges_allocation import new_member

    other, other_project = new_member(api)
    third, _ = new_member(api)
    net = create(api, "networks", "network", {"name": "prov-ext"})
    create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                      "cidr": "192.0.2.0/24"})
    # access_as_external to one project makes the network external, visible to it only
    p = _policy(api, object_type="network", object_id=net["id"],
                action="access_as_external", target_tenant=other_project)
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["router:external"] is True
    assert api.get(f"{N}/networks/{net['id']}", user=other).status_code == 200
    neutron_error(api.get(f"{N}/networks/{net['id']}", user=third), 404)
    router = create(api, "routers", "router", {
        "name": "r", "external_gateway_info": {"network_id": net["id"]}}, user=other)
    neutron_error(api.delete(f"{RB}/{p['id']}"), 409, "RbacPolicyInUse")
    api.put(f"{N}/routers/{router['id']}", user=other,
            json={"router": {"external_gateway_info": {}}})
    assert api.delete(f"{RB}/{p['id']}").status_code == 204
    # the last external policy gone: internal again
    assert api.get(f"{N}/networks/{net['id']}").json()["network"]["router:external"] is False
    # access_as_external is for networks only
    pool = create(api, "subnetpools", "subnetpool", {"name": "ext-pool",
                                                      "prefixes": ["10.200.0.0/16"]})
    neutron_error(api.post(RB, json={"rbac_policy": {
        "object_type": "subnetpool", "object_id": pool["id"],
        "action": "access_as_external", "target_tenant": "*"}}), 400, "InvalidActionForType")
    neutron_error(api.post(RB, json={"rbac_policy": {
        "object_type": "qos_policy", "object_id": pool["id"],
        "action": "access_as_shared", "target_tenant": "*"}}), 400)


def test_rbac_objects_of_other_types_and_ownership(api):
    from tests.api.test_segment_ranges_allocation import new_member

    other, other_project = new_member(api)
    # a member may grant neither what it cannot see nor what it does not own (400, as
    # upstream's RBAC callbacks answer), and object_id is a UUID
    admin_net = create(api, "networks", "network", {"name": "admin-only"})
    err = neutron_error(api.post(RB, user="demo", json={"rbac_policy": {
        "object_type": "network", "object_id": admin_net["id"],
        "action": "access_as_shared", "target_tenant": other_project}}), 400, "InvalidInput")
    assert admin_net["id"] in err["message"]
    neutron_error(api.post(RB, user="demo", json={"rbac_policy": {
        "object_type": "network", "object_id": "not-a-uuid",
        "action": "access_as_shared", "target_tenant": other_project}}), 400)
    shared = create(api, "networks", "network", {"name": "shared-not-mine", "shared": True})
    err = neutron_error(api.post(RB, user="demo", json={"rbac_policy": {
        "object_type": "network", "object_id": shared["id"],
        "action": "access_as_shared", "target_tenant": other_project}}), 400, "InvalidInput")
    assert "Only admins can manipulate policies on networks they do not own" in err["message"]
    # security groups: the target sees the group and may use it on its ports
    sg = create(api, "security-groups", "security_group", {"name": "shared-sg"}, user="demo")
    neutron_error(api.get(f"{N}/security-groups/{sg['id']}", user=other), 404)
    p = _policy(api, "demo", object_type="security_group", object_id=sg["id"],
                action="access_as_shared", target_tenant=other_project)
    seen = api.get(f"{N}/security-groups/{sg['id']}", user=other).json()["security_group"]
    assert seen["shared"] is True
    assert [g["id"] for g in api.get(f"{N}/security-groups?shared=true",
                                     user=other).json()["security_groups"]] == [sg["id"]]
    assert sg["id"] not in {g["id"] for g in api.get(f"{N}/security-groups?shared=false",
                                                     user=other).json()["security_groups"]}
    owner_view = api.get(f"{N}/security-groups/{sg['id']}", user="demo").json()
    assert owner_view["security_group"]["shared"] is False  # not shared with its own project
    net = create(api, "networks", "network", {"name": "sg-user-net"}, user=other)
    port = create(api, "ports", "port", {"network_id": net["id"],
                                         "security_groups": [sg["id"]]}, user=other)
    neutron_error(api.delete(f"{RB}/{p['id']}", user="demo"), 409, "RbacPolicyInUse")
    api.delete(f"{N}/ports/{port['id']}", user=other)
    assert api.delete(f"{RB}/{p['id']}", user="demo").status_code == 204
    # subnet pools: the target allocates from it; then the policy is in use
    pool = create(api, "subnetpools", "subnetpool", {"name": "shared-pool",
                                                      "prefixes": ["10.210.0.0/16"],
                                                      "default_prefixlen": 24}, user="demo")
    neutron_error(api.get(f"{N}/subnetpools/{pool['id']}", user=other), 404)
    p = _policy(api, "demo", object_type="subnetpool", object_id=pool["id"],
                action="access_as_shared", target_tenant=other_project)
    assert api.get(f"{N}/subnetpools/{pool['id']}", user=other).json()["subnetpool"]["shared"]
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "subnetpool_id": pool["id"]}, user=other)
    assert sub["cidr"].startswith("10.210.")
    neutron_error(api.delete(f"{RB}/{p['id']}", user="demo"), 409, "RbacPolicyInUse")
    api.delete(f"{N}/subnets/{sub['id']}", user=other)
    assert api.delete(f"{RB}/{p['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/subnetpools/{pool['id']}", user=other), 404)


# ------------------------------------------------------------------ address scopes
AS = f"{N}/address-scopes"


def test_address_scopes(api):
    from tests.api.test_segment_ranges_allocation import new_member

    other, other_project = new_member(api)
    r = api.post(AS, user="demo", json={"address_scope": {"name": "s4", "ip_version": 4}})
    assert r.status_code == 201, r.text
    scope = r.json()["address_scope"]
    assert set(scope) == {"id", "name", "ip_version", "shared", "project_id", "tenant_id"}
    assert scope["shared"] is False and scope["ip_version"] == 4
    neutron_error(api.post(AS, user="demo", json={"address_scope": {
        "name": "x", "ip_version": 4, "shared": True}}), 403)
    neutron_error(api.post(AS, user="demo", json={"address_scope": {"name": "x"}}), 400)
    neutron_error(api.post(AS, user="demo", json={"address_scope": {
        "name": "x", "ip_version": 5}}), 400)
    neutron_error(api.get(f"{AS}/{scope['id']}", user=other), 404, "AddressScopeNotFound")
    # pools in one scope must not overlap; the version must match
    a = create(api, "subnetpools", "subnetpool", {
        "name": "a", "prefixes": ["10.220.0.0/16"], "address_scope_id": scope["id"]},
        user="demo")
    neutron_error(api.post(f"{N}/subnetpools", user="demo", json={"subnetpool": {
        "name": "b", "prefixes": ["10.220.128.0/17"], "address_scope_id": scope["id"]}}),
        409, "AddressScopePrefixConflict")
    neutron_error(api.post(f"{N}/subnetpools", user="demo", json={"subnetpool": {
        "name": "v6", "prefixes": ["fd10::/48"], "address_scope_id": scope["id"]}}),
        400, "IllegalSubnetPoolIpVersionAssociationToAddressScope")
    b = create(api, "subnetpools", "subnetpool", {"name": "b", "prefixes": ["10.221.0.0/16"]},
               user="demo")
    # joining the scope with b's prefixes is fine; growing into a's then is a 409
    r = api.put(f"{N}/subnetpools/{b['id']}", user="demo",
                json={"subnetpool": {"address_scope_id": scope["id"]}})
    assert r.status_code == 200, r.text
    neutron_error(api.put(f"{N}/subnetpools/{b['id']}/add_prefixes", user="demo",
                          json={"prefixes": ["10.220.5.0/24"]}), 409,
                  "AddressScopePrefixConflict")
    assert api.get(f"{N}/subnetpools/{b['id']}", user="demo").json()["subnetpool"][
        "prefixes"] == ["10.221.0.0/16"]
    # networks show the scope of their pools' subnets
    net = create(api, "networks", "network", {"name": "scoped"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                      "subnetpool_id": a["id"], "prefixlen": 24}, user="demo")
    shown = api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]
    assert shown["ipv4_address_scope"] == scope["id"] and shown["ipv6_address_scope"] is None
    # in use by a pool: 409; shared by RBAC: the other project sees it as shared
    neutron_error(api.delete(f"{AS}/{scope['id']}", user="demo"), 409, "AddressScopeInUse")
    _policy(api, "demo", object_type="address_scope", object_id=scope["id"],
            action="access_as_shared", target_tenant=other_project)
    seen = api.get(f"{AS}/{scope['id']}", user=other).json()["address_scope"]
    assert seen["shared"] is True
    assert api.get(f"{AS}/{scope['id']}", user="demo").json()["address_scope"]["shared"] \
        is False
    # renaming; unsharing a shared scope is refused
    r = api.put(f"{AS}/{scope['id']}", user="demo", json={"address_scope": {"name": "s4b"}})
    assert r.status_code == 200 and r.json()["address_scope"]["name"] == "s4b"
    glob = api.post(AS, json={"address_scope": {"name": "g", "ip_version": 6,
                                                "shared": True}}).json()["address_scope"]
    assert api.get(f"{AS}/{glob['id']}", user=other).json()["address_scope"]["shared"]
    neutron_error(api.put(f"{AS}/{glob['id']}", json={"address_scope": {"shared": False}}),
                  400, "AddressScopeUpdateError")
    assert api.delete(f"{AS}/{glob['id']}").status_code == 204


# ------------------------------------------------------------------ subnet pool prefix ops
def test_subnetpool_prefix_operations(api):
    pool = create(api, "subnetpools", "subnetpool", {"name": "ops", "prefixes": ["10.230.0.0/24"],
                                                      "default_prefixlen": 26}, user="demo")
    url = f"{N}/subnetpools/{pool['id']}"
    r = api.put(f"{url}/add_prefixes", user="demo",
                json={"prefixes": ["10.230.1.0/24", "10.231.0.0/24"]})
    assert r.status_code == 200, r.text
    assert r.json() == {"prefixes": ["10.230.0.0/23", "10.231.0.0/24"]}  # merged
    shown = api.get(url, user="demo").json()["subnetpool"]
    assert shown["prefixes"] == ["10.230.0.0/23", "10.231.0.0/24"]
    assert shown["revision_number"] > pool["revision_number"]
    for bad in ({}, {"prefixes": []}, {"prefixes": "10.0.0.0/8"}, []):
        neutron_error(api.put(f"{url}/add_prefixes", user="demo", json=bad), 400)
    neutron_error(api.put(f"{url}/add_prefixes", user="demo",
                          json={"prefixes": ["not-a-cidr"]}), 400)
    neutron_error(api.put(f"{url}/add_prefixes", user="demo",
                          json={"prefixes": ["fd00::/64"]}), 400)
    # a subnet allocated in a prefix blocks its removal; elsewhere it is fine
    net = create(api, "networks", "network", {"name": "ops-net"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "subnetpool_id": pool["id"],
                                            "cidr": "10.230.1.0/26"}, user="demo")
    err = neutron_error(api.put(f"{url}/remove_prefixes", user="demo",
                                json={"prefixes": ["10.230.1.0/24"]}), 400,
                        "IllegalSubnetPoolPrefixUpdate")
    assert "in use by a subnet" in err["message"]
    r = api.put(f"{url}/remove_prefixes", user="demo", json={"prefixes": ["10.231.0.0/24",
                                                                        "10.230.0.0/25"]})
    assert r.json() == {"prefixes": ["10.230.0.128/25", "10.230.1.0/24"]}
    # removing what the pool does not hold is a no-op
    r = api.put(f"{url}/remove_prefixes", user="demo", json={"prefixes": ["192.0.2.0/24"]})
    assert r.status_code == 200 and r.json()["prefixes"] == ["10.230.0.128/25",
                                                             "10.230.1.0/24"]
    # another project cannot see the pool: 404
    from tests.api.test_segment_ranges_allocation import new_member

    other, _ = new_member(api)
    neutron_error(api.put(f"{url}/add_prefixes", user=other,
                          json={"prefixes": ["10.232.0.0/24"]}), 404, "SubnetPoolNotFound")
    api.delete(f"{N}/subnets/{sub['id']}", user="demo")
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"subnetpool-prefix-ops", "rbac-policies", "address-scope"} <= aliases


def test_rbac_cases_of_upstreams_acceptance_tests(api):
    from tests.api.test_segment_ranges_allocation import new_member

    (one, one_project), (two, two_project) = new_member(api), new_member(api)
    net = create(api, "networks", "network", {"name": "acc"}, user=one)
    for bad in (None, "1234" * 100):
        neutron_error(api.post(RB, user=one, json={"rbac_policy": {
            "object_type": "network", "object_id": net["id"], "action": "access_as_shared",
            "target_tenant": bad}}), 400)
    # a wildcard is admin-only on update too
    p = _policy(api, one, object_type="network", object_id=net["id"],
                action="access_as_shared", target_tenant=two_project)
    neutron_error(api.put(f"{RB}/{p['id']}", user=one,
                          json={"rbac_policy": {"target_tenant": "*"}}), 403)
    # fields, id filter, show equals create
    listed = api.get(f"{RB}?id={p['id']}&fields=tenant_id&fields=target_tenant",
                     user=one).json()["rbac_policies"]
    assert listed == [{"tenant_id": one_project, "target_tenant": two_project}]
    assert api.get(f"{RB}/{p['id']}", user=one).json()["rbac_policy"] == p
    # the network's owner may delete the target's port on it
    port = create(api, "ports", "port", {"network_id": net["id"]}, user=two)
    assert api.delete(f"{N}/ports/{port['id']}", user=one).status_code == 204
    # a self-share never blocks: deleted or re-targeted with the owner's port present
    own = _policy(api, one, object_type="network", object_id=net["id"],
                  action="access_as_shared", target_tenant=one_project)
    mine = create(api, "ports", "port", {"network_id": net["id"]}, user=one)
    assert api.delete(f"{RB}/{own['id']}", user=one).status_code == 204
    own = _policy(api, one, object_type="network", object_id=net["id"],
                  action="access_as_shared", target_tenant=one_project)
    r = api.put(f"{RB}/{own['id']}", user=one, json={"rbac_policy": {"target_tenant": "x"}})
    assert r.status_code == 200 and r.json()["rbac_policy"]["target_tenant"] == "x"
    api.delete(f"{N}/ports/{mine['id']}", user=one)
    # a wildcard lets a specific grant go although the target has a port; then it is the
    # wildcard that is in use
    port = create(api, "ports", "port", {"network_id": net["id"]}, user=two)
    wild = _policy(api, object_type="network", object_id=net["id"],
                   action="access_as_shared", target_tenant="*")
    assert api.delete(f"{RB}/{p['id']}", user=one).status_code == 204
    neutron_error(api.delete(f"{RB}/{wild['id']}"), 409, "RbacPolicyInUse")
    neutron_error(api.put(f"{RB}/{wild['id']}", json={"rbac_policy": {
        "target_tenant": one_project}}), 409, "RbacPolicyInUse")
    api.delete(f"{N}/ports/{port['id']}", user=two)
    assert api.delete(f"{RB}/{wild['id']}").status_code == 204
    # the rbac_policy quota
    r = api.put(f"{N}/quotas/{one_project}", json={"quota": {"rbac_policy": 2}})
    assert r.status_code == 200, r.text
    made = [api.post(RB, user=one, json={"rbac_policy": {
        "object_type": "network", "object_id": net["id"], "action": "access_as_shared",
        "target_tenant": f"t{i}"}}).status_code for i in range(3)]
    assert made == [201, 409, 409]  # the `x` grant above counts: 2 of 2
