"""Network fidelity (issue 11) through the real clients: openstacksdk on every backend
(including Ansible-style idempotent sequences through its cloud layer), the `openstack`
CLI for a representative few on SQLite."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------ segment ranges (1, 2)
def test_sdk_segment_range_in_use_and_partial_provider_segments(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    project = member["project"].id
    base = 60000 + uuid.uuid4().int % 1_000_000 * 10
    rng = admin.network.create_network_segment_range(
        name=_name("own"), shared=False, project_id=project, network_type="vxlan",
        minimum=base, maximum=base + 1)
    # an admin's partial provider request for the project takes the project's own range
    net = admin.network.create_network(name=_name("partial"), project_id=project,
                                       provider_network_type="vxlan")
    assert net.provider_segmentation_id in (base, base + 1)
    # shrinking the range off that id is refused (also while a shared range covers it)
    keep = base + 1 if net.provider_segmentation_id == base else base
    with pytest.raises(exceptions.ConflictException, match="referenced by one or more"):
        admin.network.update_network_segment_range(rng, minimum=keep, maximum=keep)
    with pytest.raises(exceptions.ConflictException):
        admin.network.delete_network_segment_range(rng)
    admin.network.delete_network(net)
    admin.network.delete_network_segment_range(rng)


# ------------------------------------------------------------------ external networks (8)
def test_sdk_external_subnets_and_floating_ips(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    ext = admin.network.create_network(name=_name("ext"), is_router_external=True)
    sub = admin.network.create_subnet(network_id=ext.id, ip_version=4,
                                      cidr="198.18.0.0/24")
    assert member["sdk"].network.get_network(ext.id).id == ext.id
    with pytest.raises(exceptions.NotFoundException):
        member["sdk"].network.get_subnet(sub.id)
    assert list(member["sdk"].network.subnets(network_id=ext.id)) == []
    fip = member["sdk"].network.create_ip(floating_network_id=ext.id)
    admin.network.delete_network(ext)  # takes the floating IP with it
    assert admin.network.find_ip(fip.id) is None


# ------------------------------------------------------------------ security groups (9)
def test_sdk_security_group_errors(cloud):
    conn = cloud.new_project_member()["sdk"]
    name = _name("sg")
    sg = conn.network.create_security_group(name=name)
    with pytest.raises(exceptions.BadRequestException, match="Invalid value for port"):
        conn.network.create_security_group_rule(
            security_group_id=sg.id, direction="ingress", protocol="tcp",
            port_range_min=70000, port_range_max=70001)
    with pytest.raises(exceptions.NotFoundException, match="does not exist"):
        conn.network.create_security_group_rule(
            security_group_id=sg.id, direction="ingress", remote_group_id="no-such-group")
    with pytest.raises(exceptions.ConflictException):
        conn.network.update_security_group(sg, name="default")
    assert conn.network.get_security_group(sg.id).name == name
    conn.network.delete_security_group(sg.id)


# ------------------------------------------------------------------ paging links (10)
def test_sdk_pages_through_full_last_pages(cloud):
    conn = cloud.new_project_member()["sdk"]
    tag = _name("pg")
    made = {conn.network.create_network(name=f"{tag}-{i}", description=tag).id
            for i in range(4)}
    # 4 items at 2 a page: the sdk follows `next` to the empty page and stops there
    assert {n.id for n in conn.network.networks(description=tag, limit=2)} == made
    body = conn.network.get(f"/networks?description={tag}&limit=2").json()
    assert {link["rel"] for link in body["networks_links"]} == {"next", "previous"}
    for net_id in made:
        conn.network.delete_network(net_id)


# ------------------------------------------------------------------ agents (11)
def test_sdk_agents(cloud):
    admin = cloud.sdk()
    agents = list(admin.network.agents())
    hosts = {a.host for a in agents}
    assert hosts and all(a.agent_type == "Open vSwitch agent" and a.is_alive for a in agents)
    one = admin.network.get_agent(agents[0].id)
    assert "bridge_mappings" in one.configuration
    assert list(admin.network.agents(host=one.host))[0].id == one.id
    member = cloud.new_project_member()["sdk"]
    assert list(member.network.agents()) == []
    with pytest.raises(exceptions.NotFoundException):
        member.network.get_agent(one.id)


# ------------------------------------------------------------------ RBAC and scopes (12)
def test_sdk_share_a_network_with_chosen_projects(cloud):
    admin = cloud.sdk()
    chosen, stranger = cloud.new_project_member(), cloud.new_project_member()
    net = admin.network.create_network(name=_name("prov"), provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    admin.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.99.0.0/24")
    policy = admin.network.create_rbac_policy(
        object_type="network", object_id=net.id, action="access_as_shared",
        target_project_id=chosen["project"].id)
    assert policy.target_project_id == chosen["project"].id
    seen = chosen["sdk"].network.get_network(net.id)
    assert seen.is_shared is True
    with pytest.raises(exceptions.NotFoundException):
        stranger["sdk"].network.get_network(net.id)
    port = chosen["sdk"].network.create_port(network_id=net.id)
    assert port.fixed_ips and port.fixed_ips[0]["ip_address"].startswith("10.99.0.")
    with pytest.raises(exceptions.ConflictException):
        admin.network.delete_rbac_policy(policy)
    chosen["sdk"].network.delete_port(port)
    admin.network.delete_rbac_policy(policy)
    with pytest.raises(exceptions.NotFoundException):
        chosen["sdk"].network.get_network(net.id)
    admin.network.delete_network(net)


def test_ansible_style_idempotent_sharing(cloud):
    """What openstack.cloud.address_scope / neutron_rbac_policy / network do: find, then
    create only when missing; the second run changes nothing."""
    admin = cloud.sdk()
    chosen = cloud.new_project_member()
    name = _name("scope")

    def run() -> tuple[str, str, str]:
        scope = admin.network.find_address_scope(name) or admin.network.create_address_scope(
            name=name, ip_version=4)
        net = admin.get_network(f"{name}-net") or admin.create_network(f"{name}-net")
        found = list(admin.network.rbac_policies(
            object_id=net.id, action="access_as_shared",
            target_project_id=chosen["project"].id))
        policy = found[0] if found else admin.network.create_rbac_policy(
            object_type="network", object_id=net.id, action="access_as_shared",
            target_project_id=chosen["project"].id)
        return scope.id, net.id, policy.id

    first = run()
    assert run() == first
    scope_id, net_id, policy_id = first
    assert [p.id for p in admin.network.rbac_policies(object_id=net_id)] == [policy_id]
    assert len([s for s in admin.network.address_scopes(name=name)]) == 1
    assert chosen["sdk"].network.get_network(net_id).is_shared
    admin.network.delete_rbac_policy(policy_id)
    admin.network.delete_network(net_id)
    admin.network.delete_address_scope(scope_id)


# ------------------------------------------------------------------ prefix operations (13)
def test_sdk_subnetpool_prefix_operations(cloud):
    conn = cloud.new_project_member()["sdk"]
    pool = conn.network.create_subnet_pool(name=_name("ops"), prefixes=["10.240.0.0/24"])
    r = conn.network.put(f"/subnetpools/{pool.id}/add_prefixes",
                         json={"prefixes": ["10.240.1.0/24"]})
    assert r.status_code == 200 and r.json() == {"prefixes": ["10.240.0.0/23"]}
    assert conn.network.get_subnet_pool(pool.id).prefixes == ["10.240.0.0/23"]
    net = conn.network.create_network(name=_name("ops"))
    sub = conn.network.create_subnet(network_id=net.id, ip_version=4,
                                     subnetpool_id=pool.id, cidr="10.240.1.0/28")
    r = conn.network.put(f"/subnetpools/{pool.id}/remove_prefixes",
                         json={"prefixes": ["10.240.1.0/24"]})
    assert r.status_code == 400
    assert r.json()["NeutronError"]["type"] == "IllegalSubnetPoolPrefixUpdate"
    conn.network.delete_subnet(sub)
    r = conn.network.put(f"/subnetpools/{pool.id}/remove_prefixes",
                         json={"prefixes": ["10.240.1.0/24"]})
    assert r.json() == {"prefixes": ["10.240.0.0/24"]}
    conn.network.delete_network(net)
    conn.network.delete_subnet_pool(pool)


# ------------------------------------------------------------------ the CLI
@sqlite_only
def test_cli_agents_rbac_and_address_scopes(cloud):
    agents = cloud.cli("network", "agent", "list", "-f", "json")
    assert agents and all(a["Agent Type"] == "Open vSwitch agent" and a["Alive"]
                          for a in agents)
    shown = cloud.cli("network", "agent", "show", agents[0]["ID"], "-f", "json")
    assert shown["host"] == agents[0]["Host"]
    member = cloud.new_project_member()
    name = _name("cli")
    net = cloud.cli("network", "create", name, "-f", "json")
    policy = cloud.cli("network", "rbac", "create", "--type", "network", "--action",
                       "access_as_shared", "--target-project", member["project"].id,
                       net["id"], "-f", "json")
    assert policy["target_project_id"] == member["project"].id
    listed = cloud.cli("network", "rbac", "list", "-f", "json")
    assert policy["id"] in {p["ID"] for p in listed}
    scope = cloud.cli("address", "scope", "create", "--ip-version", "4", f"{name}-scope",
                      "-f", "json")
    pool = cloud.cli("subnet", "pool", "create", "--pool-prefix", "10.250.0.0/16",
                     "--address-scope", scope["id"], f"{name}-pool", "-f", "json")
    assert pool["address_scope_id"] == scope["id"]
    failed = cloud.cli("address", "scope", "delete", scope["id"], check=False)
    assert failed.returncode != 0
    cloud.cli("subnet", "pool", "delete", pool["id"])
    cloud.cli("address", "scope", "delete", scope["id"])
    cloud.cli("network", "rbac", "delete", policy["id"])
    cloud.cli("network", "delete", net["id"])


# ------------------------------------------------------------------ racing grants
@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_racing_identical_grants_make_one(cloud_factory, backend):
    """Ten identical policy creates and ten `shared=true` updates of one network across
    four processes: one grant per (object, action, target), the others 409, the network
    ends with exactly one wildcard policy."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    server = cloud_factory(backend, workers=4)
    admin = server.sdk()
    member = server.new_project_member()
    net = admin.network.create_network(name=_name("race"))
    token = server.token()
    local = threading.local()

    def call(i: int) -> httpx.Response:
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                                      timeout=120)
        if i % 2:
            return local.http.put(f"/networking/v2.0/networks/{net.id}",
                                  json={"network": {"shared": True}})
        return local.http.post("/networking/v2.0/rbac-policies", json={"rbac_policy": {
            "object_type": "network", "object_id": net.id, "action": "access_as_shared",
            "target_tenant": member["project"].id}})

    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(call, range(20)))
    creates = sorted(r.status_code for i, r in enumerate(results) if not i % 2)
    assert creates == [201] + [409] * 9, [r.text for r in results if r.status_code >= 500]
    assert all(r.status_code == 200 for i, r in enumerate(results) if i % 2), [
        r.text for r in results if r.status_code != 200]
    grants = sorted(p.target_project_id for p in admin.network.rbac_policies(object_id=net.id))
    assert grants == sorted(["*", member["project"].id])
    assert member["sdk"].network.get_network(net.id).is_shared
