"""QoS through the real clients: openstacksdk on every backend (policies, every rule type,
rule types, sharing, ports and networks with a policy, the port's resource request), the
`openstack network qos ...` commands on SQLite, and servers booted on ports with a
minimum-bandwidth policy: placed on a host whose bridge has the bandwidth, refused
(NoValidHost) when none has, and concurrent boots never over-allocating a bridge
(several processes; SQLite, PostgreSQL, MariaDB)."""

from __future__ import annotations

import uuid

import pytest
from openstack import exceptions

from tests.conftest import sqlite_only

WAIT = {"wait": 120, "interval": 0.2}


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_sdk_qos_policies_rules_and_ports(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    conn = member["sdk"]
    policy = admin.network.create_qos_policy(name=_name("gold"), description="gold",
                                             project_id=member["project"].id)
    bw = admin.network.create_qos_bandwidth_limit_rule(policy, max_kbps=10000,
                                                       max_burst_kbps=1000)
    assert bw.direction == "egress"
    admin.network.create_qos_bandwidth_limit_rule(policy, max_kbps=5000, direction="ingress")
    with pytest.raises(exceptions.ConflictException):
        admin.network.create_qos_bandwidth_limit_rule(policy, max_kbps=1)
    admin.network.create_qos_dscp_marking_rule(policy, dscp_mark=26)
    admin.network.create_qos_minimum_bandwidth_rule(policy, min_kbps=1000)
    with pytest.raises(exceptions.ConflictException):  # above the ingress limit
        admin.network.create_qos_minimum_bandwidth_rule(policy, min_kbps=6000,
                                                        direction="ingress")
    bw = admin.network.update_qos_bandwidth_limit_rule(bw, policy, max_kbps=20000)
    assert bw.max_kbps == 20000
    types = {t.type for t in conn.network.qos_rule_types()}
    assert {"bandwidth_limit", "dscp_marking", "minimum_bandwidth",
            "minimum_packet_rate"} <= types
    # the project reads its policy but may not change it (Neutron's defaults)
    mine = conn.network.get_qos_policy(policy.id)
    assert len(mine.rules) == 4 and mine.description == "gold"
    with pytest.raises(exceptions.ForbiddenException):
        conn.network.update_qos_policy(policy, name="x")
    net = conn.network.create_network(name=_name("qnet"), qos_policy_id=policy.id)
    assert net.qos_policy_id == policy.id
    port = conn.network.create_port(network_id=net.id)
    assert port.qos_policy_id is None and port.qos_network_policy_id == policy.id
    own = conn.network.create_port(network_id=net.id, qos_policy_id=policy.id)
    assert own.qos_policy_id == policy.id
    assert own.resource_request is None  # admin-only, as upstream
    assert admin.network.get_port(own.id).resource_request["request_groups"][0][
        "resources"] == {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}
    with pytest.raises(exceptions.ConflictException):  # in use
        admin.network.delete_qos_policy(policy)
    # another project sees it once shared with it
    other = cloud.new_project_member()
    assert other["sdk"].network.find_qos_policy(policy.id) is None
    admin.network.create_rbac_policy(object_type="qos_policy", object_id=policy.id,
                                     action="access_as_shared",
                                     target_project_id=other["project"].id)
    assert other["sdk"].network.get_qos_policy(policy.id).is_shared is True
    conn.network.delete_port(own)
    conn.network.delete_port(port)
    conn.network.delete_network(net)
    admin.network.delete_qos_policy(policy)
    assert admin.network.find_qos_policy(policy.id) is None


def test_sdk_default_policy(cloud):
    admin = cloud.sdk()
    member = cloud.new_project_member()
    policy = admin.network.create_qos_policy(name=_name("default"), is_default=True,
                                             project_id=member["project"].id)
    assert policy.is_default is True
    with pytest.raises(exceptions.ConflictException):
        admin.network.create_qos_policy(name=_name("second"), is_default=True,
                                        project_id=member["project"].id)
    net = member["sdk"].network.create_network(name=_name("dnet"))
    assert net.qos_policy_id == policy.id


@sqlite_only
def test_cli_qos(cloud):
    name = _name("cli-qos")
    made = cloud.cli("network", "qos", "policy", "create", "--share", "--description", "d",
                     name, "-f", "json")
    assert made["shared"] is True
    rule = cloud.cli("network", "qos", "rule", "create", "--type", "bandwidth-limit",
                     "--max-kbps", "3000", "--max-burst-kbits", "300", "--egress", name,
                     "-f", "json")
    assert rule["max_kbps"] == 3000
    cloud.cli("network", "qos", "rule", "create", "--type", "minimum-bandwidth",
              "--min-kbps", "1000", "--egress", name, "-f", "json")
    cloud.cli("network", "qos", "rule", "create", "--type", "dscp-marking", "--dscp-mark",
              "18", name, "-f", "json")
    rules = cloud.cli("network", "qos", "rule", "list", name, "-f", "json")
    assert len(rules) == 3
    types = {t["Type"] for t in cloud.cli("network", "qos", "rule", "type", "list",
                                          "-f", "json")}
    assert "minimum_packet_rate" in types
    shown = cloud.cli("network", "qos", "policy", "show", name, "-f", "json")
    assert len(shown["rules"]) == 3
    net = cloud.cli("network", "create", "--qos-policy", name, _name("qn"), "-f", "json")
    assert net["qos_policy_id"] == made["id"]
    port = cloud.cli("port", "create", "--network", net["id"], "--qos-policy", name,
                     _name("qp"), "-f", "json")
    assert port["qos_policy_id"] == made["id"]
    cloud.cli("port", "delete", port["id"], parse=False)
    cloud.cli("network", "set", "--no-qos-policy", net["id"], parse=False)
    cloud.cli("network", "qos", "policy", "delete", name, parse=False)


# ------------------------------------------------------------------ scheduling
BW_HOSTS = """
compute:
  hosts:
    - name: bw-1
      physical_networks: [public, physnet1]
      resource_provider_bandwidths: ["br-physnet1:1000:1000"]
      resource_provider_packet_processing_without_direction: 100
    - name: bw-2
      physical_networks: [public, physnet1]
"""


def _bw_setup(admin, project_id: str, min_kbps: int):
    policy = admin.network.create_qos_policy(name=_name("minbw"), shared=True)
    admin.network.create_qos_minimum_bandwidth_rule(policy, min_kbps=min_kbps)
    net = admin.network.create_network(name=_name("bwnet"), project_id=project_id,
                                       provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    admin.network.create_subnet(network_id=net.id, project_id=project_id, ip_version=4,
                                cidr="10.94.0.0/24")
    return policy, net


def _boot(conn, net, policy, name):
    port = conn.network.create_port(network_id=net.id, qos_policy_id=policy.id)
    image = conn.image.find_image("cirros", ignore_missing=False)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    return conn.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                      networks=[{"port": port.id}])


def _final(conn, server):
    try:
        return conn.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"], **WAIT)
    except exceptions.ResourceFailure:
        return conn.compute.get_server(server.id)


def _net_usage(cloud, server_id: str) -> dict[str, int]:
    with cloud.http(cloud.token()) as http:
        r = http.get(f"/placement/allocations/{server_id}",
                     headers={"OpenStack-API-Version": "placement 1.28"})
        assert r.status_code == 200, r.text
    out: dict[str, int] = {}
    for alloc in r.json()["allocations"].values():
        for rc, n in alloc["resources"].items():
            if rc.startswith("NET_"):
                out[rc] = out.get(rc, 0) + n
    return out


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_boot_on_minimum_bandwidth_ports(cloud_factory, backend, tmp_path):
    config = tmp_path / "bw.yaml"
    config.write_text(BW_HOSTS)
    cloud = cloud_factory(backend, workers=2, config=config)
    admin = cloud.sdk()
    member = cloud.new_project_member()
    conn = member["sdk"]
    policy, net = _bw_setup(admin, member["project"].id, 600)
    # the bridge provider of bw-1 as the agent reports it
    rps = {rp.name: rp for rp in admin.placement.resource_providers()}
    assert "bw-1:Open vSwitch agent:br-physnet1" in rps
    assert not any(n.startswith("bw-2:") for n in rps)
    first = _final(conn, _boot(conn, net, policy, "bw-a"))
    assert first.status == "ACTIVE"
    assert admin.compute.get_server(first.id).compute_host == "bw-1"
    assert _net_usage(cloud, first.id) == {"NET_BW_EGR_KILOBIT_PER_SEC": 600}
    # the port is told where its bandwidth was claimed (binding:profile.allocation)
    (port,) = admin.network.ports(device_id=first.id)
    bridge = rps["bw-1:Open vSwitch agent:br-physnet1"].id
    group = port.resource_request["request_groups"][0]["id"]
    assert port.binding_profile["allocation"] == {group: bridge}
    # 600 + 600 > 1000: no host can take a second one
    second = _final(conn, _boot(conn, net, policy, "bw-b"))
    assert second.status == "ERROR"
    assert "No valid host" in (admin.compute.get_server(second.id).fault or {}).get(
        "message", "")
    conn.compute.delete_server(first)
    conn.compute.wait_for_delete(first, **WAIT)
    assert "allocation" not in (admin.network.get_port(port.id).binding_profile or {})
    # freed: concurrent boots (two processes, two build workers each) compete for it,
    # and exactly one gets it
    racers = [_boot(conn, net, policy, f"bw-race-{i}") for i in range(4)]
    finals = [_final(conn, s) for s in racers]
    assert sorted(s.status for s in finals) == ["ACTIVE", "ERROR", "ERROR", "ERROR"]
    winner = next(s for s in finals if s.status == "ACTIVE")
    assert _net_usage(cloud, winner.id) == {"NET_BW_EGR_KILOBIT_PER_SEC": 600}
    with cloud.http(cloud.token()) as http:
        usages = http.get(f"/placement/resource_providers/{bridge}/usages").json()["usages"]
    assert usages["NET_BW_EGR_KILOBIT_PER_SEC"] == 600
    # a minimum packet rate (any direction) takes the agent's packet processing
    pps = admin.network.create_qos_policy(name=_name("minpps"), shared=True)
    admin.network.create_qos_minimum_packet_rate_rule(pps, min_kpps=60, direction="any")
    fast = _final(conn, _boot(conn, net, pps, "pps-a"))
    assert fast.status == "ACTIVE"
    assert _net_usage(cloud, fast.id) == {"NET_PACKET_RATE_KILOPACKET_PER_SEC": 60}
    assert _final(conn, _boot(conn, net, pps, "pps-b")).status == "ERROR"  # 120 > 100
