"""Compute quotas over the in-process app: os-quota-sets and os-quota-class-sets bodies
per microversion and their policy, enforcement at server create (Nova's 403 and its
max_count clamp), key pairs and metadata, /limits with real values, and the
per-request bound on max_count that holds whatever the quota."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import make_api

CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
LATEST = "2.62"


def mv(version: str = LATEST) -> dict[str, str]:
    return {"OpenStack-API-Version": f"compute {version}"}


def project_id(api, name: str) -> str:
    r = api.get(f"/identity/v3/projects?name={name}")
    return r.json()["projects"][0]["id"]


def boot(api, user="demo", **server):
    body = {"name": "vm", "flavorRef": "1", "imageRef": CIRROS, "networks": "none", **server}
    return api.post("/compute/v2.1/servers", user=user, headers=mv(), json={"server": body})


def servers_of(api, user="demo"):
    return api.get("/compute/v2.1/servers", user=user, headers=mv()).json()["servers"]


def delete_all(api, user="demo"):
    for s in servers_of(api, user):
        assert api.delete(f"/compute/v2.1/servers/{s['id']}", user=user).status_code == 204


def set_quota(api, pid, **values):
    r = api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv(),
                json={"quota_set": values})
    assert r.status_code == 200, r.text
    return r.json()["quota_set"]


def test_quota_set_bodies_follow_the_microversion(api):
    pid = project_id(api, "demo")
    r = api.get(f"/compute/v2.1/os-quota-sets/{pid}", user="demo", headers=mv("2.1"))
    assert r.status_code == 200
    body = r.json()["quota_set"]
    assert body["id"] == pid
    assert body["instances"] == 10 and body["cores"] == 20 and body["ram"] == 51200
    assert body["key_pairs"] == 100 and body["metadata_items"] == 128
    assert body["injected_files"] == 5 and body["fixed_ips"] == -1
    assert body["server_groups"] == 10 and body["server_group_members"] == 10
    body = api.get(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv("2.36")).json()["quota_set"]
    assert "fixed_ips" not in body and "security_groups" not in body
    assert "injected_files" in body
    body = api.get(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv("2.57")).json()["quota_set"]
    assert set(body) == {"id", "instances", "cores", "ram", "metadata_items", "key_pairs",
                         "server_groups", "server_group_members"}
    body = api.get(f"/compute/v2.1/os-quota-sets/{pid}/defaults",
                   user="demo", headers=mv()).json()["quota_set"]
    assert body == {"id": pid, "instances": 10, "cores": 20, "ram": 51200,
                    "metadata_items": 128, "key_pairs": 100, "server_groups": 10,
                    "server_group_members": 10}


def test_quota_policy(api):
    demo, admin = project_id(api, "demo"), project_id(api, "admin")
    assert api.get(f"/compute/v2.1/os-quota-sets/{admin}", user="demo").status_code == 403
    assert api.get(f"/compute/v2.1/os-quota-sets/{admin}/detail",
                   user="demo").status_code == 403
    r = api.put(f"/compute/v2.1/os-quota-sets/{demo}", user="demo",
                json={"quota_set": {"instances": 50}})
    assert r.status_code == 403
    assert r.json()["forbidden"]["message"] == (
        "Policy doesn't allow os_compute_api:os-quota-sets:update to be performed.")
    assert api.delete(f"/compute/v2.1/os-quota-sets/{demo}", user="demo").status_code == 403
    assert api.get("/compute/v2.1/os-quota-class-sets/default", user="demo").status_code == 403
    r = api.get(f"/compute/v2.1/limits?tenant_id={admin}", user="demo")
    assert r.status_code == 403


def test_update_validates_like_nova(api):
    pid = project_id(api, "demo")
    r = api.get("/compute/v2.1/os-quota-sets/0123456789abcdef0123456789abcdef")
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == (
        "Project ID 0123456789abcdef0123456789abcdef is not a valid project.")
    for bad in ({"instances": -2}, {"instances": "ten"}, {"server_groupies": 3},
                {"fixed_ips": 3}):
        r = api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv(),
                    json={"quota_set": bad})
        assert r.status_code == 400, (bad, r.text)
    # before 2.36 the network quotas are accepted (and ignored)
    r = api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv("2.1"),
                json={"quota_set": {"fixed_ips": 3}})
    assert r.status_code == 200 and r.json()["quota_set"]["fixed_ips"] == -1
    assert "id" not in r.json()["quota_set"]


def test_instances_over_quota_is_nova_403_and_max_count_clamps(api):
    pid = project_id(api, "demo")
    assert set_quota(api, pid, instances="2")["instances"] == 2
    r = boot(api, min_count=3, max_count=3)
    assert r.status_code == 403
    assert r.json() == {"forbidden": {"code": 403, "message": (
        "Quota exceeded for instances: Requested 3, but already used 0 of 2 instances")}}
    r = boot(api, min_count=1, max_count=10**30)
    assert r.status_code == 202, r.text
    assert len(servers_of(api)) == 2
    r = boot(api)
    assert r.status_code == 403
    assert r.json()["forbidden"]["message"] == (
        "Quota exceeded for instances: Requested 1, but already used 2 of 2 instances")
    detail = api.get(f"/compute/v2.1/os-quota-sets/{pid}/detail", user="demo",
                     headers=mv()).json()["quota_set"]
    assert detail["instances"] == {"limit": 2, "in_use": 2, "reserved": 0}
    assert detail["cores"] == {"limit": 20, "in_use": 2, "reserved": 0}
    limits = api.get("/compute/v2.1/limits", user="demo", headers=mv()).json()
    absolute = limits["limits"]["absolute"]
    assert absolute["maxTotalInstances"] == 2 and absolute["totalInstancesUsed"] == 2
    assert absolute["maxTotalCores"] == 20 and absolute["totalCoresUsed"] == 2
    assert absolute["maxTotalRAMSize"] == 51200 and absolute["totalRAMUsed"] == 1024
    admin_view = api.get(f"/compute/v2.1/limits?tenant_id={pid}", headers=mv()).json()
    assert admin_view["limits"]["absolute"]["totalInstancesUsed"] == 2
    own = api.get("/compute/v2.1/limits", headers=mv()).json()["limits"]["absolute"]
    assert own["totalInstancesUsed"] == 0
    # a limit below usage is refused unless forced
    r = api.put(f"/compute/v2.1/os-quota-sets/{pid}", headers=mv(),
                json={"quota_set": {"instances": 1}})
    assert r.status_code == 400
    assert r.json()["badRequest"]["message"] == (
        "Quota limit 1 for instances must be greater than or equal to already used and "
        "reserved 2.")
    assert set_quota(api, pid, instances=1, force=True)["instances"] == 1
    delete_all(api)
    r = api.delete(f"/compute/v2.1/os-quota-sets/{pid}")
    assert r.status_code == 202
    assert api.get(f"/compute/v2.1/os-quota-sets/{pid}").json()["quota_set"]["instances"] == 10


def test_cores_and_ram_limit_the_count(api):
    pid = project_id(api, "demo")
    set_quota(api, pid, cores=3)
    r = boot(api, min_count=4, max_count=4)
    assert r.status_code == 403
    assert r.json()["forbidden"]["message"] == (
        "Quota exceeded for cores: Requested 4, but already used 0 of 3 cores")
    assert boot(api, min_count=2, max_count=5).status_code == 202
    assert len(servers_of(api)) == 3
    delete_all(api)
    set_quota(api, pid, cores=-1, ram=1024, instances=1)
    r = boot(api, min_count=3, max_count=3)
    assert r.json()["forbidden"]["message"] == (
        "Quota exceeded for instances, ram: Requested 3, 1536, but already used 0, 0 of "
        "1, 1024 instances, ram")
    api.delete(f"/compute/v2.1/os-quota-sets/{pid}")


def test_user_quota(api):
    pid = project_id(api, "demo")
    users = api.get("/identity/v3/users?name=demo").json()["users"]
    uid = users[0]["id"]
    r = api.put(f"/compute/v2.1/os-quota-sets/{pid}?user_id={uid}", headers=mv(),
                json={"quota_set": {"instances": 1}})
    assert r.status_code == 200 and r.json()["quota_set"]["instances"] == 1
    r = api.put(f"/compute/v2.1/os-quota-sets/{pid}?user_id={uid}", headers=mv(),
                json={"quota_set": {"instances": 11}})
    assert r.status_code == 400  # above the project's 10
    shown = api.get(f"/compute/v2.1/os-quota-sets/{pid}?user_id={uid}").json()["quota_set"]
    assert shown["instances"] == 1
    assert api.get(f"/compute/v2.1/os-quota-sets/{pid}").json()["quota_set"]["instances"] == 10
    assert boot(api, min_count=1, max_count=3).status_code == 202
    assert len(servers_of(api)) == 1
    assert boot(api).status_code == 403
    delete_all(api)
    assert api.delete(f"/compute/v2.1/os-quota-sets/{pid}?user_id={uid}").status_code == 202
    shown = api.get(f"/compute/v2.1/os-quota-sets/{pid}?user_id={uid}").json()["quota_set"]
    assert shown["instances"] == 10


def test_quota_classes(api):
    r = api.get("/compute/v2.1/os-quota-class-sets/default", headers=mv("2.49"))
    assert r.status_code == 200
    body = r.json()["quota_class_set"]
    assert body["id"] == "default" and body["instances"] == 10 and body["floating_ips"] == -1
    r = api.get("/compute/v2.1/os-quota-class-sets/default", headers=mv("2.50"))
    assert "floating_ips" not in r.json()["quota_class_set"]
    r = api.put("/compute/v2.1/os-quota-class-sets/default", headers=mv(),
                json={"quota_class_set": {"instances": 12}})
    assert r.status_code == 200 and r.json()["quota_class_set"]["instances"] == 12
    assert "id" not in r.json()["quota_class_set"]
    pid = project_id(api, "demo")
    r = api.get(f"/compute/v2.1/os-quota-sets/{pid}/defaults", user="demo")
    assert r.json()["quota_set"]["instances"] == 12
    api.put("/compute/v2.1/os-quota-class-sets/default",
            json={"quota_class_set": {"instances": 10}})


def test_key_pairs_and_metadata(api):
    pid = project_id(api, "demo")
    set_quota(api, pid, key_pairs=1, metadata_items=2)
    r = api.post("/compute/v2.1/os-keypairs", user="demo", headers=mv(),
                 json={"keypair": {"name": "k1"}})
    assert r.status_code == 201, r.text
    r = api.post("/compute/v2.1/os-keypairs", user="demo", headers=mv(),
                 json={"keypair": {"name": "k2"}})
    assert r.status_code == 403
    assert r.json()["forbidden"]["message"] == "Quota exceeded, too many key pairs."
    r = boot(api, metadata={"a": "1", "b": "2", "c": "3"})
    assert r.status_code == 403
    assert r.json()["forbidden"]["message"] == "Maximum number of metadata items exceeds 2"
    api.delete("/compute/v2.1/os-keypairs/k1", user="demo")
    api.delete(f"/compute/v2.1/os-quota-sets/{pid}")


@pytest.fixture
def capped(tmp_path):
    """A cloud where one request may create at most 3 servers."""
    data_dir = tmp_path / "capped"
    yield from make_api(data_dir, quota={"compute": {"max_count": 3}})
    shutil.rmtree(data_dir, ignore_errors=True)


def test_max_count_is_bounded_even_when_unlimited(capped):
    pid = project_id(capped, "demo")
    set_quota(capped, pid, instances=-1, cores=-1, ram=-1)
    r = boot(capped, min_count=1, max_count=10**30)
    assert r.status_code == 202, r.text
    assert len(servers_of(capped)) == 3
    r = boot(capped, min_count=4, max_count=5)
    assert r.status_code == 400


def test_port_quota_reduces_max_count(api):
    pid = project_id(api, "demo")
    net = api.post("/networking/v2.0/networks", user="demo",
                   json={"network": {"name": "qnet"}}).json()["network"]["id"]
    r = api.post("/networking/v2.0/subnets", user="demo", json={"subnet": {
        "network_id": net, "ip_version": 4, "cidr": "10.77.0.0/24"}})
    assert r.status_code == 201
    used = api.get(f"/networking/v2.0/quotas/{pid}/details").json()["quota"]["port"]["used"]
    api.put(f"/networking/v2.0/quotas/{pid}", json={"quota": {"port": used + 1}})
    r = boot(api, min_count=2, max_count=3, networks=[{"uuid": net}])
    assert r.status_code == 403
    assert r.json()["forbidden"]["message"] == "Maximum number of ports exceeded"
    assert boot(api, min_count=1, max_count=3, networks=[{"uuid": net}]).status_code == 202
    assert len(servers_of(api)) == 1
    delete_all(api)
    api.delete(f"/networking/v2.0/quotas/{pid}")
