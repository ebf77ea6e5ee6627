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
