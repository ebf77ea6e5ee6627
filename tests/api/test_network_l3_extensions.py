"""L3 extensions over the in-process app: floating IP pools (`floatingip-pools`)."""

from __future__ import annotations

from tests.api.test_network import N, create


def _aliases(api) -> set[str]:
    return {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}


# ------------------------------------------------------------------ floatingip-pools
def test_floatingip_pools(api):
    assert "floatingip-pools" in _aliases(api)
    ext = create(api, "networks", "network", {"name": "fpool-ext", "router:external": True})
    v4 = create(api, "subnets", "subnet", {"network_id": ext["id"], "ip_version": 4,
                                           "cidr": "198.51.100.0/24", "name": "fp4"})
    create(api, "subnets", "subnet", {"network_id": ext["id"], "ip_version": 6,
                                      "cidr": "2001:db8:77::/64"})
    internal = create(api, "networks", "network", {"name": "fpool-int"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": internal["id"], "ip_version": 4,
                                      "cidr": "10.66.0.0/24"}, user="demo")
    r = api.get(f"{N}/floatingip_pools", user="demo")
    assert r.status_code == 200, r.text
    pools = r.json()["floatingip_pools"]
    demo_project = api.get(f"{N}/networks/{internal['id']}", user="demo").json()[
        "network"]["project_id"]
    mine = [p for p in pools if p["network_id"] == ext["id"]]
    # the IPv4 subnet only, named for the caller's project
    assert mine == [{"subnet_id": v4["id"], "subnet_name": "fp4", "network_id": ext["id"],
                     "cidr": "198.51.100.0/24", "project_id": demo_project,
                     "tenant_id": demo_project}]
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]
    assert {p["network_id"] for p in pools} >= {public["id"], ext["id"]}
    assert internal["id"] not in {p["network_id"] for p in pools}
    # filters, fields, sorting and paging by subnet
    r = api.get(f"{N}/floatingip_pools?network_id={ext['id']}&fields=cidr", user="demo")
    assert r.json()["floatingip_pools"] == [{"cidr": "198.51.100.0/24"}]
    r = api.get(f"{N}/floatingip-pools?sort_key=cidr&sort_dir=desc&limit=1", user="demo")
    body = r.json()
    assert len(body["floatingip_pools"]) == 1 and body["floatingip_pools_links"]
    assert api.get(f"{N}/floatingip_pools?bogus=1", user="demo").status_code == 400
    # a network that stops being external is no pool any more
    r = api.put(f"{N}/networks/{ext['id']}", json={"network": {"router:external": False}})
    assert r.status_code == 200, r.text
    pools = api.get(f"{N}/floatingip_pools", user="demo").json()["floatingip_pools"]
    assert ext["id"] not in {p["network_id"] for p in pools}
