"""Flavor management as Nova serves it: integer and string ids, is_public spellings,
private flavors and os-flavor-access, extra spec delete, marker paging."""

from __future__ import annotations

FLAVORS = "/compute/v2.1/flavors"
CIRROS = "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
MV = {"OpenStack-API-Version": "compute 2.55"}


def project_id(api, name: str) -> str:
    r = api.get(f"/identity/v3/projects?name={name}")
    return r.json()["projects"][0]["id"]


def test_integer_and_string_ids(api):
    r = api.post(FLAVORS, json={"flavor": {"name": "int-id", "ram": 64, "vcpus": 1, "disk": 0,
                                           "id": 7771}})
    assert r.status_code == 200, r.text
    assert r.json()["flavor"]["id"] == "7771"
    assert api.get(f"{FLAVORS}/7771", user="demo").json()["flavor"]["name"] == "int-id"
    r = api.post(FLAVORS, json={"flavor": {"name": "str-id", "ram": 64, "vcpus": 1, "disk": 0,
                                           "id": "my-flavor.1"}})
    assert r.json()["flavor"]["id"] == "my-flavor.1"
    dup = api.post(FLAVORS, json={"flavor": {"name": "other", "ram": 64, "vcpus": 1,
                                             "disk": 0, "id": 7771}})
    assert dup.status_code == 409 and "Flavor with ID 7771 already exists." in dup.text
    bad = api.post(FLAVORS, json={"flavor": {"name": "bad", "ram": 64, "vcpus": 1, "disk": 0,
                                             "id": " x"}})
    assert bad.status_code == 400
    gen = api.post(FLAVORS, json={"flavor": {"name": "auto-id", "ram": 64, "vcpus": 1,
                                             "disk": 0, "id": None}}).json()["flavor"]
    assert len(gen["id"]) == 36
    swap = api.post(FLAVORS, json={"flavor": {"name": "disks", "ram": 64, "vcpus": 1,
                                              "disk": 1, "swap": 512,
                                              "OS-FLV-EXT-DATA:ephemeral": 2}}).json()
    assert swap["flavor"]["swap"] == 512 and swap["flavor"]["OS-FLV-EXT-DATA:ephemeral"] == 2
    for fid in ("7771", "my-flavor.1", gen["id"], swap["flavor"]["id"]):
        assert api.delete(f"{FLAVORS}/{fid}").status_code == 202
    assert api.get(f"{FLAVORS}/7771").status_code == 404


def test_private_flavor_access(api):
    demo = project_id(api, "demo")
    # (a disk: a zero-disk flavor boots only volume-backed servers for a member, as Nova's)
    r = api.post(FLAVORS, json={"flavor": {"name": "private-1", "ram": 64, "vcpus": 1,
                                           "disk": 1, "id": "priv1",
                                           "os-flavor-access:is_public": "False"}})
    assert r.status_code == 200 and r.json()["flavor"]["os-flavor-access:is_public"] is False
    # invisible to a project without access, in lists and by id
    assert api.get(f"{FLAVORS}/priv1", user="demo").status_code == 404
    names = {f["name"] for f in api.get(f"{FLAVORS}/detail", user="demo").json()["flavors"]}
    assert "private-1" not in names
    assert api.get(f"{FLAVORS}/priv1/os-flavor-access").json() == {"flavor_access": []}
    assert api.get(f"{FLAVORS}/priv1/os-flavor-access", user="demo").status_code == 403
    r = api.post(f"{FLAVORS}/priv1/action", json={"addTenantAccess": {"tenant": demo}})
    assert r.status_code == 200
    assert r.json() == {"flavor_access": [{"flavor_id": "priv1", "tenant_id": demo}]}
    again = api.post(f"{FLAVORS}/priv1/action", json={"addTenantAccess": {"tenant": demo}})
    assert again.status_code == 409 and "Flavor access already exists" in again.text
    # the granted project sees it, and may boot it
    assert api.get(f"{FLAVORS}/priv1", user="demo").status_code == 200
    booted = api.post("/compute/v2.1/servers", user="demo", json={"server": {
        "name": "on-private", "flavorRef": "priv1", "imageRef": CIRROS, "networks": "none"}},
        headers={"OpenStack-API-Version": "compute 2.37"})
    assert booted.status_code == 202, booted.text
    assert api.delete(f"/compute/v2.1/servers/{booted.json()['server']['id']}",
                      user="demo").status_code == 204
    names = {f["name"] for f in api.get(f"{FLAVORS}", user="demo").json()["flavors"]}
    assert "private-1" in names
    assert api.post(f"{FLAVORS}/priv1/action", user="demo",
                    json={"removeTenantAccess": {"tenant": demo}}).status_code == 403
    unknown = api.post(f"{FLAVORS}/priv1/action",
                       json={"addTenantAccess": {"tenant": "no-such-project"}})
    assert unknown.status_code == 400 and "is not a valid project" in unknown.text
    r = api.post(f"{FLAVORS}/priv1/action", json={"removeTenantAccess": {"tenant": demo}})
    assert r.status_code == 200 and r.json() == {"flavor_access": []}
    gone = api.post(f"{FLAVORS}/priv1/action", json={"removeTenantAccess": {"tenant": demo}})
    assert gone.status_code == 404 and "Flavor access not found" in gone.text
    assert api.get(f"{FLAVORS}/priv1", user="demo").status_code == 404
    refused = api.post("/compute/v2.1/servers", user="demo", json={"server": {
        "name": "x", "flavorRef": "priv1", "imageRef": CIRROS, "networks": "none"}},
        headers={"OpenStack-API-Version": "compute 2.37"})
    assert refused.status_code == 400 and "Invalid flavorRef provided." in refused.text
    # admin list filters: is_public=false shows only private ones; a bad value is a 400
    private = api.get(f"{FLAVORS}?is_public=false").json()["flavors"]
    assert [f["id"] for f in private] == ["priv1"]
    allf = {f["id"] for f in api.get(f"{FLAVORS}?is_public=None").json()["flavors"]}
    assert {"1", "priv1"} <= allf
    assert api.get(f"{FLAVORS}?is_public=maybe").status_code == 400
    # public flavors: no access list (404), no grant (409 from 2.7)
    assert api.get(f"{FLAVORS}/1/os-flavor-access").status_code == 404
    pub = api.post(f"{FLAVORS}/1/action", json={"addTenantAccess": {"tenant": demo}},
                   headers={"OpenStack-API-Version": "compute 2.7"})
    assert pub.status_code == 409 and "Can not add access to a public flavor." in pub.text
    assert api.post(f"{FLAVORS}/priv1/action", json={"fly": {}}).status_code == 400
    assert api.delete(f"{FLAVORS}/priv1").status_code == 202


def test_extra_spec_delete_and_description(api):
    r = api.post(FLAVORS, headers=MV, json={"flavor": {
        "name": "specs", "ram": 64, "vcpus": 1, "disk": 0, "id": "sp1", "description": "d1"}})
    assert r.json()["flavor"]["description"] == "d1"
    r = api.put(f"{FLAVORS}/sp1", headers=MV, json={"flavor": {"description": "d2"}})
    assert r.status_code == 200 and r.json()["flavor"]["description"] == "d2"
    api.post(f"{FLAVORS}/sp1/os-extra_specs", json={"extra_specs": {"a": "1", "b": "2"}})
    d = api.delete(f"{FLAVORS}/sp1/os-extra_specs/a")
    assert d.status_code == 200
    assert api.get(f"{FLAVORS}/sp1/os-extra_specs").json() == {"extra_specs": {"b": "2"}}
    assert api.delete(f"{FLAVORS}/sp1/os-extra_specs/a").status_code == 404
    assert api.delete(f"{FLAVORS}/sp1").status_code == 202


def test_marker_paging(api):
    first = api.get(f"{FLAVORS}?limit=2").json()["flavors"]
    nxt = api.get(f"{FLAVORS}?limit=2&marker={first[-1]['id']}").json()["flavors"]
    assert nxt and not {f["id"] for f in nxt} & {f["id"] for f in first}
    bad = api.get(f"{FLAVORS}?marker=no-such-flavor")
    assert bad.status_code == 400 and "marker [no-such-flavor] not found" in bad.text
