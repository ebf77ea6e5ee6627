"""`standard-attr-tag` on every taggable resource (tags in the POST, the tags sub-API, the
tag filters), `tag-ports-during-bulk-creation`, `stateful-security-group` and
`security-groups-normalized-cidr` over the in-process app."""

from __future__ import annotations

import pytest

from tests.api.test_network import N, create, neutron_error


def test_advertised(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"standard-attr-tag", "tag-ports-during-bulk-creation", "stateful-security-group",
            "security-groups-normalized-cidr"} <= aliases


def _objects(api) -> dict[str, tuple[str, dict]]:
    """collection (URL spelling) -> (resource, a POST body) of every taggable resource."""
    net = create(api, "networks", "network", {"name": "tagged-net"})
    sub_net = create(api, "networks", "network", {"name": "tagged-subnet-net"})
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]["id"]
    parent = create(api, "ports", "port", {"network_id": net["id"]})
    return {
        "networks": ("network", {"name": "t"}),
        "subnets": ("subnet", {"network_id": sub_net["id"], "ip_version": 4,
                               "cidr": "10.71.0.0/24"}),
        "ports": ("port", {"network_id": net["id"]}),
        "routers": ("router", {"name": "t"}),
        "floatingips": ("floatingip", {"floating_network_id": public}),
        "security-groups": ("security_group", {"name": "t"}),
        "subnetpools": ("subnetpool", {"name": "t", "prefixes": ["10.200.0.0/16"]}),
        "trunks": ("trunk", {"port_id": parent["id"]}),
        "network-segment-ranges": ("network_segment_range", {
            "name": "t", "network_type": "vlan", "physical_network": "physnet1",
            "minimum": 3900, "maximum": 3909, "shared": True}),
    }


def test_every_taggable_resource_takes_tags(api):
    for collection, (resource, body) in _objects(api).items():
        made = create(api, collection, resource, {**body, "tags": ["red", "blue"]})
        assert sorted(made["tags"]) == ["blue", "red"], collection
        url = f"{N}/{collection}/{made['id']}"
        assert api.put(f"{url}/tags/green").status_code == 201, collection
        assert sorted(api.get(f"{url}/tags").json()["tags"]) == ["blue", "green", "red"]
        r = api.put(f"{url}/tags", json={"tags": ["only"]})
        assert r.status_code == 200 and r.json()["tags"] == ["only"], collection
        listed = api.get(f"{N}/{collection}?tags=only").json()[collection.replace("-", "_")]
        assert [x["id"] for x in listed] == [made["id"]], collection
        assert api.delete(f"{url}/tags/only").status_code == 204
        neutron_error(api.get(f"{url}/tags/only"), 404)


def test_bulk_ports_are_tagged(api):
    net = create(api, "networks", "network", {"name": "bulk-tags"}, user="demo")
    r = api.post(f"{N}/ports", user="demo", json={"ports": [
        {"network_id": net["id"], "name": "a", "tags": ["alpha", "shared"]},
        {"network_id": net["id"], "name": "b", "tags": ["beta"]},
        {"network_id": net["id"], "name": "c"}]})
    assert r.status_code == 201, r.text
    tags = {p["name"]: sorted(p["tags"]) for p in r.json()["ports"]}
    assert tags == {"a": ["alpha", "shared"], "b": ["beta"], "c": []}
    listed = api.get(f"{N}/ports?tags=shared", user="demo").json()["ports"]
    assert [p["name"] for p in listed] == ["a"]
    # a bad tag in one item: nothing is made
    r = api.post(f"{N}/ports", user="demo", json={"ports": [
        {"network_id": net["id"], "name": "d", "tags": ["ok"]},
        {"network_id": net["id"], "name": "e", "tags": ["x" * 256]}]})
    neutron_error(r, 400)
    assert api.get(f"{N}/ports?name=d", user="demo").json()["ports"] == []


def test_stateful_security_groups(api):
    sg = create(api, "security-groups", "security_group", {"name": "stateless",
                                                          "stateful": False}, user="demo")
    assert sg["stateful"] is False
    assert [g["id"] for g in api.get(f"{N}/security-groups?stateful=false&name=stateless",
                                     user="demo").json()["security_groups"]] == [sg["id"]]
    url = f"{N}/security-groups/{sg['id']}"
    r = api.put(url, user="demo", json={"security_group": {"stateful": True}})
    assert r.status_code == 200 and r.json()["security_group"]["stateful"] is True
    default = create(api, "security-groups", "security_group", {"name": "s2"}, user="demo")
    assert default["stateful"] is True
    # a group a port uses keeps its statefulness
    net = create(api, "networks", "network", {"name": "sf"}, user="demo")
    create(api, "ports", "port", {"network_id": net["id"], "security_groups": [sg["id"]]},
           user="demo")
    neutron_error(api.put(url, user="demo", json={"security_group": {"stateful": False}}),
                  409)


@pytest.mark.parametrize("prefix, ethertype, normalized", [
    ("10.0.0.5/24", "IPv4", "10.0.0.0/24"),
    ("10.0.0.5", "IPv4", "10.0.0.5/32"),
    ("2001:db8::1/64", "IPv6", "2001:db8::/64"),
])
def test_normalized_cidr(api, prefix, ethertype, normalized):
    sg = create(api, "security-groups", "security_group", {"name": "norm"}, user="demo")
    rule = create(api, "security-group-rules", "security_group_rule", {
        "security_group_id": sg["id"], "direction": "ingress", "ethertype": ethertype,
        "remote_ip_prefix": prefix}, user="demo")
    assert rule["normalized_cidr"] == normalized
    shown = api.get(f"{N}/security-group-rules/{rule['id']}", user="demo").json()
    assert shown["security_group_rule"]["normalized_cidr"] == normalized
    # rules without a prefix show null
    egress = [r for r in api.get(f"{N}/security-group-rules?security_group_id={sg['id']}",
                                 user="demo").json()["security_group_rules"]
              if r["direction"] == "egress"]
    assert egress and all(r["normalized_cidr"] is None for r in egress)
