"""L3 extensions over the in-process app: floating IP pools (`floatingip-pools`) and NDP
proxies (`l3-ndp-proxy`, `router-extend-ndp-proxy`)."""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error


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


# ------------------------------------------------------------------ l3-ndp-proxy
def _ndp_topology(api, n: int) -> dict:
    """An IPv6 address scope and pool (shared), an external network with an IPv6 subnet
    from it, demo's internal network with an IPv6 subnet from it, and demo's router."""
    scope = create(api, "address-scopes", "address_scope", {
        "name": f"ndp-{n}", "ip_version": 6, "shared": True})
    pool = create(api, "subnetpools", "subnetpool", {
        "name": f"ndp-{n}", "prefixes": [f"2001:db8:{n}::/48"], "default_prefixlen": 64,
        "address_scope_id": scope["id"], "shared": True})
    ext = create(api, "networks", "network", {"name": f"ndp-ext-{n}", "router:external": True})
    ext6 = create(api, "subnets", "subnet", {"network_id": ext["id"], "ip_version": 6,
                                             "subnetpool_id": pool["id"]})
    ext4 = create(api, "subnets", "subnet", {"network_id": ext["id"], "ip_version": 4,
                                             "cidr": f"192.0.{n}.0/24"})
    net = create(api, "networks", "network", {"name": f"ndp-int-{n}"}, user="demo")
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 6,
                                            "subnetpool_id": pool["id"]}, user="demo")
    return {"scope": scope, "pool": pool, "ext": ext, "ext6": ext6, "ext4": ext4, "net": net,
            "sub": sub}


def test_ndp_proxies(api):
    aliases = _aliases(api)
    assert {"l3-ndp-proxy", "router-extend-ndp-proxy"} <= aliases
    t = _ndp_topology(api, 71)
    R, P = f"{N}/routers", f"{N}/ndp_proxies"
    # enable_ndp_proxy needs a gateway on a network with an IPv6 subnet and address scope
    neutron_error(api.post(R, user="demo", json={"router": {"enable_ndp_proxy": True}}),
                  409, "RouterGatewayNotValid")
    public = api.get(f"{N}/networks?name=public").json()["networks"][0]
    err = neutron_error(api.post(R, user="demo", json={"router": {
        "enable_ndp_proxy": True, "external_gateway_info": {"network_id": public["id"]}}}),
        409, "RouterGatewayNotValid")
    assert "don't support IPv6 ndp proxy" in err["message"]
    plain = create(api, "routers", "router", {"name": "ndp-plain"}, user="demo")
    assert plain["enable_ndp_proxy"] is False
    neutron_error(api.put(f"{R}/{plain['id']}", user="demo", json={"router": {
        "enable_ndp_proxy": True}}), 409, "RouterGatewayNotValid")
    router = create(api, "routers", "router", {
        "name": "ndp", "enable_ndp_proxy": True,
        "external_gateway_info": {"network_id": t["ext"]["id"]}}, user="demo")
    assert router["enable_ndp_proxy"] is True
    r = api.put(f"{R}/{router['id']}/add_router_interface", user="demo",
                json={"subnet_id": t["sub"]["id"]})
    assert r.status_code == 200, r.text
    port = create(api, "ports", "port", {"network_id": t["net"]["id"]}, user="demo")
    addr = port["fixed_ips"][0]["ip_address"]
    # an address the port does not hold, a port of no router, no IPv6 on the port
    err = neutron_error(api.post(P, user="demo", json={"ndp_proxy": {
        "router_id": router["id"], "port_id": port["id"], "ip_address": "2001:db8:71::99"}}),
        400, "InvalidAddress")
    assert "not belong to the port" in err["message"]
    lone = create(api, "networks", "network", {"name": "ndp-lone"}, user="demo")
    create(api, "subnets", "subnet", {"network_id": lone["id"], "ip_version": 6,
                                      "cidr": "fd71::/64"}, user="demo")
    lone_port = create(api, "ports", "port", {"network_id": lone["id"]}, user="demo")
    neutron_error(api.post(P, user="demo", json={"ndp_proxy": {
        "router_id": router["id"], "port_id": lone_port["id"]}}), 409, "PortUnreachableRouter")
    neutron_error(api.post(P, user="demo", json={"ndp_proxy": {"router_id": router["id"]}}),
                  400)
    r = api.post(P, user="demo", json={"ndp_proxy": {
        "name": "p1", "router_id": router["id"], "port_id": port["id"]}})
    assert r.status_code == 201, r.text
    proxy = r.json()["ndp_proxy"]
    assert {k: proxy[k] for k in ("name", "router_id", "port_id", "ip_address",
                                  "revision_number", "description")} == {
        "name": "p1", "router_id": router["id"], "port_id": port["id"], "ip_address": addr,
        "revision_number": 0, "description": ""}
    # a router that does not proxy
    plain2 = create(api, "routers", "router", {"name": "ndp-off", "enable_ndp_proxy": False,
                                               "external_gateway_info": {
                                                   "network_id": t["ext"]["id"]}}, user="demo")
    assert plain2["enable_ndp_proxy"] is False
    sub2 = create(api, "subnets", "subnet", {"network_id": t["net"]["id"], "ip_version": 6,
                                             "subnetpool_id": t["pool"]["id"]}, user="demo")
    r = api.put(f"{R}/{plain2['id']}/add_router_interface", user="demo",
                json={"subnet_id": sub2["id"]})
    assert r.status_code == 200, r.text
    neutron_error(api.post(P, user="demo", json={"ndp_proxy": {
        "router_id": plain2["id"], "port_id": port["id"]}}), 409, "RouterNDPProxyNotEnable")
    # list, show, update; another project sees nothing
    assert [p["id"] for p in api.get(f"{P}?router_id={router['id']}", user="demo").json()[
        "ndp_proxies"]] == [proxy["id"]]
    r = api.put(f"{P}/{proxy['id']}", user="demo", json={"ndp_proxy": {"description": "d"}})
    assert r.status_code == 200 and r.json()["ndp_proxy"]["revision_number"] == 1
    neutron_error(api.put(f"{P}/{proxy['id']}", user="demo", json={"ndp_proxy": {
        "ip_address": addr}}), 400)
    # what the proxy keeps: the gateway, its IPv6 address, the interface on its subnet
    neutron_error(api.put(f"{R}/{router['id']}", user="demo", json={"router": {
        "external_gateway_info": {}}}), 409, "RouterGatewayInUseByNDPProxy")
    neutron_error(api.put(f"{R}/{router['id']}/remove_router_interface", user="demo",
                          json={"subnet_id": t["sub"]["id"]}), 409,
                  "RouterInterfaceInUseByNDPProxy")
    neutron_error(api.put(f"{R}/{router['id']}", json={"router": {
        "external_gateway_info": {"network_id": t["ext"]["id"], "external_fixed_ips": [
            {"subnet_id": t["ext4"]["id"]}]}}}), 409, "RouterIPv6GatewayInUse")
    assert api.delete(f"{P}/{proxy['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{P}/{proxy['id']}", user="demo"), 404, "NDPProxyNotFound")
    # a proxy goes with its port
    r = api.post(P, user="demo", json={"ndp_proxy": {"router_id": router["id"],
                                                     "port_id": port["id"]}})
    assert r.status_code == 201, r.text
    assert api.delete(f"{N}/ports/{port['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{P}/{r.json()['ndp_proxy']['id']}", user="demo"), 404)
    # the gateway goes: so does the state; setting it while unsetting the gateway is 409
    neutron_error(api.put(f"{R}/{router['id']}", user="demo", json={"router": {
        "external_gateway_info": {}, "enable_ndp_proxy": True}}), 409, "RouterGatewayNotValid")
    r = api.put(f"{R}/{router['id']}", user="demo", json={"router": {
        "external_gateway_info": {}}})
    assert r.status_code == 200 and r.json()["router"]["enable_ndp_proxy"] is False


# ------------------------------------------------------------------ l3-flavors
_SP = "neutron.services.l3_router.service_providers."


def _router_flavor(api, driver: str, **extra) -> dict:
    flavor = create(api, "flavors", "flavor", {"name": f"rf-{driver}",
                                               "service_type": "L3_ROUTER_NAT", **extra})
    profile = create(api, "service_profiles", "service_profile", {"driver": _SP + driver})
    r = api.post(f"{N}/flavors/{flavor['id']}/service_profiles",
                 json={"service_profile": {"id": profile["id"]}})
    assert r.status_code == 201, r.text
    return flavor


def test_router_flavors(api):
    assert "l3-flavors" in _aliases(api)
    ha = _router_flavor(api, "ha.HaDriver")
    R = f"{N}/routers"
    r = api.post(R, user="demo", json={"router": {"name": "rf", "flavor_id": ha["id"]}})
    assert r.status_code == 201, r.text
    router = r.json()["router"]
    assert router["flavor_id"] == ha["id"]
    # the provider's flags (shown to admins)
    shown = api.get(f"{R}/{router['id']}").json()["router"]
    assert (shown["ha"], shown["distributed"], shown["flavor_id"]) == (True, False, ha["id"])
    assert [x["id"] for x in api.get(f"{R}?flavor_id={ha['id']}", user="demo").json()[
        "routers"]] == [router["id"]]
    # set on create only; flags the provider does not support are 400
    neutron_error(api.put(f"{R}/{router['id']}", user="demo", json={"router": {
        "flavor_id": ha["id"]}}), 400)
    neutron_error(api.post(R, json={"router": {"flavor_id": ha["id"], "distributed": True}}),
                  400, "InvalidInput")
    r = api.put(f"{R}/{router['id']}", json={"router": {"admin_state_up": False}})
    assert r.status_code == 200, r.text
    err = neutron_error(api.put(f"{R}/{router['id']}", json={"router": {"ha": False}}), 400,
                        "InvalidInput")
    assert "associated with a flavor" in err["message"]
    # unknown flavors, flavors of another service, flavors without a profile
    neutron_error(api.post(R, user="demo", json={"router": {
        "flavor_id": "00000000-0000-0000-0000-000000000000"}}), 404, "FlavorNotFound")
    qos = create(api, "flavors", "flavor", {"name": "rf-qos", "service_type": "QOS"})
    neutron_error(api.post(R, user="demo", json={"router": {"flavor_id": qos["id"]}}), 400,
                  "InvalidInput")
    bare = create(api, "flavors", "flavor", {"name": "rf-bare",
                                             "service_type": "L3_ROUTER_NAT"})
    neutron_error(api.post(R, user="demo", json={"router": {"flavor_id": bare["id"]}}), 404,
                  "FlavorServiceProfileBindingNotFound")
    dvr = _router_flavor(api, "dvr.DvrDriver")
    r = api.post(R, json={"router": {"name": "rf-dvr", "flavor_id": dvr["id"]}})
    assert (r.json()["router"]["ha"], r.json()["router"]["distributed"]) == (False, True)
    # a flavor routers use stays
    neutron_error(api.delete(f"{N}/flavors/{ha['id']}"), 409, "FlavorInUse")
    assert api.delete(f"{R}/{router['id']}", user="demo").status_code == 204
    assert api.delete(f"{N}/flavors/{ha['id']}").status_code == 204


# ------------------------------------------------------------------ external-gateway-multihoming
def _ext_net(api, name: str, cidr: str) -> tuple[dict, dict]:
    net = create(api, "networks", "network", {"name": name, "router:external": True})
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": cidr})
    return net, sub


def test_external_gateway_multihoming(api):
    assert "external-gateway-multihoming" in _aliases(api)
    e1, s1 = _ext_net(api, "mh-1", "198.18.1.0/24")
    e2, s2 = _ext_net(api, "mh-2", "198.18.2.0/24")
    R = f"{N}/routers"
    router = create(api, "routers", "router", {"name": "mh"}, user="demo")
    assert router["external_gateways"] == [] and router["external_gateway_info"] is None

    def act(name: str, gws, user: str = "demo"):
        return api.put(f"{R}/{router['id']}/{name}", user=user,
                       json={"router": {"external_gateways": gws}})

    # the first added is the compatibility gateway, the rest extra ones
    r = act("add_external_gateways", [{"network_id": e1["id"]}, {"network_id": e2["id"]}])
    assert r.status_code == 200, r.text
    body = r.json()["router"]
    assert [g["network_id"] for g in body["external_gateways"]] == [e1["id"], e2["id"]]
    assert body["external_gateway_info"]["network_id"] == e1["id"]
    ip2 = body["external_gateways"][1]["external_fixed_ips"][0]["ip_address"]
    assert ip2.startswith("198.18.2.")
    gw_ports = api.get(f"{N}/ports?device_id={router['id']}&device_owner=network:router_gateway"
                       ).json()["ports"]
    assert len(gw_ports) == 2
    # a second gateway on the same network, at an address of the admin's choice
    neutron_error(act("add_external_gateways", [{"network_id": e2["id"], "external_fixed_ips": [
        {"ip_address": "198.18.2.77"}]}]), 403)
    r = act("add_external_gateways", [{"network_id": e2["id"], "external_fixed_ips": [
        {"ip_address": "198.18.2.77"}]}], user="admin")
    assert r.status_code == 200, r.text
    assert len(r.json()["router"]["external_gateways"]) == 3
    # two ports on e2: a request without addresses cannot say which
    neutron_error(act("remove_external_gateways", [{"network_id": e2["id"]}]), 400,
                  "UnableToMatchGateways")
    r = act("remove_external_gateways", [{"network_id": e2["id"], "external_fixed_ips": [
        {"ip_address": "198.18.2.77"}]}])
    assert r.status_code == 200, r.text
    assert [g["network_id"] for g in r.json()["router"]["external_gateways"]] == [
        e1["id"], e2["id"]]
    # removing the compatibility gateway promotes the remaining one
    r = act("remove_external_gateways", [{"network_id": e1["id"]}])
    assert r.status_code == 200, r.text
    body = r.json()["router"]
    assert body["external_gateway_info"]["network_id"] == e2["id"]
    assert [g["network_id"] for g in body["external_gateways"]] == [e2["id"]]
    # update replaces the list: e1 first (the compatibility one), e2 kept as an extra
    r = act("update_external_gateways", [{"network_id": e1["id"]}, {"network_id": e2["id"]}])
    assert r.status_code == 200, r.text
    body = r.json()["router"]
    assert body["external_gateway_info"]["network_id"] == e1["id"]
    assert sorted(g["network_id"] for g in body["external_gateways"]) == sorted(
        [e1["id"], e2["id"]])
    assert body["external_gateways"][0]["network_id"] == e1["id"]
    r = act("update_external_gateways", [{"network_id": e1["id"]}])
    assert [g["network_id"] for g in r.json()["router"]["external_gateways"]] == [e1["id"]]
    # errors: not external, unknown network, not a list, a router of another project
    internal = create(api, "networks", "network", {"name": "mh-int"}, user="demo")
    neutron_error(act("add_external_gateways", [{"network_id": internal["id"]}]), 400)
    neutron_error(act("add_external_gateways", [{"network_id":
                                                 "00000000-0000-0000-0000-000000000000"}]), 404)
    neutron_error(act("add_external_gateways", "x"), 400)
    neutron_error(act("remove_external_gateways", [{"network_id": e2["id"]}]), 400,
                  "UnableToMatchGateways")
    # an empty update removes all; the router then deletes cleanly
    assert act("add_external_gateways", [{"network_id": e2["id"]}]).status_code == 200
    r = act("update_external_gateways", [])
    assert r.status_code == 200, r.text
    assert r.json()["router"]["external_gateways"] == []
    assert r.json()["router"]["external_gateway_info"] is None
    assert act("add_external_gateways", [{"network_id": e1["id"]}, {"network_id": e2["id"]}]
               ).status_code == 200
    assert api.delete(f"{R}/{router['id']}", user="demo").status_code == 204
    assert api.get(f"{N}/ports?device_id={router['id']}").json()["ports"] == []
