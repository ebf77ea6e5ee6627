"""Network quotas over the in-process app: enforcement on every counted create (single
and bulk, a bulk counted as a whole), Neutron's 409 OverQuota body, the default security
group made even at quota, `quota-check-limit`, and the bound on bulk size."""

from __future__ import annotations

import shutil

import pytest

from tests.api.test_network import N, neutron_error
from tests.api.test_network_l3_topology import new_user
from tests.conftest import make_api


def over_quota(r, resource):
    assert r.status_code == 409, r.text
    assert r.json() == {"NeutronError": {
        "type": "OverQuota", "message": f"Quota exceeded for resources: ['{resource}'].",
        "detail": ""}}


def quota(api, project_id, **values):
    r = api.put(f"{N}/quotas/{project_id}", json={"quota": values})
    assert r.status_code == 200, r.text
    return r.json()["quota"]


def test_extensions_advertised(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"quotas", "quota_details", "quota-check-limit"} <= aliases


def test_own_project(api):
    user = new_user(api, "reader")
    h = {"token": user["token"], "user": None}
    p = user["project_id"]
    assert api.get(f"{N}/quotas/project", **h).json() == {"project": {"project_id": p}}
    assert api.get(f"{N}/quotas/tenant.json", **h).json() == {"tenant": {"tenant_id": p}}


def test_networks_subnets_ports_enforced_single_and_bulk(api):
    user = new_user(api, "member")
    p, h = user["project_id"], {"token": user["token"], "user": None}
    quota(api, p, network=2, subnet=1, port=2)
    r = api.post(f"{N}/networks", json={"networks": [{"name": "a"}, {"name": "b"},
                                                     {"name": "c"}]}, **h)
    over_quota(r, "network")
    assert api.get(f"{N}/networks?project_id={p}").json()["networks"] == []  # all or nothing
    r = api.post(f"{N}/networks", json={"networks": [{"name": "a"}, {"name": "b"}]}, **h)
    assert r.status_code == 201
    net = r.json()["networks"][0]["id"]
    over_quota(api.post(f"{N}/networks", json={"network": {}}, **h), "network")
    body = {"subnet": {"network_id": net, "ip_version": 4, "cidr": "10.1.0.0/24"}}
    assert api.post(f"{N}/subnets", json=body, **h).status_code == 201
    body = {"subnet": {"network_id": net, "ip_version": 4, "cidr": "10.2.0.0/24"}}
    over_quota(api.post(f"{N}/subnets", json=body, **h), "subnet")
    ports = [{"network_id": net}] * 3
    over_quota(api.post(f"{N}/ports", json={"ports": ports}, **h), "port")
    assert api.post(f"{N}/ports", json={"ports": ports[:2]}, **h).status_code == 201
    over_quota(api.post(f"{N}/ports", json={"port": {"network_id": net}}, **h), "port")
    details = api.get(f"{N}/quotas/{p}/details", **h).json()["quota"]
    assert details["port"] == {"limit": 2, "used": 2, "reserved": 0}
    assert details["network"] == {"limit": 2, "used": 2, "reserved": 0}


def test_security_groups_and_rules(api):
    user = new_user(api, "member")
    p, h = user["project_id"], {"token": user["token"], "user": None}
    quota(api, p, security_group=1, security_group_rule=6)
    # the project's default group is made even at quota, as upstream
    r = api.post(f"{N}/security-groups", json={"security_group": {"name": "web"}}, **h)
    assert r.status_code == 201
    groups = api.get(f"{N}/security-groups?project_id={p}", **h).json()["security_groups"]
    assert sorted(g["name"] for g in groups) == ["default", "web"]
    over_quota(api.post(f"{N}/security-groups", json={"security_group": {"name": "db"}}, **h),
               "security_group")
    sg = r.json()["security_group"]["id"]
    used = api.get(f"{N}/quotas/{p}/details", **h).json()["quota"]["security_group_rule"]["used"]
    # default group: 4 rules; web: its 2 egress rules, checked against the rule quota as
    # upstream's reservation does (with 5, web would have been a 409: test_network_breadth)
    assert used == 6
    rule = {"security_group_id": sg, "direction": "ingress", "protocol": "tcp",
            "port_range_min": 22, "port_range_max": 22}
    over_quota(api.post(f"{N}/security-group-rules", json={"security_group_rule": rule}, **h),
               "security_group_rule")


def test_subnetpools_unlimited_by_default_then_enforced(api):
    user = new_user(api, "member")
    p, h = user["project_id"], {"token": user["token"], "user": None}
    assert api.get(f"{N}/quotas/{p}", **h).json()["quota"]["subnetpool"] == -1
    quota(api, p, subnetpool=1)
    body = {"subnetpool": {"name": "a", "prefixes": ["10.50.0.0/16"]}}
    assert api.post(f"{N}/subnetpools", json=body, **h).status_code == 201
    body = {"subnetpool": {"name": "b", "prefixes": ["10.51.0.0/16"]}}
    over_quota(api.post(f"{N}/subnetpools", json=body, **h), "subnetpool")


def test_check_limit_refuses_a_limit_below_usage(api):
    user = new_user(api, "member")
    p, h = user["project_id"], {"token": user["token"], "user": None}
    for name in ("a", "b"):
        assert api.post(f"{N}/networks", json={"network": {"name": name}}, **h).status_code == 201
    r = api.put(f"{N}/quotas/{p}", json={"quota": {"network": 1, "check_limit": True}})
    err = neutron_error(r, 400, "HTTPBadRequest")
    assert err["message"] == ("Quota limit 1 for network must be greater than or equal to "
                              "already used 2")
    assert api.get(f"{N}/quotas/{p}").json()["quota"]["network"] == 100
    assert quota(api, p, network=2, check_limit=True)["network"] == 2
    assert quota(api, p, network=1, force=True)["network"] == 1  # force: no check
    assert quota(api, p, network=-1, check_limit=True)["network"] == -1
    neutron_error(api.put(f"{N}/quotas/{p}", json={"quota": {"network": 1,
                                                             "check_limit": "maybe"}}), 400)


@pytest.fixture
def small_bulk(tmp_path):
    data_dir = tmp_path / "bulk"
    yield from make_api(data_dir, quota={"network": {"max_bulk": 3}})
    shutil.rmtree(data_dir, ignore_errors=True)


def test_bulk_size_is_bounded(small_bulk):
    api = small_bulk
    r = api.post(f"{N}/networks", json={"networks": [{"name": str(i)} for i in range(4)]})
    err = neutron_error(r, 400, "HTTPBadRequest")
    assert err["message"] == "Bulk request of 4 networks exceeds the limit of 3 items per request."
    assert api.get(f"{N}/networks?name=0").json()["networks"] == []
    r = api.post(f"{N}/networks", json={"networks": [{"name": str(i)} for i in range(3)]})
    assert r.status_code == 201
