"""Server create `networks` per microversion (Get Me a Network, issue 6): every 400 of the
spec's Error Conditions and Negative tests at 2.37+ and at 2.36, and the network-backed
cases (auto/none/explicit networks, ports, fixed IPs, 409s)."""

from __future__ import annotations

import uuid

import pytest

from tests.api.test_compute import CIRROS, boot, mv

NET = str(uuid.uuid4())
PORT = str(uuid.uuid4())


def bad(r, text: str) -> None:
    assert r.status_code == 400, r.text
    assert text in r.json()["badRequest"]["message"], r.json()


# ------------------------------------------------------------------ schema (no network calls)
@pytest.mark.parametrize("version", ["2.37", "2.41", "2.42"])
def test_networks_required_from_2_37(api, version):
    bad(boot(api, version=version), "'networks' is a required property")


@pytest.mark.parametrize("networks", [
    [{"uuid": "auto"}],                      # auto is only the whole value
    [{"uuid": "none"}],
    [{"uuid": "auto"}, {"uuid": NET}],       # auto with a network
    ["auto", {"uuid": NET}],
    ["none", {"port": PORT}],                # none with a port
    ["auto", "none"],
    "bogus",
    {"uuid": NET},
    [{"uuid": "br-" + NET}],                 # uuids are strict from 2.37
    [{"uuid": NET, "bogus": 1}],
])
def test_auto_none_mixed_or_malformed_is_400_at_2_37(api, networks):
    r = boot(api, version="2.37", networks=networks)
    bad(r, "Invalid input for field/attribute networks.")
    assert "is not valid under any of the given schemas" in r.text


def test_tag_rejected_2_37_to_2_41_allowed_2_42(api):
    networks = [{"uuid": NET, "tag": "nic1"}]
    bad(boot(api, version="2.37", networks=networks), "is not valid under any")
    bad(boot(api, version="2.41", networks=networks), "is not valid under any")


@pytest.mark.parametrize("value", ["auto", "none"])
def test_auto_none_before_2_37_is_400(api, value):
    r = boot(api, version="2.36", networks=value)
    bad(r, f"Invalid input for field/attribute networks. Value: {value}. "
           f"'{value}' is not of type 'array'")
    r = boot(api, version="2.1", networks=value)
    assert r.status_code == 400


def test_pre_2_37_rules(api):
    bad(boot(api, version="2.36", networks=[{"uuid": "auto"}]),
        "Bad networks format: network uuid is not in proper format (auto)")
    bad(boot(api, version="2.36", networks=[{"fixed_ip": "10.0.0.4"}]),
        "Bad network format: missing 'uuid'")
    bad(boot(api, version="2.31", networks=[{"uuid": NET, "tag": "x"}]),
        "Additional properties are not allowed ('tag' was unexpected)")


@pytest.mark.parametrize("version", ["2.36", "2.42"])
def test_item_rules(api, version):
    bad(boot(api, version=version, networks=[{"port": PORT, "fixed_ip": "10.0.0.4"}]),
        f"Specified Fixed IP '10.0.0.4' cannot be used with port '{PORT}'")
    bad(boot(api, version=version, networks=[{"port": PORT}, {"port": PORT}]),
        f"Port ID '{PORT}' was specified twice")
    bad(boot(api, version=version, networks=[{"uuid": NET, "fixed_ip": "10.0.0.4"}],
             max_count=2), "max_count cannot be greater than 1 if an fixed_ip is specified.")
    bad(boot(api, version=version, networks=[{"port": PORT}], max_count=2),
        "Unable to launch multiple instances with a single configured port ID.")
    bad(boot(api, version=version, networks=[{"uuid": NET, "fixed_ip": "not-an-ip"}]),
        "Invalid input for field/attribute")


def test_none_makes_no_network_calls(api, monkeypatch):
    import stackling.compute.network_api as network_api

    def refuse(*_a, **_k):
        raise AssertionError("no network call for networks=none")

    monkeypatch.setattr(network_api, "_net", refuse)
    r = boot(api, version="2.37", networks="none")
    assert r.status_code == 202, r.text
    from tests.api.test_compute import wait_status

    server = wait_status(api, r.json()["server"]["id"])
    assert server["status"] == "ACTIVE" and server["addresses"] == {}
    assert "security_groups" not in server
    assert api.delete(f"/compute/v2.1/servers/{server['id']}", user="demo").status_code == 204


# ------------------------------------------------------------------ with the network service
def new_member(api) -> str:
    """A fresh project with a member user named like it; returns the name (user=project)."""
    name = f"p{uuid.uuid4().hex[:10]}"
    project = api.post("/identity/v3/projects", json={"project": {
        "name": name, "domain_id": "default"}}).json()["project"]
    user = api.post("/identity/v3/users", json={"user": {
        "name": name, "domain_id": "default", "password": "pw"}}).json()["user"]
    role = api.get("/identity/v3/roles?name=member").json()["roles"][0]
    api.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{role['id']}")
    api.token(name, name, password="pw")
    return name


def network(api, user: str, cidr: str | None = "192.168.50.0/24", name: str = "net") -> str:
    net = api.post("/networking/v2.0/networks", user=user,
                   json={"network": {"name": name}}).json()["network"]
    if cidr:
        r = api.post("/networking/v2.0/subnets", user=user, json={"subnet": {
            "network_id": net["id"], "cidr": cidr, "ip_version": 4}})
        assert r.status_code == 201, r.text
    return net["id"]


def active(api, user, r) -> dict:
    from tests.api.test_compute import wait_status

    assert r.status_code == 202, r.text
    server = wait_status(api, r.json()["server"]["id"], user=user)
    assert server["status"] == "ACTIVE", server.get("fault")
    return server


def ports_of(api, server_id: str) -> list[dict]:
    return api.get(f"/networking/v2.0/ports?device_id={server_id}").json()["ports"]


def test_explicit_networks_ports_fixed_ips(api):
    user = new_member(api)
    net = network(api, user)
    s1 = active(api, user, boot(api, user=user, networks=[{"uuid": net}]))
    (label, addrs), = s1["addresses"].items()
    assert label == "net" and addrs[0]["addr"].startswith("192.168.50.")
    assert addrs[0]["OS-EXT-IPS:type"] == "fixed" and addrs[0]["OS-EXT-IPS-MAC:mac_addr"]
    (port,) = ports_of(api, s1["id"])
    host = api.get(f"/compute/v2.1/servers/{s1['id']}").json()["server"]["OS-EXT-SRV-ATTR:host"]
    assert port["device_owner"] == "compute:nova" and port["binding:host_id"] == host
    assert port["status"] == "ACTIVE"
    assert s1["security_groups"] == [{"name": "default"}]

    s2 = active(api, user, boot(api, user=user, networks=[{"uuid": net,
                                                            "fixed_ip": "192.168.50.77"}]))
    assert s2["addresses"]["net"][0]["addr"] == "192.168.50.77"
    r = boot(api, user=user, networks=[{"uuid": net, "fixed_ip": "192.168.50.77"}])
    bad(r, "Fixed IP address 192.168.50.77 is already in use on instance")

    mine = api.post("/networking/v2.0/ports", user=user,
                    json={"port": {"network_id": net}}).json()["port"]
    s3 = active(api, user, boot(api, user=user, version="2.42",
                                networks=[{"port": mine["id"], "tag": "eth0"}]))
    assert s3["addresses"]["net"][0]["addr"] == mine["fixed_ips"][0]["ip_address"]
    r = boot(api, user=user, networks=[{"port": mine["id"]}])
    assert r.status_code == 409 and "is still in use" in r.json()["conflictingRequest"]["message"]
    bad(boot(api, user=user, networks=[{"port": PORT}]), f"Port id {PORT} could not be found.")
    bad(boot(api, user=user, networks=[{"uuid": NET}]), f"Network {NET} could not be found.")
    bare = network(api, user, cidr=None, name="bare")
    bad(boot(api, user=user, networks=[{"uuid": bare}]),
        f"Network {bare} requires a subnet in order to boot instances on.")
    # the same network twice: two NICs
    s4 = active(api, user, boot(api, user=user, networks=[{"uuid": net}, {"uuid": net}]))
    assert len(s4["addresses"]["net"]) == 2

    # Delete: compute's ports go, the user's port is unbound and stays.
    for s in (s1, s2, s3, s4):
        assert api.delete(f"/compute/v2.1/servers/{s['id']}", user=user).status_code == 204
    kept = api.get(f"/networking/v2.0/ports/{mine['id']}").json()["port"]
    assert kept["device_id"] == "" and kept["binding:host_id"] == "" and kept["status"] == "DOWN"
    left = api.get(f"/networking/v2.0/ports?network_id={net}").json()["ports"]
    assert [p["id"] for p in left if p["device_owner"].startswith("compute:")] == []


def test_interfaces_attach_detach(api):
    user = new_member(api)
    net = network(api, user)
    server = active(api, user, boot(api, user=user, networks="none"))
    url = f"/compute/v2.1/servers/{server['id']}/os-interface"
    assert api.get(url, user=user).json() == {"interfaceAttachments": []}
    r = api.post(url, user=user, json={"interfaceAttachment": {"net_id": net}})
    assert r.status_code == 200, r.text
    att = r.json()["interfaceAttachment"]
    assert att["net_id"] == net and att["port_state"] == "ACTIVE" and att["mac_addr"]
    shown = api.get(f"/compute/v2.1/servers/{server['id']}", user=user).json()["server"]
    assert shown["addresses"]["net"][0]["addr"] == att["fixed_ips"][0]["ip_address"]
    assert [a["port_id"] for a in api.get(url, user=user).json()["interfaceAttachments"]] == [
        att["port_id"]]
    assert api.get(f"{url}/{att['port_id']}", user=user).status_code == 200
    bad(api.post(url, user=user, json={"interfaceAttachment": {"net_id": net,
                                                               "port_id": PORT}}),
        "Must not input both network_id and port_id")
    bad(api.post(url, user=user, json={"interfaceAttachment": {
        "fixed_ips": [{"ip_address": "192.168.50.9"}]}}),
        "Must input network_id when request IP address")
    assert api.post(url, user=user, json={"interfaceAttachment": {"net_id": NET}}
                    ).status_code == 404
    assert api.delete(f"{url}/{att['port_id']}", user=user).status_code == 202
    assert api.get(f"/networking/v2.0/ports/{att['port_id']}").status_code == 404
    assert api.get(f"/compute/v2.1/servers/{server['id']}", user=user).json()[
        "server"]["addresses"] == {}
    # A port the user brings is bound on attach and only unbound on detach.
    mine = api.post("/networking/v2.0/ports", user=user,
                    json={"port": {"network_id": net}}).json()["port"]
    r = api.post(url, user=user, json={"interfaceAttachment": {"port_id": mine["id"]}})
    assert r.status_code == 200 and r.json()["interfaceAttachment"]["port_id"] == mine["id"]
    other = active(api, user, boot(api, user=user, networks="none"))
    r = api.post(f"/compute/v2.1/servers/{other['id']}/os-interface", user=user,
                 json={"interfaceAttachment": {"port_id": mine["id"]}})
    assert r.status_code == 409  # in use by the first server
    assert api.delete(f"{url}/{mine['id']}", user=user).status_code == 202
    kept = api.get(f"/networking/v2.0/ports/{mine['id']}").json()["port"]
    assert kept["device_id"] == "" and kept["binding:host_id"] == ""
    for s in (server, other):
        api.delete(f"/compute/v2.1/servers/{s['id']}", user=user)


def test_implicit_network_choice(api):
    """No networks before 2.37 and `auto` at 2.37+ pick the one visible network; two
    are ambiguous (409); none before 2.37 boots without a NIC."""
    user = new_member(api)
    lone = active(api, user, boot(api, user=user, version="2.36"))
    assert lone["addresses"] == {}
    net = network(api, user, name="only")
    s = active(api, user, boot(api, user=user, version="2.36"))
    assert list(s["addresses"]) == ["only"]
    s2 = active(api, user, boot(api, user=user, version="2.37", networks="auto"))
    assert list(s2["addresses"]) == ["only"]
    network(api, user, cidr="192.168.60.0/24", name="second")
    for version, networks in (("2.1", None), ("2.37", "auto")):
        extra = {"networks": networks} if networks else {}
        r = boot(api, user=user, version=version, **extra)
        assert r.status_code == 409, r.text
        assert r.json()["conflictingRequest"]["message"] == (
            "Multiple possible networks found, use a Network ID to be more specific.")
    for server in (lone, s, s2):
        api.delete(f"/compute/v2.1/servers/{server['id']}", user=user)
    assert net


# ------------------------------------------------------------------ auto (Get Me a Network)
def project_id_of(api, user: str) -> str:
    return api.get("/identity/v3/auth/projects", user=user).json()["projects"][0]["id"]


def test_auto_allocates_once_then_reuses(api):
    user = new_member(api)
    project = project_id_of(api, user)
    s1 = active(api, user, boot(api, user=user, networks="auto"))
    (label, addrs), = s1["addresses"].items()
    assert addrs[0]["addr"].startswith("10.")  # from the default IPv4 subnet pool
    s2 = active(api, user, boot(api, user=user, networks="auto"))
    assert list(s2["addresses"]) == [label]
    nets = api.get(f"/networking/v2.0/networks?project_id={project}").json()["networks"]
    assert [n["name"] for n in nets] == [label] and nets[0]["admin_state_up"] is True
    topology = api.get(f"/networking/v2.0/auto-allocated-topology/{project}", user=user).json()
    assert topology["auto_allocated_topology"]["id"] == nets[0]["id"]
    for s in (s1, s2):
        api.delete(f"/compute/v2.1/servers/{s['id']}", user=user)


def test_auto_fails_fast_when_the_deployment_is_not_ready(api):
    pools = api.get("/networking/v2.0/subnetpools?is_default=true").json()["subnetpools"]
    assert pools
    for pool in pools:
        api.put(f"/networking/v2.0/subnetpools/{pool['id']}",
                json={"subnetpool": {"is_default": False}})
    try:
        user = new_member(api)
        bad(boot(api, user=user, networks="auto"),
            f"Unable to automatically allocate a network for project {project_id_of(api, user)}")
    finally:
        for pool in pools:
            api.put(f"/networking/v2.0/subnetpools/{pool['id']}",
                    json={"subnetpool": {"is_default": True}})


def test_auto_failing_after_the_api_answered_is_error(api, monkeypatch):
    from stackling.common.errors import Conflict
    from stackling.network import interface
    from tests.api.test_compute import wait_status

    real = interface.get_auto_allocated_topology

    def flaky(db, ctx, project_id, dry_run=False):
        if dry_run:
            return real(db, ctx, project_id, dry_run=True)
        raise Conflict("Unable to provide project private network")

    monkeypatch.setattr(interface, "get_auto_allocated_topology", flaky)
    user = new_member(api)
    r = boot(api, user=user, networks="auto")
    assert r.status_code == 202
    server = wait_status(api, r.json()["server"]["id"], user=user)
    assert server["status"] == "ERROR" and server["addresses"] == {}
    assert "Failed to allocate the network(s)" in server["fault"]["message"]
    assert api.delete(f"/compute/v2.1/servers/{server['id']}", user=user).status_code == 204


def test_multi_create_auto_shares_one_network(api):
    """tempest's test_server_multi_create_auto_allocate: min_count=3 with `auto`."""
    from tests.api.test_compute import wait_status

    user = new_member(api)
    r = boot(api, user=user, networks="auto", min_count=3, name="multi")
    assert r.status_code == 202, r.text
    listed = api.get("/compute/v2.1/servers/detail?name=^multi-", user=user).json()["servers"]
    assert sorted(s["name"] for s in listed) == ["multi-1", "multi-2", "multi-3"]
    servers = [wait_status(api, s["id"], user=user) for s in listed]
    assert {s["status"] for s in servers} == {"ACTIVE"}
    assert len({label for s in servers for label in s["addresses"]}) == 1
    project = project_id_of(api, user)
    nets = api.get(f"/networking/v2.0/networks?project_id={project}&admin_state_up=true"
                   ).json()["networks"]
    assert len(nets) == 1
    for s in servers:
        api.delete(f"/compute/v2.1/servers/{s['id']}", user=user)


def test_reader_reads_but_cannot_boot(api):
    owner = new_member(api)
    server = active(api, owner, boot(api, user=owner, networks="none"))
    project = api.get(f"/identity/v3/projects?name={owner}").json()["projects"][0]
    name = f"r{uuid.uuid4().hex[:10]}"
    user = api.post("/identity/v3/users", json={"user": {
        "name": name, "domain_id": "default", "password": "pw"}}).json()["user"]
    role = api.get("/identity/v3/roles?name=reader").json()["roles"][0]
    api.put(f"/identity/v3/projects/{project['id']}/users/{user['id']}/roles/{role['id']}")
    token = api.token(name, owner, password="pw")
    url = f"/compute/v2.1/servers/{server['id']}"
    assert api.get(url, token=token).status_code == 200
    r = api.post("/compute/v2.1/servers", token=token, headers=mv("2.37"), json={"server": {
        "name": "no", "flavorRef": "1", "imageRef": CIRROS, "networks": "none"}})
    assert r.status_code == 403 and "forbidden" in r.json()
    assert api.delete(url, token=token).status_code == 403
    assert api.delete(f"/compute/v2.1/servers/{server['id']}", user=owner).status_code == 204


def test_security_groups_by_name(api):
    user = new_member(api)
    net = network(api, user)
    sg = api.post("/networking/v2.0/security-groups", user=user,
                  json={"security_group": {"name": "web"}}).json()["security_group"]
    server = active(api, user, boot(api, user=user, networks=[{"uuid": net}],
                                    security_groups=[{"name": "web"}]))
    assert server["security_groups"] == [{"name": "web"}]
    (port,) = ports_of(api, server["id"])
    assert port["security_groups"] == [sg["id"]]
    bad(boot(api, user=user, networks=[{"uuid": net}], security_groups=[{"name": "nope"}]),
        "Security group nope not found for project")
    api.delete(f"/compute/v2.1/servers/{server['id']}", user=user)


def test_binding_failure_reschedules_then_gives_up(api, monkeypatch):
    """A port that cannot bind on the chosen host sends the build to another host (at
    most three); nothing of a failed attempt remains."""
    from stackling.network import interface
    from tests.api.test_compute import wait_status

    real_create = interface.create_port
    tried: list[str] = []

    def create_port(db, ctx, body):
        port = real_create(db, ctx, body)
        tried.append(body["binding:host_id"])
        if not body["binding:host_id"].startswith(allowed_prefix):
            port["binding:vif_type"] = "binding_failed"
        return port

    monkeypatch.setattr(interface, "create_port", create_port)
    user = new_member(api)
    net = network(api, user)
    allowed_prefix = "compute-r2-"
    server = active(api, user, boot(api, user=user, networks=[{"uuid": net}]))
    host = api.get(f"/compute/v2.1/servers/{server['id']}").json()["server"][
        "OS-EXT-SRV-ATTR:host"]
    assert host.startswith("compute-r2-") and tried[-1] == host
    assert len(ports_of(api, server["id"])) == 1

    allowed_prefix = "nowhere"
    tried.clear()
    r = boot(api, user=user, networks=[{"uuid": net}])
    failed = wait_status(api, r.json()["server"]["id"], user=user)
    assert failed["status"] == "ERROR" and len(set(tried)) == 3
    assert "Exceeded maximum number of retries" in failed["fault"]["message"]
    assert ports_of(api, failed["id"]) == []
    from stackling.placement import interface as placement

    with api.runtime.db.transaction() as db:
        assert placement.get_allocations_for_consumer(db, failed["id"]) == {}
    for s in (server, failed):
        api.delete(f"/compute/v2.1/servers/{s['id']}", user=user)


def test_ports_take_the_servers_hostname_as_dns_name(api):
    """With dns-integration, as Nova: the ports a server is built or attached on carry its
    hostname as `dns_name` (so `dns_assignment` and the network's DNS answer it); a port
    the user brings loses it again when the server lets it go; a port whose dns_name is
    another name is not usable for the server."""
    user = new_member(api)
    net = network(api, user)
    server = active(api, user, boot(api, user=user, name="Web One", networks=[{"uuid": net}]))
    (port,) = ports_of(api, server["id"])
    assert port["dns_name"] == "web-one"
    assert port["dns_assignment"][0]["hostname"]
    mine = api.post("/networking/v2.0/ports", user=user,
                    json={"port": {"network_id": net}}).json()["port"]
    url = f"/compute/v2.1/servers/{server['id']}/os-interface"
    assert api.post(url, user=user, json={"interfaceAttachment": {"port_id": mine["id"]}}
                    ).status_code == 200
    assert api.get(f"/networking/v2.0/ports/{mine['id']}").json()["port"]["dns_name"] == \
        "web-one"
    assert api.delete(f"{url}/{mine['id']}", user=user).status_code == 202
    assert api.get(f"/networking/v2.0/ports/{mine['id']}").json()["port"]["dns_name"] == ""
    named = api.post("/networking/v2.0/ports", user=user, json={
        "port": {"network_id": net, "dns_name": "db"}}).json()["port"]
    r = api.post(url, user=user, json={"interfaceAttachment": {"port_id": named["id"]}})
    bad(r, "Value db assigned to dns_name attribute does not match instance's hostname "
           "web-one")
    api.delete(f"/compute/v2.1/servers/{server['id']}", user=user)
