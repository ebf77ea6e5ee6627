"""Service providers (`service-type`) and network flavors with service profiles (`flavors`)
over the in-process app: Neutron's bodies, checks, errors and admin-only writes."""

from __future__ import annotations

import uuid

from tests.api.test_network import N, create, neutron_error

L3_DRIVER = "neutron.services.l3_router.service_providers.ha.HaDriver"


def test_service_providers_list_what_is_served(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"service-type", "flavors"} <= aliases
    for url in (f"{N}/service-providers", f"{N}/service_providers"):
        providers = api.get(url, user="demo").json()["service_providers"]
        assert {(p["service_type"], p["name"], p["default"]) for p in providers} == {
            ("L3_ROUTER_NAT", n, False) for n in ("dvrha", "dvr", "ha", "single_node")}
    only = api.get(f"{N}/service-providers?name=ha&fields=name").json()["service_providers"]
    assert only == [{"name": "ha"}]


def test_flavors_and_service_profiles(api):
    flavor = create(api, "flavors", "flavor", {"name": "gold", "service_type": "L3_ROUTER_NAT",
                                               "description": "d"})
    assert flavor == {"id": flavor["id"], "name": "gold", "description": "d",
                      "service_type": "L3_ROUTER_NAT", "enabled": True,
                      "service_profiles": []}
    neutron_error(api.post(f"{N}/flavors", json={"flavor": {"service_type": "FIREWALL"}}), 400,
                  "InvalidServiceType")
    neutron_error(api.post(f"{N}/flavors", json={"flavor": {"name": "x"}}), 400)
    profile = create(api, "service_profiles", "service_profile",
                     {"driver": L3_DRIVER, "description": "ha"})
    assert profile == {"id": profile["id"], "description": "ha", "driver": L3_DRIVER,
                       "metainfo": "", "enabled": True}
    meta = create(api, "service_profiles", "service_profile", {"metainfo": "{'a': 1}"})
    neutron_error(api.post(f"{N}/service_profiles", json={"service_profile": {}}), 400,
                  "ServiceProfileEmpty")
    neutron_error(api.post(f"{N}/service_profiles", json={"service_profile": {
        "driver": "no.such.Driver"}}), 404, "ServiceProfileDriverNotFound")
    assoc = f"{N}/flavors/{flavor['id']}/service_profiles"
    r = api.post(assoc, json={"service_profile": {"id": profile["id"]}})
    assert r.status_code == 201 and r.json() == {"service_profile": {"id": profile["id"]}}
    neutron_error(api.post(assoc, json={"service_profile": {"id": profile["id"]}}), 409,
                  "FlavorServiceProfileBindingExists")
    neutron_error(api.post(assoc, json={"service_profile": {"id": str(uuid.uuid4())}}), 404,
                  "ServiceProfileNotFound")
    neutron_error(api.post(f"{N}/flavors/{uuid.uuid4()}/service_profiles",
                           json={"service_profile": {"id": profile["id"]}}), 404,
                  "FlavorNotFound")
    shown = api.get(f"{N}/flavors/{flavor['id']}", user="demo").json()["flavor"]
    assert shown["service_profiles"] == [profile["id"]]
    nxt = api.get(f"{N}/flavors/{flavor['id']}/next_providers").json()["next_providers"]
    assert nxt == [{"driver": L3_DRIVER, "provider": "ha", "metainfo": ""}]
    # a profile in use is neither changed nor deleted
    neutron_error(api.delete(f"{N}/service_profiles/{profile['id']}"), 409,
                  "ServiceProfileInUse")
    neutron_error(api.put(f"{N}/service_profiles/{profile['id']}", json={
        "service_profile": {"description": "x"}}), 409, "ServiceProfileInUse")
    r = api.put(f"{N}/flavors/{flavor['id']}", json={"flavor": {"enabled": False,
                                                               "name": "gold2"}})
    assert r.status_code == 200 and r.json()["flavor"]["enabled"] is False
    neutron_error(api.put(f"{N}/flavors/{flavor['id']}", json={"flavor": {
        "service_type": "QOS"}}), 400)
    assert [f["id"] for f in api.get(f"{N}/flavors?name=gold2").json()["flavors"]] == [
        flavor["id"]]
    # admins write; members read flavors, never profiles
    neutron_error(api.post(f"{N}/flavors", user="demo", json={"flavor": {
        "service_type": "L3_ROUTER_NAT"}}), 403)
    neutron_error(api.put(f"{N}/flavors/{flavor['id']}", user="demo",
                          json={"flavor": {"name": "x"}}), 403)
    assert api.get(f"{N}/service_profiles", user="demo").json()["service_profiles"] == []
    neutron_error(api.get(f"{N}/service_profiles/{profile['id']}", user="demo"), 404)
    assert api.delete(f"{assoc}/{profile['id']}").status_code == 204
    neutron_error(api.delete(f"{assoc}/{profile['id']}"), 404,
                  "FlavorServiceProfileBindingNotFound")
    r = api.put(f"{N}/service_profiles/{meta['id']}", json={"service_profile": {
        "enabled": False, "driver": L3_DRIVER}})
    assert r.status_code == 200 and r.json()["service_profile"]["enabled"] is False
    for url in (f"{N}/service_profiles/{profile['id']}", f"{N}/service_profiles/{meta['id']}",
                f"{N}/flavors/{flavor['id']}"):
        assert api.delete(url).status_code == 204
    neutron_error(api.get(f"{N}/flavors/{flavor['id']}"), 404, "FlavorNotFound")
