"""os-server-groups and the `group` scheduler hint (in-process API): Nova's bodies per
microversion, the policies honoured at boot and by moves, members, quotas."""

from __future__ import annotations

import pytest

from tests.api.test_compute import MAX, mv, wait_status
from tests.api.test_compute_actions import act, lift_quotas, show

GROUPS = "/compute/v2.1/os-server-groups"


@pytest.fixture(scope="module", autouse=True)
def unlimited(api):
    lift_quotas(api)


def project_id(api, name: str) -> str:
    return api.get(f"/identity/v3/projects?name={name}").json()["projects"][0]["id"]


def make_group(api, policy, version="2.15", user="demo", name="g"):
    r = api.post(GROUPS, user=user, headers=mv(version),
                 json={"server_group": {"name": name, "policies": [policy]}})
    assert r.status_code == 200, r.text
    return r.json()["server_group"]


def boot_in(api, group_id, **kw):
    body = {"name": "vm", "flavorRef": "1", "imageRef": "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41",
            "networks": "none", **kw}
    return api.post("/compute/v2.1/servers", user="demo", headers=mv(MAX),
                    json={"server": body, "os:scheduler_hints": {"group": group_id}})


def host_of(api, sid):
    return show(api, sid)["OS-EXT-SRV-ATTR:host"]


def test_crud_and_bodies_per_microversion(api):
    g = make_group(api, "anti-affinity", version="2.1")
    assert g == {"id": g["id"], "name": "g", "policies": ["anti-affinity"], "members": [],
                 "metadata": {}}
    shown = api.get(f"{GROUPS}/{g['id']}", user="demo", headers=mv("2.13")).json()
    assert shown["server_group"]["project_id"] == project_id(api, "demo")
    assert "user_id" in shown["server_group"]
    soft = api.post(GROUPS, user="demo", headers=mv("2.14"),
                    json={"server_group": {"name": "s", "policies": ["soft-affinity"]}})
    assert soft.status_code == 400
    s = make_group(api, "soft-affinity", version="2.15")
    assert s["policies"] == ["soft-affinity"]
    two = api.post(GROUPS, user="demo",
                   json={"server_group": {"name": "x", "policies": ["affinity", "anti-affinity"]}})
    assert two.status_code == 400
    ids = [x["id"] for x in api.get(GROUPS, user="demo").json()["server_groups"]]
    assert g["id"] in ids and s["id"] in ids
    assert api.get(f"{GROUPS}?limit=1&offset=1", user="demo").json()["server_groups"][0][
        "id"] == ids[1]
    # another project's group: listed only with all_projects by an admin, shown 403
    assert g["id"] not in [x["id"] for x in api.get(GROUPS).json()["server_groups"]]
    assert g["id"] in [x["id"] for x in api.get(f"{GROUPS}?all_projects=True"
                                                ).json()["server_groups"]]
    mine = make_group(api, "affinity", user="admin")
    assert api.get(f"{GROUPS}/{mine['id']}", user="demo").status_code == 403
    assert api.delete(f"{GROUPS}/{s['id']}", user="demo").status_code == 204
    missing = api.get(f"{GROUPS}/{s['id']}", user="demo")
    assert missing.status_code == 404 and "could not be found" in missing.text
    for x in (g, mine):
        assert api.delete(f"{GROUPS}/{x['id']}").status_code == 204


def test_anti_affinity_spreads_then_no_valid_host(api):
    hosts = {h["hypervisor_hostname"] for h in api.get("/compute/v2.1/os-hypervisors"
                                                        ).json()["hypervisors"]}
    g = make_group(api, "anti-affinity")
    sids = []
    for _ in hosts:
        r = boot_in(api, g["id"])
        assert r.status_code == 202, r.text
        sids.append(wait_status(api, r.json()["server"]["id"])["id"])
    assert len({host_of(api, s) for s in sids}) == len(hosts)
    extra = boot_in(api, g["id"])
    srv = wait_status(api, extra.json()["server"]["id"])
    assert srv["status"] == "ERROR" and "No valid host was found" in srv["fault"]["message"]
    members = api.get(f"{GROUPS}/{g['id']}", user="demo").json()["server_group"]["members"]
    assert set(members) == set(sids) | {srv["id"]}
    # a deleted server leaves the group, and its host is free for the group again
    assert api.delete(f"/compute/v2.1/servers/{srv['id']}", user="demo").status_code == 204
    assert api.delete(f"/compute/v2.1/servers/{sids[0]}", user="demo").status_code == 204
    members = api.get(f"{GROUPS}/{g['id']}", user="demo").json()["server_group"]["members"]
    assert set(members) == set(sids[1:])
    again = wait_status(api, boot_in(api, g["id"]).json()["server"]["id"])
    assert again["status"] == "ACTIVE"
    # a migration never lands on another member's host: no host is left
    before = host_of(api, sids[1])
    assert act(api, sids[1], {"migrate": None}, user="admin").status_code == 202
    assert show(api, sids[1])["status"] == "ACTIVE" and host_of(api, sids[1]) == before
    live = act(api, sids[1], {"os-migrateLive": {"host": None, "block_migration": "auto"}},
               user="admin")
    assert live.status_code == 202 and host_of(api, sids[1]) == before
    migrations = api.get(f"/compute/v2.1/os-migrations?instance_uuid={sids[1]}",
                         headers=mv(MAX)).json()["migrations"]
    assert {m["status"] for m in migrations} == {"error"}
    for sid in [*sids[1:], again["id"]]:
        api.delete(f"/compute/v2.1/servers/{sid}", user="demo")


def test_affinity_keeps_members_together(api):
    g = make_group(api, "affinity")
    sids = [wait_status(api, boot_in(api, g["id"]).json()["server"]["id"])["id"]
            for _ in range(3)]
    assert len({host_of(api, s) for s in sids}) == 1
    # moving one member away would break the policy: NoValidHost, the server stays
    assert act(api, sids[0], {"migrate": None}, user="admin").status_code == 202
    assert show(api, sids[0])["status"] == "ACTIVE"
    assert host_of(api, sids[0]) == host_of(api, sids[1])
    for sid in sids:
        api.delete(f"/compute/v2.1/servers/{sid}", user="demo")


def test_hint_errors(api):
    bad = boot_in(api, "not-a-uuid")
    assert bad.status_code == 400
    unknown = boot_in(api, "7b1f0b58-6f3a-4b0e-9c55-3d5c2f3d9e10")
    assert unknown.status_code == 400
    assert "Instance group 7b1f0b58-6f3a-4b0e-9c55-3d5c2f3d9e10 could not be found." in \
        unknown.text


def test_quotas_of_server_groups(api):
    demo = project_id(api, "demo")
    for path in (f"/compute/v2.1/os-quota-sets/{demo}",
                 f"/compute/v2.1/os-quota-sets/{demo}/defaults",
                 "/compute/v2.1/os-quota-class-sets/default"):
        body = api.get(path).json()
        q = body.get("quota_set") or body["quota_class_set"]
        assert q["server_groups"] == 10 and q["server_group_members"] == 10, path
    r = api.put("/compute/v2.1/os-quota-class-sets/gold", json={"quota_class_set": {
        "server_groups": 20, "server_group_members": 30}})
    assert r.status_code == 200, r.text
    gold = api.get("/compute/v2.1/os-quota-class-sets/gold").json()["quota_class_set"]
    assert (gold["server_groups"], gold["server_group_members"]) == (20, 30)
    detail = api.get(f"/compute/v2.1/os-quota-sets/{demo}/detail").json()["quota_set"]
    used = len(api.get(GROUPS, user="demo").json()["server_groups"])
    assert detail["server_groups"] == {"limit": 10, "in_use": used, "reserved": 0}
    r = api.put(f"/compute/v2.1/os-quota-sets/{demo}", json={"quota_set": {
        "server_groups": used + 1, "server_group_members": 2}})
    assert r.status_code == 200, r.text
    assert r.json()["quota_set"]["server_groups"] == used + 1
    absolute = api.get("/compute/v2.1/limits", user="demo").json()["limits"]["absolute"]
    assert absolute["maxServerGroups"] == used + 1 and absolute["maxServerGroupMembers"] == 2
    assert absolute["totalServerGroupsUsed"] == used
    g = make_group(api, "soft-anti-affinity")
    over = api.post(GROUPS, user="demo",
                    json={"server_group": {"name": "one-too-many", "policies": ["affinity"]}})
    assert over.status_code == 403
    assert over.json()["forbidden"]["message"] == "Quota exceeded, too many server groups."
    sids = [wait_status(api, boot_in(api, g["id"]).json()["server"]["id"])["id"]
            for _ in range(2)]
    full = boot_in(api, g["id"])
    assert full.status_code == 403
    assert full.json()["forbidden"]["message"] == "Quota exceeded, too many servers in group"
    two = boot_in(api, g["id"], min_count=2)
    assert two.status_code == 403
    for sid in sids:
        api.delete(f"/compute/v2.1/servers/{sid}", user="demo")
    api.delete(f"{GROUPS}/{g['id']}", user="demo")
    api.delete(f"/compute/v2.1/os-quota-sets/{demo}")
    lift_quotas(api)
