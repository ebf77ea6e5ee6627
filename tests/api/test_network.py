"""Networking v2.0 over the in-process app: bodies, statuses, policy and Neutron's errors."""

from __future__ import annotations

import re

import pytest

N = "/networking/v2.0"
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def neutron_error(r, status: int, type_: str | None = None) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    err = r.json()["NeutronError"]
    assert err["detail"] == "" and err["message"]
    if type_:
        assert err["type"] == type_, err
    return err


def create(api, collection: str, resource: str, body: dict, user: str = "admin") -> dict:
    r = api.post(f"{N}/{collection}", json={resource: body}, user=user)
    assert r.status_code == 201, r.text
    return r.json()[resource]


@pytest.fixture(scope="module")
def demo_net(api):
    net = create(api, "networks", "network", {"name": "demo-net"}, user="demo")
    subnet = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                               "cidr": "192.168.10.0/24"}, user="demo")
    return net, subnet


# ------------------------------------------------------------------ discovery
def test_discovery_and_extensions(api):
    r = api.get("/networking/", user=None)
    assert r.status_code == 200
    assert r.json()["versions"][0]["id"] == "v2.0"
    r = api.get(f"{N}/", user=None)
    assert {x["collection"] for x in r.json()["resources"]} >= {"networks", "ports", "subnets"}
    assert api.get(f"{N}/extensions", user=None).status_code == 401
    exts = api.get(f"{N}/extensions").json()["extensions"]
    aliases = {e["alias"] for e in exts}
    assert {"provider", "external-net", "binding", "security-group", "standard-attr-tag",
            "default-subnetpools", "revision-if-match", "pagination"} <= aliases
    assert api.get(f"{N}/extensions/provider.json").json()["extension"]["alias"] == "provider"
    neutron_error(api.get(f"{N}/extensions/no-such"), 404)


def test_hyphen_and_underscore_collections(api):
    a = api.get(f"{N}/security-groups", user="demo").json()
    b = api.get(f"{N}/security_groups.json", user="demo").json()
    assert a == b and a["security_groups"][0]["name"] == "default"


# ------------------------------------------------------------------ bootstrap
def test_bootstrap_public_network_and_pools(api):
    nets = api.get(f"{N}/networks?name=public").json()["networks"]
    assert len(nets) == 1
    public = nets[0]
    assert public["router:external"] and public["is_default"] and not public["shared"]
    assert public["provider:network_type"] == "flat"
    assert public["provider:physical_network"] == "public"
    assert public["provider:segmentation_id"] is None and public["mtu"] == 1500
    subnet = api.get(f"{N}/subnets/{public['subnets'][0]}").json()["subnet"]
    assert subnet["cidr"] == "172.24.4.0/24" and subnet["enable_dhcp"] is False
    pools = api.get(f"{N}/subnetpools?is_default=true", user="demo").json()["subnetpools"]
    assert {(p["ip_version"], p["prefixes"][0], p["default_prefixlen"]) for p in pools} == {
        (4, "10.0.0.0/8", "26"), (6, "fd00::/48", "64")}
    assert all(p["shared"] for p in pools)
    # a member sees the external network, without provider attributes, and no shared nets
    seen = api.get(f"{N}/networks", user="demo").json()["networks"]
    public_seen = [n for n in seen if n["id"] == public["id"]][0]
    assert "provider:network_type" not in public_seen
    assert not [n for n in seen if n["shared"]]


# ------------------------------------------------------------------ networks
def test_network_defaults_and_standard_attributes(api):
    net = create(api, "networks", "network", {"name": "n-std", "tags": ["red"]}, user="demo")
    assert net["status"] == "ACTIVE" and net["admin_state_up"] and net["subnets"] == []
    assert net["mtu"] == 1450 and net["port_security_enabled"] is True
    assert net["project_id"] == net["tenant_id"]
    assert TIME_RE.match(net["created_at"]) and TIME_RE.match(net["updated_at"])
    assert net["revision_number"] >= 1 and net["tags"] == ["red"]
    assert "provider:network_type" not in net  # member: hidden
    admin_view = api.get(f"{N}/networks/{net['id']}").json()["network"]
    assert admin_view["provider:network_type"] == "vxlan"
    assert 1 <= admin_view["provider:segmentation_id"] <= 2**24 - 1


@pytest.mark.parametrize("net_type,physnet,mtu", [
    ("vxlan", None, 1450), ("geneve", None, 1442), ("gre", None, 1458),
    ("vlan", "physnet2", 1500), ("flat", "physnet2", 1500)])
def test_provider_types_and_mtu(api, net_type, physnet, mtu):
    body = {"provider:network_type": net_type}
    if physnet:
        body["provider:physical_network"] = physnet
    net = create(api, "networks", "network", body)
    assert net["mtu"] == mtu and net["provider:network_type"] == net_type
    if net_type == "vlan":
        assert 200 <= net["provider:segmentation_id"] <= 299
    if net_type == "flat":
        assert net["provider:segmentation_id"] is None
        neutron_error(api.post(f"{N}/networks", json={"network": body}), 409, "FlatNetworkInUse")
    assert api.delete(f"{N}/networks/{net['id']}").status_code == 204


def test_explicit_segmentation_ids(api):
    body = {"provider:network_type": "vlan", "provider:physical_network": "physnet1",
            "provider:segmentation_id": 150}
    net = create(api, "networks", "network", body)
    neutron_error(api.post(f"{N}/networks", json={"network": body}), 409, "VlanIdInUse")
    # outside the configured ranges is allowed to an admin
    out = create(api, "networks", "network", {**body, "provider:segmentation_id": 4000})
    vx = {"provider:network_type": "vxlan", "provider:segmentation_id": 77}
    create(api, "networks", "network", vx)
    neutron_error(api.post(f"{N}/networks", json={"network": vx}), 409, "TunnelIdInUse")
    # delete releases the id
    assert api.delete(f"{N}/networks/{net['id']}").status_code == 204
    again = create(api, "networks", "network", body)
    assert again["provider:segmentation_id"] == 150
    for bad in ({"provider:network_type": "vlan", "provider:physical_network": "nope"},
                {"provider:network_type": "vlan", "provider:segmentation_id": 5},
                {"provider:network_type": "vxlan", "provider:physical_network": "physnet1"},
                {"provider:network_type": "vxlan", "provider:segmentation_id": 2**24},
                {"provider:network_type": "vlan", "provider:physical_network": "physnet1",
                 "provider:segmentation_id": 4095},
                {"provider:network_type": "flat", "provider:physical_network": "physnet9"},
                {"provider:network_type": "magic"},
                {"provider:physical_network": "physnet1"},
                {"provider:network_type": "vxlan", "segments": []}):
        neutron_error(api.post(f"{N}/networks", json={"network": bad}), 400)
    api.delete(f"{N}/networks/{out['id']}")


def test_member_refused_provider_and_admin_attributes(api):
    for body in ({"provider:network_type": "vxlan"}, {"shared": True},
                 {"router:external": True}):
        neutron_error(api.post(f"{N}/networks", json={"network": body}, user="demo"), 403,
                      "PolicyNotAuthorized")
    # defaults given explicitly are fine
    create(api, "networks", "network", {"shared": False, "router:external": False},
           user="demo")


def test_visibility_and_refusals(api):
    private = create(api, "networks", "network", {"name": "admin-private"})
    shared = create(api, "networks", "network", {"name": "admin-shared", "shared": True})
    neutron_error(api.get(f"{N}/networks/{private['id']}", user="demo"), 404,
                  "NetworkNotFound")
    neutron_error(api.put(f"{N}/networks/{private['id']}", json={"network": {"name": "x"}},
                          user="demo"), 404)
    neutron_error(api.delete(f"{N}/networks/{private['id']}", user="demo"), 404)
    assert api.get(f"{N}/networks/{shared['id']}", user="demo").status_code == 200
    neutron_error(api.put(f"{N}/networks/{shared['id']}", json={"network": {"name": "x"}},
                          user="demo"), 403, "PolicyNotAuthorized")
    neutron_error(api.delete(f"{N}/networks/{shared['id']}", user="demo"), 403)
    ids = {n["id"] for n in api.get(f"{N}/networks", user="demo").json()["networks"]}
    assert shared["id"] in ids and private["id"] not in ids
    api.delete(f"{N}/networks/{shared['id']}")


def test_update_if_match_and_tags(api):
    net = create(api, "networks", "network", {"name": "rev"}, user="demo")
    rev = net["revision_number"]
    r = api.put(f"{N}/networks/{net['id']}", json={"network": {"name": "rev2"}}, user="demo",
                headers={"If-Match": f"revision_number={rev + 5}"})
    neutron_error(r, 412, "RevisionNumberConstraintFailed")
    r = api.put(f"{N}/networks/{net['id']}", json={"network": {"name": "rev2", "mtu": 1400}},
                user="demo", headers={"If-Match": f"revision_number={rev}"})
    assert r.status_code == 200 and r.json()["network"]["revision_number"] == rev + 1
    assert r.json()["network"]["mtu"] == 1400
    neutron_error(api.put(f"{N}/networks/{net['id']}", json={"network": {"mtu": 9000}},
                          user="demo"), 400)
    neutron_error(api.put(f"{N}/networks/{net['id']}", json={"network": {"status": "DOWN"}},
                          user="demo"), 400)
    tags = f"{N}/networks/{net['id']}/tags"
    assert api.put(tags, json={"tags": ["b", "a"]}, user="demo").json() == {"tags": ["a", "b"]}
    assert api.put(f"{tags}/c", user="demo").status_code == 201
    assert api.get(f"{tags}/c", user="demo").status_code == 204
    assert api.delete(f"{tags}/a", user="demo").status_code == 204
    neutron_error(api.get(f"{tags}/a", user="demo"), 404)
    assert api.get(tags, user="demo").json() == {"tags": ["b", "c"]}
    found = api.get(f"{N}/networks?tags=b,c&fields=id", user="demo").json()["networks"]
    assert found == [{"id": net["id"]}]
    assert api.get(f"{N}/networks?not-tags-any=b&id={net['id']}",
                   user="demo").json()["networks"] == []
    assert api.delete(tags, user="demo").status_code == 204
    assert api.get(tags, user="demo").json() == {"tags": []}


def test_list_filters_sort_paging(api):
    made = [create(api, "networks", "network", {"name": f"page-{i}", "description": "pg"},
                   user="demo") for i in range(5)]
    r = api.get(f"{N}/networks?description=pg&sort_key=name&sort_dir=desc&limit=2",
                user="demo")
    body = r.json()
    assert [n["name"] for n in body["networks"]] == ["page-4", "page-3"]
    nxt = [link for link in body["networks_links"] if link["rel"] == "next"][0]["href"]
    page2 = api.get(nxt.replace("http://stackling.test", ""), user="demo").json()
    assert [n["name"] for n in page2["networks"]] == ["page-2", "page-1"]
    names = api.get(f"{N}/networks?name=page-0&name=page-1&fields=name",
                    user="demo").json()["networks"]
    assert sorted(n["name"] for n in names) == ["page-0", "page-1"]
    assert all(set(n) == {"name"} for n in names)
    assert api.get(f"{N}/networks?admin_state_up=false&description=pg",
                   user="demo").json()["networks"] == []
    neutron_error(api.get(f"{N}/networks?bogus=1"), 400)
    neutron_error(api.get(f"{N}/networks?sort_key=bogus"), 400)
    neutron_error(api.get(f"{N}/networks?limit=-1"), 400)
    neutron_error(api.get(f"{N}/networks?mtu=abc"), 400)
    assert len(made) == 5


def test_bulk_create_is_atomic(api):
    before = len(api.get(f"{N}/networks").json()["networks"])
    r = api.post(f"{N}/networks", json={"networks": [{"name": "b1"}, {"name": "b2"}]})
    assert r.status_code == 201 and [n["name"] for n in r.json()["networks"]] == ["b1", "b2"]
    r = api.post(f"{N}/networks", json={"networks": [{"name": "b3"}, {"name": 5}]})
    neutron_error(r, 400)
    r = api.post(f"{N}/networks", json={"networks": [
        {"name": "b4", "provider:network_type": "flat", "provider:physical_network": "physnet1"},
        {"name": "b5", "provider:network_type": "flat", "provider:physical_network": "physnet1"}]})
    neutron_error(r, 409, "FlatNetworkInUse")
    names = {n["name"] for n in api.get(f"{N}/networks").json()["networks"]}
    assert len(names & {"b3", "b4", "b5"}) == 0
    assert len(api.get(f"{N}/networks").json()["networks"]) == before + 2


# ------------------------------------------------------------------ subnets
def test_subnet_defaults_and_rules(api, demo_net):
    net, subnet = demo_net
    assert subnet["gateway_ip"] == "192.168.10.1"
    assert subnet["allocation_pools"] == [{"start": "192.168.10.2", "end": "192.168.10.254"}]
    assert subnet["enable_dhcp"] and subnet["ip_version"] == 4
    assert "segment_id" not in subnet  # admin-only attribute
    body = {"network_id": net["id"], "ip_version": 4}
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "192.168.10.128/25"}},
                           user="demo"), 400)  # overlaps
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "10.9.0.0/24",
                                                            "allocation_pools": [
                                                                {"start": "10.9.0.10",
                                                                 "end": "10.9.1.20"}]}},
                           user="demo"), 400, "OutOfBoundsAllocationPool")
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "10.9.0.0/24",
                                                            "gateway_ip": "10.9.0.5",
                                                            "allocation_pools": [
                                                                {"start": "10.9.0.2",
                                                                 "end": "10.9.0.20"}]}},
                           user="demo"), 409, "GatewayConflictWithAllocationPools")
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "10.9.0.0/24",
                                                            "allocation_pools": [
                                                                {"start": "10.9.0.2",
                                                                 "end": "10.9.0.20"},
                                                                {"start": "10.9.0.20",
                                                                 "end": "10.9.0.30"}]}},
                           user="demo"), 409, "OverlappingAllocationPools")
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "10.9.0.0/24",
                                                            "dns_nameservers": [
                                                                f"8.8.8.{i}" for i in range(6)]}},
                           user="demo"), 400, "DNSNameServersExhausted")
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "fd00:1::/64"}},
                           user="demo"), 400)
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {**body, "cidr": "10.9.0.0/24",
                                                            "ipv6_address_mode": "slaac"}},
                           user="demo"), 400)
    neutron_error(api.post(f"{N}/subnets", json={"subnet": body}, user="demo"), 400)
    custom = create(api, "subnets", "subnet", {
        **body, "cidr": "10.9.0.0/24", "gateway_ip": None, "enable_dhcp": False,
        "dns_nameservers": ["8.8.8.8"], "host_routes": [{"destination": "10.50.0.0/16",
                                                         "nexthop": "10.9.0.1"}],
        "allocation_pools": [{"start": "10.9.0.100", "end": "10.9.0.110"}]}, user="demo")
    assert custom["gateway_ip"] is None and custom["dns_nameservers"] == ["8.8.8.8"]
    r = api.put(f"{N}/subnets/{custom['id']}", json={"subnet": {"name": "renamed",
                                                                "dns_nameservers": []}},
                user="demo")
    assert r.status_code == 200 and r.json()["subnet"]["name"] == "renamed"
    neutron_error(api.put(f"{N}/subnets/{custom['id']}", json={"subnet": {"cidr": "10.1.0.0/24"}},
                          user="demo"), 400)
    assert api.delete(f"{N}/subnets/{custom['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/subnets/{custom['id']}", user="demo"), 404, "SubnetNotFound")


def test_subnets_from_pools(api):
    net = create(api, "networks", "network", {"name": "pooled"}, user="demo")
    v4 = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                           "use_default_subnetpool": True}, user="demo")
    assert v4["cidr"].startswith("10.") and v4["cidr"].endswith("/26")
    assert v4["gateway_ip"].endswith(".1") and v4["subnetpool_id"]
    v4b = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "subnetpool_id": v4["subnetpool_id"],
                                            "prefixlen": 28}, user="demo")
    assert v4b["cidr"].endswith("/28") and v4b["cidr"] != v4["cidr"]
    v6 = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 6,
                                           "use_default_subnetpool": True,
                                           "ipv6_ra_mode": "slaac",
                                           "ipv6_address_mode": "slaac"}, user="demo")
    assert v6["cidr"].startswith("fd00:") and v6["cidr"].endswith("/64")
    shown = api.get(f"{N}/networks/{net['id']}", user="demo").json()["network"]
    assert set(shown["subnets"]) == {v4["id"], v4b["id"], v6["id"]}
    # a small private pool runs out cleanly (409, not neutron's 500)
    pool = create(api, "subnetpools", "subnetpool", {"name": "tiny", "prefixes": ["10.77.0.0/27"],
                                                     "default_prefixlen": 28,
                                                     "min_prefixlen": 27}, user="demo")
    assert pool["default_prefixlen"] == "28" and pool["ip_version"] == 4
    for _ in range(2):
        create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                          "subnetpool_id": pool["id"]}, user="demo")
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "subnetpool_id": pool["id"]}}, user="demo"),
        409, "SubnetAllocationError")
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "subnetpool_id": pool["id"],
        "prefixlen": 20}}, user="demo"), 400, "MinPrefixSubnetAllocationError")
    neutron_error(api.delete(f"{N}/subnetpools/{pool['id']}", user="demo"), 400,
                  "SubnetPoolDeleteError")
    # one default pool per IP version
    neutron_error(api.post(f"{N}/subnetpools", json={"subnetpool": {
        "name": "d2", "prefixes": ["10.200.0.0/16"], "is_default": True}}), 400)
    neutron_error(api.post(f"{N}/subnetpools", json={"subnetpool": {
        "name": "d2", "prefixes": ["10.200.0.0/16"], "is_default": True}}, user="demo"), 403)
    r = api.put(f"{N}/subnetpools/{pool['id']}", json={"subnetpool": {
        "prefixes": ["10.77.0.0/26"]}}, user="demo")
    assert r.status_code == 200 and r.json()["subnetpool"]["default_prefixlen"] == 28
    neutron_error(api.put(f"{N}/subnetpools/{pool['id']}", json={"subnetpool": {
        "prefixes": ["10.78.0.0/26"]}}, user="demo"), 400, "IllegalSubnetPoolPrefixUpdate")


# ------------------------------------------------------------------ ports
def test_port_create_show_update_delete(api, demo_net):
    net, subnet = demo_net
    port = create(api, "ports", "port", {"network_id": net["id"], "name": "p1"}, user="demo")
    assert port["status"] == "DOWN" and port["mac_address"].startswith("fa:16:3e:")
    assert port["ip_allocation"] == "immediate" and port["device_owner"] == ""
    (ip,) = port["fixed_ips"]
    assert ip["subnet_id"] == subnet["id"] and ip["ip_address"].startswith("192.168.10.")
    assert "binding:host_id" not in port and port["binding:vnic_type"] == "normal"
    sgs = api.get(f"{N}/security-groups?name=default", user="demo").json()["security_groups"]
    assert port["security_groups"] == [sgs[0]["id"]]
    fixed = create(api, "ports", "port", {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": subnet["id"], "ip_address": "192.168.10.77"}]}, user="demo")
    assert fixed["fixed_ips"][0]["ip_address"] == "192.168.10.77"
    neutron_error(api.post(f"{N}/ports", json={"port": {"network_id": net["id"], "fixed_ips": [
        {"ip_address": "192.168.10.77"}]}}, user="demo"), 409, "IpAddressAlreadyAllocated")
    neutron_error(api.post(f"{N}/ports", json={"port": {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": subnet["id"], "ip_address": "10.1.1.1"}]}}, user="demo"), 400,
        "InvalidIpForSubnet")
    neutron_error(api.post(f"{N}/ports", json={"port": {"network_id": net["id"], "fixed_ips": [
        {"ip_address": "192.168.10.255"}]}}, user="demo"), 400, "InvalidIpForSubnet")
    neutron_error(api.post(f"{N}/ports", json={"port": {
        "network_id": net["id"], "mac_address": port["mac_address"]}}, user="demo"), 409,
        "MacAddressInUse")
    none = create(api, "ports", "port", {"network_id": net["id"], "fixed_ips": []},
                  user="demo")
    assert none["fixed_ips"] == [] and none["ip_allocation"] == "none"
    # update: replace fixed IPs, the old address is free again
    r = api.put(f"{N}/ports/{fixed['id']}", json={"port": {"fixed_ips": [
        {"ip_address": "192.168.10.78"}], "name": "moved"}}, user="demo")
    assert r.status_code == 200, r.text
    assert r.json()["port"]["fixed_ips"][0]["ip_address"] == "192.168.10.78"
    again = create(api, "ports", "port", {"network_id": net["id"], "fixed_ips": [
        {"ip_address": "192.168.10.77"}]}, user="demo")
    # binding is admin-only and makes the port ACTIVE
    neutron_error(api.put(f"{N}/ports/{port['id']}", json={"port": {
        "binding:host_id": "compute-r1-1"}}, user="demo"), 403)
    bound = api.put(f"{N}/ports/{port['id']}", json={"port": {
        "binding:host_id": "compute-r1-1", "device_owner": "compute:nova",
        "binding:profile": {"a": 1}}}).json()["port"]
    assert bound["status"] == "ACTIVE" and bound["binding:vif_type"] == "ovs"
    assert bound["binding:host_id"] == "compute-r1-1" and bound["binding:profile"] == {"a": 1}
    listed = api.get(f"{N}/ports?device_owner=compute:nova&fields=id&fields=status",
                     user="demo").json()["ports"]
    assert listed == [{"id": port["id"], "status": "ACTIVE"}]
    by_ip = api.get(f"{N}/ports?fixed_ips=ip_address%3D192.168.10.77", user="demo").json()
    assert [p["id"] for p in by_ip["ports"]] == [again["id"]]
    for p in (port, fixed, none, again):
        assert api.delete(f"{N}/ports/{p['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/ports/{port['id']}", user="demo"), 404, "PortNotFound")


def test_port_security_and_pairs(api, demo_net):
    net, _ = demo_net
    p = create(api, "ports", "port", {"network_id": net["id"], "port_security_enabled": False},
               user="demo")
    assert p["security_groups"] == [] and p["port_security_enabled"] is False
    neutron_error(api.post(f"{N}/ports", json={"port": {
        "network_id": net["id"], "port_security_enabled": False,
        "allowed_address_pairs": [{"ip_address": "10.0.0.5"}]}}, user="demo"), 409)
    q = create(api, "ports", "port", {"network_id": net["id"], "allowed_address_pairs": [
        {"ip_address": "10.0.0.0/24"}]}, user="demo")
    assert q["allowed_address_pairs"] == [{"ip_address": "10.0.0.0/24",
                                           "mac_address": q["mac_address"]}]
    neutron_error(api.put(f"{N}/ports/{q['id']}", json={"port": {
        "port_security_enabled": False}}, user="demo"), 409)
    neutron_error(api.post(f"{N}/ports", json={"port": {
        "network_id": net["id"], "security_groups": ["9a1b8b6f-0000-4000-8000-000000000000"]}},
        user="demo"), 404, "SecurityGroupNotFound")
    for x in (p, q):
        api.delete(f"{N}/ports/{x['id']}", user="demo")


def test_ipv6_slaac_port(api):
    net = create(api, "networks", "network", {"name": "v6"}, user="demo")
    v6 = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 6,
                                           "cidr": "fd12:3456::/64", "ipv6_ra_mode": "slaac",
                                           "ipv6_address_mode": "slaac"}, user="demo")
    port = create(api, "ports", "port", {"network_id": net["id"],
                                         "mac_address": "fa:16:3e:11:22:33"}, user="admin")
    assert port["fixed_ips"] == [{"subnet_id": v6["id"],
                                  "ip_address": "fd12:3456::f816:3eff:fe11:2233"}]
    stateful = create(api, "subnets", "subnet", {
        "network_id": net["id"], "ip_version": 6, "cidr": "fd12:3457::/64",
        "ipv6_ra_mode": "dhcpv6-stateful", "ipv6_address_mode": "dhcpv6-stateful"},
        user="demo")
    p2 = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    subnets_of = {ip["subnet_id"] for ip in p2["fixed_ips"]}
    assert subnets_of == {v6["id"], stateful["id"]}


def test_network_in_use_and_delete_cascade(api):
    net = create(api, "networks", "network", {"name": "busy"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": "10.66.0.0/29"}, user="demo")
    port = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    neutron_error(api.delete(f"{N}/networks/{net['id']}", user="demo"), 409, "NetworkInUse")
    neutron_error(api.delete(f"{N}/subnets/{sub['id']}", user="demo"), 409, "SubnetInUse")
    # a /29 has five pool addresses: four more, then exhaustion
    for _ in range(4):
        create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    neutron_error(api.post(f"{N}/ports", json={"port": {"network_id": net["id"]}},
                           user="demo"), 409, "IpAddressGenerationFailure")
    dhcp = create(api, "ports", "port", {"network_id": net["id"], "device_owner": "network:dhcp",
                                         "fixed_ips": []}, user="demo")
    for p in api.get(f"{N}/ports?network_id={net['id']}", user="demo").json()["ports"]:
        if p["id"] != dhcp["id"]:
            api.delete(f"{N}/ports/{p['id']}", user="demo")
    assert api.delete(f"{N}/networks/{net['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/subnets/{sub['id']}", user="demo"), 404)
    neutron_error(api.get(f"{N}/ports/{port['id']}", user="demo"), 404)


def test_member_cannot_plug_into_external_network(api):
    public = api.get(f"{N}/networks?name=public", user="demo").json()["networks"][0]
    neutron_error(api.post(f"{N}/ports", json={"port": {"network_id": public["id"]}},
                           user="demo"), 403)
    neutron_error(api.post(f"{N}/subnets", json={"subnet": {
        "network_id": public["id"], "ip_version": 4, "cidr": "10.99.0.0/24"}}, user="demo"), 403)


# ------------------------------------------------------------------ security groups
def test_security_groups_and_rules(api):
    groups = api.get(f"{N}/security-groups", user="demo").json()["security_groups"]
    default = [g for g in groups if g["name"] == "default"]
    assert len(default) == 1
    rules = default[0]["security_group_rules"]
    assert sorted((r["direction"], r["ethertype"], r["remote_group_id"] is not None)
                  for r in rules) == [("egress", "IPv4", False), ("egress", "IPv6", False),
                                      ("ingress", "IPv4", True), ("ingress", "IPv6", True)]
    assert all(r["belongs_to_default_sg"] for r in rules)
    neutron_error(api.delete(f"{N}/security-groups/{default[0]['id']}", user="demo"), 409,
                  "SecurityGroupCannotRemoveDefault")
    neutron_error(api.post(f"{N}/security-groups", json={"security_group": {"name": "default"}},
                           user="demo"), 409)
    web = create(api, "security-groups", "security_group", {"name": "web"}, user="demo")
    assert len(web["security_group_rules"]) == 2
    rule = {"security_group_id": web["id"], "direction": "ingress", "protocol": "tcp",
            "port_range_min": 80, "port_range_max": 80, "remote_ip_prefix": "0.0.0.0/0"}
    made = create(api, "security-group-rules", "security_group_rule", rule, user="demo")
    assert made["protocol"] == "tcp" and made["ethertype"] == "IPv4"
    err = neutron_error(api.post(f"{N}/security-group-rules", json={"security_group_rule": rule},
                                 user="demo"), 409, "SecurityGroupRuleExists")
    assert made["id"] in err["message"]
    bad = [
        {**rule, "protocol": "nope"},
        {**rule, "port_range_min": 90},
        {**rule, "protocol": None},
        {**rule, "remote_group_id": web["id"]},
        {**rule, "ethertype": "IPv6"},
        {**rule, "direction": "sideways"},
        {**rule, "port_range_min": 70000},
        {**rule, "protocol": "icmp", "port_range_min": 300},
    ]
    for body in bad:
        neutron_error(api.post(f"{N}/security-group-rules",
                               json={"security_group_rule": body}, user="demo"), 400)
    shown = api.get(f"{N}/security-groups/{web['id']}", user="demo").json()["security_group"]
    assert len(shown["security_group_rules"]) == 3
    assert shown["revision_number"] > web["revision_number"]
    # in use by a port: 409
    net = create(api, "networks", "network", {"name": "sg-net"}, user="demo")
    port = create(api, "ports", "port", {"network_id": net["id"], "security_groups": [web["id"]]},
                  user="demo")
    neutron_error(api.delete(f"{N}/security-groups/{web['id']}", user="demo"), 409,
                  "SecurityGroupInUse")
    api.delete(f"{N}/ports/{port['id']}", user="demo")
    assert api.delete(f"{N}/security-group-rules/{made['id']}", user="demo").status_code == 204
    assert api.delete(f"{N}/security-groups/{web['id']}", user="demo").status_code == 204


# ------------------------------------------------------------------ in-process interface
def test_interface_for_compute(api):
    from stackling.common.context import RequestContext
    from stackling.network import errors, interface

    demo = api.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": api.token("demo")},
                   user="demo").json()["token"]
    ctx = RequestContext(user_id=demo["user"]["id"], project_id=demo["project"]["id"],
                         roles=("member", "reader"))
    db_ = api.runtime.db
    with db_.transaction() as db:
        net = interface.create_network(db, ctx, {"network": {"name": "iface"}})
        assert "provider:network_type" not in net
    make = api.post(f"{N}/subnets", json={"subnet": {"network_id": net["id"],
                                                     "ip_version": 4,
                                                     "cidr": "10.222.0.0/24"}},
                    user="demo")
    assert make.status_code == 201
    with db_.transaction() as db:
        port = interface.create_port(db, ctx, {"network_id": net["id"], "device_id": "vm-9"})
        assert port["fixed_ips"][0]["ip_address"].startswith("10.222.0.")
        assert "binding:host_id" not in port
        with pytest.raises(errors.PolicyNotAuthorized):
            interface.update_port(db, ctx, port["id"], {"binding:host_id": "compute-r1-1"})
        bound = interface.update_port(db, ctx.elevated(), port["id"], {
            "port": {"binding:host_id": "compute-r1-1", "device_owner": "compute:nova"}})
        assert bound["status"] == "ACTIVE" and bound["binding:host_id"] == "compute-r1-1"
        assert [p["id"] for p in interface.list_ports(db, ctx, device_id="vm-9")] == [port["id"]]
        assert interface.list_ports(db, ctx, device_id="vm-9", fields=["id"]) == [
            {"id": port["id"]}]
        assert {n["name"] for n in interface.list_networks(db, ctx, name=["iface", "public"])} \
            == {"iface", "public"}
        assert interface.get_subnet(db, ctx, port["fixed_ips"][0]["subnet_id"])["cidr"] == \
            "10.222.0.0/24"
        assert interface.list_security_groups(db, ctx, name="default")[0]["name"] == "default"
        with pytest.raises(errors.BadRequest):
            interface.create_port(db, ctx, {"network_id": net["id"], "bogus": 1})
        with pytest.raises(errors.BadRequest):
            interface.list_ports(db, ctx, bogus=1)
    admin_private = create(api, "networks", "network", {"name": "not-for-demo"})
    with db_.transaction() as db:
        with pytest.raises(errors.NetworkNotFound):
            interface.get_network(db, ctx, admin_private["id"])
        interface.delete_port(db, ctx, port["id"])
        with pytest.raises(errors.PortNotFound):
            interface.get_port(db, ctx, port["id"])


def test_availability_zones(api):
    zones = api.get(f"{N}/availability_zones?resource=network", user="demo").json()
    assert zones == {"availability_zones": [{"name": "nova", "resource": "network",
                                             "state": "available"}]}
    assert api.get(f"{N}/availability-zones?state=unavailable").json() == {
        "availability_zones": []}
    neutron_error(api.get(f"{N}/availability_zones?color=blue"), 400)


def test_multi_segment_network(api):
    net = create(api, "networks", "network", {"name": "multi", "segments": [
        {"provider:network_type": "vlan", "provider:physical_network": "physnet1"},
        {"provider:network_type": "vxlan"}]})
    assert "provider:network_type" not in net and len(net["segments"]) == 2
    assert net["segments"][0]["provider:network_type"] == "vlan" and net["mtu"] == 1450
    neutron_error(api.post(f"{N}/networks", json={"network": {"segments": [
        {"provider:network_type": "vxlan", "provider:segmentation_id": 9},
        {"provider:network_type": "vxlan", "provider:segmentation_id": 9}]}}), 400,
        "SegmentsContainDuplicateEntry")
    member_view = api.get(f"{N}/networks?name=multi").json()["networks"][0]
    assert member_view["segments"] == net["segments"]
    assert api.delete(f"{N}/networks/{net['id']}").status_code == 204
