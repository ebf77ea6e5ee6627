"""Routers and floating IPs over the in-process app: bodies, statuses, policy, Neutron's
errors, and that a refused request changes nothing."""

from __future__ import annotations

import uuid

import pytest

from tests.api.test_network import TIME_RE, N, create, neutron_error


def make_net(api, cidr: str, user: str = "demo", **subnet: object) -> tuple[dict, dict]:
    net = create(api, "networks", "network", {"name": f"n-{cidr}"}, user=user)
    sub = create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                            "cidr": cidr, **subnet}, user=user)
    return net, sub


def public(api) -> dict:
    return api.get(f"{N}/networks?name=public").json()["networks"][0]


def make_router(api, user: str = "demo", **body: object) -> dict:
    return create(api, "routers", "router", {"name": "r", **body}, user=user)


def add_if(api, router_id: str, user: str = "demo", **body: str):
    return api.put(f"{N}/routers/{router_id}/add_router_interface", json=body, user=user)


def remove_if(api, router_id: str, user: str = "demo", **body: str):
    return api.put(f"{N}/routers/{router_id}/remove_router_interface", json=body, user=user)


def count(api, collection: str) -> int:
    return len(api.get(f"{N}/{collection}").json()[collection])


@pytest.fixture(scope="module", autouse=True)
def demo_unlimited_routers(api):
    """This module makes more routers than the default quota (10) allows."""
    h = {"X-Auth-Token": api.token()}
    demo = api.client.get("/identity/v3/projects?name=demo", headers=h).json()["projects"][0]
    r = api.put(f"{N}/quotas/{demo['id']}", json={"quota": {"router": -1}})
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def other(api):
    """A second project with a member (to check isolation)."""
    admin = api.token()
    name = f"p-{uuid.uuid4().hex[:6]}"
    h = {"X-Auth-Token": admin}
    project = api.client.post("/identity/v3/projects", headers=h,
                              json={"project": {"name": name, "domain_id": "default"}}).json()
    user = api.client.post("/identity/v3/users", headers=h, json={"user": {
        "name": f"u-{name}", "password": "pw-secret", "domain_id": "default"}}).json()["user"]
    roles = api.client.get("/identity/v3/roles?name=member", headers=h).json()["roles"]
    r = api.client.put(f"/identity/v3/projects/{project['project']['id']}/users/{user['id']}"
                       f"/roles/{roles[0]['id']}", headers=h)
    assert r.status_code == 204, r.text
    token = api.token(f"u-{name}", name, password="pw-secret")
    return {"project_id": project["project"]["id"], "token": token}


# ------------------------------------------------------------------ discovery
def test_l3_extensions_advertised_exactly(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"router", "ext-gw-mode", "extraroute", "extraroute-atomic", "fip-port-details",
            "network-ip-availability", "quotas", "quota_details",
            "auto-allocated-topology", "router_availability_zone", "l3-flavors"} <= aliases
    assert not aliases & {"router-interface-fip", "qos-fip", "l3-port-ip-change-not-allowed"}
    assert api.get(f"{N}/extensions/router").json()["extension"]["alias"] == "router"


# ------------------------------------------------------------------ routers
def test_router_with_gateway_and_two_interfaces(api):
    pub = public(api)
    _, s1 = make_net(api, "10.50.1.0/24")
    _, s2 = make_net(api, "10.50.2.0/24")
    router = make_router(api, external_gateway_info={"network_id": pub["id"]})
    assert router["status"] == "ACTIVE" and router["admin_state_up"] is True
    assert router["routes"] == [] and router["flavor_id"] is None
    assert router["project_id"] == router["tenant_id"]
    assert TIME_RE.match(router["created_at"]) and router["revision_number"] >= 0
    assert "distributed" not in router and "ha" not in router  # admin-only attributes
    gw = router["external_gateway_info"]
    assert gw["network_id"] == pub["id"] and gw["enable_snat"] is True
    [ext_ip] = gw["external_fixed_ips"]
    gw_ports = api.get(f"{N}/ports?device_id={router['id']}"
                       "&device_owner=network:router_gateway").json()["ports"]
    assert [p["fixed_ips"][0]["ip_address"] for p in gw_ports] == [ext_ip["ip_address"]]
    assert gw_ports[0]["project_id"] == ""
    for sub in (s1, s2):
        r = add_if(api, router["id"], subnet_id=sub["id"])
        assert r.status_code == 200, r.text
        info = r.json()
        assert set(info) == {"id", "tenant_id", "project_id", "port_id", "subnet_id",
                             "subnet_ids", "network_id"}
        assert info["id"] == router["id"] and info["subnet_id"] == sub["id"]
        assert info["subnet_ids"] == [sub["id"]] and info["network_id"] == sub["network_id"]
        port = api.get(f"{N}/ports/{info['port_id']}", user="demo").json()["port"]
        assert port["device_owner"] == "network:router_interface"
        assert port["device_id"] == router["id"]
        assert port["fixed_ips"] == [{"subnet_id": sub["id"], "ip_address": sub["gateway_ip"]}]
    shown = api.get(f"{N}/routers/{router['id']}", user="demo").json()["router"]
    assert shown["revision_number"] > router["revision_number"]
    admin_view = api.get(f"{N}/routers/{router['id']}").json()["router"]
    assert admin_view["distributed"] is False and admin_view["ha"] is False


def test_interface_errors(api):
    _, s1 = make_net(api, "10.51.1.0/24")
    _, overlap = make_net(api, "10.51.1.0/25")
    _, nogw = make_net(api, "10.51.9.0/24", gateway_ip=None)
    router = make_router(api)
    assert add_if(api, router["id"], subnet_id=s1["id"]).status_code == 200
    err = neutron_error(add_if(api, router["id"], subnet_id=s1["id"]), 400, "BadRequest")
    assert err["message"] == (f"Bad router request: Router already has a port on subnet "
                              f"{s1['id']}.")
    err = neutron_error(add_if(api, router["id"], subnet_id=overlap["id"]), 400, "BadRequest")
    assert "overlaps with cidr 10.51.1.0/24" in err["message"]
    err = neutron_error(add_if(api, router["id"], subnet_id=nogw["id"]), 400, "BadRequest")
    assert "must have a gateway IP" in err["message"]
    err = neutron_error(add_if(api, router["id"]), 400, "BadRequest")
    assert "Either subnet_id or port_id must be specified" in err["message"]
    neutron_error(add_if(api, router["id"], subnet_id=s1["id"], port_id=s1["id"]), 400)
    neutron_error(add_if(api, router["id"], subnet_id="nope"), 400)
    neutron_error(add_if(api, router["id"], subnet_id=str(uuid.uuid4())), 404,
                  "SubnetNotFound")
    neutron_error(remove_if(api, router["id"], subnet_id=nogw["id"]), 404,
                  "RouterInterfaceNotFoundForSubnet")
    neutron_error(remove_if(api, router["id"], port_id=str(uuid.uuid4())), 404,
                  "RouterInterfaceNotFound")
    ports = api.get(f"{N}/ports?device_id={router['id']}").json()["ports"]
    assert len(ports) == 1  # none of the refused calls left a port behind


def test_router_in_use_and_protected_ports(api):
    _, sub = make_net(api, "10.52.1.0/24")
    router = make_router(api)
    port_id = add_if(api, router["id"], subnet_id=sub["id"]).json()["port_id"]
    err = neutron_error(api.delete(f"{N}/routers/{router['id']}", user="demo"), 409,
                        "RouterInUse")
    assert err["message"] == f"Router {router['id']} still has ports"
    err = neutron_error(api.delete(f"{N}/ports/{port_id}", user="demo"), 409,
                        "ServicePortInUse")
    assert "network:router_interface" in err["message"]
    neutron_error(api.delete(f"{N}/subnets/{sub['id']}", user="demo"), 409, "SubnetInUse")
    r = remove_if(api, router["id"], port_id=port_id)
    assert r.status_code == 200 and r.json()["subnet_id"] == sub["id"]
    assert api.get(f"{N}/ports/{port_id}").status_code == 404
    assert api.delete(f"{N}/routers/{router['id']}", user="demo").status_code == 204
    assert api.delete(f"{N}/subnets/{sub['id']}", user="demo").status_code == 204


def test_interface_by_port(api):
    net, sub = make_net(api, "10.53.1.0/24")
    router = make_router(api)
    port = create(api, "ports", "port", {"network_id": net["id"]}, user="demo")
    r = add_if(api, router["id"], port_id=port["id"])
    assert r.status_code == 200, r.text
    assert r.json()["port_id"] == port["id"] and r.json()["subnet_ids"] == [sub["id"]]
    shown = api.get(f"{N}/ports/{port['id']}", user="demo").json()["port"]
    assert shown["device_owner"] == "network:router_interface"
    other_router = make_router(api)
    neutron_error(add_if(api, other_router["id"], port_id=port["id"]), 409, "PortInUse")
    no_ip = create(api, "ports", "port", {"network_id": net["id"], "fixed_ips": []},
                   user="demo")
    err = neutron_error(add_if(api, other_router["id"], port_id=no_ip["id"]), 400)
    assert "at least one fixed IP" in err["message"]
    neutron_error(remove_if(api, router["id"], port_id=port["id"], subnet_id=net["id"]), 400,
                  "SubnetMismatchForPort")
    r = remove_if(api, router["id"], subnet_id=sub["id"])
    assert r.status_code == 200 and r.json()["port_id"] == port["id"]


def test_gateway_policy_and_validation(api):
    pub = public(api)
    net, _ = make_net(api, "10.54.1.0/24")
    neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {
        "external_gateway_info": {"network_id": pub["id"], "enable_snat": False}}}), 403,
        "PolicyNotAuthorized")
    neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {
        "external_gateway_info": {"network_id": pub["id"], "external_fixed_ips": [
            {"ip_address": "172.24.4.200"}]}}}), 403)
    neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {
        "distributed": True}}), 403)
    err = neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {
        "external_gateway_info": {"network_id": net["id"]}}}), 400, "BadRequest")
    assert err["message"] == (f"Bad router request: Network {net['id']} is not an external "
                              "network.")
    neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {
        "external_gateway_info": {"network_id": str(uuid.uuid4())}}}), 404, "NetworkNotFound")
    router = make_router(api, user="admin", external_gateway_info={
        "network_id": pub["id"], "enable_snat": False,
        "external_fixed_ips": [{"ip_address": "172.24.4.200"}]})
    gw = router["external_gateway_info"]
    assert gw["enable_snat"] is False
    assert gw["external_fixed_ips"][0]["ip_address"] == "172.24.4.200"
    # the admin moves the gateway to another address, then clears it
    r = api.put(f"{N}/routers/{router['id']}", json={"router": {"external_gateway_info": {
        "network_id": pub["id"], "external_fixed_ips": [{"ip_address": "172.24.4.201"}]}}})
    assert r.status_code == 200, r.text
    assert r.json()["router"]["external_gateway_info"]["external_fixed_ips"][0][
        "ip_address"] == "172.24.4.201"
    r = api.put(f"{N}/routers/{router['id']}", json={"router": {"external_gateway_info": {}}})
    assert r.status_code == 200 and r.json()["router"]["external_gateway_info"] is None
    assert not api.get(f"{N}/ports?device_id={router['id']}").json()["ports"]


def test_extra_routes(api):
    _, sub = make_net(api, "10.55.1.0/24")
    router = make_router(api)
    add_if(api, router["id"], subnet_id=sub["id"])
    url = f"{N}/routers/{router['id']}"
    err = neutron_error(api.put(url, user="demo", json={"router": {"routes": [
        {"destination": "10.99.0.0/16", "nexthop": "10.77.1.5"}]}}), 400, "InvalidRoutes")
    assert "the nexthop is not connected with router" in err["message"]
    neutron_error(api.put(url, user="demo", json={"router": {"routes": [
        {"destination": "10.99.0.0/16", "nexthop": sub["gateway_ip"]}]}}), 400,
        "InvalidRoutes")
    neutron_error(api.put(url, user="demo", json={"router": {"routes": [
        {"destination": "nope", "nexthop": "10.55.1.5"}]}}), 400)
    r = api.put(url, user="demo", json={"router": {"routes": [
        {"destination": "10.99.0.0/16", "nexthop": "10.55.1.5"}]}})
    assert r.status_code == 200, r.text
    assert r.json()["router"]["routes"] == [{"destination": "10.99.0.0/16",
                                             "nexthop": "10.55.1.5"}]
    r = api.put(f"{url}/add_extraroutes", user="demo", json={"router": {"routes": [
        {"destination": "10.98.0.0/16", "nexthop": "10.55.1.6"}]}})
    assert r.status_code == 200 and len(r.json()["router"]["routes"]) == 2
    neutron_error(remove_if(api, router["id"], subnet_id=sub["id"]), 409,
                  "RouterInterfaceInUseByRoute")
    r = api.put(url, user="demo", json={"router": {"routes": None}})
    assert r.status_code == 200 and r.json()["router"]["routes"] == []
    assert remove_if(api, router["id"], subnet_id=sub["id"]).status_code == 200


def test_router_isolation(api, other):
    router = make_router(api)
    h = {"token": other["token"], "user": None}
    url = f"{N}/routers/{router['id']}"
    for r in (api.get(url, **h), api.put(url, json={"router": {"name": "x"}}, **h),
              api.delete(url, **h), api.put(f"{url}/add_router_interface",
                                            json={"subnet_id": str(uuid.uuid4())}, **h)):
        neutron_error(r, 404, "RouterNotFound")
    ids = {r["id"] for r in api.get(f"{N}/routers", **h).json()["routers"]}
    assert router["id"] not in ids
    neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {
        "project_id": other["project_id"]}}), 400)


def test_router_list_filters_sort_paging_fields(api):
    names = [f"lst-{i}" for i in range(4)]
    for name in names:
        make_router(api, name=name, admin_state_up=name != "lst-3")
    rows = api.get(f"{N}/routers?name=lst-1&name=lst-2&fields=name&fields=id",
                   user="demo").json()["routers"]
    assert sorted(r["name"] for r in rows) == ["lst-1", "lst-2"]
    assert all(set(r) == {"id", "name"} for r in rows)
    down = api.get(f"{N}/routers?admin_state_up=false", user="demo").json()["routers"]
    assert [r["name"] for r in down if r["name"].startswith("lst-")] == ["lst-3"]
    r = api.get(f"{N}/routers?sort_key=name&sort_dir=desc&limit=2", user="demo").json()
    assert len(r["routers"]) == 2 and r["routers_links"][0]["rel"] == "next"
    assert [x["name"] for x in r["routers"]] == sorted(
        (x["name"] for x in r["routers"]), reverse=True)
    neutron_error(api.get(f"{N}/routers?bogus=1", user="demo"), 400)
    neutron_error(api.get(f"{N}/routers?sort_key=routes", user="demo"), 400)


# ------------------------------------------------------------------ bad input
PUB = "<public>"
BAD_ROUTER_POSTS = [
    None, "x", [], {"router": "x"}, {"routers": []}, {"routers": [{"name": 5}]},
    {"router": {"bogus": 1}}, {"router": {"status": "DOWN"}}, {"router": {"routes": []}},
    {"router": {"name": 5}}, {"router": {"name": "x" * 256}},
    {"router": {"admin_state_up": "maybe"}}, {"router": {"external_gateway_info": "x"}},
    {"router": {"external_gateway_info": {"network_id": "nope"}}},
    {"router": {"external_gateway_info": {"enable_snat": True}}},
    {"router": {"external_gateway_info": {"network_id": PUB, "bogus": 1}}},
    {"router": {"external_gateway_info": {"network_id": PUB, "enable_snat": "maybe"}}},
    {"router": {"external_gateway_info": {"network_id": PUB, "external_fixed_ips": "x"}}},
    {"router": {"external_gateway_info": {"network_id": PUB, "external_fixed_ips": [
        {"ip_address": "999.1.1.1"}]}}},
    {"router": {"external_gateway_info": {"network_id": PUB, "external_fixed_ips": [
        {"ip_address": "10.0.0.1"}]}}},
    {"router": {"external_gateway_info": {"network_id": PUB, "external_fixed_ips": [
        {"ip_address": "172.24.4.1"}]}}},
    {"router": {"availability_zone_hints": "x"}}, {"router": {"distributed": "maybe"}},
    {"router": {"project_id": 5}},
]
BAD_ROUTER_PUTS = [
    None, {"router": {"id": "x"}}, {"router": {"status": "DOWN"}}, {"router": {"routes": "x"}},
    {"router": {"routes": [{"destination": "1.2.3.0/24"}]}},
    {"router": {"routes": [{"destination": "1.2.3.0/24", "nexthop": "x"}]}},
    {"router": {"routes": [{"destination": "10.56.0.0/16", "nexthop": "10.56.1.9"}] * 2}},
    {"router": {"project_id": "x"}}, {"router": {"ha": True}},
    {"router": {"external_gateway_info": {"network_id": PUB, "external_fixed_ips": [
        {"subnet_id": "x"}]}}},
    {"router": {"external_gateway_info": {"network_id": str(uuid.uuid4())}}},
]
BAD_INTERFACE = [None, "x", [], {}, {"subnet_id": 5}, {"port_id": "x"},
                 {"subnet_id": str(uuid.uuid4()), "port_id": str(uuid.uuid4())},
                 {"subnet_id": str(uuid.uuid4())}, {"port_id": str(uuid.uuid4())}]
BAD_ROUTES = [None, {}, {"router": {}}, {"router": {"routes": "x"}},
              {"router": {"routes": [], "name": "x"}},
              {"router": {"routes": [{"destination": "10.9.0.0/16", "nexthop": "10.9.9.9"}]}}]
BAD_FIP_POSTS = [
    None, {"floatingip": {}}, {"floatingip": "x"}, {"floatingip": {"floating_network_id": "x"}},
    {"floatingip": {"floating_network_id": PUB, "floating_ip_address": "x"}},
    {"floatingip": {"floating_network_id": PUB, "floating_ip_address": "10.0.0.1"}},
    {"floatingip": {"floating_network_id": PUB, "port_id": "x"}},
    {"floatingip": {"floating_network_id": PUB, "port_id": str(uuid.uuid4())}},
    {"floatingip": {"floating_network_id": PUB, "status": "ACTIVE"}},
    {"floatingip": {"floating_network_id": PUB, "router_id": str(uuid.uuid4())}},
    {"floatingip": {"floating_network_id": PUB, "subnet_id": "x"}},
    {"floatingip": {"floating_network_id": PUB, "subnet_id": str(uuid.uuid4())}},
    {"floatingip": {"floating_network_id": PUB, "description": 5}},
]
BAD_FIP_PUTS = [
    None, {"floatingip": {"floating_ip_address": "172.24.4.99"}},
    {"floatingip": {"floating_network_id": str(uuid.uuid4())}},
    {"floatingip": {"port_id": "x"}}, {"floatingip": {"fixed_ip_address": "x"}},
    {"floatingip": {"fixed_ip_address": "10.0.0.1"}},
    {"floatingip": {"port_id": None, "fixed_ip_address": "10.0.0.1"}},
    {"floatingip": {"port_id": str(uuid.uuid4())}}, {"floatingip": {"bogus": 1}},
]


def _resolve(body, pub_id):
    if body == PUB:
        return pub_id
    if isinstance(body, dict):
        return {k: _resolve(v, pub_id) for k, v in body.items()}
    if isinstance(body, list):
        return [_resolve(v, pub_id) for v in body]
    return body


def _state(api) -> dict:
    return {c: sorted((x["id"], x.get("revision_number")) for x in
                      api.get(f"{N}/{c}").json()[c])
            for c in ("routers", "floatingips", "ports", "networks", "subnets")}


def test_bad_input_is_4xx_and_writes_nothing(api):
    pub = public(api)
    _, sub = make_net(api, "10.56.1.0/24")
    router = make_router(api, user="admin", external_gateway_info={"network_id": pub["id"]})
    add_if(api, router["id"], user="admin", subnet_id=sub["id"])
    f = create(api, "floatingips", "floatingip", {"floating_network_id": pub["id"]})
    rid, fid = router["id"], f["id"]
    calls = ([("POST", f"{N}/routers", b) for b in BAD_ROUTER_POSTS]
             + [("PUT", f"{N}/routers/{rid}", b) for b in BAD_ROUTER_PUTS]
             + [("PUT", f"{N}/routers/{rid}/add_router_interface", b) for b in BAD_INTERFACE]
             + [("PUT", f"{N}/routers/{rid}/remove_router_interface", b)
                for b in BAD_INTERFACE[:6]]
             + [("PUT", f"{N}/routers/{rid}/add_extraroutes", b) for b in BAD_ROUTES]
             + [("PUT", f"{N}/routers/{rid}/remove_extraroutes", b) for b in BAD_ROUTES[:5]]
             + [("POST", f"{N}/floatingips", b) for b in BAD_FIP_POSTS]
             + [("PUT", f"{N}/floatingips/{fid}", b) for b in BAD_FIP_PUTS])
    before = _state(api)
    for method, url, body in calls:
        kwargs = {"json": _resolve(body, pub["id"])} if body is not None else {}
        r = api.request(method, url, **kwargs)
        assert 400 <= r.status_code < 500, (method, url, body, r.status_code, r.text)
        assert "NeutronError" in r.json(), r.text
    for method, url in (("POST", f"{N}/routers"), ("PUT", f"{N}/routers/{rid}"),
                        ("POST", f"{N}/floatingips")):
        r = api.request(method, url, content=b"{not json")
        neutron_error(r, 400)
    assert _state(api) == before


def test_ipv6_prefixes_of_one_network_share_an_interface_port(api):
    net = create(api, "networks", "network", {"name": "v6"}, user="demo")
    subs = [create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 6,
                                              "cidr": cidr}, user="demo")
            for cidr in ("fd10:1::/64", "fd10:2::/64")]
    router = make_router(api)
    first = add_if(api, router["id"], subnet_id=subs[0]["id"]).json()
    second = add_if(api, router["id"], subnet_id=subs[1]["id"]).json()
    assert first["port_id"] == second["port_id"] and second["subnet_ids"] == [subs[1]["id"]]
    port = api.get(f"{N}/ports/{first['port_id']}", user="demo").json()["port"]
    assert sorted(ip["ip_address"] for ip in port["fixed_ips"]) == ["fd10:1::1", "fd10:2::1"]
    assert remove_if(api, router["id"], subnet_id=subs[0]["id"]).status_code == 200
    port = api.get(f"{N}/ports/{first['port_id']}", user="demo").json()["port"]
    assert [ip["ip_address"] for ip in port["fixed_ips"]] == ["fd10:2::1"]


def test_router_and_floating_ip_tags(api):
    router = make_router(api, tags=["blue"])
    assert router["tags"] == ["blue"]
    url = f"{N}/routers/{router['id']}/tags"
    assert api.put(f"{url}/green", user="demo").status_code == 201
    assert sorted(api.get(url, user="demo").json()["tags"]) == ["blue", "green"]
    tagged = api.get(f"{N}/routers?tags=blue,green", user="demo").json()["routers"]
    assert [r["id"] for r in tagged] == [router["id"]]
    f = create(api, "floatingips", "floatingip", {"floating_network_id": public(api)["id"]},
               user="demo")
    r = api.put(f"{N}/floatingips/{f['id']}/tags", json={"tags": ["x"]}, user="demo")
    assert r.status_code == 200 and r.json() == {"tags": ["x"]}
    assert [x["id"] for x in api.get(f"{N}/floatingips?tags-any=x", user="demo").json()[
        "floatingips"]] == [f["id"]]


def test_gateway_subnet_cannot_also_be_an_interface(api):
    pub = public(api)
    router = make_router(api, user="admin", external_gateway_info={"network_id": pub["id"]})
    err = neutron_error(add_if(api, router["id"], user="admin", subnet_id=pub["subnets"][0]),
                        400, "BadRequest")
    assert "Router already has a port on subnet" in err["message"]
