"""Compute fidelity (issue 11, items 3, 4, 6, 7) over the in-process app: floating IPs in
`addresses` and `/ips`, a server's security groups and the add/remove actions, access IPs
as Nova stores them, and the network proxy APIs below their removal microversions."""

from __future__ import annotations

import pytest

from tests.api.test_compute import boot, mv, wait_status

NET = "/networking/v2.0"
C = "/compute/v2.1"


@pytest.fixture(scope="module")
def server(api) -> dict:
    """An ACTIVE demo server on the auto-allocated network (routed to `public`)."""
    r = boot(api, networks="auto", name="fid-vm")
    assert r.status_code == 202, r.text
    return wait_status(api, r.json()["server"]["id"])


def _port(api, server_id: str) -> dict:
    ports = api.get(f"{NET}/ports?device_id={server_id}", user="demo").json()["ports"]
    assert len(ports) == 1
    return ports[0]


def _public(api) -> str:
    return api.get(f"{NET}/networks?name=public", user="demo").json()["networks"][0]["id"]


def test_floating_ip_shows_in_addresses_and_ips(api, server):
    port = _port(api, server["id"])
    fip = api.post(f"{NET}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": _public(api), "port_id": port["id"]}})
    assert fip.status_code == 201, fip.text
    address = fip.json()["floatingip"]["floating_ip_address"]
    shown = api.get(f"{C}/servers/{server['id']}", user="demo", headers=mv("2.1")).json()
    (label, items), = shown["server"]["addresses"].items()
    assert [i["OS-EXT-IPS:type"] for i in items][-1] == "floating"
    assert items[-1] == {"version": 4, "addr": address, "OS-EXT-IPS:type": "floating",
                        "OS-EXT-IPS-MAC:mac_addr": port["mac_address"]}
    listed = api.get(f"{C}/servers/detail", user="demo").json()["servers"]
    mine = next(s for s in listed if s["id"] == server["id"])
    assert address in [i["addr"] for i in mine["addresses"][label]]
    ips = api.get(f"{C}/servers/{server['id']}/ips", user="demo").json()["addresses"]
    assert {"version": 4, "addr": address} in ips[label]
    one = api.get(f"{C}/servers/{server['id']}/ips/{label}", user="demo").json()
    assert {"version": 4, "addr": address} in one[label]
    # os-floating-ips (below 2.36) shows the association
    proxied = api.get(f"{C}/os-floating-ips", user="demo", headers=mv("2.35")).json()
    entry = next(f for f in proxied["floating_ips"] if f["ip"] == address)
    assert entry["instance_id"] == server["id"] and entry["pool"] == "public"
    # disassociating removes it from addresses
    api.put(f"{NET}/floatingips/{fip.json()['floatingip']['id']}", user="demo",
            json={"floatingip": {"port_id": None}})
    shown = api.get(f"{C}/servers/{server['id']}", user="demo").json()["server"]
    assert {i["OS-EXT-IPS:type"] for i in shown["addresses"][label]} == {"fixed"}
    api.delete(f"{NET}/floatingips/{fip.json()['floatingip']['id']}", user="demo")


def test_server_security_groups_add_remove(api, server):
    sid = server["id"]
    groups = api.get(f"{C}/servers/{sid}/os-security-groups", user="demo")
    assert groups.status_code == 200, groups.text
    assert [g["name"] for g in groups.json()["security_groups"]] == ["default"]
    default = groups.json()["security_groups"][0]
    assert set(default) == {"id", "name", "description", "tenant_id", "rules"}
    assert all(set(r) == {"id", "parent_group_id", "ip_protocol", "from_port", "to_port",
                          "group", "ip_range"} for r in default["rules"])
    web = api.post(f"{NET}/security-groups", user="demo",
                   json={"security_group": {"name": "web"}}).json()["security_group"]
    api.post(f"{NET}/security-group-rules", user="demo", json={"security_group_rule": {
        "security_group_id": web["id"], "direction": "ingress", "protocol": "tcp",
        "port_range_min": 80, "port_range_max": 80, "remote_ip_prefix": "0.0.0.0/0"}})
    act = f"{C}/servers/{sid}/action"
    r = api.post(act, user="demo", json={"addSecurityGroup": {"name": "web"}})
    assert r.status_code == 202, r.text
    groups = api.get(f"{C}/servers/{sid}/os-security-groups", user="demo").json()
    by_name = {g["name"]: g for g in groups["security_groups"]}
    assert set(by_name) == {"default", "web"}
    assert by_name["web"]["rules"][0]["from_port"] == 80
    assert by_name["web"]["rules"][0]["ip_range"] == {"cidr": "0.0.0.0/0"}
    assert set(_port(api, sid)["security_groups"]) == {by_name["default"]["id"], web["id"]}
    shown = api.get(f"{C}/servers/{sid}", user="demo").json()["server"]
    assert {g["name"] for g in shown["security_groups"]} == {"default", "web"}
    assert api.post(act, user="demo", json={"removeSecurityGroup": {"name": "web"}}
                    ).status_code == 202
    r = api.post(act, user="demo", json={"removeSecurityGroup": {"name": "web"}})
    assert r.status_code == 400 and "not associated" in r.json()["badRequest"]["message"]
    r = api.post(act, user="demo", json={"addSecurityGroup": {"name": "nope"}})
    assert r.status_code == 404, r.text
    r = api.post(act, user="demo", json={"addSecurityGroup": {}})
    assert r.status_code == 400
    r = api.post(act, user="demo", json={"addSecurityGroup": {"name": " "}})
    assert r.status_code == 400
    # another project sees neither the server nor its groups
    assert api.get(f"{C}/servers/{sid}/os-security-groups", user="admin").status_code == 200


def test_access_ips_normalised(api, server):
    r = api.put(f"{C}/servers/{server['id']}", user="demo", json={"server": {
        "accessIPv4": "192.0.2.10", "accessIPv6": "2001:0db8:0000:0000:0000:0000:0000:0001"}})
    assert r.status_code == 200, r.text
    assert r.json()["server"]["accessIPv6"] == "2001:db8::1"
    shown = api.get(f"{C}/servers/{server['id']}", user="demo").json()["server"]
    assert shown["accessIPv4"] == "192.0.2.10" and shown["accessIPv6"] == "2001:db8::1"


@pytest.mark.parametrize("path", ["os-tenant-networks", "os-networks", "os-security-groups",
                                  "os-floating-ips", "os-floating-ip-pools"])
def test_proxies_served_below_2_36_only(api, path):
    assert api.get(f"{C}/{path}", user="demo", headers=mv("2.35")).status_code == 200
    r = api.get(f"{C}/{path}", user="demo", headers=mv("2.36"))
    assert r.status_code == 404 and "itemNotFound" in r.json()


def test_network_proxy_bodies(api, server):
    v = mv("2.35")
    nets = api.get(f"{C}/os-tenant-networks", user="demo", headers=v).json()["networks"]
    auto = next(n for n in nets if n["label"] == "auto_allocated_network")
    assert auto == {"id": auto["id"], "cidr": "None", "label": "auto_allocated_network"}
    one = api.get(f"{C}/os-tenant-networks/{auto['id']}", user="demo", headers=v).json()
    assert one["network"]["id"] == auto["id"]
    r = api.get(f"{C}/os-tenant-networks/00000000-0000-0000-0000-000000000000", user="demo",
                headers=v)
    assert r.status_code == 404
    nets = api.get(f"{C}/os-networks", user="demo", headers=v).json()["networks"]
    row = next(n for n in nets if n["id"] == auto["id"])
    assert row["label"] == "auto_allocated_network" and row["cidr"] is None
    assert "project_id" not in row
    pools = api.get(f"{C}/os-floating-ip-pools", user="demo", headers=v).json()
    assert {"name": "public"} in pools["floating_ip_pools"]
    sgs = api.get(f"{C}/os-security-groups", user="demo", headers=v).json()["security_groups"]
    assert "default" in [g["name"] for g in sgs]
    made = api.post(f"{C}/os-security-groups", user="demo", headers=v, json={
        "security_group": {"name": "legacy", "description": "via nova"}})
    assert made.status_code == 200, made.text
    sg = made.json()["security_group"]
    assert sg["description"] == "via nova" and sg["rules"] == []
    assert api.get(f"{C}/os-security-groups/{sg['id']}", user="demo", headers=v
                   ).status_code == 200
    renamed = api.put(f"{C}/os-security-groups/{sg['id']}", user="demo", headers=v, json={
        "security_group": {"name": "legacy2", "description": "renamed"}})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["security_group"]["name"] == "legacy2"
    assert api.put(f"{C}/os-security-groups/{sg['id']}", user="demo", headers=v, json={
        "security_group": {"name": "x"}}).status_code == 400
    bad = api.post(f"{C}/os-security-groups", user="demo", headers=v, json={
        "security_group": {"name": "x"}})
    assert bad.status_code == 400
    assert api.delete(f"{C}/os-security-groups/{sg['id']}", user="demo", headers=v
                      ).status_code == 202
    assert api.get(f"{C}/os-security-groups/{sg['id']}", user="demo", headers=v
                   ).status_code == 404
    fip = api.post(f"{C}/os-floating-ips", user="demo", headers=v, json={"pool": "public"})
    assert fip.status_code == 200, fip.text
    body = fip.json()["floating_ip"]
    assert body["pool"] == "public" and body["instance_id"] is None and body["fixed_ip"] is None
    assert api.get(f"{C}/os-floating-ips/{body['id']}", user="demo", headers=v
                   ).json()["floating_ip"]["ip"] == body["ip"]
    assert api.post(f"{C}/os-floating-ips", user="demo", headers=v, json={"pool": "nope"}
                    ).status_code == 404
    assert api.delete(f"{C}/os-floating-ips/{body['id']}", user="demo", headers=v
                      ).status_code == 202
    assert api.get(f"{C}/os-floating-ips/{body['id']}", user="demo", headers=v
                   ).status_code == 404


def test_admin_deleted_listing_is_deleted_servers_only(api, server):
    listed = api.get(f"{C}/servers?deleted=True&all_tenants=1", user="admin").json()
    assert listed["servers"] == []
    listed = api.get(f"{C}/servers/detail?deleted=True", user="demo").json()
    assert server["id"] in [s["id"] for s in listed["servers"]]


def test_simple_tenant_usage(api, server):
    project = server["tenant_id"]
    start, end = "2020-01-01T00:00:00", "2100-01-01T00:00:00"
    r = api.get(f"{C}/os-simple-tenant-usage?start={start}&end={end}&detailed=1",
                user="admin", headers=mv("2.1"))
    assert r.status_code == 200, r.text
    usage = next(u for u in r.json()["tenant_usages"] if u["tenant_id"] == project)
    assert usage["total_hours"] > 0 and usage["start"].startswith("2020-01-01T00:00:00")
    row = next(s for s in usage["server_usages"] if s["instance_id"] == server["id"])
    assert row["flavor"] == "m1.tiny" and row["state"] == "active" and row["ended_at"] is None
    assert usage["total_vcpus_usage"] >= row["vcpus"] * row["hours"]
    brief = api.get(f"{C}/os-simple-tenant-usage?start={start}&end={end}", user="admin")
    assert all("server_usages" not in u for u in brief.json()["tenant_usages"])
    # a member reads its own project's usage, not the list nor another project's
    mine = api.get(f"{C}/os-simple-tenant-usage/{project}?start={start}&end={end}",
                   user="demo").json()["tenant_usage"]
    assert mine["tenant_id"] == project and mine["server_usages"]
    assert api.get(f"{C}/os-simple-tenant-usage", user="demo").status_code == 403
    admin_project = api.get("/identity/v3/auth/projects", user="admin").json()["projects"]
    other = next(p["id"] for p in admin_project if p["name"] == "admin")
    assert api.get(f"{C}/os-simple-tenant-usage/{other}", user="demo").status_code == 403
    # an empty window, a bad date, an inverted period
    empty = api.get(f"{C}/os-simple-tenant-usage?start=2000-01-01T00:00:00&end="
                    "2000-01-02T00:00:00", user="admin").json()
    assert empty == {"tenant_usages": []}
    assert api.get(f"{C}/os-simple-tenant-usage?start=yesterday", user="admin"
                   ).status_code == 400
    assert api.get(f"{C}/os-simple-tenant-usage?start={end}&end={start}", user="admin"
                   ).status_code == 400


def test_simple_tenant_usage_paging_from_2_40(api, server):
    second = boot(api, networks="none", name="fid-vm-2")
    wait_status(api, second.json()["server"]["id"])
    q = "start=2020-01-01T00:00:00&end=2100-01-01T00:00:00&detailed=1&limit=1"
    page = api.get(f"{C}/os-simple-tenant-usage?{q}", user="admin", headers=mv("2.40")).json()
    assert sum(len(u["server_usages"]) for u in page["tenant_usages"]) == 1
    link = page["tenant_usages_links"][0]
    assert link["rel"] == "next" and "marker=" in link["href"]
    marker = link["href"].split("marker=")[1].split("&")[0]
    nxt = api.get(f"{C}/os-simple-tenant-usage?{q}&marker={marker}", user="admin",
                  headers=mv("2.40")).json()
    seen = {s["instance_id"] for u in nxt["tenant_usages"] for s in u["server_usages"]}
    assert marker not in seen and len(seen) == 1
    # before 2.40 limit is ignored
    old = api.get(f"{C}/os-simple-tenant-usage?{q}", user="admin", headers=mv("2.39")).json()
    assert "tenant_usages_links" not in old
    assert sum(len(u["server_usages"]) for u in old["tenant_usages"]) >= 2


def test_os_hosts_below_2_43(api, server):
    hosts = api.get(f"{C}/os-hosts", user="admin", headers=mv("2.42"))
    assert hosts.status_code == 200, hosts.text
    computes = [h for h in hosts.json()["hosts"] if h["service"] == "compute"]
    assert computes and all(h["zone"] for h in computes)
    shown = api.get(f"{C}/servers/{server['id']}", user="admin").json()["server"]
    host = shown["OS-EXT-SRV-ATTR:host"]
    detail = api.get(f"{C}/os-hosts/{host}", user="admin", headers=mv("2.42")).json()["host"]
    projects = [r["resource"]["project"] for r in detail]
    assert projects[:3] == ["(total)", "(used_now)", "(used_max)"]
    assert server["tenant_id"] in projects
    assert api.get(f"{C}/os-hosts/nope", user="admin", headers=mv("2.42")).status_code == 404
    assert api.get(f"{C}/os-hosts", user="admin", headers=mv("2.43")).status_code == 404
    assert api.get(f"{C}/os-hosts", user="demo", headers=mv("2.42")).status_code == 403


def test_security_group_rules_proxy(api):
    v = mv("2.35")
    sg = api.post(f"{C}/os-security-groups", user="demo", headers=v, json={
        "security_group": {"name": "rules", "description": "r"}}).json()["security_group"]
    r = api.post(f"{C}/os-security-group-rules", user="demo", headers=v, json={
        "security_group_rule": {"parent_group_id": sg["id"], "ip_protocol": "tcp",
                                "from_port": 22, "to_port": 22, "cidr": "10.0.0.0/8"}})
    assert r.status_code == 200, r.text
    rule = r.json()["security_group_rule"]
    assert rule == {"id": rule["id"], "parent_group_id": sg["id"], "ip_protocol": "tcp",
                    "from_port": 22, "to_port": 22, "group": {},
                    "ip_range": {"cidr": "10.0.0.0/8"}}
    icmp = api.post(f"{C}/os-security-group-rules", user="demo", headers=v, json={
        "security_group_rule": {"parent_group_id": sg["id"], "ip_protocol": "icmp",
                                "from_port": -1, "to_port": -1, "group_id": sg["id"]}})
    assert icmp.status_code == 200, icmp.text
    assert icmp.json()["security_group_rule"]["group"] == {"name": "rules",
                                                           "tenant_id": sg["tenant_id"]}
    shown = api.get(f"{C}/os-security-groups/{sg['id']}", user="demo", headers=v).json()
    assert len(shown["security_group"]["rules"]) == 2
    dup = api.post(f"{C}/os-security-group-rules", user="demo", headers=v, json={
        "security_group_rule": {"parent_group_id": sg["id"], "ip_protocol": "tcp",
                                "from_port": 22, "to_port": 22, "cidr": "10.0.0.0/8"}})
    assert dup.status_code == 400
    for bad in ({"ip_protocol": "tcp", "from_port": 10, "to_port": 5},
                {"ip_protocol": "bogus", "from_port": 1, "to_port": 2},
                {"ip_protocol": "tcp", "from_port": 1, "to_port": 2, "cidr": "nope"}):
        r = api.post(f"{C}/os-security-group-rules", user="demo", headers=v, json={
            "security_group_rule": {"parent_group_id": sg["id"], **bad}})
        assert r.status_code == 400, (bad, r.text)
    r = api.post(f"{C}/os-security-group-rules", user="demo", headers=v, json={
        "security_group_rule": {"parent_group_id": "00000000-0000-0000-0000-000000000000",
                                "ip_protocol": "tcp", "from_port": 1, "to_port": 2}})
    assert r.status_code == 404
    assert api.delete(f"{C}/os-security-group-rules/{rule['id']}", user="demo", headers=v
                      ).status_code == 202
    assert api.delete(f"{C}/os-security-group-rules/{rule['id']}", user="demo", headers=v
                      ).status_code == 404
    assert api.post(f"{C}/os-security-group-rules", user="demo", headers=mv("2.36"), json={
        "security_group_rule": {"parent_group_id": sg["id"]}}).status_code == 404


def test_add_remove_floating_ip_actions_below_2_44(api, server):
    sid, v = server["id"], mv("2.43")
    fip = api.post(f"{NET}/floatingips", user="demo", json={"floatingip": {
        "floating_network_id": _public(api)}}).json()["floatingip"]
    address = fip["floating_ip_address"]
    act = f"{C}/servers/{sid}/action"
    r = api.post(act, user="demo", headers=v, json={"addFloatingIp": {"address": address}})
    assert r.status_code == 202, r.text
    shown = api.get(f"{C}/servers/{sid}", user="demo").json()["server"]
    assert address in [a["addr"] for ips in shown["addresses"].values() for a in ips
                       if a["OS-EXT-IPS:type"] == "floating"]
    assert api.get(f"{NET}/floatingips/{fip['id']}", user="demo").json()["floatingip"][
        "port_id"] == _port(api, sid)["id"]
    r = api.post(act, user="demo", headers=v, json={"removeFloatingIp": {"address": address}})
    assert r.status_code == 202, r.text
    r = api.post(act, user="demo", headers=v, json={"removeFloatingIp": {"address": address}})
    assert r.status_code == 409, r.text
    r = api.post(act, user="demo", headers=v, json={"addFloatingIp": {"address": "192.0.2.99"}})
    assert r.status_code == 404, r.text
    r = api.post(act, user="demo", headers=v, json={"addFloatingIp": {"address": "nope"}})
    assert r.status_code == 400, r.text
    r = api.post(act, user="demo", headers=mv("2.44"),
                 json={"addFloatingIp": {"address": address}})
    assert r.status_code == 404, r.text
    api.delete(f"{NET}/floatingips/{fip['id']}", user="demo")
