"""Trunks (`trunk`, `trunk-details`) over the in-process app: the rules and error bodies
of Neutron's trunk plugin (Open vSwitch driver: VLAN sub-ports)."""

from __future__ import annotations

import pytest

from tests.api.test_network import N, create, neutron_error
from tests.api.test_network_l3_topology import new_user


@pytest.fixture(scope="module")
def nets(api) -> dict:
    out = {}
    for name, mtu in (("parent", 1400), ("child", 1400), ("big", 1450)):
        net = create(api, "networks", "network", {"name": f"t-{name}", "mtu": mtu}, user="demo")
        create(api, "subnets", "subnet", {"network_id": net["id"], "ip_version": 4,
                                          "cidr": f"10.{90 + len(out)}.0.0/24"}, user="demo")
        out[name] = net["id"]
    return out


def port(api, net_id: str, **extra) -> dict:
    return create(api, "ports", "port", {"network_id": net_id, **extra}, user="demo")


def trunk(api, parent: str, subs: list | None = None, **extra) -> dict:
    body = {"port_id": parent, **extra}
    if subs is not None:
        body["sub_ports"] = subs
    return create(api, "trunks", "trunk", body, user="demo")


def test_trunks_are_advertised(api):
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert {"trunk", "trunk-details"} <= aliases


def test_create_show_list_update_delete(api, nets):
    parent, child = port(api, nets["parent"]), port(api, nets["child"])
    t = trunk(api, parent["id"], [{"port_id": child["id"], "segmentation_type": "vlan",
                                   "segmentation_id": 100}], name="tr", tags=["a"])
    assert t["status"] == "DOWN" and t["admin_state_up"] is True and t["name"] == "tr"
    assert t["sub_ports"] == [{"port_id": child["id"], "segmentation_type": "vlan",
                               "segmentation_id": 100}]
    assert t["tags"] == ["a"] and t["revision_number"] == 0 and t["project_id"] == t["tenant_id"]
    shown = api.get(f"{N}/trunks/{t['id']}", user="demo").json()["trunk"]
    assert shown == t
    listed = api.get(f"{N}/trunks?port_id={parent['id']}", user="demo").json()["trunks"]
    assert [x["id"] for x in listed] == [t["id"]]
    assert api.get(f"{N}/trunks?name=tr&status=ACTIVE", user="demo").json()["trunks"] == []
    # the sub-port is the trunk's now; the parent shows its trunk details
    sub = api.get(f"{N}/ports/{child['id']}", user="demo").json()["port"]
    assert (sub["device_owner"], sub["device_id"]) == ("trunk:subport", t["id"])
    par = api.get(f"{N}/ports/{parent['id']}", user="demo").json()["port"]
    assert par["trunk_details"] == {"trunk_id": t["id"], "sub_ports": [{
        "segmentation_id": 100, "segmentation_type": "vlan", "port_id": child["id"],
        "mac_address": child["mac_address"]}]}
    assert "trunk_details" not in sub
    r = api.put(f"{N}/trunks/{t['id']}", user="demo",
                json={"trunk": {"name": "tr2", "description": "d", "admin_state_up": False}})
    assert r.status_code == 200, r.text
    assert r.json()["trunk"]["name"] == "tr2" and r.json()["trunk"]["revision_number"] == 1
    # a disabled trunk is not managed (upstream's TrunkDisabled), only re-enabled
    neutron_error(api.delete(f"{N}/trunks/{t['id']}", user="demo"), 409, "TrunkDisabled")
    api.put(f"{N}/trunks/{t['id']}", user="demo", json={"trunk": {"admin_state_up": True}})
    assert api.delete(f"{N}/trunks/{t['id']}", user="demo").status_code == 204
    neutron_error(api.get(f"{N}/trunks/{t['id']}", user="demo"), 404, "TrunkNotFound")
    sub = api.get(f"{N}/ports/{child['id']}", user="demo").json()["port"]
    assert (sub["device_owner"], sub["device_id"]) == ("", "")
    assert "trunk_details" not in api.get(f"{N}/ports/{parent['id']}", user="demo").json()["port"]


def test_sub_port_actions(api, nets):
    parent = port(api, nets["parent"])
    a, b = port(api, nets["child"]), port(api, nets["child"])
    t = trunk(api, parent["id"])
    assert t["sub_ports"] == []
    url = f"{N}/trunks/{t['id']}"
    r = api.put(f"{url}/add_subports", user="demo", json={"sub_ports": [
        {"port_id": a["id"], "segmentation_type": "vlan", "segmentation_id": 10},
        {"port_id": b["id"], "segmentation_type": "vlan", "segmentation_id": "11"}]})
    assert r.status_code == 200, r.text
    body = r.json()  # the trunk itself, unwrapped
    assert body["id"] == t["id"] and body["revision_number"] == 1
    assert {(s["port_id"], s["segmentation_id"]) for s in body["sub_ports"]} == {
        (a["id"], 10), (b["id"], 11)}
    got = api.get(f"{url}/get_subports", user="demo").json()
    assert sorted(s["segmentation_id"] for s in got["sub_ports"]) == [10, 11]
    # the same VLAN id twice on one trunk
    c = port(api, nets["child"])
    neutron_error(api.put(f"{url}/add_subports", user="demo", json={"sub_ports": [
        {"port_id": c["id"], "segmentation_type": "vlan", "segmentation_id": 10}]}),
        409, "DuplicateSubPort")
    r = api.put(f"{url}/remove_subports", user="demo", json={"sub_ports": [{"port_id": a["id"]}]})
    assert r.status_code == 200 and [s["port_id"] for s in r.json()["sub_ports"]] == [b["id"]]
    neutron_error(api.put(f"{url}/remove_subports", user="demo",
                          json={"sub_ports": [{"port_id": a["id"]}]}), 404, "SubPortNotFound")
    # a port of a trunk (parent or sub-port) cannot be deleted
    neutron_error(api.delete(f"{N}/ports/{parent['id']}", user="demo"), 409,
                  "PortInUseAsTrunkParent")
    neutron_error(api.delete(f"{N}/ports/{b['id']}", user="demo"), 409, "PortInUseAsSubPort")
    assert api.delete(f"{N}/ports/{a['id']}", user="demo").status_code == 204
    # a trunk with sub-ports may be deleted; its ports are free again
    assert api.delete(url, user="demo").status_code == 204
    assert api.delete(f"{N}/ports/{b['id']}", user="demo").status_code == 204
    assert api.delete(f"{N}/ports/{parent['id']}", user="demo").status_code == 204


def test_parent_and_child_rules(api, nets):
    parent, child = port(api, nets["parent"]), port(api, nets["child"])
    t = trunk(api, parent["id"], [{"port_id": child["id"], "segmentation_type": "vlan",
                                   "segmentation_id": 5}])
    other = port(api, nets["parent"])

    def post(body):
        return api.post(f"{N}/trunks", user="demo", json={"trunk": body})

    # a parent is the parent of one trunk only
    neutron_error(post({"port_id": parent["id"]}), 409, "ParentPortInUse")
    # a sub-port is in one trunk only, and never a parent
    neutron_error(post({"port_id": child["id"]}), 409, "TrunkPortInUse")
    neutron_error(post({"port_id": other["id"], "sub_ports": [{
        "port_id": child["id"], "segmentation_type": "vlan", "segmentation_id": 6}]}),
        409, "TrunkPortInUse")
    # a parent is never a sub-port (of its own trunk or another)
    neutron_error(api.put(f"{N}/trunks/{t['id']}/add_subports", user="demo", json={
        "sub_ports": [{"port_id": parent["id"], "segmentation_type": "vlan",
                       "segmentation_id": 7}]}), 409, "ParentPortInUse")
    neutron_error(post({"port_id": other["id"], "sub_ports": [{
        "port_id": parent["id"], "segmentation_type": "vlan", "segmentation_id": 7}]}),
        409, "ParentPortInUse")
    neutron_error(post({"port_id": other["id"], "sub_ports": [{
        "port_id": other["id"], "segmentation_type": "vlan", "segmentation_id": 7}]}),
        409, "ParentPortInUse")
    # a port with a device is no sub-port
    used = port(api, nets["child"], device_id="some-device")
    neutron_error(post({"port_id": other["id"], "sub_ports": [{
        "port_id": used["id"], "segmentation_type": "vlan", "segmentation_id": 7}]}),
        409, "PortInUse")
    # unknown ports and trunks
    ghost = "00000000-0000-4000-8000-000000000000"
    neutron_error(post({"port_id": ghost}), 404, "PortNotFound")
    neutron_error(post({"port_id": other["id"], "sub_ports": [{
        "port_id": ghost, "segmentation_type": "vlan", "segmentation_id": 7}]}),
        404, "PortNotFound")
    neutron_error(api.put(f"{N}/trunks/{ghost}/add_subports", user="demo",
                          json={"sub_ports": []}), 404, "TrunkNotFound")


def test_mtu_rules(api, nets):
    small, big = port(api, nets["parent"]), port(api, nets["big"])
    # a sub-port's network MTU may not exceed the parent's
    r = api.post(f"{N}/trunks", user="demo", json={"trunk": {"port_id": small["id"], "sub_ports": [
        {"port_id": big["id"], "segmentation_type": "vlan", "segmentation_id": 3}]}})
    err = neutron_error(r, 409, "SubPortMtuGreaterThanTrunkPortMtu")
    assert "MTU 1450" in err["message"] and "MTU 1400" in err["message"]
    t = trunk(api, small["id"])
    neutron_error(api.put(f"{N}/trunks/{t['id']}/add_subports", user="demo", json={
        "sub_ports": [{"port_id": big["id"], "segmentation_type": "vlan",
                       "segmentation_id": 3}]}), 409, "SubPortMtuGreaterThanTrunkPortMtu")
    # equal or smaller: fine
    t2 = trunk(api, port(api, nets["big"])["id"], [{
        "port_id": port(api, nets["child"])["id"], "segmentation_type": "vlan",
        "segmentation_id": 3}])
    assert len(t2["sub_ports"]) == 1


@pytest.mark.parametrize("subs, message", [
    ({"port_id": "x"}, "is not a list"),
    ([{"segmentation_type": "vlan", "segmentation_id": 1}], "A valid port UUID must be specified"),
    ([{"port_id": "nope", "segmentation_type": "vlan", "segmentation_id": 1}], "Invalid UUID"),
    ([{"port_id": "{child}", "segmentation_type": "vlan"}], "missing segmentation"),
    ([{"port_id": "{child}", "segmentation_id": 4}], "missing segmentation"),
    ([{"port_id": "{child}", "segmentation_type": "vlan", "segmentation_id": 4096}],
     "is not in range"),
    ([{"port_id": "{child}", "segmentation_type": "vlan", "segmentation_id": 0}],
     "is not in range"),
    ([{"port_id": "{child}", "segmentation_type": "vlan", "segmentation_id": "ten"}],
     "is not an integer"),
    ([{"port_id": "{child}", "segmentation_type": "vxlan", "segmentation_id": 4}],
     "Unknown segmentation_type 'vxlan'"),
    ([{"port_id": "{child}", "segmentation_type": "inherit", "segmentation_id": 4}],
     "Unknown segmentation_type 'inherit'"),
    ([{"port_id": "{child}"}], "missing segmentation"),
    ([{"port_id": "{child}", "segmentation_type": "vlan", "segmentation_id": 4},
      {"port_id": "{other}", "segmentation_type": "vlan", "segmentation_id": 4}], "is not unique"),
    (["x"], "is not a dict"),
])
def test_bad_sub_ports_are_400(api, nets, subs, message):
    parent, child, other = port(api, nets["parent"]), port(api, nets["child"]), port(api, nets["child"])

    def fill(v):
        if isinstance(v, list):
            return [fill(x) for x in v]
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        return v.format(child=child["id"], other=other["id"]) if isinstance(v, str) else v

    subs = fill(subs)
    r = api.post(f"{N}/trunks", user="demo", json={"trunk": {"port_id": parent["id"],
                                                              "sub_ports": subs}})
    assert message in neutron_error(r, 400, "InvalidInput")["message"]
    t = trunk(api, parent["id"])
    r = api.put(f"{N}/trunks/{t['id']}/add_subports", user="demo", json={"sub_ports": subs})
    assert message in neutron_error(r, 400, "InvalidInput")["message"]
    assert api.get(f"{N}/trunks/{t['id']}", user="demo").json()["trunk"]["sub_ports"] == []


def test_disabled_trunk_refuses_sub_port_changes(api, nets):
    t = trunk(api, port(api, nets["parent"])["id"], admin_state_up=False)
    child = port(api, nets["child"])
    body = {"sub_ports": [{"port_id": child["id"], "segmentation_type": "vlan",
                           "segmentation_id": 9}]}
    neutron_error(api.put(f"{N}/trunks/{t['id']}/add_subports", user="demo", json=body),
                  409, "TrunkDisabled")
    neutron_error(api.put(f"{N}/trunks/{t['id']}/remove_subports", user="demo", json=body),
                  409, "TrunkDisabled")
    neutron_error(api.put(f"{N}/trunks/{t['id']}/add_subports", user="demo", json={}),
                  400)


def test_binding_the_parent_activates_the_trunk_and_binds_sub_ports(api, nets):
    parent, child = port(api, nets["parent"]), port(api, nets["child"])
    t = trunk(api, parent["id"], [{"port_id": child["id"], "segmentation_type": "vlan",
                                   "segmentation_id": 20}])
    r = api.put(f"{N}/ports/{parent['id']}", json={"port": {"binding:host_id": "compute1"}})
    assert r.status_code == 200, r.text
    assert api.get(f"{N}/trunks/{t['id']}", user="demo").json()["trunk"]["status"] == "ACTIVE"
    assert [x["id"] for x in api.get(f"{N}/trunks?status=ACTIVE", user="demo").json()["trunks"]
            ] == [t["id"]]
    sub = api.get(f"{N}/ports/{child['id']}").json()["port"]
    assert sub["binding:host_id"] == "compute1" and sub["status"] == "ACTIVE"
    # a sub-port added to a bound trunk is bound there too
    late = port(api, nets["child"])
    api.put(f"{N}/trunks/{t['id']}/add_subports", user="demo", json={"sub_ports": [
        {"port_id": late["id"], "segmentation_type": "vlan", "segmentation_id": 21}]})
    assert api.get(f"{N}/ports/{late['id']}").json()["port"]["binding:host_id"] == "compute1"
    api.put(f"{N}/ports/{parent['id']}", json={"port": {"binding:host_id": ""}})
    assert api.get(f"{N}/trunks/{t['id']}", user="demo").json()["trunk"]["status"] == "DOWN"
    assert api.get(f"{N}/ports/{child['id']}").json()["port"]["binding:host_id"] == ""


def test_trunks_are_their_projects(api, nets):
    t = trunk(api, port(api, nets["parent"])["id"])
    other = new_user(api, "member")
    r = api.get(f"{N}/trunks/{t['id']}", user=None, token=other["token"])
    neutron_error(r, 404, "TrunkNotFound")
    assert api.get(f"{N}/trunks", user=None, token=other["token"]).json()["trunks"] == []
    # another project's port is not found as a parent
    r = api.post(f"{N}/trunks", user=None, token=other["token"], json={"trunk": {
        "port_id": port(api, nets["parent"])["id"]}})
    neutron_error(r, 404, "PortNotFound")
    reader = new_user(api, "reader")
    r = api.post(f"{N}/trunks", user=None, token=reader["token"], json={"trunk": {
        "port_id": port(api, nets["parent"])["id"]}})
    assert r.status_code in (403, 404)


def test_list_sorting_paging_and_tags(api, nets):
    made = [trunk(api, port(api, nets["parent"])["id"], name=f"page-{i}") for i in range(3)]
    r = api.get(f"{N}/trunks?name=page-0&name=page-1&name=page-2&sort_key=name&sort_dir=desc"
                "&limit=2", user="demo").json()
    assert [t["name"] for t in r["trunks"]] == ["page-2", "page-1"]
    assert r["trunks_links"][0]["rel"] == "next"
    assert api.put(f"{N}/trunks/{made[0]['id']}/tags/blue", user="demo").status_code == 201
    assert [t["id"] for t in api.get(f"{N}/trunks?tags=blue", user="demo").json()["trunks"]
            ] == [made[0]["id"]]


def test_interface_for_orchestration(api, nets):
    """What Heat's OS::Neutron::Trunk will call: the API's rules and answers in-process."""
    from stackling.common.context import admin_context
    from stackling.network import interface

    parent, child = port(api, nets["parent"]), port(api, nets["child"])
    ctx = admin_context(parent["project_id"])
    with api.runtime.db.transaction() as db:
        made = interface.create_resource(db, ctx, "trunk", {"port_id": parent["id"],
                                                            "name": "heat"})
        assert made["port_id"] == parent["id"] and made["sub_ports"] == []
        added = interface.add_trunk_subports(db, ctx, made["id"], [{
            "port_id": child["id"], "segmentation_type": "vlan", "segmentation_id": 42}])
        assert added["sub_ports"][0]["segmentation_id"] == 42
        assert interface.get_resource(db, ctx, "trunk", made["id"])["name"] == "heat"
        removed = interface.remove_trunk_subports(db, ctx, made["id"],
                                                  [{"port_id": child["id"]}])
        assert removed["sub_ports"] == []
        interface.delete_resource(db, ctx, "trunk", made["id"])
    neutron_error(api.get(f"{N}/trunks/{made['id']}", user="demo"), 404, "TrunkNotFound")
