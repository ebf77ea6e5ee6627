"""Router `ha` and `distributed` (`l3-ha`, `dvr`, `router-admin-state-down-before-update`)
over the in-process app: admin-only, stored and reported, changed only on a router that is
down, as Neutron's L3 plugin."""

from __future__ import annotations

from tests.api.test_network import N, create, neutron_error


def test_ha_and_distributed_are_stored_and_admin_only(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"l3-ha", "dvr", "router-admin-state-down-before-update"} <= aliases
    plain = create(api, "routers", "router", {"name": "plain"}, user="demo")
    nulls = create(api, "routers", "router", {"name": "nulls", "ha": None,
                                              "distributed": None})
    assert nulls["ha"] is False and nulls["distributed"] is False  # null: the default
    router = create(api, "routers", "router", {"name": "hd", "ha": True, "distributed": True,
                                               "project_id": plain["project_id"]})
    assert router["ha"] is True and router["distributed"] is True
    assert "ha" not in plain and "distributed" not in plain  # members don't see them
    shown = api.get(f"{N}/routers/{plain['id']}").json()["router"]
    assert shown["ha"] is False and shown["distributed"] is False
    member_view = api.get(f"{N}/routers/{router['id']}", user="demo").json()["router"]
    assert "ha" not in member_view and "distributed" not in member_view
    ids = {r["id"] for r in api.get(f"{N}/routers?ha=true").json()["routers"]}
    assert router["id"] in ids and plain["id"] not in ids
    ids = {r["id"] for r in api.get(f"{N}/routers?distributed=false").json()["routers"]}
    assert plain["id"] in ids and router["id"] not in ids
    for attr in ("ha", "distributed"):
        neutron_error(api.post(f"{N}/routers", user="demo", json={"router": {attr: True}}), 403)
        neutron_error(api.put(f"{N}/routers/{plain['id']}", user="demo",
                              json={"router": {attr: True}}), 403)


def test_changes_need_the_router_down(api):
    router = create(api, "routers", "router", {"name": "mig"})
    url = f"{N}/routers/{router['id']}"
    err = neutron_error(api.put(url, json={"router": {"ha": True}}), 400, "BadRequest")
    assert "Cannot change HA attribute of active routers" in err["message"]
    err = neutron_error(api.put(url, json={"router": {"distributed": True}}), 400, "BadRequest")
    assert "Cannot change the 'distributed' attribute of active routers" in err["message"]
    # ha may go down and change in one update (the state it leaves the router in counts)
    r = api.put(url, json={"router": {"admin_state_up": False, "ha": True}})
    assert r.status_code == 200, r.text
    assert r.json()["router"]["ha"] is True
    # distributed needs the router down before the update too
    api.put(url, json={"router": {"admin_state_up": True}})
    neutron_error(api.put(url, json={"router": {"admin_state_up": False, "distributed": True}}),
                  400, "BadRequest")
    assert api.get(url).json()["router"]["distributed"] is False
    assert api.put(url, json={"router": {"admin_state_up": False}}).status_code == 200
    r = api.put(url, json={"router": {"distributed": True}})
    assert r.status_code == 200 and r.json()["router"]["distributed"] is True
    # setting the value it already has is no change
    assert api.put(url, json={"router": {"admin_state_up": True}}).status_code == 200
    r = api.put(url, json={"router": {"distributed": True, "ha": True, "name": "same"}})
    assert r.status_code == 200 and r.json()["router"]["name"] == "same"

