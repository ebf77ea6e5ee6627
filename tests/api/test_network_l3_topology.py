"""Auto-allocated topology, network IP availability and quotas over the in-process app."""

from __future__ import annotations

import uuid

import pytest

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3 import make_net, make_router, public

T = f"{N}/auto-allocated-topology"


def new_user(api, role: str) -> dict:
    """A fresh project with one user holding `role`; returns its id and token."""
    h = {"X-Auth-Token": api.token()}
    name = f"p-{uuid.uuid4().hex[:6]}"
    project = api.client.post("/identity/v3/projects", headers=h, json={
        "project": {"name": name, "domain_id": "default"}}).json()["project"]
    user = api.client.post("/identity/v3/users", headers=h, json={"user": {
        "name": f"u-{name}", "password": "pw-secret", "domain_id": "default"}}).json()["user"]
    role_id = api.client.get(f"/identity/v3/roles?name={role}", headers=h).json()["roles"][0]["id"]
    api.client.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{role_id}",
                   headers=h)
    return {"project_id": project["id"], "token": api.token(f"u-{name}", name, "pw-secret")}


def owned(api, project_id: str) -> dict[str, list[dict]]:
    return {c: api.get(f"{N}/{c}?project_id={project_id}").json()[c]
            for c in ("networks", "subnets", "routers")}


# ------------------------------------------------------------------ auto-allocated topology
def test_topology_built_once_and_reused(api):
    project = uuid.uuid4().hex
    r = api.get(f"{T}/{project}?fields=dry-run")
    assert r.status_code == 200, r.text
    assert r.json()["auto_allocated_topology"]["id"] == "dry-run=pass"
    assert not owned(api, project)["networks"]  # the dry run wrote nothing
    r = api.get(f"{T}/{project}")
    assert r.status_code == 200, r.text
    topo = r.json()["auto_allocated_topology"]
    assert topo == {"id": topo["id"], "project_id": project, "tenant_id": project}
    again = api.get(f"{N}/auto_allocated_topology/{project}.json").json()
    assert again["auto_allocated_topology"]["id"] == topo["id"]
    res = owned(api, project)
    [net] = res["networks"]
    assert net["id"] == topo["id"] and net["name"] == "auto_allocated_network"
    assert net["admin_state_up"] is True and net["shared"] is False
    assert net["provider:network_type"] == "vxlan"
    subnets = sorted(res["subnets"], key=lambda s: s["ip_version"])
    assert [(s["name"], s["ip_version"]) for s in subnets] == [
        ("auto_allocated_subnet_v4", 4), ("auto_allocated_subnet_v6", 6)]
    pools = {p["ip_version"]: p["id"] for p in api.get(
        f"{N}/subnetpools?is_default=true").json()["subnetpools"]}
    assert [s["subnetpool_id"] for s in subnets] == [pools[4], pools[6]]
    [router] = res["routers"]
    assert router["name"] == "auto_allocated_router"
    assert router["external_gateway_info"]["network_id"] == public(api)["id"]
    ifaces = api.get(f"{N}/ports?device_id={router['id']}"
                     "&device_owner=network:router_interface").json()["ports"]
    assert sorted(ip["subnet_id"] for p in ifaces for ip in p["fixed_ips"]) == sorted(
        s["id"] for s in subnets)


def test_topology_member_reader_and_other_projects(api):
    member = new_user(api, "member")
    reader = new_user(api, "reader")
    as_member = {"token": member["token"], "user": None}
    as_reader = {"token": reader["token"], "user": None}
    r = api.get(f"{T}/{reader['project_id']}?fields=dry-run", **as_reader)
    assert r.status_code == 200 and r.json()["auto_allocated_topology"]["id"] == "dry-run=pass"
    neutron_error(api.get(f"{T}/{reader['project_id']}", **as_member), 403, "NotAuthorized")
    neutron_error(api.get(f"{T}/{member['project_id']}?fields=dry-run", **as_reader), 403)
    neutron_error(api.delete(f"{T}/{member['project_id']}", **as_reader), 403)
    neutron_error(api.get(f"{T}/{member['project_id']}?fields=name", **as_member), 400,
                  "BadRequest")
    r = api.get(f"{T}/None", **as_member)  # the caller's own project
    assert r.status_code == 200, r.text
    topo = r.json()["auto_allocated_topology"]
    assert topo["project_id"] == member["project_id"]
    net = api.get(f"{N}/networks/{topo['id']}", **as_member).json()["network"]
    assert net["project_id"] == member["project_id"]
    assert api.delete(f"{T}/{member['project_id']}", **as_member).status_code == 204
    assert not any(owned(api, member["project_id"]).values())
    assert api.delete(f"{T}/{member['project_id']}", **as_member).status_code == 204


def test_topology_delete_refused_while_ports_in_use(api):
    project = uuid.uuid4().hex
    net_id = api.get(f"{T}/{project}").json()["auto_allocated_topology"]["id"]
    port = create(api, "ports", "port", {"network_id": net_id, "project_id": project})
    before = owned(api, project)
    neutron_error(api.delete(f"{T}/{project}"), 409, "NetworkInUse")
    assert owned(api, project) == before  # nothing half-removed
    assert api.get(f"{T}/{project}").json()["auto_allocated_topology"]["id"] == net_id
    api.delete(f"{N}/ports/{port['id']}")
    assert api.delete(f"{T}/{project}").status_code == 204
    assert not any(owned(api, project).values())
    # the next request builds a new one
    assert api.get(f"{T}/{project}").json()["auto_allocated_topology"]["id"] != net_id


# ------------------------------------------------------------------ IP availability
def test_ip_availability_numbers(api):
    net, sub = make_net(api, "10.70.1.0/28")  # pools .2-.14: 13 addresses
    v6 = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 6,
                                           "cidr": "fd70::/64"}, user="demo")
    for _ in range(2):
        create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    router = make_router(api)
    api.put(f"{N}/routers/{router['id']}/add_router_interface", json={"subnet_id": sub["id"]},
            user="demo")
    r = api.get(f"{N}/network-ip-availabilities/{net['id']}")
    assert r.status_code == 200, r.text
    avail = r.json()["network_ip_availability"]
    by_subnet = {s["subnet_id"]: s for s in avail["subnet_ip_availability"]}
    assert by_subnet[sub["id"]]["total_ips"] == 13
    assert by_subnet[sub["id"]]["used_ips"] == 3  # two ports and the router interface
    assert by_subnet[v6["id"]]["total_ips"] == 2**64 - 2
    assert by_subnet[v6["id"]]["used_ips"] == 2  # the two ports' IPv6 addresses
    assert by_subnet[sub["id"]]["cidr"] == "10.70.1.0/28"
    assert avail["total_ips"] == 13 + 2**64 - 2 and avail["used_ips"] == 5
    assert avail["network_name"] == net["name"] and avail["project_id"] == net["project_id"]
    listed = api.get(f"{N}/network_ip_availabilities?ip_version=4&network_id={net['id']}"
                     ).json()["network_ip_availabilities"]
    assert [s["ip_version"] for s in listed[0]["subnet_ip_availability"]] == [4]
    names = api.get(f"{N}/network-ip-availabilities?fields=network_name").json()
    assert {"public", net["name"]} <= {i["network_name"] for i in
                                       names["network_ip_availabilities"]}
    # members see nothing, as upstream
    assert api.get(f"{N}/network-ip-availabilities", user="demo").json() == {
        "network_ip_availabilities": []}
    neutron_error(api.get(f"{N}/network-ip-availabilities/{net['id']}", user="demo"), 404)
    neutron_error(api.get(f"{N}/network-ip-availabilities/{uuid.uuid4()}"), 404,
                  "NetworkNotFound")


# ------------------------------------------------------------------ quotas
DEFAULTS = {"network": 100, "subnet": 100, "port": 500, "router": 10, "floatingip": 50,
            "security_group": 10, "security_group_rule": 100, "subnetpool": -1,
            "rbac_policy": 10}


def test_quotas_show_update_enforce_reset(api):
    user = new_user(api, "member")
    p = user["project_id"]
    h = {"token": user["token"], "user": None}
    assert api.get(f"{N}/quotas/{p}", **h).json() == {"quota": DEFAULTS}
    assert api.get(f"{N}/quotas/{p}/default", **h).json() == {"quota": DEFAULTS}
    neutron_error(api.put(f"{N}/quotas/{p}", json={"quota": {"router": 1}}, **h), 403)
    neutron_error(api.get(f"{N}/quotas/{uuid.uuid4().hex}", **h), 403, "NotAuthorized")
    neutron_error(api.get(f"{N}/quotas", **h), 403)
    r = api.put(f"{N}/quotas/{p}", json={"quota": {"router": 1, "floatingip": 0}})
    assert r.status_code == 200 and r.json()["quota"] == {**DEFAULTS, "router": 1,
                                                          "floatingip": 0}
    assert api.post(f"{N}/routers", json={"router": {"name": "one"}}, **h).status_code == 201
    err = neutron_error(api.post(f"{N}/routers", json={"router": {}}, **h), 409, "OverQuota")
    assert err["message"] == "Quota exceeded for resources: ['router']."
    neutron_error(api.post(f"{N}/floatingips", json={"floatingip": {
        "floating_network_id": public(api)["id"]}}, **h), 409, "OverQuota")
    details = api.get(f"{N}/quotas/{p}/details.json", **h).json()["quota"]
    assert details["router"] == {"limit": 1, "used": 1, "reserved": 0}
    assert details["floatingip"] == {"limit": 0, "used": 0, "reserved": 0}
    assert details["network"]["limit"] == 100
    listed = {q["project_id"]: q for q in api.get(f"{N}/quotas").json()["quotas"]}
    assert listed[p]["router"] == 1 and listed[p]["tenant_id"] == p
    for bad in ({"quota": {"router": -2}}, {"quota": {"bogus": 1}}, {"quota": {"router": "x"}},
                {"quota": []}, {}):
        neutron_error(api.put(f"{N}/quotas/{p}", json=bad), 400)
    assert api.get(f"{N}/quotas/{p}").json()["quota"]["router"] == 1
    assert api.delete(f"{N}/quotas/{p}").status_code == 204
    assert api.get(f"{N}/quotas/{p}", **h).json() == {"quota": DEFAULTS}


# ------------------------------------------------------------------ deployment errors
@pytest.fixture
def default_v4_pool(api):
    """The default IPv4 pool; restored as the default after the test."""
    pool = api.get(f"{N}/subnetpools?is_default=true&ip_version=4").json()["subnetpools"][0]
    yield pool
    for other in api.get(f"{N}/subnetpools?is_default=true&ip_version=4").json()[
            "subnetpools"]:
        api.put(f"{N}/subnetpools/{other['id']}", json={"subnetpool": {"is_default": False}})
    api.put(f"{N}/subnetpools/{pool['id']}", json={"subnetpool": {"is_default": True}})


def test_exhausted_default_pool_fails_precisely_and_leaves_nothing(api, default_v4_pool):
    api.put(f"{N}/subnetpools/{default_v4_pool['id']}",
            json={"subnetpool": {"is_default": False}})
    tiny = create(api, "subnetpools", "subnetpool", {
        "name": "tiny", "prefixes": ["10.251.0.0/26"], "default_prefixlen": 26,
        "is_default": True, "shared": True})
    filler = create(api, "networks", "network", {"name": "filler"})
    create(api, "subnets", "subnet", {"network_id": filler["id"], "ip_version": 4,
                                      "subnetpool_id": tiny["id"]})  # its only block
    project = uuid.uuid4().hex
    err = neutron_error(api.get(f"{T}/{project}"), 409, "AutoAllocationFailure")
    assert err["message"].startswith("Deployment error: Unable to provide project private "
                                     "network: IPv4 default subnet pool")
    assert "Insufficient prefix space" in err["message"]
    assert not any(owned(api, project).values())
    # the dry run does not look at free space: the requirements are present
    assert api.get(f"{T}/{project}?fields=dry-run").status_code == 200


def test_no_default_pools_or_external_network(api, default_v4_pool):
    pools = api.get(f"{N}/subnetpools?is_default=true").json()["subnetpools"]
    for pool in pools:
        api.put(f"{N}/subnetpools/{pool['id']}", json={"subnetpool": {"is_default": False}})
    project = uuid.uuid4().hex
    try:
        err = neutron_error(api.get(f"{T}/{project}?fields=dry-run"), 409,
                            "AutoAllocationFailure")
        assert err["message"] == "Deployment error: No default subnetpools defined."
        err = neutron_error(api.get(f"{T}/{project}"), 409, "AutoAllocationFailure")
        assert "No default subnetpools defined" in err["message"]
        assert not any(owned(api, project).values())
        pub = public(api)
        api.put(f"{N}/networks/{pub['id']}", json={"network": {"is_default": False}})
        try:
            err = neutron_error(api.get(f"{T}/{project}?fields=dry-run"), 409,
                                "AutoAllocationFailure")
            assert err["message"] == "Deployment error: No default router:external network."
        finally:
            api.put(f"{N}/networks/{pub['id']}", json={"network": {"is_default": True}})
    finally:
        for pool in pools:
            if pool["ip_version"] == 6:
                api.put(f"{N}/subnetpools/{pool['id']}", json={"subnetpool": {
                    "is_default": True}})


def test_deleting_the_network_by_hand_forgets_the_topology(api):
    project = uuid.uuid4().hex
    net_id = api.get(f"{T}/{project}").json()["auto_allocated_topology"]["id"]
    [router] = owned(api, project)["routers"]
    for sub in owned(api, project)["subnets"]:
        r = api.put(f"{N}/routers/{router['id']}/remove_router_interface",
                    json={"subnet_id": sub["id"]})
        assert r.status_code == 200, r.text
    assert api.delete(f"{N}/routers/{router['id']}").status_code == 204
    assert api.delete(f"{N}/networks/{net_id}").status_code == 204
    fresh = api.get(f"{T}/{project}").json()["auto_allocated_topology"]["id"]
    assert fresh != net_id and len(owned(api, project)["networks"]) == 1
